"""Elementwise comparisons, bitwise operations, shifts, ``is_finite`` and ``select_n``.

Impls are NumPy ufuncs (or compositions of them) on the operands as given (a 0-d operand
broadcasts), so a value's bits depend only on its inputs. Their outputs are booleans or
integers: every JVP but ``select_n``'s is zero.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import (
    UndefinedPrimal,
    Zero,
    defjvp_zero,
    instantiate,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    zeros_like_aval,
)
from ._util import ANY, INTEGRAL, broadcast_shapes_strict, check_same_dtypes, lax_operands
from ._vectorized import _binary, _unary, _vectorized_batch_rule, defvectorized


def _compare(name, impl, op):
    prim = defvectorized(name, impl, ANY, out_dtype=dtypes.bool_, c=("compare", op),
                         operator=op)
    defjvp_zero(prim)
    _vectorized_batch_rule(prim)
    return prim


eq_p = _compare("eq", np.equal, "==")
ne_p = _compare("ne", np.not_equal, "!=")
lt_p = _compare("lt", np.less, "<")
le_p = _compare("le", np.less_equal, "<=")
gt_p = _compare("gt", np.greater, ">")
ge_p = _compare("ge", np.greater_equal, ">=")
eq, ne, lt, le, gt, ge = (_binary(p) for p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))

is_finite_p = defvectorized("is_finite", np.isfinite, "f", out_dtype=dtypes.bool_,
                            c=("is_finite",))
defjvp_zero(is_finite_p)
_vectorized_batch_rule(is_finite_p)


def is_finite(x):
    """Elementwise: True where ``x`` is neither infinite nor NaN."""
    return is_finite_p.bind(to_array(x, "lax.is_finite operand"))


def _bitwise(name, impl, c):
    prim = defvectorized(name, impl, INTEGRAL, c=c)
    defjvp_zero(prim)
    _vectorized_batch_rule(prim)
    return prim


not_p = _bitwise("not", np.invert, ("not",))
and_p = _bitwise("and", np.bitwise_and, ("bitwise", "&"))
or_p = _bitwise("or", np.bitwise_or, ("bitwise", "|"))
xor_p = _bitwise("xor", np.bitwise_xor, ("bitwise", "^"))
bitwise_not = _unary(not_p)
bitwise_and, bitwise_or, bitwise_xor = (_binary(p) for p in (and_p, or_p, xor_p))


def _shift_impl(shift):
    # XLA's semantics: the amount is read as unsigned, and an amount of at least the bit
    # width gives 0 (NumPy's shifts are undefined there).
    def impl(x, y):
        unsigned = np.dtype(f"u{x.dtype.itemsize}")
        amount = np.asarray(y).astype(unsigned)
        in_range = amount < 8 * x.dtype.itemsize
        out = shift(np.asarray(x).view(unsigned), np.where(in_range, amount, 0).astype(unsigned))
        return np.where(in_range, out, 0).astype(unsigned).view(x.dtype)

    return impl


shift_left_p = defvectorized("shift_left", _shift_impl(np.left_shift), "iu",
                             c=("shift", "<<"))
shift_right_logical_p = defvectorized("shift_right_logical", _shift_impl(np.right_shift), "iu",
                                      c=("shift", ">>"))
for _prim in (shift_left_p, shift_right_logical_p):
    defjvp_zero(_prim)
    _vectorized_batch_rule(_prim)
shift_left, shift_right_logical = (_binary(p) for p in (shift_left_p, shift_right_logical_p))


# select_n: out = cases[which]; ``which`` is bool (two cases) or int32.
def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which, cases, mode="clip")


def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select_n needs at least one case")
    check_same_dtypes("select_n", cases)
    shape = broadcast_shapes_strict("select_n", cases)
    if which.shape not in ((), shape):
        raise TypeError(f"select_n predicate shape {which.shape} must be () or the cases' "
                        f"shape {shape}")
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise TypeError(f"select_n predicate must be bool or int32, got {which.dtype.name}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select_n with a bool predicate takes at most two cases")
    if any(c.shape != shape for c in cases):
        raise TypeError(f"select_n cases must have equal shapes, got "
                        f"{[c.shape for c in cases]}")
    return ShapedArray(shape, cases[0].dtype, all(c.weak_type for c in cases))


select_n_p = Primitive("select_n")
select_n_p.def_impl(_select_n_impl)
select_n_p.def_abstract_eval(_select_n_abstract_eval)


def _select_n_transpose(ct, which, *cases):
    if isinstance(which, UndefinedPrimal):
        raise ValueError("select_n is not linear in its predicate")
    if isinstance(ct, Zero):
        return [None] * (len(cases) + 1)
    zeros = zeros_like_aval(ct.aval)
    out = [None]
    for i, case in enumerate(cases):
        if isinstance(case, UndefinedPrimal):
            picked = [ct if j == i else zeros for j in range(len(cases))]
            out.append(select_n(which, *picked))
        else:
            out.append(None)
    return out


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    if all(isinstance(t, Zero) for t in tangents[1:]):
        return out, Zero(tangent_aval(out.aval))
    return out, select_n_p.bind(which, *(instantiate(t) for t in tangents[1:]))


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose
_vectorized_batch_rule(select_n_p, scalars_stay=lambda i: i == 0)
register_lowering(select_n_p, fusible=True, c=("select",))


def select_n(which, *cases):
    """``cases[which]`` elementwise; ``which`` is a bool (two cases) or int32 array."""
    return select_n_p.bind(to_array(which, "lax.select_n predicate"),
                           *lax_operands("select_n", cases))


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (a bool predicate)."""
    return select_n(pred, on_false, on_true)

"""Elementwise primitives: arithmetic, transcendental, comparison, bitwise, select, convert.

Impls are NumPy ufuncs on the operands as given (a 0-d operand broadcasts), or, for the
elementary functions of ``invarax.kernels.elementary`` (exp, log, sin, ...), invarax's own
kernels, whose bits are the same on every CPU (N6); so a value's bits depend only on its
inputs, never on the array's length, layout or batch position. Eager evaluation and ``jit``
call these same impls.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.pytree import tree_map
from ..core.trace import Primitive
from ..interpreters import emitted
from ..interpreters.ad import (
    UndefinedPrimal,
    Zero,
    defbilinear,
    defjvp,
    defjvp_zero,
    deflinear,
    instantiate,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    unbroadcast,
    zeros_like_aval,
)
from ..interpreters.batching import axis_size_of, batching_rules, moveaxis, not_mapped
from ..kernels.elementary import LOG2, LOG10
from ..kernels.elementary import kernel as _elementary
from ..kernels.elementary import kernel2 as _elementary2
from ._util import (
    ANY,
    FLOAT,
    INTEGRAL,
    NUMBER,
    broadcast_shapes_strict,
    check_kinds,
    check_same_dtypes,
    lax_operands,
)


def defvectorized(name: str, impl, kinds: str = ANY, out_dtype=None) -> Primitive:
    """An elementwise primitive of any arity: equal dtypes, equal shapes or 0-d scalars.

    Arguments:
        name: the primitive's name.
        impl: a NumPy function of the operands.
        kinds: the dtype kinds accepted (``"fc"``: floating and complex).
        out_dtype: the output dtype if it is not the operands' (``bool`` for comparisons).

    Returns:
        The primitive, with impl and abstract-eval rules defined.
    """
    prim = Primitive(name)

    def abstract_eval(*avals):
        check_same_dtypes(name, avals)
        check_kinds(name, avals[0], kinds)
        shape = broadcast_shapes_strict(name, avals)
        weak = all(a.weak_type for a in avals)  # as JAX, comparisons included
        return ShapedArray(shape, avals[0].dtype if out_dtype is None else out_dtype, weak)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    return prim


def _round_impl(x, rounding_method):
    if rounding_method == 1:
        return np.round(x)
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(x.dtype)


def _int_div(x, y):
    q = np.floor_divide(x, y)
    # C semantics: round toward zero (floor_divide rounds toward -inf).
    fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    return np.where(fix, q + 1, q).astype(q.dtype)


def _div_kernel(dtype):
    """div's computation for ``dtype``: C's truncating division for integers, else a ufunc."""
    return _int_div if dtype.kind in "iu" else np.divide


def _div_impl(x, y):
    return _div_kernel(x.dtype)(x, y)


def _rsqrt_impl(x):
    return np.ones((), x.dtype) / np.sqrt(x)


def _pow_impl(x, y):
    # Both operands materialised at the full shape: NumPy's power takes shortcuts (sqrt,
    # reciprocal, square) for a broadcast exponent of 0.5, -1 or 2, which round differently
    # from its general loop; the general loop alone keeps each element's bits.
    shape = np.broadcast_shapes(x.shape, y.shape)
    full = shape or (1,)
    x = np.array(np.broadcast_to(x, full))  # copies: real strides, never 0
    y = np.array(np.broadcast_to(y, full))
    return np.power(x, y).reshape(shape)


def _sign_impl(x):
    return np.sign(x)


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


UNARY = {
    # name: (impl, accepted kinds)
    "neg": (np.negative, NUMBER),
    "sign": (_sign_impl, NUMBER),
    "floor": (np.floor, "f"),
    "ceil": (np.ceil, "f"),
    "exp": (_elementary("exp"), FLOAT),
    "exp2": (_elementary("exp2"), FLOAT),
    "log": (_elementary("log"), FLOAT),
    "expm1": (_elementary("expm1"), FLOAT),
    "log1p": (_elementary("log1p"), FLOAT),
    "tanh": (_elementary("tanh"), FLOAT),
    "logistic": (_elementary("logistic"), FLOAT),
    "sin": (_elementary("sin"), FLOAT),
    "cos": (_elementary("cos"), FLOAT),
    "tan": (_elementary("tan"), FLOAT),
    "asin": (_elementary("asin"), FLOAT),
    "acos": (_elementary("acos"), FLOAT),
    "atan": (_elementary("atan"), FLOAT),
    "sinh": (_elementary("sinh"), FLOAT),
    "cosh": (_elementary("cosh"), FLOAT),
    "asinh": (_elementary("asinh"), FLOAT),
    "acosh": (_elementary("acosh"), FLOAT),
    "atanh": (_elementary("atanh"), FLOAT),
    "sqrt": (np.sqrt, FLOAT),
    "rsqrt": (_rsqrt_impl, FLOAT),
    "cbrt": (_elementary("cbrt"), "f"),
    "not": (np.invert, INTEGRAL),
    # jnp.log2 and jnp.log10 (JAX's log(x) / log(base), which their flag-off impl keeps)
    "log2": (_elementary("log2"), FLOAT),
    "log10": (_elementary("log10"), FLOAT),
}

BINARY = {
    "add": (np.add, NUMBER),
    "sub": (np.subtract, NUMBER),
    "mul": (np.multiply, NUMBER),
    "div": (_div_impl, NUMBER),
    "rem": (np.fmod, NUMBER),
    "pow": (_elementary2("pow", _pow_impl), FLOAT),
    "max": (np.maximum, ANY),
    "min": (np.minimum, ANY),
    "atan2": (_elementary2("atan2", np.arctan2), "f"),
    "nextafter": (np.nextafter, "f"),
    "and": (np.bitwise_and, INTEGRAL),
    "or": (np.bitwise_or, INTEGRAL),
    "xor": (np.bitwise_xor, INTEGRAL),
    "shift_left": (_shift_impl(np.left_shift), "iu"),
    "shift_right_logical": (_shift_impl(np.right_shift), "iu"),
}

COMPARISONS = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}

unary_p = {name: defvectorized(name, impl, kinds) for name, (impl, kinds) in UNARY.items()}


def _strong_abstract_eval(name):
    """log2 and log10 are never weakly typed: JAX divides by a strong ``log(base)``."""

    def abstract_eval(x):
        check_kinds(name, x, FLOAT)
        return ShapedArray(x.shape, x.dtype, False)

    return abstract_eval


for _name in ("log2", "log10"):
    unary_p[_name].def_abstract_eval(_strong_abstract_eval(_name))
binary_p = {name: defvectorized(name, impl, kinds) for name, (impl, kinds) in BINARY.items()}
compare_p = {
    name: defvectorized(name, impl, ANY, out_dtype=dtypes.bool_)
    for name, impl in COMPARISONS.items()
}
is_finite_p = defvectorized("is_finite", np.isfinite, "f", out_dtype=dtypes.bool_)
conj_p = defvectorized("conj", np.conj, "c")


_REAL_PART = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _complex_part(name, impl) -> Primitive:
    def abstract_eval(x):
        check_kinds(name, x, "c")
        return ShapedArray(x.shape, _REAL_PART[x.dtype], x.weak_type)

    prim = Primitive(name)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    return prim


# stop_gradient: the identity, whose derivative is zero (see the ad rules).
stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x: x)
stop_gradient_p.def_abstract_eval(lambda x: x)

# abs: the magnitude, so complex inputs give their real dtype.
def _abs_abstract_eval(x):
    check_kinds("abs", x, NUMBER)
    return x.update(dtype=_REAL_PART.get(x.dtype, x.dtype))


abs_p = Primitive("abs")
abs_p.def_impl(np.abs)
abs_p.def_abstract_eval(_abs_abstract_eval)

real_p = _complex_part("real", np.real)
imag_p = _complex_part("imag", np.imag)


# round: rounding_method 0 rounds half away from zero, 1 half to even (jnp.round).
def _round_abstract_eval(x, rounding_method):
    check_kinds("round", x, "f")
    return x


round_p = Primitive("round")
round_p.def_impl(_round_impl)
round_p.def_abstract_eval(_round_abstract_eval)


# integer_pow: x ** y for a static int y, by binary exponentiation (XLA's order of products).
def _integer_pow_impl(x, y):
    if y == 0:
        return np.ones_like(x)
    acc, base, n = None, x, -y if y < 0 else y
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    return np.ones((), x.dtype) / acc if y < 0 else acc


def _integer_pow_abstract_eval(x, y):
    check_kinds("integer_pow", x, NUMBER)
    if y < 0 and x.dtype.kind in "iu":
        raise TypeError(f"integer_pow of an integer array to a negative power ({y}) is not exact; "
                        "convert to a float dtype first")
    return x


integer_pow_p = Primitive("integer_pow")
integer_pow_p.def_impl(_integer_pow_impl)
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)


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


# convert_element_type: a cast. Float -> int truncates toward zero and saturates, NaN
# giving 0, as XLA (and so JAX): NumPy's cast of an out-of-range float is undefined in C
# and differs between machines (x86 gives the lowest integer, ARM saturates).
def _convert_impl(x, new_dtype, weak_type):
    new_dtype = np.dtype(new_dtype)
    if x.dtype.kind == "c" and new_dtype.kind in "iuf":
        x = x.real  # complex -> real keeps the real part, as XLA
    if x.dtype.kind != "f" or new_dtype.kind not in "iu":
        return x.astype(new_dtype)
    info = np.iinfo(new_dtype)
    t = np.trunc(x)
    high = t >= 2.0 ** (info.bits - (new_dtype.kind == "i"))  # powers of two are exact
    low = t < (-(2.0 ** (info.bits - 1)) if new_dtype.kind == "i" else 0.0)
    out = np.where(high | low | np.isnan(t), 0, t).astype(new_dtype)
    out[high] = info.max
    out[low] = info.min
    return out


def _convert_abstract_eval(x, new_dtype, weak_type):
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.def_impl(_convert_impl)
convert_element_type_p.def_abstract_eval(_convert_abstract_eval)


# ---------------------------------------------------------------------------------------
# lax-level wrappers.


def _unary(name):
    prim = unary_p[name]

    def op(x):
        return prim.bind(to_array(x, f"lax.{name} operand"))

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` (the ``{name}`` primitive)."
    return op


def _binary(prim):
    def op(x, y):
        return prim.bind(*lax_operands(prim.name, (x, y)))

    op.__name__ = prim.name
    op.__doc__ = f"Elementwise ``{prim.name}`` of two arrays of equal dtype and shape."
    return op


(neg, sign, floor, ceil, exp, exp2, log, expm1, log1p, tanh, logistic, sin, cos, tan, asin,
 acos, atan, sinh, cosh, asinh, acosh, atanh, sqrt, rsqrt, cbrt, bitwise_not, log2, log10) = (
    _unary(n) for n in UNARY
)
(add, sub, mul, div, rem, pow, max, min, atan2, nextafter, bitwise_and, bitwise_or,
 bitwise_xor, shift_left, shift_right_logical) = (_binary(binary_p[n]) for n in BINARY)
eq, ne, lt, le, gt, ge = (_binary(compare_p[n]) for n in COMPARISONS)


def is_finite(x):
    """Elementwise: True where ``x`` is neither infinite nor NaN."""
    return is_finite_p.bind(to_array(x, "lax.is_finite operand"))


def round(x, rounding_method=0):
    """Round to the nearest integer; ties away from zero (0) or to even (1)."""
    return round_p.bind(to_array(x, "lax.round operand"), rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    """``x ** y`` for a static Python int ``y``."""
    return integer_pow_p.bind(to_array(x, "lax.integer_pow operand"), y=int(y))


def square(x):
    """``x * x``."""
    return integer_pow(x, 2)


def select_n(which, *cases):
    """``cases[which]`` elementwise; ``which`` is a bool (two cases) or int32 array."""
    return select_n_p.bind(to_array(which, "lax.select_n predicate"),
                           *lax_operands("select_n", cases))


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (a bool predicate)."""
    return select_n(pred, on_false, on_true)


def abs(x):  # noqa: A001
    """Elementwise absolute value (the magnitude, a real array, for complex input)."""
    return abs_p.bind(to_array(x, "lax.abs operand"))


def real(x):
    """The real part of a complex array."""
    return real_p.bind(to_array(x, "lax.real operand"))


def imag(x):
    """The imaginary part of a complex array."""
    return imag_p.bind(to_array(x, "lax.imag operand"))


def conj(x):
    """The complex conjugate."""
    return conj_p.bind(to_array(x, "lax.conj operand"))


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Cast ``x`` to ``new_dtype`` (canonicalised for the x64 flag)."""
    x = to_array(x, "lax.convert_element_type operand")
    new_dtype = dtypes.canonicalize(new_dtype)
    if x.dtype == new_dtype and x.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def stop_gradient(x):
    """The identity on a pytree of arrays, but differentiation sees a constant.

    Example:
        >>> grad(lambda x: x * stop_gradient(x))(3.0)
        Array(3., dtype=float32, weak_type=True)
    """
    def stop(leaf):
        leaf = to_array(leaf, "lax.stop_gradient operand")
        return stop_gradient_p.bind(leaf) if dtypes.is_inexact(leaf.dtype) else leaf

    return tree_map(stop, x)


# ---------------------------------------------------------------------------------------
# Differentiation rules. Each derivative is a function (t, out, *primals) of lax ops;
# ``out`` is the primitive's output, reused where it saves work (exp, tanh, sqrt).


def _const(x, value):
    """``value`` as a weak scalar of ``x``'s dtype (a literal in jaxprs)."""
    from ..core.array import ArrayImpl

    return ArrayImpl(np.asarray(value, x.dtype), True)


UNARY_DERIVATIVES = {
    "exp": lambda t, y, x: mul(t, y),
    "exp2": lambda t, y, x: mul(t, mul(y, _const(y, LOG2))),
    "log": lambda t, y, x: div(t, x),
    "expm1": lambda t, y, x: mul(t, add(y, _const(y, 1))),
    "log1p": lambda t, y, x: div(t, add(x, _const(x, 1))),
    "tanh": lambda t, y, x: mul(t, sub(_const(y, 1), mul(y, y))),
    "logistic": lambda t, y, x: mul(t, mul(y, sub(_const(y, 1), y))),
    "sin": lambda t, y, x: mul(t, cos(x)),
    "cos": lambda t, y, x: neg(mul(t, sin(x))),
    "tan": lambda t, y, x: mul(t, add(_const(y, 1), mul(y, y))),
    "asin": lambda t, y, x: mul(t, rsqrt(sub(_const(x, 1), mul(x, x)))),
    "acos": lambda t, y, x: neg(mul(t, rsqrt(sub(_const(x, 1), mul(x, x))))),
    "atan": lambda t, y, x: div(t, add(_const(x, 1), mul(x, x))),
    "sinh": lambda t, y, x: mul(t, cosh(x)),
    "cosh": lambda t, y, x: mul(t, sinh(x)),
    "asinh": lambda t, y, x: mul(t, rsqrt(add(mul(x, x), _const(x, 1)))),
    "acosh": lambda t, y, x: mul(t, rsqrt(mul(sub(x, _const(x, 1)), add(x, _const(x, 1))))),
    "atanh": lambda t, y, x: div(t, sub(_const(x, 1), mul(x, x))),
    "sqrt": lambda t, y, x: div(t, mul(_const(y, 2), y)),
    "rsqrt": lambda t, y, x: mul(t, mul(_const(y, -0.5), div(y, x))),
    "cbrt": lambda t, y, x: mul(t, mul(_const(y, 1 / 3), integer_pow(y, -2))),
    # JAX's derivative of log(x) / log(base): (t / x) / log(base)
    "log2": lambda t, y, x: div(div(t, x), _const(x, LOG2)),
    "log10": lambda t, y, x: div(div(t, x), _const(x, LOG10)),
}

for _name, _f in UNARY_DERIVATIVES.items():
    defjvp(unary_p[_name], _f)
for _name in ("sign", "floor", "ceil", "not"):
    defjvp_zero(unary_p[_name])
for _prim in (*compare_p.values(), is_finite_p, round_p, binary_p["nextafter"],
              binary_p["and"], binary_p["or"], binary_p["xor"], binary_p["shift_left"],
              binary_p["shift_right_logical"]):
    defjvp_zero(_prim)


def _abs_jvp(t, y, x):
    if x.dtype.kind == "c":
        zero = _const(y, 0)
        safe = select(eq(y, zero), _broadcast_like(_const(y, 1), y), y)
        return select(eq(y, zero), _broadcast_like(zero, y), div(real(mul(conj(x), t)), safe))
    return select(ge(x, _const(x, 0)), t, neg(t))  # abs'(0) is 1, as JAX


defjvp(abs_p, _abs_jvp)


def _neg_transpose(ct, x):
    return [neg(ct)]


deflinear(unary_p["neg"], _neg_transpose)


def _add_transpose(ct, x, y):
    return [_ct_for(x, ct), _ct_for(y, ct)]


def _sub_transpose(ct, x, y):
    return [_ct_for(x, ct), _ct_for(y, None if isinstance(ct, Zero) else neg(ct))]


def _ct_for(arg, ct):
    """The cotangent of ``arg`` if it is a linear input (summed if lax broadcast it)."""
    if not isinstance(arg, UndefinedPrimal) or ct is None:
        return None
    return unbroadcast(arg.aval, ct)


deflinear(binary_p["add"], _add_transpose)
deflinear(binary_p["sub"], _sub_transpose)


def _mul_transpose_lhs(ct, lhs_aval, rhs):
    return unbroadcast(lhs_aval, mul(ct, rhs))


def _mul_transpose_rhs(ct, lhs, rhs_aval):
    return unbroadcast(rhs_aval, mul(lhs, ct))


defbilinear(binary_p["mul"], _mul_transpose_lhs, _mul_transpose_rhs)


def _div_transpose(ct, x, y):
    if isinstance(y, UndefinedPrimal):
        raise ValueError("div is linear in its numerator only")
    return [None if isinstance(ct, Zero) else unbroadcast(x.aval, div(ct, y)), None]


def _div_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = div(x, y)
    terms = []
    if not isinstance(tx, Zero):
        terms.append(div(tx, y))
    if not isinstance(ty, Zero):
        terms.append(mul(neg(ty), div(out, y)))
    return out, terms[0] if len(terms) == 1 else add(*terms)


jvp_rules[binary_p["div"]] = _div_jvp
transpose_rules[binary_p["div"]] = _div_transpose


def _rem_jvp_y(t, out, x, y):
    quotient = div(sub(x, out), y)  # x = q * y + out with q an integer value
    return neg(mul(t, quotient))


defjvp(binary_p["rem"], lambda t, out, x, y: _broadcast_like(t, out), _rem_jvp_y)


def _broadcast_like(t, out):
    from .shape import broadcast_in_dim

    return t if t.shape == out.shape else broadcast_in_dim(t, out.shape, ())


def _pow_jvp_x(t, out, x, y):
    # d/dx x**y = y * x**(y-1), written as y * x**y / x where x != 0.
    safe = pow(x, sub(y, _const(y, 1)))
    return mul(t, mul(y, safe))


def _pow_jvp_y(t, out, x, y):
    zero = _const(x, 0)
    log_x = select(eq(x, zero), _broadcast_like(zero, out), log(_broadcast_like(x, out)))
    return mul(t, mul(out, log_x))


defjvp(binary_p["pow"], _pow_jvp_x, _pow_jvp_y)


def _minmax_jvp(pick, pick_or_tie):
    # Ties split the tangent evenly between the two arguments, as JAX: the weight is
    # 1, 1/2 or 0, computed exactly as (pick + pick_or_tie) * 1/2 from the two comparisons
    # (no full-size constant to select from).
    def contribution(mine, other):
        def f(t, out, x, y):
            a, b = (x, y) if mine == 0 else (y, x)
            count = add(convert_element_type(pick(a, b), t.dtype),
                        convert_element_type(pick_or_tie(a, b), t.dtype))
            weight = mul(count, _const(t, 0.5))
            return mul(_broadcast_like(t, out), weight)

        return f

    return contribution(0, 1), contribution(1, 0)


defjvp(binary_p["max"], *_minmax_jvp(gt, ge))
defjvp(binary_p["min"], *_minmax_jvp(lt, le))


def _atan2_jvp(t, out, x, y, wrt):
    denom = add(mul(x, x), mul(y, y))
    return mul(t, div(y, denom)) if wrt == 0 else neg(mul(t, div(x, denom)))


defjvp(binary_p["atan2"], lambda t, out, x, y: _atan2_jvp(t, out, x, y, 0),
       lambda t, out, x, y: _atan2_jvp(t, out, x, y, 1))


def _integer_pow_jvp(t, out, x, *, y):
    if y == 0:
        return mul(t, _const(t, 0))
    return mul(t, mul(_const(x, y), integer_pow(x, y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp)


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


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not dtypes.is_inexact(new_dtype) or isinstance(t, Zero):
        return out, Zero(tangent_aval(out.aval))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=False)


def _convert_transpose(ct, x, *, new_dtype, weak_type):
    if isinstance(ct, Zero):
        return [None]
    if ct.dtype.kind == "c" and x.aval.dtype.kind != "c":
        ct = real(ct)  # the transpose of the real -> complex embedding
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type)]


jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = _convert_transpose


def _stop_gradient_jvp(primals, tangents):
    return stop_gradient_p.bind(*primals), Zero(tangent_aval(primals[0].aval))


jvp_rules[stop_gradient_p] = _stop_gradient_jvp
def _complex_part_transpose(unit):
    # real(z) and imag(z) are real-linear; their transposes embed ct as ct * 1 or ct * -1j.
    def transpose(ct, x):
        if isinstance(ct, Zero):
            return [None]
        embedded = convert_element_type(ct, x.aval.dtype)
        return [mul(embedded, _const(embedded, unit))]

    return transpose


deflinear(real_p, _complex_part_transpose(1))
deflinear(imag_p, _complex_part_transpose(-1j))
deflinear(conj_p, lambda ct, x: [conj(ct)])


# ---------------------------------------------------------------------------------------
# Batching: every elementwise primitive maps over a batch axis by moving it to the front
# (a view) and broadcasting the operands that lack it; each element's bits are unchanged.


def _vectorized_batch_rule(prim, scalars_stay=lambda i: True):
    """``scalars_stay(i)``: whether an unbatched 0-d operand ``i`` may stay 0-d (lax ops
    broadcast it), or must be broadcast like the others (select_n's cases)."""

    def rule(vals, dims, **params):
        from .shape import broadcast_in_dim

        size = axis_size_of(vals, dims)
        shapes = [v.shape if d is not_mapped else v.shape[:d] + v.shape[d + 1:]
                  for v, d in zip(vals, dims, strict=True)]
        shape = next((s for s in shapes if s), ())
        args = []
        for i, (v, d, s) in enumerate(zip(vals, dims, shapes, strict=True)):
            if d is not_mapped:
                keep = s == () and scalars_stay(i)
                args.append(v if keep else broadcast_in_dim(
                    v, (size, *shape), tuple(range(len(shape) - len(s) + 1, len(shape) + 1))))
            else:
                v = moveaxis(v, d, 0)
                args.append(v if s == shape else broadcast_in_dim(v, (size, *shape), (0,)))
        return prim.bind(*args, **params), 0

    batching_rules[prim] = rule


for _prim in (*unary_p.values(), *binary_p.values(), *compare_p.values(), is_finite_p,
              conj_p, real_p, imag_p, abs_p, round_p, integer_pow_p,
              convert_element_type_p, stop_gradient_p):
    _vectorized_batch_rule(_prim)
_vectorized_batch_rule(select_n_p, scalars_stay=lambda i: i == 0)


# ---------------------------------------------------------------------------------------
# Chunked evaluation (invarax/compiler/fusion.py): each primitive below maps elements to
# elements, so its impl applied to equal slices of the operands (a 0-d operand as it is)
# gives every element the bits of the whole-array call. ``chunk_kernel`` is what a chunk
# calls: where it is a NumPy ufunc, it writes into the chunk's buffer
# (``kernel(*slices, out=buffer)``, the same loop and dtypes); otherwise the chunk is
# computed by it and copied in.

CHUNKABLE = {  # elementwise primitives of other files (ops/fused.py) add themselves
    *unary_p.values(), *binary_p.values(), *compare_p.values(), is_finite_p, conj_p,
    abs_p, real_p, imag_p, round_p, integer_pow_p, select_n_p, convert_element_type_p,
}

# The impls that dispatch on the operands' dtype: the function of the dtype they call.
_DTYPE_KERNELS = {binary_p["div"]: _div_kernel}


def chunk_kernel(prim: Primitive, dtype):
    """The function that ``prim``'s impl applies to operands of ``dtype`` (the impl itself,
    unless the impl dispatches on the dtype), for a primitive in ``CHUNKABLE``.

    Example:
        >>> chunk_kernel(binary_p["div"], np.dtype(np.float32))
        <ufunc 'divide'>
    """
    kernel = _DTYPE_KERNELS.get(prim)
    return prim.impl if kernel is None else kernel(dtype)


emitted.provide(add=add)

"""Elementwise arithmetic: ``+ - * /``, remainder, max/min, sign and rounding, abs,
``integer_pow``, conversions, the complex parts and ``stop_gradient``.

Impls are NumPy ufuncs (or compositions of them) on the operands as given (a 0-d operand
broadcasts), so a value's bits depend only on its inputs, never on the array's length,
layout or batch position. Eager evaluation and ``jit`` call these same impls. Each
primitive's JVP (a function ``(t, out, *primals)`` of lax ops), transpose, batching and
lowering rules sit just under it.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
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
    jvp_rules,
    tangent_aval,
    transpose_rules,
    unbroadcast,
)
from ._util import ANY, NUMBER, check_kinds
from ._vectorized import (
    _binary,
    _broadcast_like,
    _const,
    _unary,
    _vectorized_batch_rule,
    defvectorized,
)
from .logical import eq, ge, gt, le, lt, select


def _vectorized(name, impl, kinds, **lowering):
    prim = defvectorized(name, impl, kinds, **lowering)
    _vectorized_batch_rule(prim)
    return prim


def _ct_for(arg, ct):
    """The cotangent of ``arg`` if it is a linear input (summed if lax broadcast it)."""
    if not isinstance(arg, UndefinedPrimal) or ct is None:
        return None
    return unbroadcast(arg.aval, ct)


# neg, sign, floor, ceil
neg_p = _vectorized("neg", np.negative, NUMBER, c=("neg",))
deflinear(neg_p, lambda ct, x: [neg(ct)])
def _sign_impl(x):
    return np.sign(x)


sign_p = _vectorized("sign", _sign_impl, NUMBER, c=("sign",))
floor_p = _vectorized("floor", np.floor, "f", c=("quiet", "floor"))
ceil_p = _vectorized("ceil", np.ceil, "f", c=("quiet", "ceil"))
for _prim in (sign_p, floor_p, ceil_p):
    defjvp_zero(_prim)
neg, sign, floor, ceil = (_unary(p) for p in (neg_p, sign_p, floor_p, ceil_p))


# add, sub, mul: linear or bilinear.
add_p = _vectorized("add", np.add, NUMBER, c=("arith", "+"), operator="+",
                    sums_pieces=True)
deflinear(add_p, lambda ct, x, y: [_ct_for(x, ct), _ct_for(y, ct)])
sub_p = _vectorized("sub", np.subtract, NUMBER, c=("arith", "-"), operator="-")
deflinear(sub_p, lambda ct, x, y: [_ct_for(x, ct),
                                   _ct_for(y, None if isinstance(ct, Zero) else neg(ct))])
mul_p = _vectorized("mul", np.multiply, NUMBER, c=("arith", "*"), operator="*")
defbilinear(mul_p, lambda ct, lhs_aval, rhs: unbroadcast(lhs_aval, mul(ct, rhs)),
            lambda ct, lhs, rhs_aval: unbroadcast(rhs_aval, mul(lhs, ct)))


# div: C's truncating division for integers, else true division.
def _int_div(x, y):
    q = np.floor_divide(x, y)
    # C semantics: round toward zero (floor_divide rounds toward -inf).
    fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    return np.where(fix, q + 1, q).astype(q.dtype)


def _div_kernel(dtype):
    """div's computation for ``dtype``: C's truncating division for integers, else a ufunc.

    Example:
        >>> _div_kernel(np.dtype(np.float32))
        <ufunc 'divide'>
    """
    return _int_div if dtype.kind in "iu" else np.divide


def _div_impl(x, y):
    return _div_kernel(x.dtype)(x, y)


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


div_p = _vectorized("div", _div_impl, NUMBER, c=("arith", "/"), operator="/",
                    kernel_of=_div_kernel)
jvp_rules[div_p] = _div_jvp
transpose_rules[div_p] = _div_transpose


# rem: C's fmod.
def _rem_jvp_y(t, out, x, y):
    quotient = div(sub(x, out), y)  # x = q * y + out with q an integer value
    return neg(mul(t, quotient))


rem_p = _vectorized("rem", np.fmod, NUMBER, c=("rem",))
defjvp(rem_p, lambda t, out, x, y: _broadcast_like(t, out), _rem_jvp_y)


# max, min (a NaN operand wins, as NumPy's maximum and minimum).
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


max_p = _vectorized("max", np.maximum, ANY, c=("extremum", ">"))
defjvp(max_p, *_minmax_jvp(gt, ge))
min_p = _vectorized("min", np.minimum, ANY, c=("extremum", "<"))
defjvp(min_p, *_minmax_jvp(lt, le))
nextafter_p = _vectorized("nextafter", np.nextafter, "f", c=("nextafter",))
defjvp_zero(nextafter_p)
add, sub, mul, div, rem, max, min, nextafter = (
    _binary(p) for p in (add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, nextafter_p))
emitted.provide(add=add)  # the sum of cotangents that autodiff emits


# ---------------------------------------------------------------------------------------
# Complex parts and conj.

_REAL_PART = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _complex_part(name, impl, unit) -> Primitive:
    def abstract_eval(x):
        check_kinds(name, x, "c")
        return ShapedArray(x.shape, _REAL_PART[x.dtype], x.weak_type)

    # real(z) and imag(z) are real-linear; their transposes embed ct as ct * 1 or ct * -1j.
    def transpose(ct, x):
        if isinstance(ct, Zero):
            return [None]
        embedded = convert_element_type(ct, x.aval.dtype)
        return [mul(embedded, _const(embedded, unit))]

    prim = Primitive(name)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    deflinear(prim, transpose)
    _vectorized_batch_rule(prim)
    register_lowering(prim, fusible=True)
    return prim


real_p = _complex_part("real", np.real, 1)
imag_p = _complex_part("imag", np.imag, -1j)
conj_p = _vectorized("conj", np.conj, "c")
deflinear(conj_p, lambda ct, x: [conj(ct)])


def real(x):
    """The real part of a complex array."""
    return real_p.bind(to_array(x, "lax.real operand"))


def imag(x):
    """The imaginary part of a complex array."""
    return imag_p.bind(to_array(x, "lax.imag operand"))


def conj(x):
    """The complex conjugate."""
    return conj_p.bind(to_array(x, "lax.conj operand"))


# abs: the magnitude, so complex inputs give their real dtype.
def _abs_abstract_eval(x):
    check_kinds("abs", x, NUMBER)
    return x.update(dtype=_REAL_PART.get(x.dtype, x.dtype))


def _abs_jvp(t, y, x):
    if x.dtype.kind == "c":
        zero = _const(y, 0)
        safe = select(eq(y, zero), _broadcast_like(_const(y, 1), y), y)
        return select(eq(y, zero), _broadcast_like(zero, y), div(real(mul(conj(x), t)), safe))
    return select(ge(x, _const(x, 0)), t, neg(t))  # abs'(0) is 1, as JAX


abs_p = Primitive("abs")
abs_p.def_impl(np.abs)
abs_p.def_abstract_eval(_abs_abstract_eval)
defjvp(abs_p, _abs_jvp)
_vectorized_batch_rule(abs_p)
register_lowering(abs_p, fusible=True, c=("abs",))


def abs(x):  # noqa: A001
    """Elementwise absolute value (the magnitude, a real array, for complex input)."""
    return abs_p.bind(to_array(x, "lax.abs operand"))


# round: rounding_method 0 rounds half away from zero, 1 half to even (jnp.round).
def _round_impl(x, rounding_method):
    if rounding_method == 1:
        return np.round(x)
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(x.dtype)


def _round_abstract_eval(x, rounding_method):
    check_kinds("round", x, "f")
    return x


round_p = Primitive("round")
round_p.def_impl(_round_impl)
round_p.def_abstract_eval(_round_abstract_eval)
defjvp_zero(round_p)
_vectorized_batch_rule(round_p)
register_lowering(round_p, fusible=True, c=("round",))


def round(x, rounding_method=0):
    """Round to the nearest integer; ties away from zero (0) or to even (1)."""
    return round_p.bind(to_array(x, "lax.round operand"), rounding_method=int(rounding_method))


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


def _integer_pow_jvp(t, out, x, *, y):
    if y == 0:
        return mul(t, _const(t, 0))
    return mul(t, mul(_const(x, y), integer_pow(x, y - 1)))


integer_pow_p = Primitive("integer_pow")
integer_pow_p.def_impl(_integer_pow_impl)
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
defjvp(integer_pow_p, _integer_pow_jvp)
_vectorized_batch_rule(integer_pow_p)
register_lowering(integer_pow_p, fusible=True, c=("integer_pow",),
                  noop=lambda ndim, p: p["y"] == 1)  # x ** 1 is x, bit for bit


def integer_pow(x, y: int):
    """``x ** y`` for a static Python int ``y``."""
    return integer_pow_p.bind(to_array(x, "lax.integer_pow operand"), y=int(y))


def square(x):
    """``x * x``."""
    return integer_pow(x, 2)


# convert_element_type: a cast. Float -> int truncates toward zero and saturates, NaN
# giving 0, as XLA (and so JAX): NumPy's cast of an out-of-range float is undefined in C
# and differs between machines (x86 gives the lowest integer, ARM saturates).
def _convert_impl(x, new_dtype, weak_type):
    new_dtype = np.dtype(new_dtype)
    if x.dtype.kind == "c" and new_dtype.kind in "iuf":
        x = x.real  # complex -> real keeps the real part, as XLA
    kind = dtypes.kind(new_dtype)
    if x.dtype.kind != "f" or kind not in "iu":
        return x.astype(new_dtype)
    info = (dtypes.ml_dtypes().iinfo if dtypes.is_ml_dtype(new_dtype) else np.iinfo)(new_dtype)
    t = np.trunc(x)
    high = t >= 2.0 ** (info.bits - (kind == "i"))  # powers of two are exact
    low = t < (-(2.0 ** (info.bits - 1)) if kind == "i" else 0.0)
    out = np.where(high | low | np.isnan(t), 0, t).astype(new_dtype)
    out[high] = info.max
    out[low] = info.min
    return out


def _convert_abstract_eval(x, new_dtype, weak_type):
    return ShapedArray(x.shape, new_dtype, weak_type)


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


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.def_impl(_convert_impl)
convert_element_type_p.def_abstract_eval(_convert_abstract_eval)
jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = _convert_transpose
_vectorized_batch_rule(convert_element_type_p)
register_lowering(convert_element_type_p, fusible=True, c=("convert",),
                  noop=lambda ndim, p: True)  # to the operand's own dtype and weak type


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Cast ``x`` to ``new_dtype`` (canonicalised for the x64 flag)."""
    x = to_array(x, "lax.convert_element_type operand")
    new_dtype = dtypes.canonicalize(new_dtype)
    if x.dtype == new_dtype and x.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


# stop_gradient: the identity, whose derivative is zero.
def _stop_gradient_jvp(primals, tangents):
    return stop_gradient_p.bind(*primals), Zero(tangent_aval(primals[0].aval))


stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x: x)
stop_gradient_p.def_abstract_eval(lambda x: x)
jvp_rules[stop_gradient_p] = _stop_gradient_jvp
_vectorized_batch_rule(stop_gradient_p)
register_lowering(stop_gradient_p, c=("identity",))  # a view: never fused


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

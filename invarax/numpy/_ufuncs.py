"""Elementwise ``invarax.numpy`` functions: promotion and broadcasting, then lax ops."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..ops import elementwise as lax
from ..ops import reductions
from ._creation import zeros_like
from ._promote import asarray_arg, broadcast_shapes, broadcast_to_shape, convert, promote_args


def _unary_inexact(name, op):
    def f(x, /):
        (x,) = promote_args(name, x, to_inexact=True)
        return op(x)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}``, as ``numpy.{name}`` (integers promote to float)."
    return f


(exp, exp2, expm1, log, log1p, sqrt, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh,
 arcsinh, arccosh, arctanh, cbrt) = (
    _unary_inexact(name, op) for name, op in (
        ("exp", lax.exp), ("exp2", lax.exp2), ("expm1", lax.expm1), ("log", lax.log),
        ("log1p", lax.log1p), ("sqrt", lax.sqrt), ("sin", lax.sin), ("cos", lax.cos),
        ("tan", lax.tan), ("arcsin", lax.asin), ("arccos", lax.acos), ("arctan", lax.atan),
        ("sinh", lax.sinh), ("cosh", lax.cosh), ("tanh", lax.tanh), ("arcsinh", lax.asinh),
        ("arccosh", lax.acosh), ("arctanh", lax.atanh), ("cbrt", lax.cbrt),
    )
)


log2 = _unary_inexact("log2", lax.log2)  # JAX's log(x) / log(2); correctly rounded with
log10 = _unary_inexact("log10", lax.log10)  # invarax_exact_elementary (docs/numerics.md)


def _binary(name, op, to_inexact=False, bool_op=None):
    def f(x1, x2, /):
        a, b = promote_args(name, x1, x2, to_inexact=to_inexact)
        if bool_op is not None and a.dtype == dtypes.bool_:
            return bool_op(a, b)
        return op(a, b)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting and JAX dtype promotion."
    return f


add = _binary("add", lax.add, bool_op=lax.bitwise_or)
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", lax.mul, bool_op=lax.bitwise_and)
true_divide = divide = _binary("true_divide", lax.div, to_inexact=True)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, to_inexact=True)
nextafter = _binary("nextafter", lax.nextafter, to_inexact=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)


def _logical(name, op):
    def f(*args):
        # JAX's weak types: one operand keeps its own (a weak bool stays weak); a non-bool
        # operand is compared with a zero that is weak only when every operand is a scalar
        # (JAX's rank promotion makes a scalar beside an array 1-d, so its test is strong).
        if len(args) == 1:
            arrays = [asarray_arg(args[0], name)]
        else:
            arrays = promote_args(name, *args)
        scalars = all(a.ndim == 0 for a in arrays)
        arrays = [a if a.dtype == dtypes.bool_ else lax.ne(a, _zero(a, a.weak_type and scalars))
                  for a in arrays]
        return op(*arrays)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` of the truth values of the arguments."
    return f


def _zero(x, weak=None):
    return convert(asarray_arg(0, "zero"), x.dtype, x.weak_type if weak is None else weak)


def _one(x):
    return convert(asarray_arg(1, "one"), x.dtype, x.weak_type)


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)
logical_not = _logical("logical_not", lax.bitwise_not)


def bitwise_not(x, /):
    """Elementwise bitwise NOT (logical NOT for bools)."""
    (x,) = promote_args("bitwise_not", x)
    return lax.bitwise_not(x)


invert = bitwise_not


def negative(x, /):
    """Elementwise ``-x``."""
    (x,) = promote_args("negative", x)
    return lax.neg(x)


def positive(x, /):
    """Elementwise ``+x`` (a no-op)."""
    (x,) = promote_args("positive", x)
    return x


def absolute(x, /):
    """Elementwise absolute value (integers stay integers)."""
    (x,) = promote_args("abs", x)
    return x if x.dtype == dtypes.bool_ or x.dtype.kind == "u" else lax.abs(x)


abs = absolute  # noqa: A001


def sign(x, /):
    """Elementwise sign: -1, 0 or 1 (NaN for NaN)."""
    (x,) = promote_args("sign", x)
    return lax.sign(x)


def square(x, /):
    """Elementwise ``x * x``."""
    (x,) = _numeric(*promote_args("square", x))
    return lax.integer_pow(x, 2)


def reciprocal(x, /):
    """Elementwise ``1 / x``."""
    (x,) = promote_args("reciprocal", x, to_inexact=True)
    return lax.integer_pow(x, -1)


def _rounding(name, op):
    def f(x, /):
        (x,) = promote_args(name, x)
        if x.dtype.kind == "c":  # JAX raises too (but for rint, which rounds both parts)
            raise TypeError(f"{name} of a complex array is not supported; apply it to "
                            "jnp.real(x) and jnp.imag(x)")
        return op(x) if dtypes.is_float(x.dtype) else x

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` (integers are returned unchanged)."
    return f


floor = _rounding("floor", lax.floor)
ceil = _rounding("ceil", lax.ceil)
trunc = _rounding("trunc", lambda x: lax.select(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x)))
rint = _rounding("rint", lambda x: lax.round(x, 1))


def round(a, decimals: int = 0):  # noqa: A001
    """Round to ``decimals`` decimals, ties to even (as ``numpy.round``)."""
    (a,) = promote_args("round", a)
    if a.dtype == dtypes.bool_:
        raise ValueError("round of a bool array is not supported (as in JAX); convert it "
                         "first, e.g. x.astype(jnp.float32)")
    if a.dtype.kind == "c":
        raise NotImplementedError("round of a complex array is not supported yet; round "
                                  "jnp.real(x) and jnp.imag(x) separately")
    if not dtypes.is_float(a.dtype):
        return a
    if decimals == 0:
        return lax.round(a, 1)
    factor = convert(asarray_arg(10.0 ** decimals, "round"), a.dtype)
    return lax.div(lax.round(lax.mul(a, factor), 1), factor)


around = round


def floor_divide(x1, x2, /):
    """Elementwise ``x1 // x2``, rounding toward minus infinity (as Python and NumPy)."""
    a, b = promote_args("floor_divide", x1, x2)
    if a.dtype == dtypes.bool_:
        raise TypeError("floor_divide of bool arrays is not supported; convert to int first")
    if dtypes.is_integer(a.dtype):
        q = lax.div(a, b)
        r = lax.rem(a, b)
        fix = lax.bitwise_and(lax.ne(r, _zero(r)), lax.ne(lax.lt(r, _zero(r)),
                                                           lax.lt(b, _zero(b))))
        return lax.select(fix, lax.sub(q, _one(q)), q)
    # JAX's float divmod: exact quotient of (a - fmod(a, b)) / b, fixed toward -inf. A zero
    # divisor makes that nan (fmod(a, 0) is nan); the quotient is then a / b (+-inf or nan by
    # the signs, as NumPy and JAX).
    mod = lax.rem(a, b)
    q = lax.div(lax.sub(a, mod), b)
    fix = lax.bitwise_and(lax.ne(mod, _zero(mod)), lax.ne(lax.sign(b), lax.sign(mod)))
    q = lax.round(lax.select(fix, lax.sub(q, _one(q)), q))
    # the quotient is piecewise constant: a zero divisor's a / b must not bring a gradient
    return lax.select(lax.eq(b, _zero(b)), lax.stop_gradient(lax.div(a, b)), q)


def divmod(x1, x2, /):  # noqa: A001  (NumPy's name)
    """Elementwise ``(x1 // x2, x1 % x2)``, as ``numpy.divmod`` and ``jax.numpy.divmod``.

    Arguments:
        x1: the dividend (an array or scalar).
        x2: the divisor; broadcast against ``x1``.

    Returns:
        ``(floor_divide(x1, x2), remainder(x1, x2))``. A float zero divisor gives
        ``(+-inf or nan, nan)``; an integer one gives ``(0, 0)`` (NumPy's values).

    Example:
        >>> jnp.divmod(jnp.array([7, -7]), 2)
        (Array([ 3, -4], dtype=int32), Array([1, 1], dtype=int32))
    """
    return floor_divide(x1, x2), remainder(x1, x2)


def remainder(x1, x2, /):
    """Elementwise remainder with the sign of the divisor (as Python's ``%``)."""
    a, b = promote_args("remainder", x1, x2)
    if a.dtype == dtypes.bool_:
        raise TypeError("remainder of bool arrays is not supported; convert to int first")
    r = lax.rem(a, b)
    zero = _zero(r)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    return lax.select(fix, lax.add(r, b), r)


mod = remainder


def fmod(x1, x2, /):
    """Elementwise remainder with the sign of the dividend (as C's ``fmod``)."""
    a, b = promote_args("fmod", x1, x2)
    return lax.rem(a, b)


def power(x1, x2, /):
    """Elementwise ``x1 ** x2``; a static integer exponent multiplies (``integer_pow``)."""
    if isinstance(x2, (int, np.integer)) and not isinstance(x2, bool):
        (a,) = _numeric(*promote_args("power", x1))
        if dtypes.is_integer(a.dtype) and x2 < 0:
            raise ValueError("Integers to negative integer powers are not allowed; "
                             "convert the base to float first")
        return lax.integer_pow(a, int(x2))
    a, b = _numeric(*promote_args("power", x1, x2))
    if dtypes.is_inexact(a.dtype):
        return lax.pow(a, b)
    return _integer_power(a, b)


def _numeric(*args):
    """Bool operands as the default integer (JAX's ``promote_dtypes_numeric``)."""
    if args[0].dtype != dtypes.bool_:
        return args
    return tuple(convert(x, dtypes.default_int()) for x in args)


def _integer_power(a, b):
    # Square-and-multiply over the low 6 bits of a traced exponent, as JAX's _pow_int_int
    # (any larger power of an integer other than -1, 0 or 1 overflows; the parity bit keeps
    # those three exact); 0 ** b is 0 for b != 0.
    shape = broadcast_shapes(a.shape, b.shape)
    a, b = broadcast_to_shape(a, shape), broadcast_to_shape(b, shape)
    one = broadcast_to_shape(_one(a), shape)
    zero_base = lax.bitwise_and(lax.eq(a, _zero(a)), lax.ne(b, _zero(b)))
    acc, base = lax.select(zero_base, broadcast_to_shape(_zero(a), shape), one), a
    for bit in range(6):
        mask = convert(asarray_arg(1 << bit, "power"), b.dtype, b.weak_type)
        on = lax.ne(lax.bitwise_and(b, mask), _zero(b))
        acc = lax.select(on, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
    return acc


pow = power  # noqa: A001


def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` without overflow."""
    a, b = promote_args("logaddexp", x1, x2, to_inexact=True)
    shape = broadcast_shapes(a.shape, b.shape)
    return reductions.logaddexp(broadcast_to_shape(a, shape), broadcast_to_shape(b, shape))


def isnan(x, /):
    """Elementwise: True where ``x`` is NaN."""
    (x,) = promote_args("isnan", x)
    return lax.ne(x, x) if dtypes.is_inexact(x.dtype) else _false_like(x)


def isinf(x, /):
    """Elementwise: True where ``x`` is +inf or -inf."""
    (x,) = promote_args("isinf", x)
    if not dtypes.is_float(x.dtype):
        return _false_like(x)
    return lax.eq(lax.abs(x), convert(asarray_arg(float("inf"), "isinf"), x.dtype))


def isfinite(x, /):
    """Elementwise: True where ``x`` is neither infinite nor NaN."""
    (x,) = promote_args("isfinite", x)
    return lax.is_finite(x) if dtypes.is_float(x.dtype) else lax.eq(x, x)


def _false_like(x):
    return broadcast_to_shape(lax.ne(_zero(x), _zero(x)), x.shape)


def clip(arr, /, min=None, max=None):  # noqa: A002
    """Clip to ``[min, max]`` (either may be None): ``minimum(maximum(x, min), max)``."""
    out = asarray_arg(arr, "clip")
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


def where(condition, x=None, y=None, /):
    """``x`` where ``condition`` else ``y``, broadcast together; dtypes promote as in JAX."""
    if x is None or y is None:
        raise ValueError("jnp.where(condition) with one argument has a data-dependent size; "
                         "pass both x and y")
    cond = asarray_arg(condition, "where")
    if cond.dtype != dtypes.bool_:
        cond = not_equal(cond, 0)
    a, b = promote_args("where", x, y)
    shape = broadcast_shapes(cond.shape, a.shape, b.shape)
    return lax.select(*(broadcast_to_shape(t, shape) for t in (cond, a, b)))


def real(x, /):
    """The real part (``x`` itself for real dtypes)."""
    x = asarray_arg(x, "real")
    return lax.real(x) if dtypes.is_inexact(x.dtype) and x.dtype.kind == "c" else x


def imag(x, /):
    """The imaginary part (zeros for real dtypes)."""
    x = asarray_arg(x, "imag")
    return lax.imag(x) if x.dtype.kind == "c" else zeros_like(x)


def conjugate(x, /):
    """The complex conjugate (``x`` itself for real dtypes)."""
    x = asarray_arg(x, "conjugate")
    return lax.conj(x) if x.dtype.kind == "c" else x


conj = conjugate

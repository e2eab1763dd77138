"""More elementwise ``invarax.numpy`` functions, compositions of lax ops: the array-API
aliases (``acos``, ``atan2``, ...), angles, ``copysign``, ``signbit``, ``hypot``,
``logaddexp2``, ``fmax``/``fmin``, ``sinc``, ``modf``, ``ldexp``, ``gcd``/
``lcm``, shifts, ``spacing``, ``angle``, ``heaviside``, ``float_power``."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..kernels.elementary import LOG2
from ..ops import elementwise as lax
from . import _ufuncs as uf
from ._promote import asarray_arg, convert, promote_args

acos, acosh, asin, asinh = uf.arccos, uf.arccosh, uf.arcsin, uf.arcsinh
atan, atanh, atan2 = uf.arctan, uf.arctanh, uf.arctan2
bitwise_invert = uf.invert


def _const(x, value):
    return convert(asarray_arg(value, "constant"), x.dtype)


def _scaled(name, factor):
    def f(x, /):
        (x,) = promote_args(name, x, to_inexact=True)
        return lax.mul(x, _const(x, factor))

    f.__name__ = name
    f.__doc__ = (f"Elementwise ``x * {factor!r}`` (``{name}``, as ``numpy.{name}``).\n\n"
                 f"    Example:\n        >>> jnp.{name}(jnp.array([0.0]))\n"
                 f"        Array([0.], dtype=float32)\n")
    return f


deg2rad = radians = _scaled("deg2rad", math.pi / 180)
rad2deg = degrees = _scaled("rad2deg", 180 / math.pi)


def fabs(x, /):
    """Elementwise absolute value as a float (integers promote).

    Example:
        >>> jnp.fabs(jnp.array([-2, 3]))
        Array([2., 3.], dtype=float32)
    """
    (x,) = promote_args("fabs", x, to_inexact=True)
    return lax.abs(x)


def signbit(x, /):
    """Elementwise: True where the sign bit is set (``-0.0`` included; NaN gives False).

    Example:
        >>> jnp.signbit(jnp.array([-1.0, -0.0, 0.0, 2.0]))
        Array([ True,  True, False, False], dtype=bool)
    """
    (x,) = promote_args("signbit", x)
    if dtypes.is_integer(x.dtype) and x.dtype.kind == "i":
        return lax.lt(x, _const(x, 0))
    if not dtypes.is_float(x.dtype):
        return lax.ne(x, x) if x.dtype != dtypes.bool_ else lax.bitwise_and(x, lax.bitwise_not(x))
    # atan2(-0.0, -1) is -pi and atan2(0.0, -1) is pi: the sign of a zero, exactly.
    zero_negative = lax.lt(lax.atan2(x, _const(x, -1.0)), _const(x, 0.0))
    return uf.logical_or(lax.lt(x, _const(x, 0.0)),
                         uf.logical_and(lax.eq(x, _const(x, 0.0)), zero_negative))


def copysign(x1, x2, /):
    """Elementwise ``|x1|`` with the sign of ``x2``.

    Example:
        >>> jnp.copysign(jnp.array([1.0, 2.0]), jnp.array([-0.0, 3.0]))
        Array([-1.,  2.], dtype=float32)
    """
    a, b = promote_args("copysign", x1, x2, to_inexact=True)
    return uf.where(signbit(b), lax.neg(lax.abs(a)), lax.abs(a))


def heaviside(x1, x2, /):
    """The Heaviside step: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``.

    Example:
        >>> jnp.heaviside(jnp.array([-1.0, 0.0, 2.0]), 0.5)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    a, b = promote_args("heaviside", x1, x2, to_inexact=True)
    zero, one = _const(a, 0.0), _const(a, 1.0)
    return uf.where(lax.lt(a, zero), zero, uf.where(lax.gt(a, zero), one, b))


def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)``, without overflow or underflow (JAX's formula).

    Example:
        >>> jnp.hypot(jnp.array([3.0, 1e30]), jnp.array([4.0, 1e30]))
        Array([5.0000000e+00, 1.4142135e+30], dtype=float32)
    """
    a, b = promote_args("hypot", x1, x2, to_inexact=True)
    a, b = lax.abs(a), lax.abs(b)
    inf = uf.logical_or(uf.isinf(a), uf.isinf(b))
    big, small = lax.max(a, b), lax.min(a, b)
    zero, one = _const(big, 0.0), _const(big, 1.0)
    safe = uf.where(lax.eq(big, zero), one, big)
    ratio = lax.div(small, safe)
    scaled = lax.mul(big, lax.sqrt(lax.add(one, lax.mul(ratio, ratio))))
    out = uf.where(lax.eq(big, zero), big, scaled)
    return uf.where(inf, _const(big, np.inf), out)


def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` without overflow.

    Example:
        >>> jnp.logaddexp2(jnp.array([1.0]), jnp.array([1.0]))
        Array([2.], dtype=float32)
    """
    a, b = promote_args("logaddexp2", x1, x2, to_inexact=True)
    amax = lax.max(a, b)
    delta = lax.sub(a, b)
    tail = lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))), _const(a, LOG2))
    return uf.where(uf.isnan(delta), lax.add(a, b), lax.add(amax, tail))


def float_power(x1, x2, /):
    """Elementwise ``x1 ** x2`` in floating point (integers promote to float).

    Example:
        >>> jnp.float_power(jnp.array([2, 3]), 2)
        Array([4., 9.], dtype=float32)
    """
    a, b = promote_args("float_power", x1, x2, to_inexact=True)
    return lax.pow(a, b)


def fmax(x1, x2):
    """Elementwise maximum ignoring NaN: the other value where one is NaN.

    Example:
        >>> jnp.fmax(jnp.array([1.0, jnp.nan]), jnp.array([jnp.nan, 2.0]))
        Array([1., 2.], dtype=float32)
    """
    a, b = promote_args("fmax", x1, x2)
    return uf.where(uf.logical_or(lax.gt(a, b), uf.isnan(b)), a, b)


def fmin(x1, x2):
    """Elementwise minimum ignoring NaN: the other value where one is NaN.

    Example:
        >>> jnp.fmin(jnp.array([1.0, jnp.nan]), jnp.array([jnp.nan, 2.0]))
        Array([1., 2.], dtype=float32)
    """
    a, b = promote_args("fmin", x1, x2)
    return uf.where(uf.logical_or(lax.lt(a, b), uf.isnan(b)), a, b)


def sinc(x, /):
    """Elementwise normalised sinc, ``sin(pi x) / (pi x)``, 1 at 0 (derivative 0 there).

    Example:
        >>> jnp.sinc(jnp.array([0.0, 0.5]))
        Array([1.        , 0.63661975], dtype=float32)
    """
    (x,) = promote_args("sinc", x, to_inexact=True)
    at_zero = lax.eq(x, _const(x, 0.0))
    pi_x = lax.mul(_const(x, math.pi), x)
    safe = uf.where(at_zero, _const(x, 1.0), pi_x)
    return uf.where(at_zero, _const(x, 1.0), lax.div(lax.sin(safe), safe))


def modf(x, /, out=None):
    """The fractional and integral parts of ``x``, both with ``x``'s sign.

    Example:
        >>> jnp.modf(jnp.array([1.5, -2.25]))
        (Array([ 0.5 , -0.25], dtype=float32), Array([ 1., -2.], dtype=float32))
    """
    (x,) = promote_args("modf", x, to_inexact=True)
    whole = uf.trunc(x)
    return lax.sub(x, whole), whole


def ldexp(x1, x2, /):
    """Elementwise ``x1 * 2**x2`` for an integer ``x2``, exact while the result is normal.

    Example:
        >>> jnp.ldexp(jnp.array([1.0, 3.0]), jnp.array([3, -1]))
        Array([8. , 1.5], dtype=float32)
    """
    x2 = asarray_arg(x2, "ldexp")
    if not dtypes.is_integer(x2.dtype):
        raise TypeError(f"ldexp: x2 must be an integer array, got {x2.dtype}")
    (a,) = promote_args("ldexp", x1, to_inexact=True)
    a, e = promote_args("ldexp", a, convert(x2, a.dtype))
    half = uf.floor(lax.div(e, _const(e, 2.0)))  # two exact powers of two, no overflow
    return lax.mul(lax.mul(a, lax.exp2(half)), lax.exp2(lax.sub(e, half)))


def _integer_args(name, x1, x2):
    a, b = promote_args(name, x1, x2)
    if not dtypes.is_integer(a.dtype):
        raise TypeError(f"{name} takes integer arrays, got {a.dtype}; convert with .astype(int)")
    return a, b


def gcd(x1, x2, /):
    """Elementwise greatest common divisor of integers (non-negative; ``gcd(0, 0) == 0``).

    Euclid's algorithm, unrolled for the worst case of the dtype's width.

    Example:
        >>> jnp.gcd(jnp.array([12, 7, 0]), jnp.array([18, 5, 0]))
        Array([6, 1, 0], dtype=int32)
    """
    a, b = _integer_args("gcd", x1, x2)
    a, b = uf.absolute(a), uf.absolute(b)
    a, b = lax.max(a, b), lax.min(a, b)
    zero, one = _const(a, 0), _const(a, 1)
    steps = int(1.45 * 8 * a.dtype.itemsize) + 2  # Fibonacci: log_phi(2**bits)
    for _ in range(steps):
        done = lax.eq(b, zero)
        r = lax.rem(a, uf.where(done, one, b))
        a, b = uf.where(done, a, b), uf.where(done, b, r)
    return a


def lcm(x1, x2, /):
    """Elementwise least common multiple of integers (0 if either is 0).

    Example:
        >>> jnp.lcm(jnp.array([4, 6, 0]), jnp.array([6, 4, 3]))
        Array([12, 12,  0], dtype=int32)
    """
    a, b = _integer_args("lcm", x1, x2)
    d = gcd(a, b)
    zero = lax.eq(d, _const(d, 0))
    q = lax.div(uf.absolute(a), uf.where(zero, _const(d, 1), d))
    return uf.where(zero, _const(d, 0), lax.mul(q, uf.absolute(b)))


def left_shift(x1, x2, /):
    """Elementwise ``x1 << x2`` of integers (0 where ``x2`` is at least the bit width).

    Example:
        >>> jnp.left_shift(jnp.array([1, 3]), 2)
        Array([ 4, 12], dtype=int32)
    """
    a, b = _integer_args("left_shift", x1, x2)
    return lax.shift_left(a, b)


def right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2`` of integers: arithmetic for signed, logical for unsigned.

    Example:
        >>> jnp.right_shift(jnp.array([16, -16]), 2)
        Array([ 4, -4], dtype=int32)
    """
    a, b = _integer_args("right_shift", x1, x2)
    if a.dtype.kind == "u":
        return lax.shift_right_logical(a, b)
    negative = lax.lt(a, _const(a, 0))
    flipped = lax.bitwise_not(lax.shift_right_logical(lax.bitwise_not(a), b))
    return uf.where(negative, flipped, lax.shift_right_logical(a, b))


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def spacing(x, /):
    """The distance from ``x`` to the next float away from zero (negative for ``x < 0``).

    Example:
        >>> jnp.spacing(jnp.array([1.0, -1.0]))
        Array([ 1.1920929e-07, -1.1920929e-07], dtype=float32)
    """
    (x,) = promote_args("spacing", x, to_inexact=True)
    toward = uf.where(signbit(x), _const(x, -np.inf), _const(x, np.inf))
    return lax.sub(lax.nextafter(x, toward), x)


def angle(z, deg=False):
    """The argument of complex ``z`` (``atan2(imag, real)``), in radians or degrees.

    Example:
        >>> jnp.angle(jnp.array([1j, -1.0]))
        Array([1.5707964, 3.1415927], dtype=float32)
    """
    z = asarray_arg(z, "angle")
    re, im = uf.real(z), uf.imag(z)
    if not dtypes.is_inexact(re.dtype):
        re, im = promote_args("angle", re, im, to_inexact=True)
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out


def frexp(x, /):
    """The mantissa in ``[0.5, 1)`` (with ``x``'s sign) and the integer exponent of ``x``:
    ``x == mantissa * 2**exponent`` (``(x, 0)`` for 0, infinities and NaN).

    Example:
        >>> jnp.frexp(jnp.array([8.0, -3.0, 0.0]))
        (Array([ 0.5 , -0.75,  0.  ], dtype=float32), Array([4, 2, 0], dtype=int32))
    """
    (x,) = promote_args("frexp", x, to_inexact=True)
    special = uf.logical_or(lax.eq(x, _const(x, 0.0)), uf.logical_not(uf.isfinite(x)))
    safe = uf.where(special, _const(x, 1.0), lax.abs(x))
    e = lax.add(uf.floor(uf.log2(safe)), _const(x, 1.0))
    e_int = convert(e, dtypes.default_int())
    m = ldexp(safe, lax.neg(e_int))
    too_big = lax.ge(m, _const(m, 1.0))  # log2 rounded up near a power of two
    m = uf.where(too_big, lax.mul(m, _const(m, 0.5)), m)
    e_int = uf.where(too_big, lax.add(e_int, _const(e_int, 1)), e_int)
    too_small = lax.lt(m, _const(m, 0.5))
    m = uf.where(too_small, lax.mul(m, _const(m, 2.0)), m)
    e_int = uf.where(too_small, lax.sub(e_int, _const(e_int, 1)), e_int)
    m = uf.where(signbit(x), lax.neg(m), m)
    return uf.where(special, x, m), uf.where(special, _const(e_int, 0), e_int)

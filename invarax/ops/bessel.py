"""Modified Bessel functions: ``i0e(x) = exp(-|x|) I0(x)``, ``i0``, ``i1e`` and ``i1``,
compositions of lax ops (so every transformation applies, and derivatives come from the
composition).

Up to ``|x| = 8``, ``I0`` is its power series ``sum_k (x^2/4)^k / (k!)^2`` (26 terms, all
positive: no cancellation, and ``I0(0) == 1`` exactly); beyond, ``sqrt(|x|) i0e(x)`` is a
Chebyshev series in ``u = 16/|x| - 1`` (21 terms, Clenshaw's recurrence), its
coefficients interpolants of SciPy's ``i0e`` computed once, in float64, for this file.
``I1`` likewise: ``(x/2) sum_k (x^2/4)^k / (k! (k+1)!)`` up to ``|x| = 8``, beyond a
Chebyshev series for ``sqrt(|x|) i1e(|x|)`` (interpolating SciPy's ``i1e``), odd in ``x``.
Relative error below about 1e-14 in float64.
"""

from __future__ import annotations

import math

from ..core.array import to_array
from . import elementwise as lax
from .elementwise import _const
from .special import _full

_I0E_HIGH = (
    0.40224520550705445, 0.0033691164782557064, 6.889758346917898e-05, 2.891370520855794e-06,
    2.048918589191854e-07, 2.2666689890068038e-08, 3.396231882639321e-09,
    4.940602438981289e-10, 1.1889017186442996e-11, -3.1499136175659984e-11,
    -1.3215924171081827e-11, -1.794163209347878e-12, 7.179016253565791e-13,
    3.8526310451499386e-13, 1.5349003233289648e-14, -4.151499450738644e-14,
    -9.567158264376188e-15, 3.815066508112358e-15, 1.5346912824968791e-15,
    -3.522844772620183e-16, -9.900305332665426e-16,
)


_I1E_HIGH = (
    0.38928811750914005, -0.009761097491361495, -0.00011058893876259895,
    -3.882564808874962e-06, -2.5122362382060293e-07, -2.6314688462614963e-08,
    -3.835380530312561e-09, -5.589743371389015e-10, -1.8975063930243212e-11,
    3.252605365665065e-11, 1.4125662331698961e-11, 2.0356457959584554e-12,
    -7.199638857632612e-13, -4.083560414487511e-13, -2.1037397700954616e-14,
    4.27176053566761e-14, 1.0402442030027843e-14, -3.807321219615309e-15,
    -2.1144961422123046e-15, 3.569282277540514e-16, -2.435831174299094e-16,
)


def _clenshaw(coefficients, t):
    """``sum_k c_k T_k(t)`` by Clenshaw's recurrence (lax ops, ``t``'s dtype)."""
    b1, b2 = _const(t, 0.0), _const(t, 0.0)
    two_t = lax.add(t, t)
    for c in reversed(coefficients[1:]):
        b1, b2 = lax.sub(lax.add(_const(t, c), lax.mul(two_t, b1)), b2), b1
    return lax.sub(lax.add(_const(t, coefficients[0]), lax.mul(t, b1)), b2)


# 1 / (k!)^2, highest k first: the power series of I0 in y = x^2 / 4, by Horner.
_I0_SERIES = tuple(1.0 / math.factorial(k) ** 2 for k in range(25, -1, -1))


# 1 / (k! (k+1)!), highest k first: the power series of 2 I1(x) / x in y = x^2 / 4.
_I1_SERIES = tuple(1.0 / (math.factorial(k) * math.factorial(k + 1)) for k in range(25, -1, -1))


def _series_and_tail(x, series_coefficients=_I0_SERIES, tail_coefficients=_I0E_HIGH):
    """``(a, small, S(a) where small, sqrt(a) T(a) where not)`` for ``a = |x|``: the power
    series in ``a^2 / 4`` and the Chebyshev tail (by default those of ``I0`` and ``i0e``)."""
    a = lax.abs(x)
    small = lax.le(a, _const(a, 8.0))
    s = lax.select(small, a, _full(a, 8.0))
    y = lax.mul(lax.mul(s, s), _const(a, 0.25))
    series = _const(a, 0.0)
    for c in series_coefficients:
        series = lax.add(lax.mul(series, y), _const(a, c))
    big = lax.select(small, _full(a, 8.0), a)
    tail = lax.div(_clenshaw(tail_coefficients, lax.sub(lax.div(_const(a, 16.0), big),
                                                        _const(a, 1.0))), lax.sqrt(big))
    return a, small, series, tail


def i0e(x):
    """The exponentially scaled modified Bessel function ``exp(-|x|) I0(x)``, elementwise.

    Example:
        >>> i0e(jnp.array([0.0, 1.0, 10.0]))
        Array([1.        , 0.4657596 , 0.12783332], dtype=float32)
    """
    a, small, series, tail = _series_and_tail(to_array(x, "i0e operand"))
    return lax.select(small, lax.mul(lax.exp(lax.neg(a)), series), tail)


def i0(x):
    """The modified Bessel function of the first kind of order 0, ``I0(x)``, elementwise.

    Example:
        >>> i0(jnp.array([0.0, 1.0]))
        Array([1.       , 1.2660658], dtype=float32)
    """
    a, small, series, tail = _series_and_tail(to_array(x, "i0 operand"))
    return lax.select(small, series, lax.mul(lax.exp(a), tail))


def _i1_parts(x, name):
    x = to_array(x, f"{name} operand")
    a, small, series, tail = _series_and_tail(x, _I1_SERIES, _I1E_HIGH)
    half_a_series = lax.mul(lax.mul(a, _const(a, 0.5)), series)  # I1(a) where small
    sign = lax.select(lax.lt(x, _const(x, 0.0)), _full(x, -1.0), _full(x, 1.0))
    return a, small, half_a_series, tail, sign


def i1e(x):
    """The exponentially scaled modified Bessel function ``exp(-|x|) I1(x)``, elementwise.

    Example:
        >>> i1e(jnp.array([0.0, 1.0, -10.0]))
        Array([ 0.        ,  0.20791042, -0.12126268], dtype=float32)
    """
    a, small, series, tail, sign = _i1_parts(x, "i1e")
    return lax.mul(sign, lax.select(small, lax.mul(lax.exp(lax.neg(a)), series), tail))


def i1(x):
    """The modified Bessel function of the first kind of order 1, ``I1(x)``, elementwise.

    Example:
        >>> i1(jnp.array([0.0, 1.0]))
        Array([0.       , 0.5651591], dtype=float32)
    """
    a, small, series, tail, sign = _i1_parts(x, "i1")
    return lax.mul(sign, lax.select(small, series, lax.mul(lax.exp(a), tail)))

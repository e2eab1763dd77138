"""Special functions: the ``erf`` and ``erfc`` primitives and ``erf_inv``, a composition of
lax ops.

``erf_inv`` evaluates the polynomials XLA uses (M. Giles, "Approximating the erfinv
function", GPU Computing Gems, 2011: the single-precision one for float32, the
double-precision one for float64), each Horner step a fused multiply-add (``fma``), as XLA
contracts it; the bits are the same eagerly, under ``jit`` and under ``vmap``. XLA's own
``log1p`` can differ from NumPy's in the last bit, so results can still differ from JAX's
by an ulp or two (see docs/random.md).

``erf`` and ``erfc`` are primitives whose impls are invarax's own kernels
(``invarax.kernels.elementary``: float32 correctly rounded, float64 within 1 ulp, the same
bits on every CPU) while ``config.invarax_exact_elementary`` is on (the default), and
otherwise round libm's double-precision values (``math.erf`` and ``math.erfc``, one by one,
about 0.1 us each) to the operand's dtype; ``erfc`` keeps its relative accuracy in the far
tail, where ``1 - erf`` is 0, and the bits are the same under every transformation.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.array import to_array
from ..core.config import config
from ..interpreters.ad import defjvp
from ..kernels.elementary import kernel as _elementary
from . import elementwise as lax
from .elementwise import _const, _vectorized_batch_rule, defvectorized
from .fused import fma


def _erf_derivative(x, sign):
    """``sign * 2/sqrt(pi) * exp(-x**2)``, the derivative of erf (sign 1) or erfc (-1)."""
    return lax.mul(_const(x, sign * 2 / math.sqrt(math.pi)), lax.exp(lax.neg(lax.mul(x, x))))


erf_p = defvectorized("erf", _elementary("erf"), "f")
defjvp(erf_p, lambda t, y, x: lax.mul(t, _erf_derivative(x, 1)))
_vectorized_batch_rule(erf_p)
erfc_p = defvectorized("erfc", _elementary("erfc"), "f")
defjvp(erfc_p, lambda t, y, x: lax.mul(t, _erf_derivative(x, -1)))
_vectorized_batch_rule(erfc_p)


def erf(x):
    """The error function, ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``, elementwise.

    Arguments:
        x: a floating-point array.

    Returns:
        ``erf(x)``: invarax's own (float32 correctly rounded); with
        ``invarax_exact_elementary`` off, libm's double-precision value rounded.

    Example:
        >>> erf(jnp.array([0.0, 1.0]))
        Array([0.       , 0.8427008], dtype=float32)
    """
    return erf_p.bind(to_array(x, "erf operand"))


def erfc(x):
    """The complementary error function, ``1 - erf(x)``, accurate where it is tiny.

    Arguments:
        x: a floating-point array.

    Returns:
        ``erfc(x)``: invarax's own (float32 correctly rounded); with
        ``invarax_exact_elementary`` off, libm's double-precision value rounded.

    Example:
        >>> erfc(jnp.array([0.0, 5.0]))
        Array([1.0000000e+00, 1.5374598e-12], dtype=float32)
    """
    return erfc_p.bind(to_array(x, "erfc operand"))


# Giles' polynomials in w = -log1p(-x*x), highest power first, as XLA's ErfInv32/ErfInv64.
_F32_W_LT_5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
               0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_F32_W_GE_5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_F64_W_LT_6_25 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_F64_W_LT_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_F64_W_GE_16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def _full(x, value):
    from .shape import broadcast_in_dim

    return broadcast_in_dim(_const(x, value), x.shape, ())


def _pick(masks_and_values, x):
    """An array of ``x``'s shape: the value of the first true mask, else the last value."""
    *pairs, last = masks_and_values
    out = _full(x, last)
    for mask, value in reversed(pairs):
        out = lax.select(mask, _full(x, value), out)
    return out


# With invarax_exact_elementary: invarax's own kernel (Newton's method on its erf; float32
# correctly rounded), a primitive with JAX's derivative sqrt(pi)/2 exp(y^2).
erf_inv_p = defvectorized("erf_inv", _elementary("erf_inv"), "f")
defjvp(erf_inv_p, lambda t, y, x: lax.mul(_const(x, math.sqrt(math.pi) / 2),
                                          lax.mul(t, lax.exp(lax.mul(y, y)))))
_vectorized_batch_rule(erf_inv_p)


def erf_inv(x):
    """The inverse error function, elementwise: invarax's own (float32 correctly rounded), or
    with ``config.invarax_exact_elementary`` off XLA's polynomials (Giles 2011).

    Arguments:
        x: a float32 or float64 array with values in ``[-1, 1]``.

    Returns:
        ``y`` with ``erf(y) == x``; ``erf_inv(+-1)`` is ``+-inf``, NaN outside ``[-1, 1]``.

    Example:
        >>> erf_inv(jnp.array([0.0, 0.5]))
        Array([0.        , 0.47693628], dtype=float32)
    """
    x = to_array(x, "erf_inv operand")
    if config.invarax_exact_elementary and x.dtype in (np.float16, np.float32, np.float64):
        return erf_inv_p.bind(x)
    return erf_inv_on(x, lax.log1p)


def erf_inv_on(x, log1p):
    """``erf_inv(x)`` with the given ``log1p`` for ``w = -log1p(-x*x)`` (invarax's, or the
    XLA-compatible one of ``invarax.random``, which reproduces JAX's bits)."""
    if x.dtype == np.float16:  # as XLA: computed in float32, rounded once
        return lax.convert_element_type(
            erf_inv_on(lax.convert_element_type(x, np.float32), log1p), np.float16)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"erf_inv takes float16, float32 or float64, got {x.dtype.name}")
    w = lax.neg(log1p(lax.mul(x, lax.neg(x))))
    if x.dtype == np.float32:
        small = lax.lt(w, _const(w, 5.0))
        w = lax.select(small, lax.sub(w, _const(w, 2.5)), lax.sub(lax.sqrt(w), _const(w, 3.0)))
        p = _pick([(small, _F32_W_LT_5[0]), _F32_W_GE_5[0]], x)
        for lo, hi in zip(_F32_W_LT_5[1:], _F32_W_GE_5[1:], strict=True):
            p = fma(p, w, _pick([(small, lo), hi], x))
    else:
        lt_6_25, lt_16 = lax.lt(w, _const(w, 6.25)), lax.lt(w, _const(w, 16.0))
        sqrt_w = lax.sqrt(w)
        w = lax.select(lt_6_25, lax.sub(w, _const(w, 3.125)),
                       lax.sub(sqrt_w, _pick([(lt_16, 3.25), 5.0], x)))

        def coefficient(i):
            # The first branch whose polynomial still has a term of this degree.
            if i < 17:
                return _pick([(lt_6_25, _F64_W_LT_6_25[i]), (lt_16, _F64_W_LT_16[i]),
                              _F64_W_GE_16[i]], x)
            if i < 19:
                return _pick([(lt_6_25, _F64_W_LT_6_25[i]), _F64_W_LT_16[i]], x)
            return _full(x, _F64_W_LT_6_25[i])

        p = coefficient(0)
        for i in range(1, 23):
            step = fma(p, w, coefficient(i))
            if i < 17:
                p = step
            else:  # the longer polynomials go on where their branch applies
                p = lax.select(lt_16 if i < 19 else lt_6_25, step, p)
    result = lax.mul(p, x)
    at_one = lax.eq(lax.abs(x), _const(x, 1.0))
    # +-inf as constants, not x * inf: the unselected branch must not make the gradient NaN
    infinity = lax.select(lax.gt(x, _const(x, 0.0)), _full(x, np.inf), _full(x, -np.inf))
    return lax.select(at_one, infinity, result)

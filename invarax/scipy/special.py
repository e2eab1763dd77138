"""``invarax.scipy.special``: the special functions JAX provides: ``logsumexp``, ``erf``,
``erfc``, ``erfinv``, ``gammaln``, ``digamma``, ``betaln``, ``gammainc``, ``gammaincc``,
``betainc``, ``xlogy``, ``xlog1py``, ``expit``, ``logit``, ``ndtr``, ``log_ndtr``, ``ndtri``,
``i0``, ``i0e``, ``entr``."""

from __future__ import annotations

import numpy as np

from ..core.errors import ConcretizationTypeError
from ..core.trace import Tracer
from ..kernels.elementary import LOG_2PI
from ..numpy import _ufuncs as ufuncs
from ..numpy._creation import zeros_like
from ..numpy._promote import broadcast_to_shape, promote_args
from ..numpy._reductions import _axes
from ..numpy._reductions import max as _max
from ..numpy._reductions import sum as _sum
from ..ops import elementwise as lax
from ..ops import gamma as _gamma
from ..ops import shape as sh
from ..ops.bessel import i0e as _i0e
from ..ops.bessel import i1 as _i1
from ..ops.bessel import i1e as _i1e
from ..ops.special import erf, erfc  # noqa: F401  (re-exported, as jax.scipy.special)
from ..ops.special import erf_inv as erfinv  # noqa: F401


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow, as ``jax.scipy.special.logsumexp``.

    The exponentials are shifted by the maximum over ``axis`` (0 where the maximum
    is not finite), passed through ``lax.stop_gradient``; so ``-inf`` entries add
    nothing, an ``inf`` gives ``inf`` and a NaN gives NaN.

    Arguments:
        a: an array or scalar (integers are promoted to float).
        axis: None (all axes), an int or a tuple of ints.
        b: scale factors broadcast to ``a``; entries where ``b == 0`` are left out.
        keepdims: keep the reduced axes as size-1 dimensions.
        return_sign: return ``(log(|s|), sign(s))`` of the sum ``s`` instead of NaN
            for a negative sum.
        where: a boolean mask of the elements to include.

    Returns:
        The log of the sum, or the pair ``(result, sign)`` with ``return_sign``.

    Example:
        >>> logsumexp(jnp.array([0.0, 0.0]))
        Array(0.6931472, dtype=float32)
    """
    if where is not None:
        a = ufuncs.where(where, a, 0)
    if b is not None:
        a, b = promote_args("logsumexp", a, b, to_inexact=True)
        a = ufuncs.where(ufuncs.not_equal(b, 0), a, -np.inf)
    else:
        (a,) = promote_args("logsumexp", a, to_inexact=True)
    axes = _axes("logsumexp", a, axis)
    amax = _max(ufuncs.real(a), axis=axes, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(ufuncs.isfinite(amax), amax, zeros_like(amax)))
    amax_with_dims = amax if keepdims else sh.expand_dims(amax, axes)
    shift = broadcast_to_shape(lax.convert_element_type(amax_with_dims, a.dtype), a.shape)
    exp_a = lax.exp(lax.sub(a, shift))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = _sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or sumexp.dtype.kind != "c":
        sumexp = ufuncs.abs(sumexp)
    out = lax.add(lax.log(sumexp), lax.convert_element_type(amax, sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and out.dtype.kind != "c":
        out = ufuncs.where(ufuncs.less(sign, 0), np.nan, out)
    return out


# ---------------------------------------------------------------------------------------
# The gamma family, the normal distribution's functions, and friends.


def _inexact(name, *args):
    return promote_args(name, *args, to_inexact=True)


def gammaln(x):
    """``log|Gamma(x)|``, elementwise (``lax.lgamma``; derivative ``digamma``).

    Example:
        >>> gammaln(jnp.array([1.0, 5.0]))
        Array([0.       , 3.1780539], dtype=float32)
    """
    return _gamma.lgamma_p.bind(*_inexact("gammaln", x))


def digamma(x):
    """The digamma function ``d/dx log Gamma(x)`` (differentiable to any order).

    Example:
        >>> digamma(jnp.array([1.0]))
        Array([-0.5772157], dtype=float32)
    """
    return _gamma.digamma(*_inexact("digamma", x))


psi = digamma


def betaln(a, b):
    """``log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    Example:
        >>> betaln(jnp.array([2.0]), jnp.array([3.0]))
        Array([-2.4849067], dtype=float32)
    """
    a, b = _inexact("betaln", a, b)
    return lax.sub(lax.add(gammaln(a), gammaln(b)), gammaln(lax.add(a, b)))


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``.

    Differentiable in ``x`` and ``a`` (first derivatives in ``a``).

    Example:
        >>> gammainc(jnp.array([1.0]), jnp.array([1.0]))
        Array([0.63212055], dtype=float32)
    """
    return _gamma.igamma_p.bind(*_inexact("gammainc", a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    Example:
        >>> gammaincc(jnp.array([1.0]), jnp.array([1.0]))
        Array([0.36787945], dtype=float32)
    """
    return _gamma.igammac_p.bind(*_inexact("gammaincc", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)``.

    Differentiable in ``x``; the derivatives in ``a`` and ``b`` are not implemented yet.

    Example:
        >>> betainc(jnp.array([2.0]), jnp.array([3.0]), jnp.array([0.5]))
        Array([0.6875], dtype=float32)
    """
    return _gamma.betainc_p.bind(*_inexact("betainc", a, b, x))


def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (whatever ``y``).

    Example:
        >>> xlogy(jnp.array([0.0, 2.0]), jnp.array([0.0, 3.0]))
        Array([0.      , 2.1972246], dtype=float32)
    """
    x, y = _inexact("xlogy", x, y)
    zero = ufuncs.equal(x, 0)
    return ufuncs.where(zero, 0, ufuncs.multiply(x, ufuncs.log(ufuncs.where(zero, 1, y))))


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0``.

    Example:
        >>> xlog1py(jnp.array([0.0, 2.0]), jnp.array([-1.0, 1.0]))
        Array([0.       , 1.3862944], dtype=float32)
    """
    x, y = _inexact("xlog1py", x, y)
    zero = ufuncs.equal(x, 0)
    return ufuncs.where(zero, 0, ufuncs.multiply(x, ufuncs.log1p(ufuncs.where(zero, 0, y))))


def _one_like(x):
    return lax.convert_element_type(np.ones((), x.dtype), x.dtype)


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``.

    Example:
        >>> expit(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    return lax.logistic(*_inexact("expit", x))


def logit(x):
    """The inverse of ``expit``: ``log(x / (1 - x))``.

    Example:
        >>> logit(jnp.array([0.5]))
        Array([0.], dtype=float32)
    """
    (x,) = _inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_one_like(x), x)))


def ndtr(x):
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2`` (accurate in the left tail).

    Example:
        >>> ndtr(jnp.array([0.0, -10.0]))
        Array([5.000000e-01, 7.619854e-24], dtype=float32)
    """
    (x,) = _inexact("ndtr", x)
    scaled = lax.mul(x, lax.convert_element_type(np.asarray(-1 / np.sqrt(2), x.dtype), x.dtype))
    return lax.mul(erfc(scaled), lax.convert_element_type(np.asarray(0.5, x.dtype), x.dtype))


def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails: below -20 (float64; -10 for float32, as
    JAX) an asymptotic series of order 5 instead of the log of the (underflowing) CDF;
    above 0, ``log1p(-ndtr(-x))``.

    Example:
        >>> log_ndtr(jnp.array([0.0, -30.0]))
        Array([  -0.6931472, -454.32123  ], dtype=float32)
    """
    (x,) = _inexact("log_ndtr", x)
    lower = -20.0 if x.dtype == np.float64 else -10.0
    far = ufuncs.less(x, lower)
    safe = ufuncs.where(far, x, lower)
    # log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(sum_k (-1)^k (2k-1)!! / x^2k)
    inv2 = ufuncs.divide(1.0, ufuncs.multiply(safe, safe))
    series = zeros_like(safe)
    for coefficient in (-945.0, 105.0, -15.0, 3.0, -1.0, 1.0):
        series = ufuncs.add(ufuncs.multiply(series, inv2), coefficient)
    tail = ufuncs.subtract(ufuncs.subtract(ufuncs.multiply(-0.5, ufuncs.multiply(safe, safe)),
                                           ufuncs.log(ufuncs.negative(safe))),
                           0.5 * LOG_2PI)
    tail = ufuncs.add(tail, ufuncs.log(series))
    near = ufuncs.where(far, 0.0, x)
    # right of 0, log1p(-ndtr(-x)) keeps the relative accuracy log(ndtr(x)) loses near 0
    right = ufuncs.log1p(ufuncs.negative(ndtr(ufuncs.negative(ufuncs.maximum(near, 0.0)))))
    left = ufuncs.log(ndtr(ufuncs.minimum(near, 0.0)))
    return ufuncs.where(far, tail, ufuncs.where(ufuncs.greater(x, 0.0), right, left))


def ndtri(p):
    """The inverse of ``ndtr``: ``sqrt(2) * erfinv(2 p - 1)`` (absolute accuracy; in the
    far left tail, where ``2 p - 1`` rounds, relative accuracy is lost).

    Example:
        >>> ndtri(jnp.array([0.5, 0.975]))
        Array([0.       , 1.9599643], dtype=float32)
    """
    (p,) = _inexact("ndtri", p)
    c = lambda v: lax.convert_element_type(np.asarray(v, p.dtype), p.dtype)  # noqa: E731
    return lax.mul(c(np.sqrt(2.0)), erfinv(lax.sub(lax.mul(c(2.0), p), c(1.0))))


def i0(x):
    """The modified Bessel function of the first kind of order 0, ``I0(x)``.

    Example:
        >>> i0(jnp.array([1.0]))
        Array([1.2660658], dtype=float32)
    """
    from ..numpy import i0 as _jnp_i0

    return _jnp_i0(x)


def i0e(x):
    """The exponentially scaled ``I0``: ``exp(-|x|) I0(x)``.

    Example:
        >>> i0e(jnp.array([0.0]))
        Array([1.], dtype=float32)
    """
    return _i0e(*_inexact("i0e", x))


def i1(x):
    """The modified Bessel function of the first kind of order 1, ``I1(x)``.

    Example:
        >>> i1(jnp.array([1.0]))
        Array([0.5651591], dtype=float32)
    """
    return _i1(*_inexact("i1", x))


def i1e(x):
    """The exponentially scaled ``I1``: ``exp(-|x|) I1(x)``.

    Example:
        >>> i1e(jnp.array([1.0]))
        Array([0.20791042], dtype=float32)
    """
    return _i1e(*_inexact("i1e", x))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (a Python int), as
    JAX's: ``d (d - 1) / 4 log(pi) + sum_{j < d} gammaln(a - j / 2)``.

    Example:
        >>> multigammaln(jnp.array([3.0]), 2)
        Array([1.550195], dtype=float32)
    """
    if isinstance(d, Tracer):
        raise ConcretizationTypeError("multigammaln: d must be a Python int, not a traced "
                                      "value (pass it as a static argument)")
    d = int(d)
    a, d_ = _inexact("multigammaln", a, d)
    c = lambda v: lax.convert_element_type(np.asarray(v, a.dtype), a.dtype)  # noqa: E731
    constant = lax.mul(lax.mul(lax.mul(c(0.25), d_), lax.sub(d_, c(1.0))), lax.log(c(np.pi)))
    b = lax.div(c(np.arange(d)), c(2.0))
    shape = (*a.shape, d)
    terms = gammaln(lax.sub(sh.broadcast_in_dim(a, shape, tuple(range(a.ndim))),
                            sh.broadcast_in_dim(b, shape, (a.ndim,))))
    return lax.add(_sum(terms, axis=-1), constant)


def entr(x):
    """The elementwise entropy term ``-x log x`` (0 at 0, ``-inf`` for negative ``x``).

    Example:
        >>> entr(jnp.array([0.0, 0.5, -1.0]))
        Array([0.       , 0.3465736,      -inf], dtype=float32)
    """
    (x,) = _inexact("entr", x)
    safe = ufuncs.where(ufuncs.greater(x, 0), x, 1.0)
    value = ufuncs.negative(ufuncs.multiply(x, ufuncs.log(safe)))
    return ufuncs.where(ufuncs.less(x, 0), -np.inf, ufuncs.where(ufuncs.equal(x, 0), 0.0, value))

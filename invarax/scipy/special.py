"""``invarax.scipy.special``: the special functions JAX provides (``logsumexp``, ``erf``,
``erfc``, ``erfinv`` so far)."""

from __future__ import annotations

import numpy as np

from ..numpy import _ufuncs as ufuncs
from ..numpy._creation import zeros_like
from ..numpy._promote import broadcast_to_shape, promote_args
from ..numpy._reductions import _axes
from ..numpy._reductions import max as _max
from ..numpy._reductions import sum as _sum
from ..ops import elementwise as lax
from ..ops import shape as sh
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

"""The multivariate normal distribution, as ``jax.scipy.stats.multivariate_normal``."""

from __future__ import annotations

from ... import numpy as jnp
from ...kernels.elementary import LOG_2PI
from ...lax import linalg as lax_linalg
from ._util import inexact


def logpdf(x, mean, cov, allow_singular=None):
    """The log density of ``N(mean, cov)`` at ``x`` (leading dimensions are batches).

    Arguments:
        x: points, shape ``(..., n)`` (or scalars with a scalar ``mean``).
        mean: the mean, shape ``(n,)`` (or a scalar).
        cov: the covariance, ``(n, n)``, symmetric positive definite (or a scalar variance).
        allow_singular: unsupported (must be None), as in JAX.

    Returns:
        ``-|L^-1 (x - mean)|^2 / 2 - n log(2 pi) / 2 - sum(log diag L)`` with ``L`` the
        Cholesky factor of ``cov`` (JAX's formula).

    Example:
        >>> logpdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2))
        Array(-1.837877, dtype=float32)
    """
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not "
                                  "supported (as in JAX)")
    x, mean, cov = (jnp.asarray(v) for v in (x, mean, cov))
    if not mean.shape:  # a scalar distribution
        x, mean, cov = inexact("multivariate_normal.logpdf", x, mean, cov)
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf: cov must have shape (..., {n}, {n}) "
                         f"for a mean of shape {mean.shape}, got {cov.shape}")
    if x.shape[-1:] != (n,):
        raise ValueError(f"multivariate_normal.logpdf: x must end in an axis of {n} (the "
                         f"mean's length), got shape {x.shape}")
    (dtype,) = {v.dtype for v in inexact("multivariate_normal.logpdf", x[..., :1],
                                         mean[..., :1])}
    x, mean, cov = (v.astype(jnp.promote_types(dtype, cov.dtype)) for v in (x, mean, cov))
    lower = lax_linalg.cholesky(cov)
    diff = x - mean
    batch = jnp.broadcast_shapes(diff.shape[:-1], lower.shape[:-2])
    y = lax_linalg.triangular_solve(
        jnp.broadcast_to(lower, (*batch, n, n)), jnp.broadcast_to(diff, (*batch, n))[..., None],
        left_side=True, lower=True)[..., 0]
    return (-0.5 * jnp.einsum("...i,...i->...", y, y) - n / 2 * LOG_2PI
            - jnp.log(jnp.diagonal(lower, axis1=-2, axis2=-1)).sum(-1))


def pdf(x, mean, cov):
    """The density of ``N(mean, cov)`` at ``x``: ``exp(logpdf)``.

    Example:
        >>> pdf(jnp.zeros(1), jnp.zeros(1), jnp.eye(1))
        Array(0.3989423, dtype=float32)
    """
    return jnp.exp(logpdf(x, mean, cov))

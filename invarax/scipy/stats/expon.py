"""The exponential distribution, as ``jax.scipy.stats.expon``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._util import inexact


def logpdf(x, loc=0, scale=1):
    """The log density ``-(x - loc) / scale - log(scale)`` for ``x >= loc``.

    Example:
        >>> logpdf(jnp.array([1.0, -1.0]))
        Array([ -1., -inf], dtype=float32)
    """
    x, loc, scale = inexact("expon.logpdf", x, loc, scale)
    log_probs = -(x - loc) / scale - jnp.log(scale)
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """The exponential density.

    Example:
        >>> pdf(jnp.array([0.0]))
        Array([1.], dtype=float32)
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function ``1 - exp(-(x - loc) / scale)`` (``-expm1``).

    Example:
        >>> cdf(jnp.array([1.0]))
        Array([0.63212055], dtype=float32)
    """
    x, loc, scale = inexact("expon.cdf", x, loc, scale)
    return jnp.where(x < loc, 0.0, -jnp.expm1(-(x - loc) / scale))


def logcdf(x, loc=0, scale=1):
    """``log(cdf)``.

    Example:
        >>> logcdf(jnp.array([1.0]))
        Array([-0.45867515], dtype=float32)
    """
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function ``exp(-(x - loc) / scale)``.

    Example:
        >>> sf(jnp.array([1.0]))
        Array([0.36787945], dtype=float32)
    """
    x, loc, scale = inexact("expon.sf", x, loc, scale)
    return jnp.where(x < loc, 1.0, jnp.exp(-(x - loc) / scale))


def logsf(x, loc=0, scale=1):
    """``log(sf) = -(x - loc) / scale``.

    Example:
        >>> logsf(jnp.array([1.0]))
        Array([-1.], dtype=float32)
    """
    x, loc, scale = inexact("expon.logsf", x, loc, scale)
    return jnp.where(x < loc, 0.0, -(x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc - scale * log1p(-q)`` (NaN outside ``[0, 1]``).

    Example:
        >>> ppf(jnp.array([0.5]))
        Array([0.6931472], dtype=float32)
    """
    q, loc, scale = inexact("expon.ppf", q, loc, scale)
    return jnp.where((q < 0) | (q > 1), np.nan, -jnp.log1p(-q) * scale + loc)

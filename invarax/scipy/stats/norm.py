"""The normal distribution, as ``jax.scipy.stats.norm``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ..special import log_ndtr, ndtr, ndtri
from ._util import inexact


def logpdf(x, loc=0, scale=1):
    """The log of the normal density with mean ``loc`` and standard deviation ``scale``.

    Example:
        >>> logpdf(jnp.array([0.0, 1.0]))
        Array([-0.9189385, -1.4189385], dtype=float32)
    """
    x, loc, scale = inexact("norm.logpdf", x, loc, scale)
    log_normalizer = jnp.log(2 * np.pi * jnp.square(scale))
    quadratic = jnp.square(x - loc) / jnp.square(scale)
    return -(log_normalizer + quadratic) / 2


def pdf(x, loc=0, scale=1):
    """The normal density, ``exp(logpdf)``.

    Example:
        >>> pdf(jnp.array([0.0]))
        Array([0.3989423], dtype=float32)
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal distribution function, ``ndtr((x - loc) / scale)``.

    Example:
        >>> cdf(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    x, loc, scale = inexact("norm.cdf", x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """``log(cdf)``, accurate in the left tail (``log_ndtr``).

    Example:
        >>> logcdf(jnp.array([0.0]))
        Array([-0.6931472], dtype=float32)
    """
    x, loc, scale = inexact("norm.logcdf", x, loc, scale)
    return log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, accurate in the right tail.

    Example:
        >>> sf(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    x, loc, scale = inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """``log(sf)``.

    Example:
        >>> logsf(jnp.array([0.0]))
        Array([-0.6931472], dtype=float32)
    """
    x, loc, scale = inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile function, ``loc + scale * ndtri(q)``.

    Example:
        >>> ppf(jnp.array([0.5]))
        Array([0.], dtype=float32)
    """
    q, loc, scale = inexact("norm.ppf", q, loc, scale)
    return ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse survival function, ``ppf(1 - q)``.

    Example:
        >>> isf(jnp.array([0.5]))
        Array([0.], dtype=float32)
    """
    q, loc, scale = inexact("norm.isf", q, loc, scale)
    return ppf(1 - q, loc, scale)

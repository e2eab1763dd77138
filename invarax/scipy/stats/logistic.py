"""The logistic distribution, as ``jax.scipy.stats.logistic``."""

from __future__ import annotations

from ... import numpy as jnp
from ..special import expit, logit
from ._util import inexact


def logpdf(x, loc=0, scale=1):
    """The log density of the logistic distribution.

    Example:
        >>> logpdf(jnp.array([0.0]))
        Array([-1.3862944], dtype=float32)
    """
    x, loc, scale = inexact("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half, -half) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """The logistic density.

    Example:
        >>> pdf(jnp.array([0.0]))
        Array([0.25], dtype=float32)
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The logistic distribution function, ``expit((x - loc) / scale)``.

    Example:
        >>> cdf(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    x, loc, scale = inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """The survival function, ``expit(-(x - loc) / scale)``.

    Example:
        >>> sf(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    x, loc, scale = inexact("logistic.sf", x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(x, loc=0, scale=1):
    """The quantile function, ``loc + scale * logit(x)``.

    Example:
        >>> ppf(jnp.array([0.5]))
        Array([0.], dtype=float32)
    """
    x, loc, scale = inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """The inverse survival function, ``loc - scale * logit(x)``.

    Example:
        >>> isf(jnp.array([0.5]))
        Array([0.], dtype=float32)
    """
    x, loc, scale = inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc

"""The Laplace distribution, as ``jax.scipy.stats.laplace``."""

from __future__ import annotations

from ... import numpy as jnp
from ._util import inexact


def logpdf(x, loc=0, scale=1):
    """The log density ``-|x - loc| / scale - log(2 scale)``.

    Example:
        >>> logpdf(jnp.array([0.0, 1.0]))
        Array([-0.6931472, -1.6931472], dtype=float32)
    """
    x, loc, scale = inexact("laplace.logpdf", x, loc, scale)
    return -(jnp.log(2 * scale) + jnp.abs(x - loc) / scale)


def pdf(x, loc=0, scale=1):
    """The Laplace density.

    Example:
        >>> pdf(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The Laplace distribution function.

    Example:
        >>> cdf(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    x, loc, scale = inexact("laplace.cdf", x, loc, scale)
    diff = (x - loc) / scale
    return jnp.where(diff <= 0, 0.5 * jnp.exp(diff), 1 - 0.5 * jnp.exp(-diff))

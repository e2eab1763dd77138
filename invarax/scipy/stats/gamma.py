"""The gamma distribution, as ``jax.scipy.stats.gamma``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ..special import gammainc, gammaincc, gammaln, xlogy
from ._util import inexact


def logpdf(x, a, loc=0, scale=1):
    """The log density of the gamma distribution with shape ``a``.

    Example:
        >>> logpdf(jnp.array([1.0]), 2.0)
        Array([-1.], dtype=float32)
    """
    x, a, loc, scale = inexact("gamma.logpdf", x, a, loc, scale)
    y = (x - loc) / scale
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x, a, loc=0, scale=1):
    """The gamma density.

    Example:
        >>> pdf(jnp.array([1.0]), 2.0)
        Array([0.36787945], dtype=float32)
    """
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """The gamma distribution function, ``gammainc(a, (x - loc) / scale)``.

    Example:
        >>> cdf(jnp.array([1.0]), 1.0)
        Array([0.63212055], dtype=float32)
    """
    x, a, loc, scale = inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, jnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x, a, loc=0, scale=1):
    """``log(cdf)``.

    Example:
        >>> logcdf(jnp.array([1.0]), 1.0)
        Array([-0.45867515], dtype=float32)
    """
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """The survival function, ``gammaincc(a, (x - loc) / scale)``.

    Example:
        >>> sf(jnp.array([1.0]), 1.0)
        Array([0.36787945], dtype=float32)
    """
    x, a, loc, scale = inexact("gamma.sf", x, a, loc, scale)
    return gammaincc(a, jnp.clip((x - loc) / scale, 0, np.inf))


def logsf(x, a, loc=0, scale=1):
    """``log(sf)``.

    Example:
        >>> logsf(jnp.array([1.0]), 1.0)
        Array([-1.], dtype=float32)
    """
    return jnp.log(sf(x, a, loc, scale))

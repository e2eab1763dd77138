"""The beta distribution, as ``jax.scipy.stats.beta``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ..special import betainc, betaln, xlog1py, xlogy
from ._util import inexact


def logpdf(x, a, b, loc=0, scale=1):
    """The log density of the beta distribution on ``[loc, loc + scale]``.

    Example:
        >>> logpdf(jnp.array([0.5]), 2.0, 3.0)
        Array([0.40546513], dtype=float32)
    """
    x, a, b, loc, scale = inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_linear = xlogy(a - 1, y) + xlog1py(b - 1, -y)
    log_probs = -betaln(a, b) + log_linear - jnp.log(scale)
    out = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    """The beta density.

    Example:
        >>> pdf(jnp.array([0.5]), 2.0, 3.0)
        Array([1.5], dtype=float32)
    """
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    """The beta distribution function, ``betainc(a, b, (x - loc) / scale)``.

    Example:
        >>> cdf(jnp.array([0.5]), 2.0, 3.0)
        Array([0.6875], dtype=float32)
    """
    x, a, b, loc, scale = inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, jnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    """``log(cdf)``.

    Example:
        >>> logcdf(jnp.array([0.5]), 2.0, 3.0)
        Array([-0.37469345], dtype=float32)
    """
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """The survival function, ``betainc(b, a, 1 - y)``.

    Example:
        >>> sf(jnp.array([0.5]), 2.0, 3.0)
        Array([0.3125], dtype=float32)
    """
    x, a, b, loc, scale = inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - jnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    """``log(sf)``.

    Example:
        >>> logsf(jnp.array([0.5]), 2.0, 3.0)
        Array([-1.1631508], dtype=float32)
    """
    return jnp.log(sf(x, a, b, loc, scale))

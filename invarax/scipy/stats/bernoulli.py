"""The Bernoulli distribution, as ``jax.scipy.stats.bernoulli``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ..special import xlog1py, xlogy
from ._util import inexact


def logpmf(k, p, loc=0):
    """The log probability of outcome ``k`` (0 or 1) with success probability ``p``.

    Example:
        >>> logpmf(jnp.array([0.0, 1.0]), 0.25)
        Array([-0.2876821, -1.3862944], dtype=float32)
    """
    k, p, loc = inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """The probability of outcome ``k``.

    Example:
        >>> pmf(jnp.array([1.0]), 0.25)
        Array([0.25], dtype=float32)
    """
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """The probability of an outcome at most ``k``.

    Example:
        >>> cdf(jnp.array([-1.0, 0.0, 1.0]), 0.25)
        Array([0.  , 0.75, 1.  ], dtype=float32)
    """
    k, p = inexact("bernoulli.cdf", k, p)
    invalid = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    return jnp.select([invalid, k < 0, (k >= 0) & (k < 1), k >= 1],
                      [jnp.full_like(k, np.nan), jnp.zeros_like(k), 1 - p, jnp.ones_like(k)],
                      default=np.nan)


def ppf(q, p):
    """The smallest outcome whose ``cdf`` is at least ``q``.

    Example:
        >>> ppf(jnp.array([0.5, 0.9]), 0.25)
        Array([0., 1.], dtype=float32)
    """
    q, p = inexact("bernoulli.ppf", q, p)
    invalid = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, jnp.where(q <= 1 - p, jnp.zeros_like(q), jnp.ones_like(q)))

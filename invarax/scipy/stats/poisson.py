"""The Poisson distribution, as ``jax.scipy.stats.poisson``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ..special import gammaincc, gammaln, xlogy
from ._util import inexact


def logpmf(k, mu, loc=0):
    """The log probability of ``k`` events at rate ``mu`` (-inf off the integers >= loc).

    Example:
        >>> logpmf(jnp.array([0.0, 2.0]), 1.0)
        Array([-1.       , -1.6931472], dtype=float32)
    """
    k, mu, loc = inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (x != jnp.floor(x)), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    """The probability of ``k`` events.

    Example:
        >>> pmf(jnp.array([0.0]), 1.0)
        Array([0.36787942], dtype=float32)
    """
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """The probability of at most ``k`` events, ``gammaincc(floor(k - loc) + 1, mu)``.

    Example:
        >>> cdf(jnp.array([1.0]), 1.0)
        Array([0.7357589], dtype=float32)
    """
    k, mu, loc = inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    p = gammaincc(jnp.floor(1 + x), mu)
    return jnp.where(x < 0, 0, p)

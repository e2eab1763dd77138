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
        Array([0.36787945], dtype=float32)
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


def _entropy_by_sum(mu, max_k, upper):
    from ..special import entr

    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = jnp.where(k < jnp.ceil(upper)[None, :], pmf(k, mu[None, :]), 0.0)
    return jnp.sum(entr(probs), axis=0)


def entropy(mu, loc=0):
    """The entropy of the Poisson distribution with rate ``mu``, by JAX's method: the sum
    of ``-p log p`` over ``k < mu + 20`` (``mu < 10``) or ``k < mu + 10 sqrt(mu) + 20``
    (``mu < 100``), and ``log(2 pi e mu) / 2 - 1 / (12 mu)`` beyond.

    Example:
        >>> entropy(jnp.array([1.0, 200.0]))
        Array([1.3048422, 4.0676804], dtype=float32)
    """
    mu, loc = inexact("poisson.entropy", mu, loc)  # loc moves the support only
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    small = _entropy_by_sum(flat, 35, flat + 20)
    medium = _entropy_by_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
    out = jnp.where(flat == 0, 0.0, jnp.where(flat < 10, small,
                                              jnp.where(flat < 100, medium, large)))
    return jnp.broadcast_to(jnp.reshape(out, mu.shape), shape)

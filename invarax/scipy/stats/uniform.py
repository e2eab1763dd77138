"""The uniform distribution on ``[loc, loc + scale]``, as ``jax.scipy.stats.uniform``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._util import inexact


def logpdf(x, loc=0, scale=1):
    """``-log(scale)`` inside ``[loc, loc + scale]``, -inf outside.

    Example:
        >>> logpdf(jnp.array([0.5, 3.0]), 0.0, 2.0)
        Array([-0.6931472,       -inf], dtype=float32)
    """
    x, loc, scale = inexact("uniform.logpdf", x, loc, scale)
    log_probs = -jnp.log(scale)
    return jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """The uniform density.

    Example:
        >>> pdf(jnp.array([0.5]), 0.0, 2.0)
        Array([0.5], dtype=float32)
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The uniform distribution function.

    Example:
        >>> cdf(jnp.array([-1.0, 0.5, 3.0]), 0.0, 2.0)
        Array([0.  , 0.25, 1.  ], dtype=float32)
    """
    x, loc, scale = inexact("uniform.cdf", x, loc, scale)
    inside = (x >= loc) & (x < loc + scale)
    return jnp.select([x < loc, x >= loc + scale, inside],
                      [jnp.zeros_like(x), jnp.ones_like(x), (x - loc) / scale])


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + q * scale`` (NaN outside ``[0, 1]``).

    Example:
        >>> ppf(jnp.array([0.25]), 0.0, 2.0)
        Array([0.5], dtype=float32)
    """
    q, loc, scale = inexact("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + q * scale)

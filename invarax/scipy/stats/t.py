"""Student's t distribution, as ``jax.scipy.stats.t``."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ..special import gammaln
from ._util import inexact


def logpdf(x, df, loc=0, scale=1):
    """The log density of Student's t distribution with ``df`` degrees of freedom.

    Example:
        >>> logpdf(jnp.array([0.0]), 3.0)
        Array([-1.0008888], dtype=float32)
    """
    x, df, loc, scale = inexact("t.logpdf", x, df, loc, scale)
    scaled = (x - loc) / scale
    half_df = df / 2
    normalize = gammaln(half_df) + jnp.log(jnp.square(scale) * np.pi * df) / 2 \
        - gammaln(half_df + 0.5)
    return -(normalize + (half_df + 0.5) * jnp.log1p(jnp.square(scaled) / df))


def pdf(x, df, loc=0, scale=1):
    """Student's t density.

    Example:
        >>> pdf(jnp.array([0.0]), 3.0)
        Array([0.3675526], dtype=float32)
    """
    return jnp.exp(logpdf(x, df, loc, scale))

"""``invarax.random``: JAX's counter-based PRNG (threefry2x32), bit for bit.

Keys are ``uint32[2]`` arrays; ``split``, ``fold_in``, ``bits``, ``uniform``, ``randint``,
``bernoulli``, ``permutation``, ``categorical`` and, in float32, ``normal`` and the other
continuous samplers give JAX's bits, for either setting of ``jax_threefry_partitionable``.
See docs/random.md.
"""

from ._discrete import categorical, choice, permutation
from ._keys import PRNGKey, bits, fold_in, key, key_data, split
from ._samplers import (
    bernoulli,
    exponential,
    gumbel,
    laplace,
    logistic,
    normal,
    randint,
    truncated_normal,
    uniform,
)

__all__ = [
    "PRNGKey", "bernoulli", "bits", "categorical", "choice", "exponential", "fold_in",
    "gumbel", "key", "key_data", "laplace", "logistic", "normal", "permutation", "randint",
    "split", "truncated_normal", "uniform",
]

"""``invarax.random``: JAX's counter-based PRNG (threefry2x32), bit for bit.

Keys are ``uint32[2]`` arrays; ``split``, ``fold_in``, ``bits``, ``uniform``, ``randint``,
``bernoulli``, ``permutation``, ``categorical`` and, in float32, ``normal`` and the other
continuous samplers give JAX's bits, for either setting of ``jax_threefry_partitionable``;
``gamma`` and the samplers built on it, ``poisson``, ``binomial`` and the others follow
JAX's algorithms on JAX's streams (docs/random.md says how close).
See docs/random.md.
"""

from ._counts import binomial, multinomial, poisson
from ._discrete import categorical, choice, permutation
from ._gamma import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    t,
)
from ._keys import PRNGKey, bits, fold_in, key, key_data, split
from ._more import (
    cauchy,
    clone,
    double_sided_maxwell,
    geometric,
    lognormal,
    maxwell,
    multivariate_normal,
    orthogonal,
    pareto,
    rademacher,
    rayleigh,
    triangular,
    wald,
    weibull_min,
)
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
    "ball", "beta", "binomial", "cauchy", "chisquare", "clone", "dirichlet",
    "double_sided_maxwell", "f", "gamma", "generalized_normal", "geometric", "loggamma",
    "lognormal", "maxwell", "multinomial", "multivariate_normal", "orthogonal", "pareto",
    "poisson", "rademacher", "rayleigh", "t", "triangular", "wald",
    "weibull_min",
    "PRNGKey", "bernoulli", "bits", "categorical", "choice", "exponential", "fold_in",
    "gumbel", "key", "key_data", "laplace", "logistic", "normal", "permutation", "randint",
    "split", "truncated_normal", "uniform",
]

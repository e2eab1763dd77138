"""``invarax.scipy.stats``: the distributions of ``jax.scipy.stats`` (``norm``, ``beta``,
``gamma``, ``poisson``, ``bernoulli``, ``t``, ``uniform``, ``logistic``, ``laplace``,
``expon``, ``multivariate_normal``), each a module of JAX's functions with JAX's formulas,
and ``gaussian_kde``."""

from . import (
    bernoulli,
    beta,
    expon,
    gamma,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)
from ._kde import gaussian_kde

__all__ = ["bernoulli", "beta", "expon", "gamma", "gaussian_kde", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]

"""``invarax.scipy.optimize``: JAX's ``jax.scipy.optimize``, ``minimize`` (BFGS) and
``line_search``."""

from ._line_search import LineSearchResults, line_search
from ._minimize import OptimizeResults, minimize

__all__ = ["LineSearchResults", "OptimizeResults", "line_search", "minimize"]

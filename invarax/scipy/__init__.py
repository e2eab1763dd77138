"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import linalg, optimize, special, stats  # noqa: F401

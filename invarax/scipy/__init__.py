"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import linalg, special, stats  # noqa: F401

"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import linalg, special  # noqa: F401

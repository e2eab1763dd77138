"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import special  # noqa: F401

"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import fft, linalg, optimize, special, stats  # noqa: F401

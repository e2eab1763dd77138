"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import (
    special,  # noqa: F401
    stats,  # noqa: F401
)

"""``invarax.scipy``: the SciPy functions JAX provides."""

from . import special  # noqa: F401
from . import linalg  # noqa: F401, E402

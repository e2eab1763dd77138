"""Indexing primitives: dynamic_slice, dynamic_update_slice, gather and the scatters.

They live by concern: ``gather.py`` (``GatherScatterMode``, gather and the scatters in
invarax's form, their transposes and batching rules), ``dynamic_slicing.py``
(``dynamic_slice``, ``dynamic_update_slice``) and ``scatter_derivatives.py`` (the JVPs of
scatter-mul, scatter-min and scatter-max, which sort); this module gathers them.
"""

from . import scatter_derivatives  # noqa: F401  (registers those JVP rules)
from .dynamic_slicing import (
    dynamic_slice,
    dynamic_slice_p,
    dynamic_update_slice,
    dynamic_update_slice_p,
    wrap_negative,
)
from .gather import (
    SCATTERS,
    GatherScatterMode,
    defscatter,
    gather,
    gather_p,
    scatter,
    scatter_add,
    scatter_add_p,
    scatter_max,
    scatter_max_p,
    scatter_min,
    scatter_min_p,
    scatter_mul,
    scatter_mul_p,
    scatter_p,
)

__all__ = [
    "SCATTERS", "GatherScatterMode", "defscatter", "dynamic_slice", "dynamic_slice_p",
    "dynamic_update_slice", "dynamic_update_slice_p", "gather", "gather_p", "scatter",
    "scatter_add", "scatter_add_p", "scatter_max", "scatter_max_p", "scatter_min",
    "scatter_min_p", "scatter_mul", "scatter_mul_p", "scatter_p", "wrap_negative",
]

"""``invarax.ad_checkpoint``: JAX's ``jax.ad_checkpoint`` names (``checkpoint``,
``remat``, ``checkpoint_name``, ``checkpoint_policies``, ``print_saved_residuals``)."""

from . import checkpoint_policies
from .transforms._checkpoint import checkpoint, checkpoint_name, remat
from .transforms._residuals import print_saved_residuals, saved_residuals

__all__ = [
    "checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals", "remat",
    "saved_residuals",
]

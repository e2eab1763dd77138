"""``invarax.ad_checkpoint``: JAX's ``jax.ad_checkpoint`` names (``checkpoint``,
``remat``, ``checkpoint_name``, ``checkpoint_policies``)."""

from . import checkpoint_policies
from .transforms._checkpoint import checkpoint, checkpoint_name, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]

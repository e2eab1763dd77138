"""``jax.experimental.shard_map``: the older path of ``shard_map``, whose ``check_rep`` is
today's ``check_vma`` and whose ``auto`` names the mesh axes not mapped over."""

from ..transforms._shard_map import experimental_shard_map as shard_map

__all__ = ["shard_map"]

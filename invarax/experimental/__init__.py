"""``invarax.experimental``: the names of JAX's ``jax.experimental`` that invarax has:
``io_callback``, and the ``checkify``, ``shard``, ``shard_map`` and ``sparse`` modules (with what
they serve)."""

from ..transforms._callbacks import io_callback
from . import checkify, shard, shard_map, sparse  # noqa: F401

__all__ = ["io_callback"]

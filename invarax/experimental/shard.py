"""``jax.experimental.shard``: ``reshard``, ``auto_axes`` and ``explicit_axes`` (also in
``invarax.sharding``)."""

from ..distributed.constraint import auto_axes, explicit_axes, reshard

__all__ = ["auto_axes", "explicit_axes", "reshard"]

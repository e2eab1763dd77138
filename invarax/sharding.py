"""``invarax.sharding``: JAX's ``jax.sharding`` — meshes of devices with named axes, and the
shardings that say which block of an array each device holds.

``NamedSharding(mesh, PartitionSpec(...))`` splits each dimension of an array over mesh
axes; ``device_put`` places an array with one, ``jit(..., in_shardings=...,
out_shardings=...)`` and ``shard_map`` use them. Local devices share the host's memory:
a sharded array holds its whole value, and every program computes the unsharded result,
bit for bit (docs/distributed.md). This module only re-exports.
"""

from .core.sharding import Sharding
from .distributed.constraint import auto_axes, explicit_axes, reshard
from .distributed.mesh import (
    AbstractMesh,
    AxisType,
    Mesh,
    get_abstract_mesh,
    get_mesh,
    set_mesh,
    use_mesh,
)
from .distributed.placement import Shard
from .distributed.shardings import (
    NamedSharding,
    PartitionSpec,
    PmapSharding,
    SingleDeviceSharding,
)

__all__ = [
    "AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "PmapSharding",
    "Shard", "Sharding", "SingleDeviceSharding", "auto_axes", "explicit_axes",
    "get_abstract_mesh", "get_mesh", "reshard", "set_mesh", "use_mesh",
]

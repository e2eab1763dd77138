"""Placing arrays on devices: ``device_put`` (a device, a sharding, or a pytree of them),
``device_put_replicated``/``device_put_sharded`` (``pmap``'s stacked inputs), building an
array from its pieces (``make_array_from_callback``, ``..._from_single_device_arrays``,
``..._from_process_local_data``), and what an array says of its placement
(``x.sharding``, ``x.addressable_shards``, ...).

Local devices share the host's memory, so an array always holds its whole value: placing
copies nothing, and a shard's data is a view of the array's block. Across processes each
process holds the global value too: building an array from pieces gathers the other
processes' pieces (``across``).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..core.pytree import tree_map
from ..ops.shape import broadcast_in_dim, concatenate, expand_dims
from . import across
from .constraint import constrain
from .devices import _registry, default_device
from .shardings import NamedSharding, PmapSharding, SingleDeviceSharding, as_sharding, placed


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """``x`` (a pytree of arrays) placed on ``device``: a device, a sharding, a
    ``PartitionSpec`` (with a mesh in context) or a pytree prefix of ``x`` of those
    (default: this process's first device).

    Host memory is shared, so nothing is copied; ``x.sharding`` then says where each piece
    lives. Inside a transformation it is ``lax.with_sharding_constraint``.

    Example:
        >>> invarax.device_put(jnp.ones(2)).devices() == {invarax.devices()[0]}
        True
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> mesh = invarax.make_mesh((2,), ("x",))
        >>> invarax.device_put(jnp.ones(4), NamedSharding(mesh, P("x"))).sharding.shard_shape((4,))
        (2,)
    """
    del src, donate, may_alias  # nothing moves: the devices share the host's memory
    return constrain(x, default_device() if device is None else device, "device_put")


def _device_list(devices_, what: str) -> list:
    out = [as_sharding(d, what) for d in devices_]
    if not all(isinstance(d, SingleDeviceSharding) for d in out):
        raise TypeError(f"{what} must be devices, got {devices_!r}")
    return [d._device for d in out]


def device_put_replicated(x, devices_: list):
    """``x`` stacked once per device along a new leading axis, the copies placed on them.

    Example:
        >>> invarax.device_put_replicated(jnp.ones(2), invarax.local_devices()[:1]).shape
        (1, 2)
    """
    devices_ = _device_list(devices_, "device_put_replicated's devices")
    if not devices_:
        raise ValueError("device_put_replicated needs at least one device")
    def replicate(leaf):
        leaf = to_array(leaf)
        return broadcast_in_dim(leaf, (len(devices_), *leaf.shape), tuple(range(1, leaf.ndim + 1)))

    return tree_map(lambda leaf: placed(replicate(leaf), PmapSharding(devices_)), x)


def device_put_sharded(shards: list, devices_: list):
    """The pytrees ``shards`` (one per device, same structure and shapes) stacked and placed.

    Example:
        >>> invarax.device_put_sharded([jnp.zeros(2)], invarax.local_devices()[:1]).shape
        (1, 2)
    """
    devices_ = _device_list(devices_, "device_put_sharded's devices")
    if len(shards) != len(devices_):
        raise ValueError(
            f"device_put_sharded got {len(shards)} shards for {len(devices_)} devices; "
            "pass one shard per device"
        )
    def stack(*leaves):
        leaves = [to_array(v) for v in leaves]
        if len({(v.shape, v.dtype) for v in leaves}) > 1:
            raise ValueError(
                "device_put_sharded needs shards of one shape and dtype, got "
                f"{[f'{v.dtype}{list(v.shape)}' for v in leaves]}; cast or pad them to match")
        return concatenate([expand_dims(v, (0,)) for v in leaves], 0)

    return tree_map(lambda *leaves: placed(stack(*leaves), PmapSharding(devices_)), *shards)


# ---------------------------------------------------------------------------------------
# What an array says of its placement.


class Shard:
    """One device's piece of an array: ``device``, ``index`` (a tuple of slices of the
    array), ``replica_id`` (which copy it is, among devices holding the same block) and
    ``data`` (the block, an array on that device)."""

    __slots__ = ("device", "index", "replica_id", "_array")

    def __init__(self, device, index, replica_id, array):
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self._array = array

    @property
    def data(self) -> ArrayImpl:
        value = self._array._value[self.index]
        return placed(ArrayImpl(value, self._array.weak_type), SingleDeviceSharding(self.device))

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={np.asarray(self.data)})")


def _sharding(self):
    placed_with = self._sharding
    return placed_with if placed_with is not None else SingleDeviceSharding(default_device())


def _shards(self) -> list:
    sharding = _sharding(self)
    indices = sharding.devices_indices_map(self.shape)
    seen, shards = {}, []
    for device in sharding._device_assignment:
        index = indices[device]
        key = repr(index)
        replica = seen[key] = seen.get(key, -1) + 1
        if device.local:
            shards.append(Shard(device, index, replica, self))
    return shards


def _addressable_data(self, index: int) -> ArrayImpl:
    return _shards(self)[index].data


ArrayImpl.sharding = property(_sharding, doc="Where the array lives (a Sharding).")
ArrayImpl.devices = lambda self: set(_sharding(self).device_set)
ArrayImpl.addressable_shards = property(
    _shards, doc="This process's pieces of the array (``Shard``s), in the mesh's order.")
ArrayImpl.global_shards = ArrayImpl.addressable_shards
ArrayImpl.addressable_data = _addressable_data
ArrayImpl.is_fully_addressable = property(lambda self: _sharding(self).is_fully_addressable)
ArrayImpl.is_fully_replicated = property(lambda self: _sharding(self).is_fully_replicated)
ArrayImpl.committed = property(lambda self: self._sharding is not None)


# ---------------------------------------------------------------------------------------
# Arrays from their pieces.


def _target(sharding, shape, name: str):
    sharding = as_sharding(sharding, f"{name}'s sharding")
    if sharding is None:
        raise TypeError(f"{name} needs a sharding, got None")
    if isinstance(sharding, NamedSharding):
        sharding.check(shape, f"{name}'s array")
    return sharding


def _assemble(shape, sharding, blocks: dict, name: str, dtype=None) -> ArrayImpl:
    """The array of ``shape`` whose block on each device is ``blocks[device]`` (given for
    this process's devices; another process's blocks are gathered from it)."""
    indices = sharding.devices_indices_map(shape)
    want = sharding.shard_shape(shape)
    values = {d: to_array(v, f"{name}'s block for {d}") for d, v in blocks.items()}
    if not values and dtype is None:
        raise ValueError(f"{name}: none of this process's devices holds a block of "
                         f"{sharding}, so the array's dtype is unknown here: pass dtype")
    first = next(iter(values.values()), None)
    kind = dtypes.canonicalize(dtype) if dtype is not None else first.dtype
    for device, value in values.items():
        if value.shape != tuple(want) or value.dtype != first.dtype:
            raise ValueError(
                f"{name}: the block for {device} (index {indices[device]}) has shape "
                f"{value.shape} and dtype {value.dtype}, but {sharding} gives every device a "
                f"block of shape {tuple(want)} of the array of shape {tuple(shape)} (dtype "
                f"{first.dtype}); return exactly that block")
    out = across.assemble(shape, kind, sharding, {d: np.asarray(v) for d, v in values.items()})
    return placed(ArrayImpl(out, first is not None and first.weak_type), sharding)


def make_array_from_callback(shape, sharding, data_callback, dtype=None) -> ArrayImpl:
    """The array of ``shape`` whose block on each device is ``data_callback(index)`` (JAX's
    ``jax.make_array_from_callback``), called once per device with its block's ``index``
    (a tuple of slices).

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> s = NamedSharding(invarax.make_mesh((2,), ("x",)), P("x"))
        >>> data = np.arange(4.0, dtype=np.float32)
        >>> invarax.make_array_from_callback((4,), s, lambda index: data[index])
        Array([0., 1., 2., 3.], dtype=float32)
    """
    shape = tuple(shape)
    sharding = _target(sharding, shape, "make_array_from_callback")
    indices = sharding.addressable_devices_indices_map(shape)
    return _assemble(shape, sharding, {d: data_callback(i) for d, i in indices.items()},
                     "make_array_from_callback", dtype)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array of ``shape`` assembled from one block per device (JAX's name): ``arrays``
    in the order of ``sharding``'s devices, or each placed on its device.

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> s = NamedSharding(invarax.make_mesh((2,), ("x",)), P("x"))
        >>> blocks = [jnp.zeros(2), jnp.ones(2)]
        >>> invarax.make_array_from_single_device_arrays((4,), s, blocks)
        Array([0., 0., 1., 1.], dtype=float32)
    """
    shape = tuple(shape)
    sharding = _target(sharding, shape, "make_array_from_single_device_arrays")
    devices_ = [d for d in sharding._device_assignment if d.local]
    arrays = list(arrays)
    if len(arrays) != len(devices_):
        raise ValueError(
            f"Expected {len(devices_)} per-device arrays (this is how many devices are "
            f"addressable by the sharding {sharding}), but got {len(arrays)}")
    on = [getattr(a, "_sharding", None) for a in arrays]
    if all(isinstance(s, SingleDeviceSharding) for s in on) and {
            s._device for s in on} == set(devices_):
        blocks = {s._device: a for s, a in zip(on, arrays, strict=True)}
    else:
        blocks = dict(zip(devices_, arrays, strict=True))
    return _assemble(shape, sharding, blocks, "make_array_from_single_device_arrays", dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The array placed with ``sharding`` from this process's data (JAX's name): the blocks
    its devices hold, side by side along each dimension (the other processes' are gathered).
    In a run of one process the local data is the whole array.

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> s = NamedSharding(invarax.make_mesh((2,), ("x",)), P("x"))
        >>> invarax.make_array_from_process_local_data(s, np.ones(4)).sharding.spec
        P('x',)
    """
    name = "make_array_from_process_local_data"
    local = to_array(local_data, f"{name}'s local_data")
    if _registry.ensure().process_count == 1:
        shape = local.shape if global_shape is None else tuple(global_shape)
        sharding = _target(sharding, shape, name)
        if shape != local.shape:
            raise ValueError(
                f"{name}: global_shape {shape} differs from the local data's shape "
                f"{local.shape}, but this process is the only one, so its data is the whole "
                "array: pass global_shape=None or the data's shape")
        return placed(local, sharding)
    resolved = as_sharding(sharding, f"{name}'s sharding")
    if global_shape is None and resolved is not None:
        global_shape = across.infer_global_shape(local.shape, resolved)
    shape = local.shape if global_shape is None else tuple(global_shape)
    sharding = _target(sharding, shape, name)
    blocks = across.local_blocks(np.asarray(local), shape, sharding, name)
    return _assemble(shape, sharding, blocks, name, local.dtype)

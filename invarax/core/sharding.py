"""``Sharding``: where the pieces of an array live (JAX's ``jax.sharding.Sharding``), and
where ``jit`` places the outputs of a call whose inputs are placed on a mesh.

The concrete shardings (``NamedSharding``, ``SingleDeviceSharding``, ``PmapSharding``)
live with the devices (``invarax.distributed``); ``jit`` sees only this interface. Local
devices share the host's memory, so an array always holds its whole value and a sharding
only records where its pieces live: ``jit`` computes the unsharded program whatever the
shardings of its inputs (N7), then places its outputs.
"""

from __future__ import annotations


class Sharding:
    """Where the pieces of an array live: each device holds the block
    ``devices_indices_map(shape)[device]`` of the array.

    A subclass defines ``device_set``, ``memory_kind``, ``_device_assignment`` (the devices
    in order), ``is_fully_replicated``, ``is_fully_addressable``, ``devices_indices_map``
    and ``shard_shape``. One that spans a mesh (``NamedSharding``) also defines
    ``_replicated()`` and sets ``_on_mesh``: ``jit`` then places its outputs after it.
    """

    __slots__ = ()
    _on_mesh = False

    @property
    def num_devices(self) -> int:
        """The number of devices holding a piece of the array."""
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set:
        """The devices of ``device_set`` that this process owns."""
        return {d for d in self.device_set if d.local}

    def addressable_devices_indices_map(self, global_shape) -> dict:
        """``devices_indices_map`` restricted to this process's devices."""
        return {d: index for d, index in self.devices_indices_map(tuple(global_shape)).items()
                if d.local}

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Whether ``other`` puts the same block of every array of rank ``ndim`` on the same
        device as this sharding does (``P('a')`` and ``P('a', None)``, for instance)."""
        if not isinstance(other, Sharding) or self.num_devices != other.num_devices:
            return False
        # A dimension of num_devices elements divides evenly whatever the mesh axes on it.
        shape = (self.num_devices,) * ndim
        return (self._device_assignment == other._device_assignment
                and self.devices_indices_map(shape) == other.devices_indices_map(shape))


def output_shardings(inputs: list, out_shapes: list) -> list:
    """Where ``jit`` places outputs of ``out_shapes`` computed from placed inputs.

    Arguments:
        inputs: ``(path, shape, sharding)`` of each input placed on a mesh, in argument
            order (the others do not decide placement).
        out_shapes: the outputs' shapes.

    Returns:
        For each output, the sharding of the first input of its shape, else the first
        input's mesh replicated; an error if the inputs' meshes have different devices.
    """
    (path, _, first), *rest = inputs
    for other_path, _, other in rest:
        if other.device_set != first.device_set:
            raise ValueError(
                f"jit received arguments on incompatible devices: {path} is on the devices "
                f"{_ids(first)} ({first!r}) and {other_path} on {_ids(other)} ({other!r}). "
                "Place every argument on one mesh (device_put(x, NamedSharding(mesh, spec))) "
                "or pass in_shardings to jit"
            )
    replicated = first._replicated()
    by_shape = {}
    for _, shape, sharding in inputs:
        by_shape.setdefault(tuple(shape), sharding)
    return [by_shape.get(tuple(shape), replicated) for shape in out_shapes]


def _ids(sharding) -> list:
    return sorted(d.id for d in sharding.device_set)

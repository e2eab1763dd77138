"""The shardings (JAX's classes): ``NamedSharding(mesh, PartitionSpec(...))`` splits each
dimension over mesh axes; ``SingleDeviceSharding`` puts the whole array on one device;
``PmapSharding`` is a ``pmap`` output's (one slice of the leading axis per device).

Each says which block of an array each device holds (``devices_indices_map``); the checks
of a sharding against an array's shape (rank, divisibility) live here, with errors that
name the array, the mesh and the fix.
"""

from __future__ import annotations

import math

from ..core.array import ArrayImpl
from ..core.sharding import Sharding
from .devices import CudaDevice, Device, _registry
from .mesh import AbstractMesh, Mesh, get_mesh


class _Unconstrained:
    """``PartitionSpec.UNCONSTRAINED``: a dimension whose sharding the program may choose
    (with ``with_sharding_constraint``); as an array's placement, replicated."""

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return "UNCONSTRAINED"


UNCONSTRAINED = _Unconstrained()


class PartitionSpec:
    """How each dimension of an array is split over mesh axes (``P`` for short).

    Arguments:
        *partitions: one entry per leading dimension: a mesh axis name, a tuple of names
            (the dimension split over their product, the first name the outermost), None
            (not split) or ``PartitionSpec.UNCONSTRAINED``. Dimensions past the last entry
            are not split.

    Example:
        >>> from invarax.sharding import PartitionSpec as P
        >>> P("x", None, ("y", "z"))
        P('x', None, ('y', 'z'))
    """

    UNCONSTRAINED = UNCONSTRAINED
    __slots__ = ("_parts",)

    def __init__(self, *partitions):
        self._parts = tuple(_entry(p) for p in partitions)

    def __len__(self):
        return len(self._parts)

    def __getitem__(self, i):
        return self._parts[i]

    def __iter__(self):
        return iter(self._parts)

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and self._parts == other._parts

    def __hash__(self):
        return hash(("PartitionSpec", self._parts))

    def __repr__(self):
        return f"P{self._parts!r}"

    def _axes(self, ndim: int) -> list:
        """The mesh axes splitting each of ``ndim`` dimensions (a tuple each, () if none)."""
        out = []
        for p in self._parts + (None,) * (ndim - len(self._parts)):
            out.append(() if p is None or p is UNCONSTRAINED else
                       (p,) if isinstance(p, str) else p)
        return out


def _entry(p):
    if isinstance(p, list):
        p = tuple(p)
    if isinstance(p, tuple):
        if not all(isinstance(n, str) for n in p):
            raise TypeError(f"a PartitionSpec entry that is a tuple holds mesh axis names "
                            f"(strings), got {p!r}")
        return None if not p else p[0] if len(p) == 1 else p
    if p is None or p is UNCONSTRAINED or isinstance(p, str):
        return p
    raise TypeError(f"a PartitionSpec entry is a mesh axis name, a tuple of names, None or "
                    f"PartitionSpec.UNCONSTRAINED, got {p!r}")


class NamedSharding(Sharding):
    """Each dimension of an array split over the mesh axes that ``spec`` names for it.

    Arguments:
        mesh: a ``Mesh``.
        spec: a ``PartitionSpec`` naming axes of ``mesh``, each at most once.
        memory_kind: None or ``"device"`` (CPU devices have one kind of memory).

    A device at position ``(i_a, i_b, ...)`` of the mesh holds, along a dimension split
    over axes ``(a, b)``, block number ``i_a * size_b + i_b`` of ``size_a * size_b``
    equal blocks; along a dimension not split, all of it (mesh axes not in ``spec``
    replicate the array).

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> s = NamedSharding(invarax.make_mesh((2, 2), ("x", "y")), P("x"))
        >>> s.shard_shape((8, 3))
        (4, 3)
    """

    _on_mesh = True

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding's mesh must be a Mesh, got {mesh!r}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding's spec must be a PartitionSpec, got {spec!r}: "
                            f"write P{tuple(spec) if isinstance(spec, tuple) else (spec,)!r}")
        _check_memory_kind(memory_kind)
        used = [n for axes in spec._axes(len(spec)) for n in axes]
        for n in used:
            if n not in mesh.axis_names:
                raise ValueError(
                    f"Resource axis: {n} of {spec} is not found in mesh: {mesh.axis_names}. "
                    f"Name axes of the mesh ({mesh}) only, or build a mesh with that axis")
        twice = sorted({n for n in used if used.count(n) > 1})
        if twice:
            raise ValueError(
                f"A NamedSharding spec can map every mesh axis to at most one dimension, but "
                f"{spec} has duplicate entries for {', '.join(map(repr, twice))}; split a "
                f"second dimension over another axis of {mesh}, or replicate it (None)")
        self.mesh = mesh
        self.spec = spec
        self._hash = hash((mesh, spec))

    memory_kind = "device"

    @property
    def device_set(self) -> set:
        return set(self.mesh.devices.flat)

    @property
    def _device_assignment(self) -> tuple:
        return self.mesh._flat_devices_tuple

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self.mesh.shape
        return all(sizes[n] == 1 for axes in self.spec._axes(len(self.spec)) for n in axes)

    @property
    def is_fully_addressable(self) -> bool:
        return not self.mesh.is_multi_process

    def check(self, shape, what: str = "the array") -> None:
        """Raise if this sharding cannot place an array of ``shape`` (``what`` names it)."""
        shape = tuple(shape)
        if len(self.spec) > len(shape):
            raise ValueError(
                f"{what} has shape {shape} (rank {len(shape)}) but its sharding's spec "
                f"{self.spec} has {len(self.spec)} entries; give at most one entry per "
                f"dimension (on {self.mesh})")
        sizes = self.mesh.shape
        for d, axes in enumerate(self.spec._axes(len(shape))):
            parts = math.prod(sizes[n] for n in axes)
            if shape[d] % parts:
                raise ValueError(
                    f"{what} has shape {shape}, but its sharding {self.spec} splits dimension "
                    f"{d} (size {shape[d]}) into {parts} blocks over the mesh axes {axes} of "
                    f"{self.mesh}, and {parts} does not divide {shape[d]}. Pad that dimension "
                    f"to a multiple of {parts}, split it over fewer devices, or leave it "
                    "unsplit (None in the spec)")

    def shard_shape(self, global_shape) -> tuple:
        """The shape of the block that each device holds."""
        shape = tuple(global_shape)
        self.check(shape)
        sizes = self.mesh.shape
        return tuple(n // math.prod(sizes[a] for a in axes)
                     for n, axes in zip(shape, self.spec._axes(len(shape)), strict=True))

    def devices_indices_map(self, global_shape) -> dict:
        """Each device's block: a tuple of slices, ``slice(None)`` along unsplit dimensions."""
        shape = tuple(global_shape)
        self.check(shape)
        sizes = self.mesh.shape
        position = dict(zip(self.mesh.axis_names, range(len(sizes)), strict=True))
        out = {}
        for where, device in zip(_positions(self.mesh.devices.shape), self.mesh.devices.flat,
                                 strict=True):
            index = []
            for n, axes in zip(shape, self.spec._axes(len(shape)), strict=True):
                parts = math.prod(sizes[a] for a in axes)
                if parts == 1:
                    index.append(slice(None))
                    continue
                block = 0
                for a in axes:
                    block = block * sizes[a] + where[position[a]]
                width = n // parts
                index.append(slice(block * width, (block + 1) * width))
            out[device] = tuple(index)
        return out

    def _replicated(self) -> NamedSharding:
        return NamedSharding(self.mesh, PartitionSpec())

    def _with_batch_dim(self, dim: int) -> NamedSharding:
        """The sharding of a batch of such arrays stacked at ``dim`` (not split there)."""
        parts = list(self.spec) + [None] * max(0, dim - len(self.spec))
        parts.insert(dim, None)
        return NamedSharding(self.mesh, PartitionSpec(*parts))

    def update(self, *, mesh=None, spec=None, memory_kind=None) -> NamedSharding:
        return NamedSharding(self.mesh if mesh is None else mesh,
                             self.spec if spec is None else spec, memory_kind=memory_kind)

    def with_memory_kind(self, kind) -> NamedSharding:
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        if isinstance(self.mesh, AbstractMesh):  # a type's sharding
            return f"NamedSharding(mesh={self.mesh}, spec={self.spec})"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}, memory_kind=device)"


def _positions(shape) -> list:
    """Every index of an array of ``shape``, in row-major order."""
    out = [()]
    for n in shape:
        out = [(*p, i) for p in out for i in range(n)]
    return out


def _check_memory_kind(kind):
    if kind not in (None, "device"):
        raise ValueError(f"memory_kind {kind!r}: CPU devices have one kind of memory, "
                         "'device' (or pass None)")


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        _check_memory_kind(memory_kind)
        self._device = device

    memory_kind = "device"
    is_fully_replicated = True

    @property
    def device_set(self) -> set:
        return {self._device}

    @property
    def _device_assignment(self) -> tuple:
        return (self._device,)

    @property
    def is_fully_addressable(self) -> bool:
        return self._device.local

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape) -> dict:
        return {self._device: (slice(None),) * len(global_shape)}

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and self._device == other._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device.id))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


class PmapSharding(Sharding):
    """The array's leading axis split over ``devices``, one slice each (a ``pmap`` output)."""

    def __init__(self, devices_):
        self.devices = tuple(devices_)

    memory_kind = "device"

    @property
    def device_set(self) -> set:
        return set(self.devices)

    @property
    def _device_assignment(self) -> tuple:
        return self.devices

    @property
    def is_fully_replicated(self) -> bool:
        return len(self.devices) == 1

    @property
    def is_fully_addressable(self) -> bool:
        return all(d.local for d in self.devices)

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)[1:]

    def devices_indices_map(self, global_shape) -> dict:
        rest = (slice(None),) * (len(global_shape) - 1)
        return {d: (i, *rest) for i, d in enumerate(self.devices)}

    def __eq__(self, other):
        return isinstance(other, PmapSharding) and self.devices == other.devices

    def __hash__(self):
        return hash(("PmapSharding", tuple(d.id for d in self.devices)))

    def __repr__(self):
        return f"PmapSharding(devices={list(self.devices)!r})"


def as_sharding(obj, what: str):
    """``obj`` as a ``Sharding``: a device means ``SingleDeviceSharding``, a ``PartitionSpec``
    ``NamedSharding`` over the mesh in context; None stays None."""
    if obj is None or isinstance(obj, Sharding):
        return obj
    if isinstance(obj, Device):
        if obj not in (*_registry.ensure().all, *(_registry.gpus or ())):
            raise TypeError(f"{what} must be one of invarax.devices(), got {obj!r}")
        return SingleDeviceSharding(obj)
    if isinstance(obj, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(
                f"{what} is the PartitionSpec {obj} but no mesh is in context: wrap the call "
                "in `with invarax.set_mesh(mesh):` (or `with mesh:`), or pass "
                f"NamedSharding(mesh, {obj})")
        return NamedSharding(mesh, obj)
    raise TypeError(f"{what} must be one of invarax.devices(), a Sharding or a PartitionSpec, "
                    f"got {obj!r}")


def placed(value, sharding) -> ArrayImpl:
    """``value`` (a concrete array) as a new array recording ``sharding``: on CPU devices it
    shares the value's buffer (host memory is shared by the local devices: nothing is
    copied); on a GPU it is in that GPU's memory (copied there unless it already is)."""
    device = getattr(sharding, "_device", None)
    if isinstance(device, CudaDevice) and value.dtype.kind in "biufc":  # (narrow types: on
        out = ArrayImpl.on_device(on_device(value, device), device, value.aval)  # the host)
    else:
        out = ArrayImpl(value._value, value.weak_type)
    out._sharding = sharding
    if ON_FIRST_MESH_PLACEMENT and isinstance(sharding, NamedSharding):
        while ON_FIRST_MESH_PLACEMENT:  # (eager operations start placing their results)
            ON_FIRST_MESH_PLACEMENT.pop()()
    return out


def on_device(x: ArrayImpl, device):
    """The value of ``x`` in the memory of the GPU ``device``: its buffer there, else a copy
    of its value, which ``x`` keeps (an array is immutable, so the copy stays its value)."""
    buffer = x._buffer
    if buffer is not None and x._buffer_device is device and not x.is_deleted():
        return buffer
    buffer = device.to_device(x._value)
    if x._buffer is None:
        x._buffer, x._buffer_device = buffer, device
    return buffer


ON_FIRST_MESH_PLACEMENT = []  # what to run when an array is first placed on a mesh

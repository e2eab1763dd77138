"""``Mesh``: devices laid out on named axes (JAX's ``jax.sharding.Mesh``), ``make_mesh``, and
the mesh in context (``set_mesh``, ``use_mesh``, ``with mesh:``) that a bare
``PartitionSpec`` refers to."""

from __future__ import annotations

import enum
import math
import threading
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from .devices import CpuDevice, CudaDevice, _registry
from .devices import devices as all_devices


class AxisType(enum.Enum):
    """How a mesh axis is partitioned (JAX's names): ``Explicit`` axes show in types
    (``typeof``) and make an ambiguous sharding an error, ``Auto`` ones are placed without
    error, ``Manual`` ones are ``shard_map``'s mapped axes. Every type computes the same,
    unsharded, program (docs/distributed.md)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class Mesh:
    """Devices laid out as an array with one named axis per dimension.

    Arguments:
        devices: an array (nested lists or a NumPy array) of distinct devices from
            ``invarax.devices()``, one dimension per axis.
        axis_names: a name (str) for each dimension of ``devices``.
        axis_types: an ``AxisType`` per axis (default: ``AxisType.Auto``).

    A mesh is also a context manager: inside ``with mesh:``, a ``PartitionSpec`` given
    where a sharding is expected means ``NamedSharding(mesh, spec)``.

    Example:
        >>> from invarax.sharding import Mesh
        >>> mesh = Mesh(np.array(invarax.devices()[:4]).reshape(2, 2), ("x", "y"))
        >>> mesh.shape
        OrderedDict([('x', 2), ('y', 2)])
    """

    def __init__(self, devices, axis_names, axis_types=None):
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.array(devices, dtype=object)
        if grid.ndim != len(names):
            raise ValueError(
                f"Mesh needs one axis name per dimension of its devices, but got devices of "
                f"shape {grid.shape} and axis_names {names}; reshape the devices "
                f"(np.array(devices).reshape(...)) or name every axis")
        _check_names(names)
        known = set(_registry.ensure().all)
        flat = list(grid.flat)
        if any(isinstance(d, CudaDevice) for d in flat):
            raise NotImplementedError(
                f"a mesh of GPUs ({flat}): invarax places arrays on one GPU at a time so far. "
                "Shard over the CPU devices (make_mesh(..., devices=invarax.devices('cpu'))) "
                "or put arrays on a GPU with invarax.device_put(x, invarax.devices('gpu')[0])")
        if not flat or any(not isinstance(d, CpuDevice) or d not in known for d in flat):
            raise TypeError(f"Mesh's devices must be devices from invarax.devices(), got {flat}")
        if len(set(flat)) != len(flat):
            raise ValueError(f"Mesh lists a device twice: {[d.id for d in flat]}")
        grid.flags.writeable = False
        self.devices = grid
        self.axis_names = names
        self.axis_types = _axis_types(axis_types, len(names))
        self._key = (tuple(d.id for d in flat), grid.shape, names, self.axis_types)
        self._hash = hash(self._key)

    @property
    def shape(self) -> OrderedDict:
        """Each axis's name and size, in order."""
        return OrderedDict(zip(self.axis_names, self.devices.shape, strict=True))

    @property
    def axis_sizes(self) -> tuple:
        return self.devices.shape

    @property
    def shape_tuple(self) -> tuple:
        return tuple(self.shape.items())

    @property
    def size(self) -> int:
        """The number of devices."""
        return self.devices.size

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        """The devices' ids, laid out as the mesh."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list:
        """The devices of the mesh that this process owns, in mesh order."""
        return [d for d in self.devices.flat if d.local]

    @property
    def is_multi_process(self) -> bool:
        return any(not d.local for d in self.devices.flat)

    @property
    def _flat_devices_tuple(self) -> tuple:
        return tuple(self.devices.flat)

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh without its devices: axis names, sizes and types."""
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return self._hash

    def __enter__(self):
        _push(self)
        return self

    def __exit__(self, *exc):
        _pop()

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={_types_repr(self.axis_types)})")

    def __str__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({sizes}, axis_types={_types_repr(self.axis_types)})"


class AbstractMesh:
    """A mesh's axis names, sizes and types without its devices (JAX's
    ``jax.sharding.AbstractMesh``): what ``get_abstract_mesh()`` and the sharding of a
    type (``jax.typeof(x).sharding``) name.

    Example:
        >>> from invarax.sharding import AbstractMesh
        >>> AbstractMesh((2, 4), ("x", "y")).shape
        OrderedDict([('x', 2), ('y', 4)])
    """

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        sizes = tuple(int(s) for s in axis_sizes)
        if len(sizes) != len(names):
            raise ValueError(f"AbstractMesh got {len(sizes)} axis sizes {sizes} for "
                             f"{len(names)} axis names {names}; give one size per name")
        _check_names(names)
        self.axis_sizes, self.axis_names = sizes, names
        self.axis_types = _axis_types(axis_types, len(names))

    @property
    def shape(self) -> OrderedDict:
        """Each axis's name and size, in order."""
        return OrderedDict(zip(self.axis_names, self.axis_sizes, strict=True))

    shape_tuple = Mesh.shape_tuple

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def _of(self, kind) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True)
                     if t is kind)

    explicit_axes = property(lambda self: self._of(AxisType.Explicit))
    auto_axes = property(lambda self: self._of(AxisType.Auto))
    manual_axes = property(lambda self: self._of(AxisType.Manual))

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and (
            self.axis_sizes, self.axis_names, self.axis_types) == (
            other.axis_sizes, other.axis_names, other.axis_types)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names, self.axis_types))

    def __repr__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        types = f", axis_types={_types_repr(self.axis_types)}" if self.axis_names else ""
        return (f"AbstractMesh({sizes}{types}, device_kind=cpu, num_cores=None, "
                "platform=cpu)")


def _types_repr(types) -> str:
    return "(" + ", ".join(t.name for t in types) + ("," if len(types) == 1 else "") + ")"


def _check_names(names):
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"mesh axis names must be strings, got {n!r} in {names}")
    if len(set(names)) != len(names):
        raise ValueError(f"mesh axis names must be distinct, got {names}")


def _axis_types(axis_types, n: int) -> tuple:
    if axis_types is None:
        return (AxisType.Auto,) * n
    types = (axis_types,) if isinstance(axis_types, AxisType) else tuple(axis_types)
    if len(types) == 1 and n > 1:
        types *= n
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise ValueError(f"axis_types must be one AxisType per mesh axis ({n}), got {axis_types}")
    return types


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh of the given shape over the first devices (JAX's ``jax.make_mesh``).

    Arguments:
        axis_shapes: the size of each axis.
        axis_names: the name of each axis.
        axis_types: an ``AxisType`` per axis; default ``AxisType.Explicit``, as JAX's.
        devices: the devices to lay out (default ``invarax.devices()``), in order.

    Returns:
        A ``Mesh`` whose devices, in row-major order, are the first ``prod(axis_shapes)``
        of ``devices``.

    Example:
        >>> invarax.make_mesh((2, 2), ("x", "y")).device_ids
        array([[0, 1],
               [2, 3]])
    """
    shape = tuple(int(s) for s in axis_shapes)
    names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(shape) != len(names):
        raise ValueError(f"make_mesh got {len(shape)} axis sizes {shape} for {len(names)} "
                         f"axis names {names}; give one size per name")
    pool = list(all_devices() if devices is None else devices)
    if len(pool) < math.prod(shape):
        raise ValueError(
            f"make_mesh{shape} needs {math.prod(shape)} devices but {len(pool)} are available. "
            f"Ask for more before first use: invarax.config.update('jax_num_cpu_devices', "
            f"{math.prod(shape)}) (or XLA_FLAGS=--xla_force_host_platform_device_count=N)")
    grid = np.empty(math.prod(shape), dtype=object)
    grid[:] = pool[:math.prod(shape)]
    types = (AxisType.Explicit,) * len(names) if axis_types is None else axis_types
    return Mesh(grid.reshape(shape), names, types)


# ---------------------------------------------------------------------------------------
# The mesh in context: a stack per thread over a global one (set_mesh).

_local = threading.local()
_global = [None]


def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _push(mesh):
    if not isinstance(mesh, Mesh):
        raise TypeError(f"expected a Mesh, got {mesh!r}")
    _stack().append(mesh)


def _pop():
    _stack().pop()


def get_mesh() -> Mesh | None:
    """The mesh in context (``with mesh:``, ``use_mesh``, ``set_mesh``), or None."""
    stack = _stack()
    return stack[-1] if stack else _global[0]


def get_abstract_mesh() -> AbstractMesh:
    """The mesh in context without its devices, each axis with its type where this code
    runs (``Auto`` inside ``auto_axes``, ``Manual`` inside ``shard_map``); an empty
    ``AbstractMesh`` if no mesh is in context.

    Example:
        >>> with invarax.set_mesh(invarax.make_mesh((2,), ("x",))):
        ...     invarax.sharding.get_abstract_mesh()
        AbstractMesh('x': 2, axis_types=(Explicit,), device_kind=cpu, num_cores=None, platform=cpu)
    """
    mesh = get_mesh()
    if mesh is None:
        return AbstractMesh((), ())
    return AbstractMesh(mesh.axis_sizes, mesh.axis_names, axis_types_here(mesh))


def axis_types_here(mesh) -> tuple:
    """The type of each axis of ``mesh`` where this code runs: its own, unless an
    ``auto_axes``, ``explicit_axes`` or ``shard_map`` around it changed that axis's."""
    types = list(mesh.axis_types)
    for changed in getattr(_local, "types", ()):
        for k, name in enumerate(mesh.axis_names):
            types[k] = changed.get(name, types[k])
    return tuple(types)


@contextmanager
def axis_types_as(changed: dict):
    """Give the mesh axes named in ``changed`` (name -> ``AxisType``) those types in the
    block (what ``auto_axes``, ``explicit_axes`` and ``shard_map`` do)."""
    stack = getattr(_local, "types", None)
    if stack is None:
        stack = _local.types = []
    stack.append(dict(changed))
    try:
        yield
    finally:
        stack.pop()


@contextmanager
def use_mesh(mesh: Mesh):
    """Make ``mesh`` the mesh in context for the block (JAX's ``jax.sharding.use_mesh``).

    Example:
        >>> from invarax.sharding import use_mesh, get_mesh
        >>> mesh = invarax.make_mesh((2,), ("x",))
        >>> with use_mesh(mesh):
        ...     get_mesh() is mesh
        True
    """
    _push(mesh)
    try:
        yield mesh
    finally:
        _pop()


class set_mesh:  # noqa: N801  (JAX's name; a function that also works as a context manager)
    """Make ``mesh`` the mesh in context (JAX's ``jax.set_mesh``): for the rest of the
    program, or, used as ``with set_mesh(mesh):``, for the block.

    Example:
        >>> mesh = invarax.make_mesh((2,), ("x",))
        >>> with invarax.set_mesh(mesh):
        ...     invarax.sharding.get_mesh() is mesh
        True
        >>> invarax.sharding.get_mesh() is None
        True
    """

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh (or None), got {mesh!r}")
        self._previous = _global[0]
        _global[0] = mesh

    def __enter__(self):
        return _global[0]

    def __exit__(self, *exc):
        _global[0] = self._previous

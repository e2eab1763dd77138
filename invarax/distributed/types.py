"""Shardings in types: what ``jax.typeof(x)`` says of where ``x`` lives, and eager sharding
propagation.

``typeof(x)`` is ``x``'s ``ShapedArray`` with a ``sharding`` (a ``NamedSharding`` over the
abstract mesh, naming only the axes that are ``Explicit`` where the code runs) and a
``vma`` (inside ``shard_map``, the mesh axes along which the value varies), printed as
JAX prints it: ``float32[8@X,4]``, ``float32[3]{V:i}``.

Where it comes from: a concrete array's placement; inside ``jit``, the arguments'
placement carried through the traced program by the sharding rules (``propagation``);
inside ``shard_map``, the block's batch axes. Eagerly, once an array has been placed on a
mesh, each operation on placed operands places its result by the same rules (an
``Explicit`` mesh raises JAX's errors where they give none) and refuses operands placed
on different devices. Values are untouched: only placement is recorded.
"""

from __future__ import annotations

import threading
import types as _pytypes
from contextlib import contextmanager

from ..core.array import ArrayImpl
from ..core.aval import ShapedArray
from ..core.lowering import lowering
from ..core.trace import EvalTrace
from ..interpreters.batching import BatchTracer, not_mapped
from ..interpreters.staging import StagingTracer
from .constraint import sharding_constraint_p
from .mesh import AbstractMesh, AxisType, axis_types_here, get_mesh
from .propagation import output_specs, type_str
from .shardings import ON_FIRST_MESH_PLACEMENT, NamedSharding, PartitionSpec, placed


class TypedAval(ShapedArray):
    """A ``ShapedArray`` with the sharding of its type and its varying manual axes."""

    __slots__ = ("sharding", "vma")

    def __init__(self, aval, sharding, vma=frozenset()):
        super().__init__(aval.shape, aval.dtype, aval.weak_type)
        self.sharding = sharding
        self.vma = frozenset(vma)

    def _spec(self) -> list:
        return self.sharding.spec._axes(len(self.shape))

    def _vma_str(self) -> str:
        if not self.vma:
            return ""
        names = sorted(self.vma)
        return "{V:" + (names[0] if len(names) == 1 else f"({','.join(names)})") + "}"

    def __str__(self):
        dims = type_str(self.shape, self._spec(), self.dtype).split("[", 1)[1]
        return f"{self.dtype.name}[{dims}{self._vma_str()}"

    def str_short(self) -> str:
        return type_str(self.shape, self._spec(), self.dtype) + self._vma_str()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self}{weak})"

    @property
    def manual_axis_type(self):
        """``.varying``: the manual mesh axes along which the value varies (JAX's name)."""
        return _pytypes.SimpleNamespace(varying=set(self.vma))

    def _plain(self) -> bool:
        return not self.vma and not any(self._spec())

    def __eq__(self, other):
        if type(other) is ShapedArray:  # (equal to the type without a sharding)
            return self._plain() and self.strip() == other
        return (isinstance(other, TypedAval) and self.strip() == other.strip()
                and self._spec() == other._spec() and self.vma == other.vma)

    def __hash__(self):
        return self._hash if self._plain() else hash((self._hash, tuple(self._spec()),
                                                      self.vma))

    def strip(self) -> ShapedArray:
        """The plain ``ShapedArray``."""
        return ShapedArray(self.shape, self.dtype, self.weak_type)


def typeof(x, aval: ShapedArray) -> TypedAval:
    """``aval`` (``x``'s) with the sharding and varying axes of ``x``."""
    found = sharding_of(x)
    mesh = found[0] if found is not None else get_mesh()
    if mesh is None:
        return TypedAval(aval, NamedSharding(AbstractMesh((), ()), PartitionSpec(
            *[None] * aval.ndim)), _vma(x))
    kinds = dict(zip(mesh.axis_names, axis_types_here(mesh), strict=True))
    spec = found[1] if found is not None else ((),) * aval.ndim
    shown = [tuple(a for a in axes if kinds[a] is AxisType.Explicit) for axes in spec]
    abstract = AbstractMesh(mesh.axis_sizes, mesh.axis_names, axis_types_here(mesh))
    return TypedAval(aval, NamedSharding(abstract, pspec(shown)), _vma(x))


def pspec(spec) -> PartitionSpec:
    """A spec (the axes of each dimension) as a ``PartitionSpec`` of one entry each."""
    return PartitionSpec(*[None if not a else a[0] if len(a) == 1 else a for a in spec])


def placed_with(mesh, spec) -> NamedSharding:
    """Where a result split as ``spec`` lives: on an ``Explicit`` mesh with one spec entry
    per dimension, on an ``Auto`` one without the trailing unsplit ones (as JAX's)."""
    entries = list(pspec(spec))
    if AxisType.Explicit not in axis_types_here(mesh):
        while entries and entries[-1] is None:
            entries.pop()
    return NamedSharding(mesh, PartitionSpec(*entries))


def sharding_of(x):
    """``(mesh, spec)`` of ``x`` if it lives on a mesh (concrete, or traced by ``jit`` from
    placed arguments), else None."""
    placed = placement(x)
    if placed is not None:
        return placed
    if isinstance(x, StagingTracer):
        return _staged(x)
    inner = getattr(x, "primal", None)  # a value being differentiated
    return None if inner is None else sharding_of(inner)


def _vma(x) -> set:
    """The manual (``shard_map``) mesh axes along which the block ``x`` varies."""
    mesh = get_mesh()
    manual = set() if mesh is None else {
        n for n, t in zip(mesh.axis_names, axis_types_here(mesh), strict=True)
        if t is AxisType.Manual}
    out = set()
    while isinstance(x, BatchTracer):
        name = x._trace.axis_name
        if name in manual and x.bdim is not not_mapped:
            out.add(name)
        x = x.val
    return out


# ---------------------------------------------------------------------------------------
# Inside jit: the arguments' placement, carried through the traced program.

_local = threading.local()


@contextmanager
def tracing(parent, leaves):
    """Within the block, a trace with parent ``parent`` stages a program of the arguments
    ``leaves`` (``jit``): ``typeof`` of its values shows where they live."""
    shardings = [sharding_of(x) for x in leaves]
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append((parent, shardings if any(s is not None for s in shardings) else None))
    try:
        yield
    finally:
        stack.pop()


def _staged(tracer):
    trace = tracer._trace
    state = trace.__dict__.get("_placement")
    if state is None:
        found = None
        for parent, shardings in reversed(getattr(_local, "stack", ())):
            if parent is trace.parent and shardings is not None and len(shardings) == len(
                    trace.invars):
                found = shardings
                break
        if found is None:
            return None
        specs = {id(v): s for v, s in zip(trace.invars, found, strict=True) if s is not None}
        state = trace._placement = [0, specs]
    done, specs = state
    _walk(trace.eqns[done:], specs, dict(zip(map(id, trace.constvars), trace.consts,
                                             strict=True)))
    state[0] = len(trace.eqns)
    return specs.get(id(tracer._var))


def propagate(closed, placements: list) -> list:
    """``(mesh, spec)`` (or None) of each output of the ``ClosedJaxpr`` ``closed`` whose
    inputs are placed as ``placements`` (the same rules as eagerly, never raising)."""
    jaxpr = closed.jaxpr
    specs = {id(v): p for v, p in zip(jaxpr.invars, placements, strict=True) if p is not None}
    _walk(jaxpr.eqns, specs, dict(zip(map(id, jaxpr.constvars), closed.consts, strict=True)))
    return [specs.get(id(v)) for v in jaxpr.outvars]


def _walk(eqns, specs: dict, consts: dict):
    """Add to ``specs`` (id of a variable -> ``(mesh, spec)``) the outputs of ``eqns``."""
    for eqn in eqns:
        ins = []
        for v in eqn.invars:
            s = specs.get(id(v))
            if s is None and id(v) in consts:
                s = sharding_of(consts[id(v)])
            ins.append(s)
        outs = _rule(eqn.primitive, eqn.params, [v.aval for v in eqn.invars], ins,
                     [v.aval for v in eqn.outvars], strict=False)
        for v, s in zip(eqn.outvars, outs or (), strict=False):
            specs[id(v)] = s


def _rule(primitive, params, avals, placements, out_avals, strict):
    """``[(mesh, spec)]`` for each output of ``primitive`` on operands placed as
    ``placements`` (None each where not on a mesh), or None if none is."""
    placed_by = lowering(primitive).placement  # with_sharding_constraint
    if placed_by is not None:
        s = placed_by(params)
        if isinstance(s, NamedSharding):
            return [(s.mesh, tuple(s.spec._axes(len(out_avals[0].shape))))]
    on = [(k, p) for k, p in enumerate(placements) if p is not None]
    if not on:
        return None
    mesh = on[0][1][0]
    if primitive.name == "jit":  # a nested jit: its program's placement
        return [(mesh, ((),) * len(a.shape)) if p is None else p for a, p in zip(
            out_avals, propagate(params["jaxpr"], placements), strict=True)]
    for k, (other, _) in on[1:]:
        if other._flat_devices_tuple != mesh._flat_devices_tuple:
            raise ValueError(
                f"Received incompatible devices for {primitive}: operand {on[0][0]} of shape "
                f"{avals[on[0][0]].shape} is on the devices {_ids(mesh)} and operand {k} of "
                f"shape {avals[k].shape} on {_ids(other)}. Place both on one mesh "
                "(device_put(x, NamedSharding(mesh, spec)))")
    names = set(mesh.axis_names)
    specs = [((),) * len(a.shape) if p is None or p[0].axis_names != mesh.axis_names
             else tuple(tuple(n for n in axes if n in names) for axes in p[1])
             for a, p in zip(avals, placements, strict=True)]
    kinds = dict(zip(mesh.axis_names, axis_types_here(mesh), strict=True))
    used = {n for s in specs for axes in s for n in axes}
    strict = strict and all(kinds[n] is AxisType.Explicit for n in used)
    out = output_specs(primitive, params, avals, specs, out_avals, strict, dict(mesh.shape))
    return [(mesh, s) for s in out]


def _ids(mesh) -> list:
    return [d.id for d in mesh._flat_devices_tuple]


# ---------------------------------------------------------------------------------------
# Eagerly: each operation on placed operands places its results.

_active = []  # non-empty once an array has been placed on a mesh


def _install():
    """Wrap eager evaluation once, at import (before anything can copy the method): until
    an array is placed on a mesh the wrapper only checks a flag."""
    original = EvalTrace.process_primitive

    def process_primitive(self, primitive, args, params):
        if not _active:
            return original(self, primitive, args, params)
        strict = not getattr(_local, "lenient", 0)
        placements = [placement(x) for x in args]
        if all(p is None for p in placements):
            return original(self, primitive, args, params)
        avals = [x.aval for x in args]
        out_avals = primitive.abstract_eval(*avals, **params)
        many = primitive.multiple_results
        where = _rule(primitive, params, avals, placements,
                      list(out_avals) if many else [out_avals], strict=strict)
        outs = original(self, primitive, args, params)
        for out, (mesh, spec) in zip(outs if many else [outs], where, strict=True):
            out._sharding = placed_with(mesh, spec)
        return outs

    EvalTrace.process_primitive = process_primitive


_install()
ON_FIRST_MESH_PLACEMENT.append(lambda: _active.append(True))


@contextmanager
def lenient():
    """Within the block eager operations place their results without raising: the
    operations that transformations emit (differentiation's transposed and linearized
    ones, whose results take their primals' placement: ``like_primals``; ``shard_map``'s
    blocks), to which JAX gives their shardings explicitly."""
    _local.lenient = getattr(_local, "lenient", 0) + 1
    try:
        yield
    finally:
        _local.lenient -= 1


def like_primals(cts: list, primals: list) -> list:
    """Each cotangent placed as its primal is (as JAX types it: a cotangent's sharding is
    its primal's); inside ``jit``, constrained to it."""
    if not _active:  # no array was ever placed on a mesh
        return cts
    out = []
    for c, p in zip(cts, primals, strict=True):
        where = sharding_of(p) if c.shape == p.shape else None
        if where is not None:
            target = p._sharding if placement(p) is not None else placed_with(*where)
            c = (placed(c, target) if type(c) is ArrayImpl
                 else sharding_constraint_p.bind(c, sharding=target))
        out.append(c)
    return out


def placement(x):
    """``(mesh, spec)`` of an array placed on a mesh, else None."""
    placed = getattr(x, "_sharding", None)
    if placed is None or not isinstance(placed, NamedSharding):
        return None
    return placed.mesh, tuple(placed.spec._axes(x.ndim))

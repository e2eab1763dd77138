"""``shard_map``: run a function on each device's block of its inputs, with collectives over
the mesh axes, and assemble the outputs from the blocks.

It is ``vmap`` underneath, one level per mesh axis (outermost first) with the axis's
name: each input is reshaped so that the blocks of the mesh axes its ``in_specs`` name
are batch axes, ``f`` runs per block, and each output's blocks are laid back out as its
``out_specs`` say. So ``psum``, ``pmean``, ``all_gather``, ``psum_scatter``, ``ppermute``,
``all_to_all``, ``axis_index`` and ``axis_size`` inside ``f`` are ``vmap``'s, and a
``shard_map`` program is bitwise its ``vmap`` equivalent, differentiable and batchable.

An output whose ``out_specs`` omits a mesh axis is the same on every device along it
(replicated). With ``check_vma`` (the default) an output that varies along such an axis
is an error, found as ``vmap`` finds it: the value depends on the axis's batch index (no
``psum``/``all_gather`` made it the same). With ``check_vma=False`` the block of the first
device along the axis is returned.
"""

from __future__ import annotations

import functools
import math

from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ..distributed.constraint import broadcast_shardings, constrain
from ..distributed.mesh import AxisType, Mesh, axis_types_as, get_mesh, use_mesh
from ..distributed.shardings import NamedSharding, PartitionSpec, placed
from ..distributed.types import lenient, pspec, sharding_of
from ..interpreters import batching
from ..ops import shape as sh
from . import _shard_map_processes as _processes

_INFER = object()


def shard_map(f=None, /, *, out_specs, in_specs=_INFER, mesh=None, axis_names=frozenset(),
              check_vma=True):
    """Map ``f`` over the blocks of its inputs on a mesh (JAX's ``jax.shard_map``).

    Arguments:
        f: a function of the per-device blocks (positional arguments, pytrees allowed).
        out_specs: a ``PartitionSpec`` (or a pytree prefix of ``f``'s output of them):
            how each output's blocks make the global output.
        in_specs: a ``PartitionSpec`` for every argument, or a tuple with a pytree prefix
            of each (None: not split). Default: the spec of each argument placed on
            ``mesh``, else not split.
        mesh: the ``Mesh`` (default: the mesh in context).
        axis_names: the mesh axes ``f`` is mapped over (default: all); specs name only
            those, and collectives over the others are unbound.
        check_vma: whether an output that varies along a mesh axis its ``out_specs`` omits
            is an error (else the first device's block is taken).

    Returns:
        The mapped function: outputs bitwise those of the equivalent nested ``vmap``,
        placed with ``NamedSharding(mesh, out_spec)``.

    Example:
        >>> from invarax.sharding import PartitionSpec as P
        >>> mesh = invarax.make_mesh((2,), ("x",))
        >>> f = invarax.shard_map(lambda v: lax.psum(v.sum(keepdims=True), "x"), mesh=mesh,
        ...                       in_specs=P("x"), out_specs=P())
        >>> f(jnp.arange(4.0))
        Array([6.], dtype=float32)
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    return _ShardMapped(f, mesh, in_specs, out_specs, axis_names, check_vma)


def experimental_shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """The older ``jax.experimental.shard_map.shard_map``: ``shard_map`` with ``check_rep``
    for ``check_vma`` and ``auto`` the mesh axes *not* mapped over."""
    manual = frozenset(n for n in mesh.axis_names if n not in set(auto))
    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=manual,
                     check_vma=check_rep)


class _ShardMapped:
    def __init__(self, f, mesh, in_specs, out_specs, axis_names, check_vma):
        self.f = f
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.axis_names = frozenset(axis_names)
        self.check_vma = check_vma
        self.name = getattr(f, "__name__", repr(f))
        self._per_process = {}  # signature -> (pmap of the body, outputs' tree and specs)
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"shard_map of {self.name} takes positional arguments only, got "
                            f"keyword arguments {sorted(kwargs)}; pass them by position")
        with lenient():  # (its blocks' moves are its own: JAX types them itself)
            return self._call(args)

    def _call(self, args):
        mesh = self._mesh()
        manual = [n for n in mesh.axis_names if not self.axis_names or n in self.axis_names]
        pairs, in_tree = tree_flatten_with_path(args)
        specs = self._in_specs(args, mesh)
        blocks, dims = [], []
        for (path, x), spec in zip(pairs, specs, strict=True):
            what = f"shard_map's args{keystr(path)}"
            x, used = _split(x, _checked(spec, mesh, manual, x.shape, what), mesh, manual)
            blocks.append(x)
            dims.append([0 if n in used else None for n in manual])
        out_info = {}

        def body(*leaves):
            out = self.f(*tree_unflatten(in_tree, leaves))
            out_leaves, out_tree = tree_flatten(out)
            out_specs = broadcast_shardings(self.out_specs, out, f"shard_map of {self.name}'s "
                                            "out_specs")
            out_info["tree"] = out_tree
            out_info["specs"] = [_as_spec(s, "out_specs") for s in out_specs]
            return out_leaves

        levels = [(n, mesh.shape[n]) for n in manual]
        per_process = _processes.eligible(mesh, manual, blocks)
        # Inside, the mesh is in context with the mapped axes Manual (typeof shows the
        # axes a block varies along).
        with use_mesh(mesh), axis_types_as(dict.fromkeys(manual, AxisType.Manual)):
            if per_process:
                outs = _processes.run(self, mesh, body, in_tree, blocks, dims, levels,
                                      out_info)
            else:
                outs = self._nest(body, blocks, dims, levels, out_info)
        result = []
        for k, (x, spec) in enumerate(zip(outs, out_info["specs"], strict=True)):
            what = f"shard_map of {self.name}'s output {k}"
            spec = _checked(spec, mesh, manual, None, what)
            block_ndim = x.ndim - len(_names(spec))
            if len(spec) > block_ndim:
                raise ValueError(f"{what} has rank {block_ndim} per device, but its out_specs "
                                 f"{spec} has {len(spec)} entries; give at most one per "
                                 "dimension")
            out = _join(x, spec, mesh, manual)
            result.append(placed(out, NamedSharding(mesh, spec)) if per_process else
                          constrain(out, NamedSharding(mesh, spec), "shard_map"))
        return tree_unflatten(out_info["tree"], result)

    def _mesh(self) -> Mesh:
        mesh = self.mesh if self.mesh is not None else get_mesh()
        if not isinstance(mesh, Mesh):
            raise ValueError(f"shard_map of {self.name} needs a mesh: pass mesh=... or call "
                             "it inside `with invarax.set_mesh(mesh):`")
        return mesh

    def _in_specs(self, args, mesh) -> list:
        if self.in_specs is _INFER:
            specs = []
            for x in tree_flatten(args)[0]:
                found = sharding_of(x)  # concrete, or traced by jit from a placed argument
                specs.append(pspec(found[1]) if found is not None and found[0] == mesh
                             else PartitionSpec())
            return specs
        specs = self.in_specs
        if not isinstance(specs, tuple) or isinstance(specs, PartitionSpec):
            specs = (specs,) * len(args)
        if len(specs) != len(args):
            raise ValueError(f"shard_map of {self.name}: in_specs has {len(specs)} entries for "
                             f"{len(args)} arguments; give one per argument (or one for all)")
        return [_as_spec(s, "in_specs") for s in broadcast_shardings(
            specs, args, f"shard_map of {self.name}'s in_specs")]

    def _nest(self, body, blocks, dims, levels, out_info):
        """``body`` on the blocks, one vmap level per mesh axis in ``levels``; each output
        with the blocks of the mesh axes its spec names leading, in mesh order."""
        if not levels:
            return body(*blocks)
        (name, size), rest = levels[0], levels[1:]

        def level(ins):
            return self._nest(body, ins, [d[1:] for d in dims], rest, out_info)

        outs, out_dims = batching.batch_flat(level, blocks, [d[0] for d in dims], size, name,
                                             f"shard_map of {self.name}")
        placed = []
        for k, (x, d) in enumerate(zip(outs, out_dims, strict=True)):
            spec = out_info["specs"][k]
            if name in _names(spec):
                placed.append(batching.move_batch_axis(x, d, 0, size))
            elif d is batching.not_mapped:
                placed.append(x)
            elif self.check_vma:
                raise ValueError(
                    f"shard_map of {self.name}: output {k} has out_specs {spec}, which says it "
                    f"is the same on every device along mesh axis {name!r}, but it varies "
                    f"along {name!r}. Name {name!r} in its out_specs, reduce it over the axis "
                    f"(lax.psum, lax.pmean, lax.all_gather over {name!r}), or pass "
                    "check_vma=False to take the first device's value")
            else:
                placed.append(sh.squeeze(sh.slice_in_dim(x, 0, 1, axis=d), (d,)))
        return placed


def _names(spec) -> list:
    return [n for axes in spec._axes(len(spec)) for n in axes]


def _as_spec(spec, what: str) -> PartitionSpec:
    if spec is None:
        return PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map's {what} must hold PartitionSpecs, got {spec!r}")
    return spec


def _checked(spec, mesh, manual, shape, what: str) -> PartitionSpec:
    """``spec``, checked against ``mesh`` (through ``NamedSharding``), the mapped axes and
    ``shape`` (if given)."""
    sharding = NamedSharding(mesh, spec)
    outside = [n for n in _names(spec) if n not in manual]
    if outside:
        raise ValueError(f"{what}'s spec {spec} names mesh axes {outside} that shard_map does "
                         f"not map over (axis_names={sorted(manual)}); add them to axis_names")
    if shape is not None:
        sharding.check(shape, what)
    return spec


def _split(x, spec, mesh, manual):
    """``x`` reshaped so that the blocks of each mesh axis of ``spec`` are a leading axis,
    in the order of ``manual``; and the axes used."""
    sizes = mesh.shape
    axes = spec._axes(x.ndim)
    shape, where, rest = [], {}, []
    for n, names in zip(x.shape, axes, strict=True):
        for a in names:
            where[a] = len(shape)
            shape.append(sizes[a])
        rest.append(len(shape))
        shape.append(n // math.prod(sizes[a] for a in names))
    used = [a for a in manual if a in where]
    x = sh.reshape(x, tuple(shape))
    return sh.transpose(x, tuple([where[a] for a in used] + rest)), set(used)


def _join(x, spec, mesh, manual):
    """The global output from ``x``: the blocks of the mesh axes ``spec`` names leading (in
    the order of ``manual``), then one block."""
    sizes = mesh.shape
    lead = [a for a in manual if a in _names(spec)]
    block_ndim = x.ndim - len(lead)
    axes = spec._axes(block_ndim)
    order, shape = [], []
    for d, names in zip(range(block_ndim), axes, strict=True):
        order += [lead.index(a) for a in names] + [len(lead) + d]
        shape.append(math.prod(sizes[a] for a in names) * x.shape[len(lead) + d])
    return sh.reshape(sh.transpose(x, tuple(order)), tuple(shape))

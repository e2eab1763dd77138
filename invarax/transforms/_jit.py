"""``jit`` with ``in_shardings`` and ``out_shardings``.

Local devices share the host's memory, so the program is not split: it runs once, on the
whole arrays, with every kernel thread, and gives bitwise the unsharded result for every
mesh and every partition (N7). The shardings say where the arrays live: the arguments
are placed with ``in_shardings`` (an argument already placed elsewhere on a mesh is an
error, as in JAX), the outputs with ``out_shardings``, or else as ``jit`` propagates the
inputs' placement (an output of an input's shape takes its sharding, any other output is
replicated over the mesh; docs/distributed.md).
"""

from __future__ import annotations

import functools

from ..compiler import jit as _compiler
from ..compiler.stages import check_compiler_options
from ..core.array import ArrayImpl, to_array
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_leaves, tree_unflatten
from ..core.trace import EVAL_TRACE, Tracer, current_trace
from ..distributed import across
from ..distributed import devices as _devices
from ..distributed.constraint import broadcast_shardings, constrain
from ..distributed.shardings import ON_FIRST_MESH_PLACEMENT, NamedSharding, as_sharding, placed
from ..distributed.types import placed_with, placement, propagate, tracing
from . import _jit_processes as _processes


def jit(fun=None, *, in_shardings=None, out_shardings=None, static_argnums=(),
        static_argnames=(), donate_argnums=(), compiler_options=None):
    """Compile ``fun``: trace it once per input signature, optimise, cache the program.

    Arguments:
        fun: a function of arrays (pytrees and keyword arguments allowed).
        in_shardings: None, or where the positional arguments live: a sharding (or a
            ``PartitionSpec``, with a mesh in context) for all of them, or a tuple with a
            pytree prefix of each argument (None: as the argument is). Arguments are placed
            with them; one already placed elsewhere on a mesh raises.
        out_shardings: None, or a sharding or pytree prefix of the output: where the
            outputs live. Unspecified, outputs follow the inputs placed on a mesh.
        static_argnums, static_argnames: arguments that are Python values, hashed
            into the cache key instead of traced (the fix for Python control flow
            on an argument).
        donate_argnums: positional arguments whose arrays the call may consume: as in
            JAX, each that an output of its shape and dtype can take is deleted after the
            call (using one again raises) and the program may reuse its buffer; the others
            are kept, with JAX's warning "Some donated buffers were not usable". A NumPy
            argument is never written over (docs/compiler.md).
        compiler_options: XLA's options, as JAX's: their names are checked, and they change
            nothing (invarax's programs are not XLA's).

    Returns:
        A callable with ``fun``'s signature; ``.lower(*args).as_text()`` prints the
        optimised program it runs. Results are bitwise those of calling ``fun`` eagerly,
        whatever the shardings.

    Example:
        >>> f = jit(lambda x, y: jnp.sin(x) * y)
        >>> f(1.0, 2.0)
        Array(1.6829419, dtype=float32, weak_type=True)
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> s = NamedSharding(invarax.make_mesh((2,), ("batch",)), P("batch"))
        >>> jit(lambda x: x * 2, in_shardings=s)(jnp.arange(4.0)).sharding.spec
        P('batch',)
    """
    check_compiler_options(compiler_options)
    if fun is None:
        return functools.partial(
            jit, in_shardings=in_shardings, out_shardings=out_shardings,
            static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums)
    if in_shardings is None and out_shardings is None:
        return _Jitted(fun, static_argnums, static_argnames, donate_argnums)
    return _ShardedJitted(fun, in_shardings, out_shardings, static_argnums, static_argnames,
                          donate_argnums)


_call = _compiler.Jitted.__call__


class _Jitted(_compiler.Jitted):
    """A ``Jitted`` whose traced program knows where its arguments live: ``typeof`` of a
    value inside it shows its sharding, and outputs computed from arguments placed on a
    mesh are placed by the sharding rules (docs/distributed.md)."""

    def _trace(self, dyn_args, dyn_kwargs, static_vals):
        with tracing(current_trace(), tree_leaves((dyn_args, dyn_kwargs))):
            return super()._trace(dyn_args, dyn_kwargs, static_vals)

    def _placing_call(self, *args, **kwargs):
        """``__call__`` once an array has been placed on a mesh (until then the compiled
        call runs alone, without this check)."""
        if current_trace() is not EVAL_TRACE:
            return _call(self, *args, **kwargs)
        dyn_args, dyn_kwargs, _ = self.static.split(args, kwargs)
        where = tuple(placement(x) for x in tree_leaves((dyn_args, dyn_kwargs)))
        if not any(where):
            return _call(self, *args, **kwargs)
        entry, _ = self._entry(args, kwargs)  # (traced now if new; the call finds it)
        out = _call(self, *args, **kwargs)  # (raises for arguments on other devices)
        key = (id(entry), where)
        outs = self._placed_outs.get(key)
        if outs is None:
            outs = self._placed_outs[key] = propagate(entry.closed, list(where))
        constrained = entry.placements or (None,) * len(outs)
        for x, p, c in zip(tree_leaves(out), outs, constrained, strict=True):
            if p is not None and c is None:  # (a constraint's output keeps its sharding)
                x._sharding = placed_with(*p)
        return out

    @property
    def _placed_outs(self) -> dict:
        """(entry, argument placements) -> the outputs' placements."""
        cache = self.__dict__.get("_placed_outs_cache")
        if cache is None:
            cache = self.__dict__["_placed_outs_cache"] = {}
        return cache


ON_FIRST_MESH_PLACEMENT.append(lambda: setattr(_Jitted, "__call__", _Jitted._placing_call))


class _ShardedJitted:
    """``jit(fun, in_shardings=..., out_shardings=...)``: a ``Jitted`` of ``fun`` with its
    outputs constrained, per mesh in context (a ``PartitionSpec`` means one of it)."""

    def __init__(self, fun, in_shardings, out_shardings, static_argnums, static_argnames,
                 donate_argnums):
        self.fun = fun
        self._in = tuple(in_shardings) if isinstance(in_shardings, list) else in_shardings
        self._out = out_shardings
        self._options = (static_argnums, static_argnames, donate_argnums)
        self._by_out = {}  # resolved out_shardings -> Jitted
        self._split = None  # the program split across processes, made on first use
        self._probe = _Jitted(fun, static_argnums, static_argnames, donate_argnums)
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args, **kwargs):
        inner, outs = self._inner()
        args, replaced = self._placed_args(args, kwargs, outs)
        axes = self._split_axes(args, kwargs)
        if axes is not None:  # split across processes: each runs its own rows
            return self._per_process(args, axes)
        out = inner(*args, **kwargs)
        n = len(args)
        for i in {i % n for i in self._probe.donate_argnums if -n <= i < n}:
            for leaf in replaced.get(i, ()):
                leaf.delete()  # the caller's array, replaced by a placed one that was donated
        return out

    def _split_axes(self, args, kwargs):
        """The axis each argument leaf is split along across processes (None: whole), or
        None where the program runs on the global arrays in every process: one process,
        keyword, static or donated arguments, outputs without out_shardings, or no leaf
        split (``_jit_processes``)."""
        static, names, donate = self._options
        if (_devices.process_count() == 1 or kwargs or static or names or donate
                or self._out is None):
            return None
        out_leaves = tree_flatten(self._out, is_leaf=lambda v: v is None)[0]
        leaves = tree_flatten(args)[0]
        if any(s is None for s in out_leaves) or any(isinstance(x, Tracer) for x in leaves):
            return None
        axes = [_processes.split_axis(x._sharding, x.shape) if isinstance(x, ArrayImpl)
                else None for x in leaves]
        return axes if any(a is not None for a in axes) else None

    def _per_process(self, args, axes):
        if self._split is None:
            self._split = _processes.SplitProgram(self.fun)
        out = self._split(args, axes)
        leaves, tree = tree_flatten(self._out, is_leaf=lambda v: v is None)
        prefix = tree_unflatten(tree, [as_sharding(s, "jit's out_shardings") for s in leaves])
        pairs, out_tree = tree_flatten_with_path(out)
        placed_leaves = []
        for (path, x), s in zip(pairs, broadcast_shardings(prefix, out, "jit's out_shardings"),
                                strict=True):
            if isinstance(s, NamedSharding):
                s.check(x.shape, f"jit's output{keystr(path)}")
            placed_leaves.append(placed(to_array(x), s))
        return tree_unflatten(out_tree, placed_leaves)

    def _inner(self):
        """The ``Jitted`` for the mesh in context, and the resolved output shardings."""
        leaves, tree = tree_flatten(self._out, is_leaf=lambda v: v is None)
        leaves = [as_sharding(s, "jit's out_shardings") for s in leaves]
        key = (tree, tuple(leaves))
        inner = self._by_out.get(key)
        if inner is None:
            outs = tree_unflatten(tree, leaves)
            fun = self.fun

            def constrained(*args, **kwargs):
                return constrain(fun(*args, **kwargs), outs, "jit's out_shardings")

            inner = self._by_out[key] = _Jitted(
                constrained, *self._options, cache_owner=fun, variant=("out_shardings", key))
        return inner, [s for s in leaves if s is not None]

    def _placed_args(self, args, kwargs, outs):
        """``args`` with each leaf placed with its in_sharding; the replaced leaves of each
        argument (to delete if it is donated)."""
        if self._in is None:
            self._check_devices([], outs)
            return args, {}
        if kwargs:
            raise ValueError(
                f"jit of {self._probe.static.name} with in_shardings got keyword arguments "
                f"{sorted(kwargs)}: in_shardings apply to positional arguments; pass them "
                "by position")
        dyn, _, static = self._probe.static.split(args, {})
        static_pos = {where for where, _ in static}
        positions = [i for i in range(len(args)) if i not in static_pos]
        prefix = self._in if isinstance(self._in, tuple) else (self._in,) * len(dyn)
        if len(prefix) != len(dyn):
            raise ValueError(
                f"jit of {self._probe.static.name}: in_shardings has {len(prefix)} entries for "
                f"{len(dyn)} positional (non-static) arguments; give one per argument, or a "
                "single sharding for all")
        new, replaced, used = list(args), {}, []
        for i, arg, spec in zip(positions, dyn, prefix, strict=True):
            name = self._probe._arg_name(i)
            new[i], replaced[i] = self._place(arg, spec, name, used)
        self._check_devices(used, outs)
        return tuple(new), replaced

    def _place(self, arg, shardings, name, used):
        pairs, tree = tree_flatten_with_path(arg)
        targets = broadcast_shardings(shardings, arg, f"jit's in_sharding of {name}")
        leaves, replaced = [], []
        for (path, leaf), target in zip(pairs, targets, strict=True):
            what = f"jit argument {name}{keystr(path)}"
            sharding = as_sharding(target, f"the in_sharding of {what}")
            if sharding is None:
                leaves.append(leaf)
                continue
            used.append((what, sharding))
            if isinstance(leaf, Tracer):
                leaves.append(constrain(leaf, sharding, "jit's in_shardings"))
                continue
            value = to_array(leaf, what)
            if isinstance(sharding, NamedSharding):
                sharding.check(value.shape, what)
            have = value._sharding
            if have is not None and have._on_mesh and not have.is_equivalent_to(
                    sharding, value.ndim):
                raise ValueError(
                    f"Sharding passed to jit does not match the sharding on the respective "
                    f"arg. Got jit sharding: {sharding},\narg sharding: {have} for {what} of "
                    f"shape {value.shape}. Place the argument with the jit's sharding "
                    "(device_put or reshard), or leave its in_sharding None")
            if have is not None and have == sharding:
                leaves.append(value)
                continue
            if not across.spans_processes(have):  # a value of this process's
                across.check_same(value._value, sharding, what)
            if isinstance(leaf, ArrayImpl):
                replaced.append(leaf)
            leaves.append(placed(value, sharding))
        return tree_unflatten(tree, leaves), replaced

    def _check_devices(self, used, outs):
        on_mesh = used + [("an out_sharding", s) for s in outs]
        on_mesh = [(w, s) for w, s in on_mesh if s._on_mesh]
        for what, sharding in on_mesh[1:]:
            first_what, first = on_mesh[0]
            if sharding.device_set != first.device_set:
                raise ValueError(
                    f"Received incompatible devices for jitted computation: {first_what} is "
                    f"placed with {first} and {what} with {sharding}, on other devices. Use "
                    "one mesh for every in_sharding and out_sharding")

    def __getattr__(self, name):  # lower, trace, eval_shape, clear_cache: the inner Jitted's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._inner()[0], name)

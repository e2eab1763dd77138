"""``jit``: trace once per signature, optimise and compile the program, cache it, run it.

A jitted call is keyed on the input structure, the abstract values (shape, dtype,
weak type) of the array arguments, the static arguments and the flags that change
what tracing records (``jax_enable_x64``, ``jax_threefry_partitionable``, ...). A call
whose arguments are all positional arrays takes a fast path: its key is built from
the arrays alone and its outputs wrapped by a function prepared with the entry.

The traced program is kept as traced (what outer transformations see: under
``grad`` or ``vmap`` a call stays one ``jit`` equation whose parameter is that
jaxpr) and is run optimised (``passes.optimize``: bitwise the same results).

Retraces: with ``config.update("jax_explain_cache_misses", True)`` each trace logs
(logger ``"invarax"``, WARNING) which argument changed and how; without it, a
function whose argument has come in ``RETRACE_WARNING_AFTER`` variants gets one
``RetraceWarning`` naming that argument: its sizes (at one dtype and rank) or its static
value keep changing.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
import threading
import types
import warnings
import weakref

import numpy as np

from ..core import backends, refs
from ..core.api_util import StaticArgs, flatten_args
from ..core.array import ArrayImpl
from ..core.config import config
from ..core.effects import runs_python
from ..core.ir import ClosedJaxpr
from ..core.lowering import lowering
from ..core.pytree import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)
from ..core.sharding import output_shardings
from ..core.trace import EVAL_TRACE, current_trace
from ..interpreters.staging import trace_fun
from .call import compile_program, hoist_tracer_consts, jit_p
from .passes import optimize
from .retrace import Signature, retrace_warning, varying

logger = logging.getLogger("invarax")

RETRACE_WARNING_AFTER = 10  # sizes or static values of one argument before a RetraceWarning


class RetraceWarning(UserWarning):
    """A jitted function keeps being traced again: an argument changes from call to call."""


# Config flags that do not change what tracing records; every other flag is in the key.
_NOT_TRACED = frozenset({"jax_explain_cache_misses", "jax_log_compiles", "jax_platform_name",
                         "jax_platforms", "jax_default_device", "jax_disable_jit"})


def _flags() -> tuple:
    """The traced flags and their values (the config's private table: the only listing)."""
    return tuple((k, v) for k, v in sorted(config._values.items()) if k not in _NOT_TRACED)


# Guards the jitted functions' caches and pending traces (held briefly, never while
# tracing); a forked child gets a new one (a parent's thread may have held it).
_PENDING_LOCK = threading.Lock()


def _fresh_lock() -> None:
    global _PENDING_LOCK
    _PENDING_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_lock)

_contexts = {}  # _flags() -> a small int, the key's first element
_context = _contexts.setdefault(_flags(), 0)
_disabled = config.jax_disable_jit  # jax.disable_jit(): jitted functions run as written


def _on_config(name, value):
    global _context, _disabled
    _context = _contexts.setdefault(_flags(), len(_contexts))
    _disabled = config.read("jax_disable_jit")


config.on_update(_on_config)


def _fast_key(args):
    """The fast-path key of positional arguments that are all concrete arrays, else None."""
    key = [_context]
    for a in args:
        if type(a) is not ArrayImpl or a._sharding is not None:  # placed: see _placed
            return None
        v = a._value
        key += (v.shape, v.dtype, a._weak_type)
    return tuple(key)


class _Entry:
    """One traced signature: the traced jaxpr, its optimised form and how to run it.

    ``closed`` is the traced program, its tracer consts (values of enclosing
    transformations) hoisted to leading inputs; ``optimized`` is what ``run`` computes;
    ``wrap`` turns ``run``'s NumPy outputs into the output pytree; ``donated`` holds the
    indices of the leaves whose arrays are deleted after a call; ``call`` maps the
    concrete argument arrays to the output pytree (all of that in one function);
    ``placements`` holds the sharding of each output that a sharding constraint places
    (None if none does); ``borrows`` says whether a call may read a caller's NumPy array
    without a copy (the program hands no value to a Python callback, which could keep it).
    """

    __slots__ = ("closed", "optimized", "tracer_consts", "out_tree", "run", "consts", "wrap",
                 "donated", "call", "borrows", "placements", "refs")

    def __init__(self, closed: ClosedJaxpr, out_tree, donated: tuple):
        # Values of enclosing transformations become explicit inputs of the jaxpr.
        closed, self.tracer_consts = hoist_tracer_consts(closed)
        donated = (False,) * len(self.tracer_consts) + donated
        self.closed = closed
        self.optimized = optimize(closed)
        self.out_tree = out_tree
        self.consts = [c._value for c in self.optimized.consts]
        self.run = compile_program(self.optimized.jaxpr, donated)
        self.placements = _placements(closed.jaxpr)
        self.wrap = _wrapper(out_tree, [a.weak_type for a in closed.out_avals], self.placements)
        self.donated = tuple(i for i, d in enumerate(donated[len(self.tracer_consts):]) if d)
        self.call = _caller(self)
        self.borrows = not any(map(runs_python, self.optimized.jaxpr.eqns))
        self.refs = None  # (refs read, refs written) of a function using outer Refs


def _caller(entry: _Entry):
    """``entry.call``: the run and the wrapping of its outputs, specialised to the entry."""
    run, consts, wrap = entry.run, entry.consts, entry.wrap
    if entry.donated:
        return lambda arrays: _run_donating(entry, arrays)
    if consts:
        return lambda arrays: wrap(run(*consts, *[a._value for a in arrays]))
    if treedef_is_leaf(entry.out_tree) and entry.placements is None:
        weak = entry.closed.out_avals[0].weak_type
        return lambda arrays: ArrayImpl(run(*[a._value for a in arrays])[0], weak)
    return lambda arrays: wrap(run(*[a._value for a in arrays]))


def _wrote(written: tuple, out):
    """``out`` of a call that wrote the ``written`` refs: the function's output, after the
    refs' new values (the call's last outputs) are written where the caller runs."""
    if not written:
        return out
    out, values = out
    for ref, value in zip(written, values, strict=True):
        refs.write(ref, value)
    return out


def _run_donating(entry: _Entry, arrays):
    """Run ``entry`` on ``arrays``, lending the buffers of the donated ones; delete those."""
    values = [a._value for a in arrays]
    try:
        for i in entry.donated:
            _lend(values[i])
        outs = entry.run(*entry.consts, *values)
        return entry.wrap(_into_donated(outs, [values[i] for i in entry.donated]))
    finally:
        for i in entry.donated:
            arrays[i].delete()


def _into_donated(outs, donated: list):
    """``outs`` with each output that no donated buffer holds moved into a lent donated
    buffer of its shape and dtype that no output holds (copied: the same bits), as JAX
    returns a donated buffer (``unsafe_buffer_pointer`` shows it); each buffer taken once,
    outputs in order."""
    lent = [b for b in donated if b.flags.writeable]
    if not lent:
        return outs
    outs = list(outs)
    arrays = [o for o in outs if isinstance(o, np.ndarray)]
    free = [b for b in lent if not any(np.may_share_memory(b, o) for o in arrays)]
    for k, o in enumerate(outs):
        if not free:
            break
        if isinstance(o, np.ndarray) and any(np.may_share_memory(o, b) for b in lent):
            continue  # already in a donated buffer
        o = np.asarray(o)
        j = next((j for j, b in enumerate(free) if b.shape == o.shape and b.dtype == o.dtype),
                 None)
        if j is not None:
            b = free.pop(j)  # by position: ``list.remove`` would compare arrays with ``==``
            b[...] = o
            b.flags.writeable = False
            outs[k] = b
    return outs


# References to a donated buffer while _lend runs: the array's slot, the list of values,
# _lend's argument and getrefcount's. One more is a view (its .base) or another holder.
_LENDABLE_REFS = 4


def _lend(value: np.ndarray):
    """Make a donated buffer writeable, so the program may write over it, if nothing else
    can see its memory: it owns its data and no view or other object refers to it (never
    a caller's NumPy array borrowed without a copy: that is a read-only view)."""
    if value.base is None and sys.getrefcount(value) <= _LENDABLE_REFS:
        value.flags.writeable = True


def _placed(out, inputs: list):
    """``out`` with the outputs that no sharding constraint places placed as the inputs
    placed on a mesh say (``core.sharding.output_shardings``; docs/distributed.md)."""
    leaves, tree = tree_flatten(out)
    shardings = output_shardings(inputs, [x.shape for x in leaves])
    for x, s in zip(leaves, shardings, strict=True):
        if x._sharding is None:
            x._sharding = s
    return out


def _unaliased(out, borrowed: list):
    """``out`` (the output pytree of a call) with every array that shares memory with a
    ``borrowed`` NumPy buffer (an input returned as is, or a view of one) copied, so that
    a later write by the caller to its array changes no returned ``Array``."""
    leaves, tree = tree_flatten(out)
    shared = [any(np.may_share_memory(x._value, b) for b in borrowed) for x in leaves]
    if not any(shared):
        return out
    return tree_unflatten(tree, [x.copy() if s else x for x, s in zip(leaves, shared,
                                                                       strict=True)])


def _placements(jaxpr) -> tuple | None:
    """The sharding each output is placed with by the equation computing it (its lowering's
    ``placement``: ``with_sharding_constraint``), or None if no output is placed."""
    made = {id(v): eqn for eqn in jaxpr.eqns for v in eqn.outvars}
    out = []
    for v in jaxpr.outvars:
        eqn = made.get(id(v))
        rule = None if eqn is None else lowering(eqn.primitive).placement
        out.append(None if rule is None else rule(eqn.params))
    return tuple(out) if any(p is not None for p in out) else None


def _wrapper(out_tree, weak_types, placements=None):
    """A function from the program's NumPy outputs to the output pytree of arrays (placed
    per ``placements``, when given)."""
    weak = tuple(weak_types)
    if placements is not None:
        def place(outs):
            arrays = list(map(ArrayImpl, outs, weak))
            for a, p in zip(arrays, placements, strict=True):
                a._sharding = p
            return tree_unflatten(out_tree, arrays)

        return place
    if treedef_is_leaf(out_tree):
        (w,) = weak
        return lambda outs: ArrayImpl(outs[0], w)
    if out_tree == tree_structure((0,) * len(weak)):
        return lambda outs: tuple(map(ArrayImpl, outs, weak))
    return lambda outs: tree_unflatten(out_tree, list(map(ArrayImpl, outs, weak)))


class _Caches:
    """The traced signatures of one function: shared by every ``Jitted`` of it."""

    __slots__ = ("entries", "fast", "signatures", "variants", "pending")

    def __init__(self):
        self.pending = {}  # key -> Event set when the thread tracing it is done
        self.entries = {}  # full key -> _Entry
        self.fast = {}  # _fast_key of positional array arguments -> _Entry
        self.signatures = []  # one _Signature per cached trace, to explain retraces
        self.variants = {}  # (path, kind) -> descriptions seen (see _varying)


# (id(owner), fun, options) -> (weak reference to owner, _Caches). As JAX, ``jit(f)``
# written again finds the programs traced for ``f``: the caches live while ``f`` does.
_shared: dict = {}


def _caches_for(owner, key) -> _Caches:
    """The caches of ``owner`` (held weakly) under ``key``; private ones if ``owner``
    cannot be referenced weakly."""
    full = (id(owner), key)
    hit = _shared.get(full)
    if hit is not None and hit[0]() is owner:
        return hit[1]
    caches = _Caches()

    def forget(ref, full=full, shared=_shared):  # bound: module globals vanish at exit
        if shared.get(full, (None,))[0] is ref:
            del shared[full]

    try:
        _shared[full] = (weakref.ref(owner, forget), caches)
    except TypeError:  # not weakly referenceable (a builtin): nothing to share
        pass
    return caches


def _usable_donations(closed: ClosedJaxpr, donated: tuple, warn: bool) -> tuple:
    """JAX's rule: a donated argument is consumed only if an output of its shape and dtype
    can take its buffer (each output one argument, in order); the others are kept (not
    deleted, never written over), with JAX's warning unless ``warn`` is False."""
    free = {}
    for i, (aval, d) in enumerate(zip(closed.in_avals, donated, strict=True)):
        if d:
            free.setdefault((aval.shape, aval.dtype), []).append(i)
    usable = [False] * len(donated)
    for aval in closed.out_avals:
        waiting = free.get((aval.shape, aval.dtype))
        if waiting:
            usable[waiting.pop(0)] = True
    unused = [f"{a.dtype.name}[{','.join(map(str, a.shape))}]" for a, d, u in
              zip(closed.in_avals, donated, usable, strict=True) if d and not u]
    if unused and warn:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unused)}.\nAn output "
                      "of the same shape and dtype takes a donated buffer; the others are "
                      "kept (not deleted).", UserWarning, stacklevel=6)
    return tuple(usable)


class Jitted:
    """A jit-compiled function (what ``jit(f)`` returns).

    Every ``Jitted`` of one function with the same options shares its traced programs
    (``jit(f)(x)`` written three times traces once). ``cache_owner`` (default ``fun``)
    is the object whose lifetime the sharing follows; a caller that passes one (as
    ``filter_jit`` does, with the function it wraps) promises that every ``fun`` it
    compiles for that owner gives the same program for the same cache key and ``variant``
    (a hashable value telling apart the functions wrapped around one owner: ``jit``'s
    output shardings).
    """

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 cache_owner=None, variant=(), donation_warning=True):
        self.fun = fun
        self._donation_warning = donation_warning
        self.static = StaticArgs(fun, static_argnums, static_argnames)
        donate = (donate_argnums,) if isinstance(donate_argnums, int) else donate_argnums
        self.donate_argnums = tuple(donate)
        owner = fun if cache_owner is None else cache_owner
        options = (self.static.argnums, self.static.argnames, self.donate_argnums, variant)
        caches = _caches_for(owner, (cache_owner is None, options))
        self._cache, self._fast = caches.entries, caches.fast
        self._signatures, self._variants = caches.signatures, caches.variants
        self._fast_ok = not self.static.argnums and not self.static.argnames
        self._pending = caches.pending
        self._warned = False
        try:
            params = inspect.signature(fun).parameters.values()
            self._arg_names = [p.name for p in params
                               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            self._arg_names = []
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args, **kwargs):
        if _disabled:  # as JAX's: the function itself, on the arguments as given
            return self.fun(*args, **kwargs)
        on_host = backends.runner() is None  # (else the runner places the call)
        if self._fast_ok and not kwargs and current_trace() is EVAL_TRACE and on_host:
            entry = self._fast.get(_fast_key(args))
            if entry is not None:
                return entry.call(args)
        borrowed = []  # leaves viewing a caller's NumPy array without a copy
        entry, leaves = self._entry(args, kwargs, borrowed)
        if entry.refs is not None:
            leaves = [*leaves, *map(refs.read, entry.refs[0])]
            return _wrote(entry.refs[1], self._call(entry, leaves, borrowed, on_host, args,
                                                    kwargs))
        return self._call(entry, leaves, borrowed, on_host, args, kwargs)

    def _call(self, entry, leaves, borrowed, on_host, args, kwargs):
        """Run ``entry`` on the argument ``leaves`` (eagerly, or bound in a trace)."""
        eager = current_trace() is EVAL_TRACE and not entry.tracer_consts
        direct = eager and on_host and all(type(x) is ArrayImpl for x in leaves)
        if borrowed and not (direct and entry.borrows):
            # The values may outlive the call (an outer trace's constants or residuals, a
            # callback's argument): they own their memory, as a copy does.
            for i in borrowed:
                leaves[i] = leaves[i].copy()
            borrowed = []
        if direct:
            placed = [i for i, x in enumerate(leaves) if x._sharding is not None
                      and x._sharding._on_mesh]
            if placed:
                paths = self._leaf_paths(args, kwargs)
                placed = [(paths[i], leaves[i].shape, leaves[i]._sharding) for i in placed]
            if not borrowed:
                out = entry.call(leaves)
            else:
                views = [leaves[i]._value for i in borrowed]  # (a donated leaf is deleted)
                out = _unaliased(entry.call(leaves), views)
            return _placed(out, placed) if placed else out
        outs = jit_p.bind(*entry.tracer_consts, *leaves, name=self.static.name,
                          jaxpr=entry.closed)
        if eager and not on_host and entry.donated:  # (on an accelerator, as on the CPU)
            kept = {id(x) for x in outs}
            for i in entry.donated:
                if type(leaves[i]) is ArrayImpl and id(leaves[i]) not in kept:
                    leaves[i].delete()
        return tree_unflatten(entry.out_tree, outs)

    def _entry(self, args, kwargs, borrowed=None):
        """The entry for these arguments (traced if new) and their leaves as ``Array``s;
        with a list ``borrowed``, NumPy leaves may be borrowed (``flatten_args``)."""
        dyn_args, dyn_kwargs, static_vals = self.static.split(args, kwargs)
        leaves, in_tree = flatten_args(dyn_args, dyn_kwargs, self.static.name, borrowed)
        key = (in_tree, tuple(x.aval for x in leaves), static_vals, _context)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace_once(key, args, kwargs, dyn_args, dyn_kwargs, static_vals)
        if self._fast_ok and not kwargs and not entry.tracer_consts and entry.refs is None:
            fast = _fast_key(args)
            if fast is not None:
                self._fast[fast] = entry
        return entry, leaves

    def _leaf_paths(self, args, kwargs) -> list:
        """How each dynamic argument leaf is reached: ``x['w']`` for leaf ``['w']`` of ``x``."""
        dyn_args, dyn_kwargs, static = self.static.split(args, kwargs)
        static_pos = {where for where, _ in static if isinstance(where, int)}
        names = [self._arg_name(i) for i in range(len(args)) if i not in static_pos]
        pairs = tree_flatten_with_path((dyn_args, dyn_kwargs))[0]
        return [(names[p[1].idx] if p[0].idx == 0 else p[1].key) + keystr(p[2:])
                for p, _ in pairs]

    def _trace_once(self, key, args, kwargs, dyn_args, dyn_kwargs, static_vals):
        """Trace for ``key`` and cache the entry. Threads making the same first call at
        the same time trace once: the first traces, the others wait for its entry. Only a
        thread outside any trace waits (it holds no pending trace, so waiting never
        deadlocks); one inside a trace traces for itself."""
        with _PENDING_LOCK:
            entry = self._cache.get(key)
            if entry is not None:
                return entry
            pending = self._pending.get(key)
            owner = pending is None
            if owner:
                pending = self._pending[key] = threading.Event()
        if not owner and current_trace() is EVAL_TRACE:
            pending.wait()
            entry = self._cache.get(key)
            if entry is not None:
                return entry
        try:
            signature = Signature(self, args, kwargs, _flags())
            if config.read("jax_explain_cache_misses"):
                logger.warning(signature.explain(self._signatures, self.static.name))
            if config.read("jax_log_compiles"):
                logger.warning("Compiling %s with global shapes and types %s.",
                               self.static.name, list(key[1]))
            entry = self._trace(dyn_args, dyn_kwargs, static_vals)
            if not entry.tracer_consts:
                with _PENDING_LOCK:
                    if key not in self._cache:
                        self._cache[key] = entry
                        self._signatures.append(signature)
                        self._count_variants(signature)
        finally:
            if owner:
                with _PENDING_LOCK:
                    del self._pending[key]
                pending.set()
        return entry

    def _count_variants(self, signature: Signature):
        """Warn (once) when an argument has come in ``RETRACE_WARNING_AFTER`` sizes or
        static values; a change of dtype or rank alone takes few values, so is not counted."""
        for path, kind, desc in varying(signature):
            seen = self._variants.setdefault((path, kind), {})
            seen[desc] = None
            if len(seen) >= RETRACE_WARNING_AFTER and not self._warned:
                self._warned = True
                text = retrace_warning(path, kind, list(seen), self.static.name,
                                        len(self._signatures))
                warnings.warn(text, RetraceWarning, stacklevel=4)

    def _trace(self, dyn_args, dyn_kwargs, static_vals):
        static = self.static

        frames = []

        def dyn_fun(*a, **k):
            full_args, full_kwargs = static.merge(a, k, static_vals)
            out, frame = refs.call_in_frame(self.fun, *full_args, **full_kwargs)
            frames.append(frame)
            return out

        closed, _, out_tree = trace_fun(dyn_fun, dyn_args, dyn_kwargs, f"jit of {static.name}")
        (frame,) = frames
        donated = self._donated_leaves(dyn_args, dyn_kwargs, static_vals)
        donated += (False,) * len(frame.lifted)  # the refs' values: inputs after the leaves
        if any(donated):
            donated = _usable_donations(closed, donated, self._donation_warning)
        entry = _Entry(closed, out_tree, donated)
        entry.refs = (tuple(frame.lifted), tuple(frame.written)) if (
            frame.lifted or frame.written) else None
        return entry

    def _donated_leaves(self, dyn_args, dyn_kwargs, static_vals) -> tuple:
        """One bool per leaf of the dynamic arguments: whether its argument is donated."""
        static_pos = {where for where, _ in static_vals if isinstance(where, int)}
        n = len(dyn_args) + len(static_pos)
        donated = {i % n for i in self.donate_argnums if -n <= i < n}
        positions = [i for i in range(n) if i not in static_pos]
        flags = []
        for i, arg in zip(positions, dyn_args, strict=True):
            flags += [i in donated] * len(tree_leaves(arg))
        flags += [False] * len(tree_leaves(dyn_kwargs))
        return tuple(flags)

    def __get__(self, instance, owner=None):
        """As a function: ``jit`` of a method, looked up on an instance, binds it as the
        first argument (so ``static_argnums=0`` makes ``self`` static, as in JAX)."""
        return self if instance is None else types.MethodType(self, instance)

    def trace(self, *args, **kwargs):
        """Trace for these arguments: a ``Traced`` (``.jaxpr``, ``.out_info``, ``.lower()``)."""
        from .stages import Traced

        return Traced(self._entry(args, kwargs)[0], self, args, kwargs)

    def lower(self, *args, **kwargs):
        """Trace for these arguments; a ``Lowered``: ``.as_text()`` is the program it runs,
        ``.compile()`` the callable."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        """The output's shapes and dtypes for these arguments (``ShapeDtypeStruct``s)."""
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self):
        """Forget every traced signature."""
        self._cache.clear()
        self._fast.clear()
        self._signatures.clear()
        self._variants.clear()

    def _cache_size(self) -> int:
        return len(self._cache)

    def _arg_name(self, i: int) -> str:
        return self._arg_names[i] if i < len(self._arg_names) else f"args[{i}]"


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=()):
    """``invarax.jit`` without shardings (the arguments are documented there): a ``Jitted``.

    Example:
        >>> f = jit(lambda x, y: jnp.sin(x) * y)
        >>> f(1.0, 2.0)
        Array(1.6829419, dtype=float32, weak_type=True)
    """
    if fun is None:
        return functools.partial(
            jit, static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums,
        )
    return Jitted(fun, static_argnums, static_argnames, donate_argnums)

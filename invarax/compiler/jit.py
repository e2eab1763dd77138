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
import warnings
import weakref

import numpy as np

from ..core import dtypes
from ..core.api_util import StaticArgs, flatten_args
from ..core.array import Array, ArrayImpl, concrete_scalar, is_python_scalar
from ..core.aval import ShapedArray
from ..core.config import config
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ..core.pytree import (
    keystr,
    tree_flatten_with_path,
    tree_leaves,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)
from ..core.trace import EVAL_TRACE, Primitive, Tracer, current_trace
from ..interpreters import ad, batching
from ..interpreters.staging import trace_fun, trace_to_jaxpr
from .lower import compile_jaxpr
from .passes import dce, optimize

logger = logging.getLogger("invarax")

RETRACE_WARNING_AFTER = 10  # sizes or static values of one argument before a RetraceWarning


class RetraceWarning(UserWarning):
    """A jitted function keeps being traced again: an argument changes from call to call."""


jit_p = Primitive("jit", multiple_results=True)

def _compile(jaxpr: Jaxpr, donated: tuple):
    """The program of ``jaxpr``; ``donated`` marks the inputs whose buffers it may reuse."""
    return compile_jaxpr(jaxpr, donated=donated if any(donated) else None)


@functools.lru_cache(maxsize=4096)
def _executable(closed: ClosedJaxpr):
    """``(run, consts)`` of the optimised ``closed`` (consts as NumPy arrays)."""
    opt = optimize(closed)
    return _compile(opt.jaxpr, ()), [c._value for c in opt.consts]


def _jit_impl(*args, name: str, jaxpr: ClosedJaxpr):
    run, consts = _executable(jaxpr)
    return run(*consts, *args)


def _jit_abstract_eval(*avals, name: str, jaxpr: ClosedJaxpr):
    expected = jaxpr.in_avals
    if list(avals) != expected:
        raise TypeError(
            f"jit of {name} was traced for {[a.str_short() for a in expected]} "
            f"but called with {[a.str_short() for a in avals]}"
        )
    return jaxpr.out_avals


# ---------------------------------------------------------------------------------------
# Transformations of a call. Each keeps it one ``jit`` equation of a derived jaxpr (as JAX
# keeps ``pjit``), so under grad or vmap of a jitted function the work still runs compiled:
#
# - JVP: a call of the body's JVP, over the primals and the tangents that are not
#   symbolic zeros; its outputs are the primal outputs, then the nonzero tangents.
# - partial evaluation (linearize, and the forward sweep of ``backward_pass``): a call of
#   the known inputs computing the known outputs and the residuals, run at once, and a
#   call of the residuals and the unknown inputs (the linear tangent part), staged.
# - transposition: a call of the body's backward pass, over the residuals, the
#   cotangents that are not symbolic zeros and the cotangents already accumulated for
#   its linear inputs, which the body's backward pass adds to in the order the body's
#   equations inlined would (its results replace them): so a ``jit`` around part of a
#   function changes no bit of its gradient.
# - batching: a call of the batched body.
#
# Derived jaxprs are cached on the jaxpr they come from (by identity, as ``_executable``
# caches programs), so a repeated ``grad(jit(f))`` traces nothing and compiles nothing.

_derived = {}  # (kind, jaxpr, ...) -> derived jaxpr and what the rule needs besides
_DERIVED_MAX = 4096


def _memo(key, make):
    """``make()``, cached under ``key`` unless its jaxpr holds hoisted tracers."""
    value = _derived.get(key)
    if value is None:
        value = make()
        if not value[1]:  # no tracer of an enclosing transformation: reusable
            if len(_derived) >= _DERIVED_MAX:
                _derived.clear()
            _derived[key] = value
    return value


def _trace_call(fun, in_avals, description):
    """``(closed, tracer_consts, ...)``: ``fun`` traced; its consts that are tracers of an
    enclosing transformation become leading inputs (passed as ``tracer_consts``)."""
    closed = trace_to_jaxpr(fun, in_avals, description)
    is_tracer = [isinstance(c, Tracer) for c in closed.consts]
    if not any(is_tracer):
        return closed, []
    j = closed.jaxpr
    hoisted = [v for v, t in zip(j.constvars, is_tracer, strict=True) if t]
    kept = [v for v, t in zip(j.constvars, is_tracer, strict=True) if not t]
    consts = [c for c, t in zip(closed.consts, is_tracer, strict=True) if not t]
    tracers = [c for c, t in zip(closed.consts, is_tracer, strict=True) if t]
    return ClosedJaxpr(Jaxpr(kept, hoisted + j.invars, j.outvars, j.eqns), consts), tracers


def _body(closed: ClosedJaxpr):
    return lambda ins: eval_jaxpr(closed.jaxpr, closed.consts, *ins)


def _jvp_call(closed: ClosedJaxpr, tangent_avals: tuple, name: str):
    """The JVP jaxpr of ``closed`` for tangents of ``tangent_avals`` (``None``: a zero)."""
    n = len(closed.in_avals)
    zero_outs = []

    def jvp(ins):
        primals, nonzero = ins[:n], iter(ins[n:])
        tangents = [ad.Zero(ad.tangent_aval(a)) if t is None else next(nonzero)
                    for a, t in zip(closed.in_avals, tangent_avals, strict=True)]
        outs, touts = ad.jvp_flat(_body(closed), primals, tangents, f"jvp of jit of {name}")
        zero_outs.extend(isinstance(t, ad.Zero) for t in touts)
        return [*outs, *(t for t in touts if not isinstance(t, ad.Zero))]

    avals = [*closed.in_avals, *(t for t in tangent_avals if t is not None)]
    jaxpr, tracers = _trace_call(jvp, avals, f"jvp of jit of {name}")
    return jaxpr, tracers, tuple(zero_outs)


def _jit_jvp(primals, tangents, *, name: str, jaxpr: ClosedJaxpr):
    tangent_avals = tuple(None if isinstance(t, ad.Zero) else t.aval for t in tangents)
    body, tracers, zero_outs = _memo(("jvp", jaxpr, tangent_avals),
                                     lambda: _jvp_call(jaxpr, tangent_avals, name))
    nonzero = [t for t in tangents if not isinstance(t, ad.Zero)]
    outs = jit_p.bind(*tracers, *primals, *nonzero, name=name, jaxpr=body)
    n = len(jaxpr.out_avals)
    touts = iter(outs[n:])
    return outs[:n], [ad.Zero(ad.tangent_aval(a)) if z else next(touts)
                      for a, z in zip(jaxpr.out_avals, zero_outs, strict=True)]


@functools.lru_cache(maxsize=4096)
def _split(closed: ClosedJaxpr, unknown: tuple):
    """Partial evaluation of ``closed`` with the inputs ``unknown`` unknown.

    Returns ``(known, staged, out_unknown, forwarded, residual_avals)``: ``known`` maps
    the known inputs to the known outputs and the computed residuals; ``staged`` maps
    the forwarded residuals (known inputs, by position in ``closed``'s inputs), the
    computed residuals and the unknown inputs to the unknown outputs. ``known`` is
    ``None`` when it computes nothing. Both are dead-code eliminated: the residuals are
    the known values the unknown outputs need.
    """
    j = closed.jaxpr
    unk = {id(v) for v, u in zip(j.invars, unknown, strict=True) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in j.eqns:
        eqn_unknown = [isinstance(v, Var) and id(v) in unk for v in eqn.invars]
        if not any(eqn_unknown):
            known_eqns.append(eqn)
            continue
        rule = ad.partial_eval_eqn_rules.get(eqn.primitive)
        known_eqn, eqn = rule(eqn, eqn_unknown) if rule is not None else (None, eqn)
        if known_eqn is not None:  # a nested call's known part
            known_eqns.append(known_eqn)
        if eqn is not None:
            unk.update(id(v) for v in eqn.outvars)
            unknown_eqns.append(eqn)
    out_unknown = tuple(isinstance(v, Var) and id(v) in unk for v in j.outvars)
    staged_outs = [v for v, u in zip(j.outvars, out_unknown, strict=True) if u]
    live = {id(v) for v in staged_outs}
    live_eqns = []
    for eqn in reversed(unknown_eqns):
        if any(id(v) in live for v in eqn.outvars):
            live_eqns.append(eqn)
            live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    live_eqns.reverse()
    # The known values the staged part reads: consts stay consts, known inputs are
    # forwarded as they are, values the known part computes are its extra outputs.
    consts = [(v, c) for v, c in zip(j.constvars, closed.consts, strict=True) if id(v) in live]
    forwarded = [i for i, (v, u) in enumerate(zip(j.invars, unknown, strict=True))
                 if not u and id(v) in live]
    residuals = [v for e in known_eqns for v in e.outvars if id(v) in live]
    known_invars = [v for v, u in zip(j.invars, unknown, strict=True) if not u]
    known_outs = [v for v, u in zip(j.outvars, out_unknown, strict=True) if not u]
    known = None
    if known_outs or residuals:
        known = dce(ClosedJaxpr(Jaxpr(j.constvars, known_invars, known_outs + residuals,
                                      known_eqns), closed.consts))
    unknown_invars = [v for v, u in zip(j.invars, unknown, strict=True) if u]
    staged = ClosedJaxpr(
        Jaxpr([v for v, _ in consts], [*(j.invars[i] for i in forwarded), *residuals,
                                      *unknown_invars], staged_outs, live_eqns),
        [c for _, c in consts])
    return known, staged, out_unknown, tuple(forwarded), [v.aval for v in residuals]


def _jit_partial_eval(eqn: Eqn, unknown):
    """Split a ``jit`` equation (see ``ad.partial_eval_eqn_rules``)."""
    name, closed = eqn.params["name"], eqn.params["jaxpr"]
    known, staged, out_unknown, forwarded, res_avals = _split(closed, tuple(unknown))
    if known is None and all(out_unknown):
        return None, eqn  # nothing to compute before the unknown inputs are known
    residuals = [Var(a) for a in res_avals]
    known_eqn = None
    if known is not None:
        outs = [v for v, u in zip(eqn.outvars, out_unknown, strict=True) if not u]
        ins = [v for v, u in zip(eqn.invars, unknown, strict=True) if not u]
        known_eqn = Eqn(jit_p, ins, outs + residuals, dict(name=name, jaxpr=known))
    staged_eqn = None
    if any(out_unknown):
        ins = [*(eqn.invars[i] for i in forwarded), *residuals,
               *(v for v, u in zip(eqn.invars, unknown, strict=True) if u)]
        outs = [v for v, u in zip(eqn.outvars, out_unknown, strict=True) if u]
        staged_eqn = Eqn(jit_p, ins, outs, dict(name=name, jaxpr=staged))
    return known_eqn, staged_eqn


def _transpose_call(closed: ClosedJaxpr, undefined: tuple, ct_avals: tuple, acc_avals: tuple,
                    same: tuple, name: str):
    """The backward pass of the linear ``closed`` as a jaxpr over its defined inputs, the
    nonzero cotangents (``ct_avals``: ``None`` for a zero) and the accumulators its linear
    inputs start from (``acc_avals``: ``None`` for none; see
    ``ad.accumulating_transpose_rules``, as is ``same``). Its outputs are the final
    accumulators of the linear inputs that are first occurrences, the nonzero ones."""
    defined = [a for a, u in zip(closed.in_avals, undefined, strict=True) if not u]
    n_cts = sum(c is not None for c in ct_avals)
    zero_outs = []

    def backward(ins):
        vals, cts = iter(ins[:len(defined)]), iter(ins[len(defined):len(defined) + n_cts])
        accs_in = iter(ins[len(defined) + n_cts:])
        args = [ad.UndefinedPrimal(a) if u else next(vals)
                for a, u in zip(closed.in_avals, undefined, strict=True)]
        cts_out = [ad.Zero(a) if c is None else next(cts)
                   for a, c in zip(closed.out_avals, ct_avals, strict=True)]
        accs = [None if a is None else next(accs_in) for a in acc_avals]
        cts_in = ad.backward_pass(closed.jaxpr, closed.consts, args, cts_out, accs, same)
        cts_in = [c for i, (c, u) in enumerate(zip(cts_in, undefined, strict=True))
                  if u and same[i] == i]
        zero_outs.extend(isinstance(c, ad.Zero) for c in cts_in)
        return [c for c in cts_in if not isinstance(c, ad.Zero)]

    avals = [*defined, *(c for c in ct_avals if c is not None),
             *(a for a in acc_avals if a is not None)]
    jaxpr, tracers = _trace_call(backward, avals, f"transpose of jit of {name}")
    return jaxpr, tracers, tuple(zero_outs)


def _jit_transpose_accumulating(cts, args, accs, same, *, name: str, jaxpr: ClosedJaxpr):
    """The transpose of a linear ``jit`` call (``ad.accumulating_transpose_rules``): one
    ``jit`` of the body's backward pass, which starts each linear input's accumulator from
    ``accs`` and returns the final ones (one per first occurrence of an outer variable)."""
    undefined = tuple(isinstance(a, ad.UndefinedPrimal) for a in args)
    if all(isinstance(c, ad.Zero) for c in cts):
        return [None] * len(args)
    ct_avals = tuple(None if isinstance(c, ad.Zero) else c.aval for c in cts)
    accs = [None if isinstance(a, ad.Zero) else a for a in accs]
    acc_avals = tuple(None if a is None else a.aval for a in accs)
    body, tracers, zero_outs = _memo(
        ("transpose", jaxpr, undefined, ct_avals, acc_avals, same),
        lambda: _transpose_call(jaxpr, undefined, ct_avals, acc_avals, same, name))
    defined = [a for a in args if not isinstance(a, ad.UndefinedPrimal)]
    nonzero = [c for c in cts if not isinstance(c, ad.Zero)]
    given = [a for a in accs if a is not None]
    outs = iter(jit_p.bind(*tracers, *defined, *nonzero, *given, name=name, jaxpr=body))
    zeros = iter(zero_outs)
    return [None if not u or same[i] != i else (ad.Zero(a.aval) if next(zeros) else next(outs))
            for i, (a, u) in enumerate(zip(args, undefined, strict=True))]


def _jit_transpose(cts, *args, name: str, jaxpr: ClosedJaxpr):
    """The plain transpose rule: no accumulators, each input its own."""
    return _jit_transpose_accumulating(cts, args, [None] * len(args), tuple(range(len(args))),
                                       name=name, jaxpr=jaxpr)


def _batch_call(closed: ClosedJaxpr, in_avals, dims, size, axis_name, description):
    """The batched jaxpr of ``closed`` for inputs of ``in_avals`` batched at ``dims``."""
    out_dims = []

    def batched(ins):
        outs, odims = batching.batch_flat(_body(closed), ins, list(dims), size, axis_name,
                                          description)
        out_dims.extend(odims)
        return outs

    jaxpr, tracers = _trace_call(batched, list(in_avals), description)
    return jaxpr, tracers, tuple(out_dims)


def _jit_batch(vals, dims, *, trace, name: str, jaxpr: ClosedJaxpr):
    in_avals = tuple(v.aval for v in vals)
    key = ("batch", jaxpr, in_avals, tuple(dims), trace.axis_size, trace.axis_name,
           trace.description)
    body, tracers, out_dims = _memo(key, lambda: _batch_call(
        jaxpr, in_avals, dims, trace.axis_size, trace.axis_name, trace.description))
    return jit_p.bind(*tracers, *vals, name=name, jaxpr=body), list(out_dims)


_jit_batch.needs_trace = True


jit_p.def_impl(_jit_impl)
jit_p.def_abstract_eval(_jit_abstract_eval)
ad.jvp_rules[jit_p] = _jit_jvp
ad.partial_eval_eqn_rules[jit_p] = _jit_partial_eval
ad.transpose_rules[jit_p] = _jit_transpose
ad.accumulating_transpose_rules[jit_p] = _jit_transpose_accumulating
batching.batching_rules[jit_p] = _jit_batch


# Config flags that do not change what tracing records; every other flag is in the key.
_NOT_TRACED = frozenset({"jax_explain_cache_misses"})


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


def _on_config(name, value):
    global _context
    _context = _contexts.setdefault(_flags(), len(_contexts))


config.on_update(_on_config)


def _fast_key(args):
    """The fast-path key of positional arguments that are all concrete arrays, else None."""
    key = [_context]
    for a in args:
        if type(a) is not ArrayImpl:
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
    concrete argument arrays to the output pytree (all of that in one function).
    """

    __slots__ = ("closed", "optimized", "tracer_consts", "out_tree", "run", "consts", "wrap",
                 "donated", "call")

    def __init__(self, closed: ClosedJaxpr, out_tree, donated: tuple):
        jaxpr = closed.jaxpr
        is_tracer = [isinstance(c, Tracer) for c in closed.consts]
        self.tracer_consts = [c for c, t in zip(closed.consts, is_tracer, strict=True) if t]
        if self.tracer_consts:
            # Values of enclosing transformations become explicit inputs of the jaxpr.
            hoisted = [v for v, t in zip(jaxpr.constvars, is_tracer, strict=True) if t]
            kept = [v for v, t in zip(jaxpr.constvars, is_tracer, strict=True) if not t]
            jaxpr = Jaxpr(kept, hoisted + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
            concrete = [c for c, t in zip(closed.consts, is_tracer, strict=True) if not t]
            closed = ClosedJaxpr(jaxpr, concrete)
            donated = (False,) * len(hoisted) + donated
        self.closed = closed
        self.optimized = optimize(closed)
        self.out_tree = out_tree
        self.consts = [c._value for c in self.optimized.consts]
        self.run = _compile(self.optimized.jaxpr, donated)
        self.wrap = _wrapper(out_tree, [a.weak_type for a in closed.out_avals])
        self.donated = tuple(i for i, d in enumerate(donated[len(self.tracer_consts):]) if d)
        self.call = _caller(self)


def _caller(entry: _Entry):
    """``entry.call``: the run and the wrapping of its outputs, specialised to the entry."""
    run, consts, wrap = entry.run, entry.consts, entry.wrap
    if entry.donated:
        return lambda arrays: _run_donating(entry, arrays)
    if consts:
        return lambda arrays: wrap(run(*consts, *[a._value for a in arrays]))
    if treedef_is_leaf(entry.out_tree):
        weak = entry.closed.out_avals[0].weak_type
        return lambda arrays: ArrayImpl(run(*[a._value for a in arrays])[0], weak)
    return lambda arrays: wrap(run(*[a._value for a in arrays]))


def _run_donating(entry: _Entry, arrays):
    """Run ``entry`` on ``arrays``, lending the buffers of the donated ones; delete those."""
    values = [a._value for a in arrays]
    try:
        for i in entry.donated:
            _lend(values[i])
        return entry.wrap(entry.run(*entry.consts, *values))
    finally:
        for i in entry.donated:
            arrays[i].delete()


# References to a donated buffer while _lend runs: the array's slot, the list of values,
# _lend's argument and getrefcount's. One more is a view (its .base) or another holder.
_LENDABLE_REFS = 4


def _lend(value: np.ndarray):
    """Make a donated buffer writeable, so the program may write over it, if nothing else
    can see its memory: it owns its data and no view or other object refers to it."""
    if value.base is None and sys.getrefcount(value) <= _LENDABLE_REFS:
        value.flags.writeable = True


def _wrapper(out_tree, weak_types):
    """A function from the program's NumPy outputs to the output pytree of arrays."""
    weak = tuple(weak_types)
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


class Jitted:
    """A jit-compiled function (what ``jit(f)`` returns).

    Every ``Jitted`` of one function with the same options shares its traced programs
    (``jit(f)(x)`` written three times traces once). ``cache_owner`` (default ``fun``)
    is the object whose lifetime the sharing follows; a caller that passes one (as
    ``filter_jit`` does, with the function it wraps) promises that every ``fun`` it
    compiles for that owner gives the same program for the same cache key.
    """

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 cache_owner=None):
        self.fun = fun
        self.static = StaticArgs(fun, static_argnums, static_argnames)
        donate = (donate_argnums,) if isinstance(donate_argnums, int) else donate_argnums
        self.donate_argnums = tuple(donate)
        owner = fun if cache_owner is None else cache_owner
        options = (self.static.argnums, self.static.argnames, self.donate_argnums)
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
        if self._fast_ok and not kwargs and current_trace() is EVAL_TRACE:
            entry = self._fast.get(_fast_key(args))
            if entry is not None:
                return entry.call(args)
        entry, leaves = self._entry(args, kwargs)
        eager = current_trace() is EVAL_TRACE and not entry.tracer_consts
        if eager and all(type(x) is ArrayImpl for x in leaves):
            return entry.call(leaves)
        outs = jit_p.bind(*entry.tracer_consts, *leaves, name=self.static.name,
                          jaxpr=entry.closed)
        return tree_unflatten(entry.out_tree, outs)

    def _entry(self, args, kwargs):
        dyn_args, dyn_kwargs, static_vals = self.static.split(args, kwargs)
        leaves, in_tree = flatten_args(dyn_args, dyn_kwargs, self.static.name)
        key = (in_tree, tuple(x.aval for x in leaves), static_vals, _context)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace_once(key, args, kwargs, dyn_args, dyn_kwargs, static_vals)
        if self._fast_ok and not kwargs and not entry.tracer_consts:
            fast = _fast_key(args)
            if fast is not None:
                self._fast[fast] = entry
        return entry, leaves

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
            signature = _Signature(self, args, kwargs)
            if config.read("jax_explain_cache_misses"):
                logger.warning(signature.explain(self._signatures, self.static.name))
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

    def _count_variants(self, signature: _Signature):
        """Warn (once) when an argument has come in ``RETRACE_WARNING_AFTER`` sizes or
        static values; a change of dtype or rank alone takes few values, so is not counted."""
        for path, kind, desc in _varying(signature):
            seen = self._variants.setdefault((path, kind), {})
            seen[desc] = None
            if len(seen) >= RETRACE_WARNING_AFTER and not self._warned:
                self._warned = True
                text = _retrace_warning(path, kind, list(seen), self.static.name,
                                        len(self._signatures))
                warnings.warn(text, RetraceWarning, stacklevel=4)

    def _trace(self, dyn_args, dyn_kwargs, static_vals):
        static = self.static

        def dyn_fun(*a, **k):
            full_args, full_kwargs = static.merge(a, k, static_vals)
            return self.fun(*full_args, **full_kwargs)

        closed, _, out_tree = trace_fun(dyn_fun, dyn_args, dyn_kwargs, f"jit of {static.name}")
        return _Entry(closed, out_tree, self._donated_leaves(dyn_args, dyn_kwargs, static_vals))

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
    """Compile ``fun``: trace it once per input signature, optimise, cache the program.

    Arguments:
        fun: a function of arrays (pytrees and keyword arguments allowed).
        static_argnums, static_argnames: arguments that are Python values, hashed
            into the cache key instead of traced (the fix for Python control flow
            on an argument).
        donate_argnums: positional arguments whose arrays the call may consume: they
            are deleted after the call (using one again raises), and the program may
            reuse their buffers.

    Returns:
        A callable with ``fun``'s signature; ``.lower(*args).as_text()`` prints the
        optimised program it runs. Results are bitwise those of calling ``fun`` eagerly.

    Example:
        >>> f = jit(lambda x, y: jnp.sin(x) * y)
        >>> f(1.0, 2.0)
        Array(1.682942, dtype=float32, weak_type=True)
    """
    if fun is None:
        return functools.partial(
            jit, static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums,
        )
    return Jitted(fun, static_argnums, static_argnames, donate_argnums)


# ---------------------------------------------------------------------------------------
# Why a function was traced again.


def _leaf_str(leaf) -> str:
    """The abstract value a leaf is traced as, ``f32[3]`` (``{weak}`` for Python scalars)."""
    if isinstance(leaf, Array):
        aval = leaf.aval
    elif is_python_scalar(leaf):
        aval = concrete_scalar(leaf).aval
    elif hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        aval = ShapedArray(leaf.shape, dtypes.canonicalize(leaf.dtype))
    else:
        return f"{type(leaf).__name__} {leaf!r:.40}"
    return aval.str_short() + ("{weak}" if aval.weak_type else "")


class _Signature:
    """What one call's cache key was made of, argument by argument, in words.

    ``args`` maps an argument's name to ``(structure, {path: description})``: a static
    argument has the structure ``"static"`` and one entry, its value.
    """

    def __init__(self, jitted: Jitted, args, kwargs):
        self.flags = dict(_flags())
        self.args = {}
        n = len(args)
        static_pos = {i % n for i in jitted.static.argnums if -n <= i < n}
        named = [(jitted._arg_name(i), a, i in static_pos) for i, a in enumerate(args)]
        named += [(k, v, k in jitted.static.argnames) for k, v in sorted(kwargs.items())]
        for name, value, is_static in named:
            if is_static:
                self.args[name] = ("static", {name: f"static {value!r:.60}"})
            else:
                leaves, tree = tree_flatten_with_path(value)
                self.args[name] = (tree, {name + keystr(p): _leaf_str(x) for p, x in leaves})

    def differences(self, other: _Signature) -> list:
        """How this signature differs from ``other`` (an earlier one), one line each."""
        out = []
        for flag, value in self.flags.items():
            if other.flags.get(flag) != value:
                out.append(f"config {flag} changed: {other.flags.get(flag)} -> {value}")
        for name in sorted(self.args.keys() | other.args.keys()):
            if name not in self.args or name not in other.args:
                state = "is new" if name in self.args else "is no longer passed"
                out.append(f"argument {name} {state}")
                continue
            (tree, leaves), (old_tree, old_leaves) = self.args[name], other.args[name]
            if tree != old_tree:
                out.append(f"argument {name} changed tree structure: {old_tree} -> {tree}")
                continue
            for path, desc in leaves.items():
                old = old_leaves[path]
                if desc != old:
                    out.append(f"argument {path} changed: {old} -> {desc}{_how(old, desc)}")
        return out

    def explain(self, previous: list, name: str) -> str:
        """The log message of a cache miss, against the closest of ``previous``."""
        head = f"TRACING CACHE MISS for jit of {name}"
        if not previous:
            return f"{head}: first trace (never seen function)"
        closest = min((self.differences(p) for p in reversed(previous)), key=len)
        lines = closest or ["the key differs in a way not shown here"]
        return (f"{head} (trace {len(previous) + 1}; {len(previous)} signatures cached), "
                "because against the closest cached signature:\n  " + "\n  ".join(lines))


def _how(old: str, new: str) -> str:
    """What changed between two leaf descriptions: ``" (shape)"``, ``" (dtype)"``, ..."""
    old, new = old.removesuffix("{weak}"), new.removesuffix("{weak}")
    if "[" not in old or "[" not in new:
        return ""
    if old == new:
        return " (weak type: a Python scalar is weakly typed, an array is not)"
    (old_dtype, old_shape), (dtype, shape) = old.split("[", 1), new.split("[", 1)
    if old_dtype == dtype:
        return " (shape)"
    return " (dtype)" if old_shape == shape else " (dtype and shape)"


def _varying(signature: _Signature):
    """``(path, kind, description)`` for each leaf: ``kind`` names what may vary without
    bound: the sizes of an array of one dtype and rank (``f32[_,_]``), or a static value."""
    for _, leaves in signature.args.values():
        for path, desc in leaves.items():
            if desc.startswith("static"):
                yield path, "static", desc
            elif "[" in desc:
                head, dims = desc.split("[", 1)
                dims = dims.split("]")[0]
                rank = dims.count(",") + 1 if dims else 0
                yield path, f"{head}[{','.join('_' * rank)}]", desc


def _retrace_warning(path: str, kind: str, values: list, name: str, traces: int) -> str:
    """The text of the RetraceWarning: which argument keeps changing, and the fixes."""
    if kind == "static":
        values = [v.removeprefix("static ") for v in values]
    shown = ", ".join(values[:5]) + (", ..." if len(values) > 5 else "")
    if kind == "static":
        what = f"static argument {path} took {len(values)} values ({shown})"
        fix = ("make it a traced array argument (remove it from static_argnums/"
               "static_argnames) if the function does not need its Python value")
    else:
        what = f"argument {path} came in {len(values)} shapes ({shown})"
        fix = ("pad it to a few fixed sizes (bucketing) so that each size is traced once, "
               "or keep the varying size out of the traced function")
    return (f"jit of {name} has been traced {traces} times: {what}. Each new signature "
            f"costs a trace and a compile; {fix}. Set "
            "config.update('jax_explain_cache_misses', True) to log every retrace.")

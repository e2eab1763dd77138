"""``jit``: trace once per signature, cache the compiled program, run it.

A jitted call is keyed on the input structure, the abstract values (shape,
dtype, weak type) of the array arguments, the static arguments and the x64
flag. Under another transformation the call stays one ``jit`` equation whose
parameter is the traced jaxpr, so outer transformations see the whole program.
"""

from __future__ import annotations

import functools

from ..core import dtypes
from ..core.api_util import StaticArgs, flatten_args
from ..core.array import ArrayImpl
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.pytree import tree_unflatten
from ..core.trace import EVAL_TRACE, Primitive, Tracer, current_trace
from ..interpreters import ad, batching
from ..interpreters.staging import trace_fun
from .lower import compile_jaxpr

jit_p = Primitive("jit", multiple_results=True)


@functools.lru_cache(maxsize=4096)
def _executable(jaxpr: Jaxpr):
    return compile_jaxpr(jaxpr)


def _jit_impl(*args, name: str, jaxpr: ClosedJaxpr):
    consts = [c._value for c in jaxpr.consts]
    return _executable(jaxpr.jaxpr)(*consts, *args)


def _jit_abstract_eval(*avals, name: str, jaxpr: ClosedJaxpr):
    expected = jaxpr.in_avals
    if list(avals) != expected:
        raise TypeError(
            f"jit of {name} was traced for {[a.str_short() for a in expected]} "
            f"but called with {[a.str_short() for a in avals]}"
        )
    return jaxpr.out_avals


def _jit_jvp(primals, tangents, *, name: str, jaxpr: ClosedJaxpr):
    # Differentiate the body inline: under grad the primal work then runs eagerly (with the
    # same impls, so the same bits); jit(grad(f)) compiles the whole program anyway.
    return ad.jvp_flat(lambda ins: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *ins), primals,
                       tangents, f"jvp of jit of {name}")


def _jit_batch(vals, dims, *, trace, name: str, jaxpr: ClosedJaxpr):
    # Batch the body inline, as for differentiation; jit(vmap(f)) compiles it all.
    return batching.batch_flat(lambda ins: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *ins), vals,
                               dims, trace.axis_size, trace.axis_name, trace.description)


_jit_batch.needs_trace = True


jit_p.def_impl(_jit_impl)
jit_p.def_abstract_eval(_jit_abstract_eval)
ad.jvp_rules[jit_p] = _jit_jvp
batching.batching_rules[jit_p] = _jit_batch


class _Entry:
    """One traced signature: the jaxpr (its tracer consts hoisted to inputs) and its runner."""

    __slots__ = ("closed", "tracer_consts", "out_tree", "run", "consts")

    def __init__(self, closed: ClosedJaxpr, out_tree):
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
        self.closed = closed
        self.out_tree = out_tree
        self.consts = [c._value for c in closed.consts]
        self.run = _executable(closed.jaxpr)


class Jitted:
    """A jit-compiled function (what ``jit(f)`` returns)."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=()):
        self.fun = fun
        self.static = StaticArgs(fun, static_argnums, static_argnames)
        self.donate_argnums = donate_argnums
        self._cache = {}
        functools.update_wrapper(self, fun, updated=())

    def _entry(self, args, kwargs):
        dyn_args, dyn_kwargs, static_vals = self.static.split(args, kwargs)
        leaves, in_tree = flatten_args(dyn_args, dyn_kwargs, self.static.name)
        key = (in_tree, tuple(x.aval for x in leaves), static_vals, dtypes.x64_enabled())
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(dyn_args, dyn_kwargs, static_vals)
            if not entry.tracer_consts:
                self._cache[key] = entry
        return entry, leaves

    def _trace(self, dyn_args, dyn_kwargs, static_vals):
        static = self.static

        def dyn_fun(*a, **k):
            full_args, full_kwargs = static.merge(a, k, static_vals)
            return self.fun(*full_args, **full_kwargs)

        closed, _, out_tree = trace_fun(dyn_fun, dyn_args, dyn_kwargs, f"jit of {static.name}")
        return _Entry(closed, out_tree)

    def __call__(self, *args, **kwargs):
        entry, leaves = self._entry(args, kwargs)
        if current_trace() is EVAL_TRACE and all(type(x) is ArrayImpl for x in leaves):
            outs = entry.run(*entry.consts, *(x._value for x in leaves))
            avals = entry.closed.out_avals
            outs = [ArrayImpl(o, a.weak_type) for o, a in zip(outs, avals, strict=True)]
        else:
            outs = jit_p.bind(
                *entry.tracer_consts, *leaves, name=self.static.name, jaxpr=entry.closed
            )
        return tree_unflatten(entry.out_tree, outs)

    def lower(self, *args, **kwargs):
        """Trace for these arguments; return a ``Lowered`` whose ``as_text()`` is the program."""
        entry, _ = self._entry(args, kwargs)
        return Lowered(entry, self)

    def clear_cache(self):
        """Forget every traced signature."""
        self._cache.clear()

    def _cache_size(self) -> int:
        return len(self._cache)


class Lowered:
    """The program ``jit`` runs for one signature."""

    def __init__(self, entry: _Entry, jitted: Jitted):
        self._entry = entry
        self._jitted = jitted

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.closed

    def as_text(self) -> str:
        """The program, in jaxpr format."""
        return str(self._entry.closed)

    def compile(self):
        """Return the jitted function (compilation happened when it was traced)."""
        return self._jitted


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=()):
    """Compile ``fun``: trace it once per input signature and cache the program.

    Arguments:
        fun: a function of arrays (pytrees and keyword arguments allowed).
        static_argnums, static_argnames: arguments that are Python values, hashed
            into the cache key instead of traced (the fix for Python control flow
            on an argument).
        donate_argnums: accepted for JAX compatibility; arrays are never mutated.

    Returns:
        A callable with ``fun``'s signature; ``.lower(*args).as_text()`` prints the
        program it runs. Results are bitwise those of calling ``fun`` eagerly.

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

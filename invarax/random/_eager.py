"""Eager calls of ``invarax.random`` run as cached ``jit`` programs, as JAX's samplers do.

A sampler is a few hundred lax ops; eagerly each pays the dispatch of one op. The
decorator ``compiled`` makes a public function, when called eagerly (the current trace is
the eval trace and no argument is a tracer), call a ``jit`` of its own body instead: one
program per signature, cached. Under a transformation (``jit``, ``grad``, ``vmap``,
``make_jaxpr``) the function runs as written, so the traced equations do not change. By
the numerics contract (N3) the compiled call's bits are the eager ones.

Arguments are sorted per call:

- ``static``: structural arguments (shape, dtype, axis, num, mode, ...). Their values,
  with their types (so ``1``, ``1.0`` and ``True`` stay apart), key the cache; a list
  keeps its type (the function still sees a list, so its error messages are unchanged).
- ``scalar_static``: an argument that is a count when it is a Python int (``permutation``'s
  ``x``, ``choice``'s ``a``) and an array otherwise.
- every other argument is dynamic: arrays, NumPy values and Python scalars become arrays
  (as ``to_array`` converts them), so a new value never traces again; ``None`` is static.

Anything else (a tracer, a list where an array goes, a value that cannot be hashed, a
0-d array for a count, a hook that fails) sends the call down the inline path, which
raises today's errors in today's order. Checks of concrete values (``minval <= maxval``,
probabilities in ``[0, 1]``) cannot run inside the trace, where the values are tracers:
``inline_if`` tests for them before the call and sends any call that may fail them inline,
where the function's own check raises its own message.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading

import numpy as np

from ..compiler.jit import jit
from ..core.array import ArrayImpl, is_python_scalar, to_array
from ..core.trace import EVAL_TRACE, Tracer, current_trace

ENABLED = True  # False: every call runs inline (eager op by op), for tests and comparisons
MAX_ENTRIES = 1024  # compiled signatures kept per function (the oldest go first)
_CACHE_LOCK = threading.Lock()  # guards the caches' insertions and evictions


def _fresh_lock() -> None:
    """In a forked child: a new lock (a parent's thread may have held it at the fork)."""
    global _CACHE_LOCK
    _CACHE_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_lock)

_ATOMS = (bool, int, float, complex, str, type(None))


class _Inline(Exception):
    """This call takes the inline path."""


def _freeze(value):
    """A hashable key of a static value that keeps its type (``1``, ``1.0``, ``True``
    differ); ``_Inline`` for a value that is not a plain Python/NumPy constant."""
    kind = type(value)
    if kind in _ATOMS:
        return kind, value
    if kind in (tuple, list):
        return kind, tuple(_freeze(v) for v in value)
    if isinstance(value, (np.dtype, type)):
        return kind, value
    if isinstance(value, np.generic):
        return kind, value.item()
    raise _Inline


def _thaw(frozen):
    """A fresh value equal to the one ``frozen`` was made of."""
    kind, value = frozen
    if kind in (tuple, list):
        return kind(_thaw(v) for v in value)
    if issubclass(kind, np.generic):
        return kind(value)
    return value


def _dynamic(value):
    """An array argument as the array the function's ``to_array`` would make of it."""
    if type(value) is ArrayImpl:
        return value
    if isinstance(value, Tracer):
        raise _Inline
    if isinstance(value, (np.ndarray, np.generic)) or is_python_scalar(value):
        try:
            return to_array(value)
        except (OverflowError, TypeError, ValueError):
            raise _Inline from None  # the function's own conversion raises it, in its turn
    raise _Inline


def _aval_key(x: ArrayImpl):
    return x._value.shape, x._value.dtype, x._weak_type


def compiled(static=(), scalar_static=(), convert=None, inline_if=None):
    """Decorate a public ``invarax.random`` function: eager calls run a cached ``jit``.

    Arguments:
        static: names of the structural (hashed) arguments.
        scalar_static: names of arguments that are static when they are Python ints.
        convert: ``{name: f}``: ``f`` maps a Python-scalar argument to the array the
            function itself would make of it (raising ``ValueError``/``OverflowError``
            sends the call inline, where the function raises its own error).
        inline_if: ``f(arguments) -> bool``, on the arguments by name (dynamic ones as
            arrays): True when a check of concrete values may fail, so the call runs
            inline and the function's own check raises.
    """
    static, scalar_static = frozenset(static), frozenset(scalar_static)
    convert = convert or {}

    def decorate(fun):
        params = inspect.signature(fun).parameters
        names = tuple(params)
        defaults = {n: p.default for n, p in params.items() if p.default is not p.empty}
        cache = {}  # (static key, abstract values of the dynamic arguments) -> jitted

        def prepare(args, kwargs):
            """``(cache key, dynamic arrays)`` of one call, or ``_Inline``."""
            if len(args) > len(names):
                raise _Inline
            values = dict(zip(names, args, strict=False))
            for k, v in kwargs.items():
                if k in values or k not in params:
                    raise _Inline
                values[k] = v
            frozen, dyn, dyn_names = [], [], []
            for name in names:
                value = values.get(name, defaults.get(name, _Inline))
                if value is _Inline:
                    raise _Inline  # a required argument is missing
                values[name] = value
                if name in static or value is None or (
                        name in scalar_static and type(value) in (int, bool)):
                    frozen.append((name, _freeze(value)))
                    continue
                if name in scalar_static and np.ndim(value) == 0:
                    raise _Inline  # a 0-d array for a count: the function reads its value
                if name in convert and is_python_scalar(value):
                    try:
                        value = convert[name](value)
                    except (ValueError, OverflowError, TypeError):
                        raise _Inline from None
                value = values[name] = _dynamic(value)
                dyn.append(value)
                dyn_names.append(name)
            if inline_if is not None:
                try:
                    if inline_if(values):
                        raise _Inline
                except _Inline:
                    raise
                except Exception:
                    raise _Inline from None
            key = (tuple(frozen), tuple(dyn_names), tuple(map(_aval_key, dyn)))
            return key, dyn

        def build(key):
            frozen, dyn_names, _ = key

            def body(*dyn):
                kwargs = {name: _thaw(f) for name, f in frozen}
                kwargs.update(zip(dyn_names, dyn, strict=True))
                return fun(**kwargs)

            body.__name__ = body.__qualname__ = fun.__name__
            return jit(body)

        @functools.wraps(fun)
        def wrapper(*args, **kwargs):
            if not ENABLED or current_trace() is not EVAL_TRACE:
                return fun(*args, **kwargs)
            try:
                key, dyn = prepare(args, kwargs)
            except _Inline:
                return fun(*args, **kwargs)
            jitted = cache.get(key)
            if jitted is None:
                with _CACHE_LOCK:  # one jitted function per key, even for racing threads
                    jitted = cache.get(key)
                    if jitted is None:
                        if len(cache) >= MAX_ENTRIES:
                            del cache[next(iter(cache))]
                        jitted = cache[key] = build(key)
            try:
                return jitted(*dyn)
            except Exception:
                with _CACHE_LOCK:  # a trace that raises (bad input) is not kept
                    if cache.get(key) is jitted and not jitted._cache_size():
                        del cache[key]
                raise

        wrapper._compiled_cache = cache
        return wrapper

    return decorate


# Tests for concrete values (the ``inline_if`` hooks): True where the function's own check
# could fail. They read the arrays before any conversion to the sampler's dtype, which
# rounds monotonically, so a pair that passes here passes after it.


def unordered(low: str, high: str):
    """``inline_if`` for bounds that must satisfy ``low <= high`` where known."""
    def test(values):
        return bool(np.any(values[low]._value > values[high]._value))
    return test


def outside_unit(name: str):
    """``inline_if`` for probabilities that must lie in ``[0, 1]`` where known."""
    def test(values):
        p = values[name]
        if p is None:  # choice without p
            return False
        v = p._value
        return not bool(np.all((v >= 0) & (v <= 1)))
    return test

"""Equinox's ``debug.assert_max_traces`` and ``debug.get_num_traces``: count how often a
function is traced (its Python body runs), and fail when a compiled function retraces more
than it should, naming the argument responsible."""

from __future__ import annotations

import functools
import inspect
import weakref

from ..core.pytree import tree_flatten
from ._filters import is_array
from ._module import Module, field

_traces = weakref.WeakKeyDictionary()  # tag -> number of calls
_seen = weakref.WeakKeyDictionary()  # tag -> {argument name: [its structures]}


class _Tag:
    """Identifies one ``assert_max_traces`` wrapper and its copies (flattened and rebuilt
    by a transformation, they keep the tag, so they share the count)."""

    __slots__ = ("__weakref__",)


def _structure(value):
    """``value``'s tree structure, its arrays as (shape, dtype) and other leaves as they are."""
    leaves, tree = tree_flatten(value)
    return tree, [(tuple(x.shape), str(x.dtype)) if is_array(x) else x for x in leaves]


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001  (a leaf without a plain ==, e.g. an array)
        return False


class _AssertMaxTraces(Module):
    fn: object
    max_traces: object = field(static=True)
    tag: _Tag = field(static=True)

    def __init__(self, fn, max_traces):
        self.fn = fn
        self.max_traces = max_traces
        self.tag = _Tag()
        _traces[self.tag] = 0
        _seen[self.tag] = {}

    @property
    def __wrapped__(self):
        return self.fn

    def __call__(self, *args, **kwargs):
        count = _traces[self.tag] = _traces[self.tag] + 1
        try:
            arguments = inspect.signature(self.fn).bind(*args, **kwargs).arguments
        except (TypeError, ValueError):  # no signature, or a call it does not fit
            arguments = {"args": args, "kwargs": kwargs}
        seen = _seen[self.tag]
        if self.max_traces is not None and count > self.max_traces:
            for name, value in arguments.items():
                now = _structure(value)
                if not any(_same(now, before) for before in seen.get(name, [])):
                    raise RuntimeError(
                        f"{self.fn} can only be traced {self.max_traces} times, but it has "
                        f"now been traced {count} times. The argument {name!r} appears "
                        f"responsible: it is now {now[1]} (structure {now[0]}); before, it "
                        f"was {[s[1] for s in seen.get(name, [])]}")
            raise RuntimeError(
                f"{self.fn} can only be traced {self.max_traces} times, but it has now been "
                f"traced {count} times; no argument changed structure, shape or dtype (a "
                "new wrapper around the function, or a cleared cache, retraces it)")
        for name, value in arguments.items():
            seen.setdefault(name, []).append(_structure(value))
        return self.fn(*args, **kwargs)


def assert_max_traces(fn=None, *, max_traces):
    """Fail when ``fn`` is called (so, inside ``jit``, traced) more than ``max_traces``
    times, as Equinox's ``debug.assert_max_traces``.

    Place it inside the compiling wrapper (``filter_jit(assert_max_traces(f, ...))``):
    the wrapped function's Python body then runs once per trace.

    Arguments:
        fn: the callable to wrap. Without it (``@assert_max_traces(max_traces=1)``), a
            decorator.
        max_traces: (keyword only) the most calls allowed, or None for any number (the
            count is still kept for ``get_num_traces``).

    Returns:
        The wrapped callable (a Module, so transformations see through it). A call beyond
        ``max_traces`` raises RuntimeError naming the argument whose structure, shapes or
        dtypes are new.

    Example:
        >>> import invarax
        >>> @invarax.filter_jit
        ... @assert_max_traces(max_traces=1)
        ... def f(x):
        ...     return x + 1
        >>> _ = f(jnp.ones(2)); _ = f(jnp.zeros(2))
        >>> get_num_traces(f)
        1
        >>> f(jnp.ones(3))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        RuntimeError: <function f at ...> can only be traced 1 times, ... 'x' appears ...
    """
    if fn is None:
        return functools.partial(assert_max_traces, max_traces=max_traces)
    if max_traces is not None and (isinstance(max_traces, bool)
                                   or not isinstance(max_traces, int) or max_traces < 0):
        raise ValueError(f"assert_max_traces: max_traces must be a non-negative int or None, "
                         f"got {max_traces!r}")
    return _AssertMaxTraces(fn, max_traces)


def get_num_traces(fn) -> int:
    """How many times ``fn``, wrapped by ``assert_max_traces`` (possibly inside other
    wrappers such as ``filter_jit``), has been called, as Equinox's ``debug.get_num_traces``.

    Arguments:
        fn: a callable wrapped (at some depth, through ``__wrapped__``) by
            ``assert_max_traces``.

    Returns:
        The number of calls so far.

    Example:
        >>> g = assert_max_traces(lambda x: x, max_traces=None)
        >>> _ = g(1.0); get_num_traces(g)
        1
    """
    seen = set()
    while not isinstance(fn, _AssertMaxTraces):
        if id(fn) in seen or not hasattr(fn, "__wrapped__"):
            raise ValueError(f"get_num_traces: {fn} is not wrapped with "
                             "debug.assert_max_traces")
        seen.add(id(fn))
        fn = fn.__wrapped__
    return _traces[fn.tag]

"""``filter_jit``: ``jit`` with array leaves traced and every other leaf static."""

from __future__ import annotations

import functools

from ..compiler.jit import Jitted
from ..core.pytree import tree_map
from ._filters import combine, is_array, partition
from ._static import Static


class _Owner:
    """Stands for the wrapped function in cache keys, so that they do not keep it alive."""

    __slots__ = ()

    def __repr__(self):
        return "<the function filter_jit wraps>"


_OWNER = _Owner()


def _innermost(fun):
    """The user's function under filtered transforms and bound methods, whose lifetime the
    compiled programs of ``filter_jit(fun)`` follow."""
    seen = set()
    while id(fun) not in seen:
        seen.add(id(fun))
        inner = getattr(fun, "__func__", None) or getattr(fun, "__wrapped__", None)
        if inner is None or isinstance(inner, functools.partial):
            break
        fun = inner
    return fun


def filter_jit(fun):
    """Compile ``fun``, tracing the array leaves of its arguments; other leaves are static.

    Non-array leaves (ints, strings, functions, a Module's static fields) are hashed into
    the cache key, so Python control flow on them works. Outputs may hold non-array
    leaves too (invarax goes beyond Equinox here: they need no wrapping): they are
    returned as the values the traced call produced.

    Arguments:
        fun: any function of pytrees; it may itself be a pytree, such as a bound method
            ``model.__call__`` whose module holds arrays.

    Returns:
        The compiled function; results are bitwise those of calling ``fun`` (N3).

    Example:
        >>> f = filter_jit(lambda x, name: (2 * x, name.upper()))
        >>> f(jnp.ones(2), "done")
        (Array([2., 2.], dtype=float32), 'DONE')
    """
    # One cache per wrapped function (shared by every filter_jit of it, as JAX's jit),
    # keyed on the static part (the transforms around the function included) and avals.
    owner = _innermost(fun)

    def run(dynamic, static: Static):
        f, args, kwargs = combine(dynamic, static.value)
        f = tree_map(lambda leaf: owner if leaf is _OWNER else leaf, f)
        out_dynamic, out_static = partition(f(*args, **kwargs), is_array)
        return out_dynamic, Static(out_static)

    run = Jitted(run, cache_owner=owner)

    @functools.wraps(fun)
    def jitted(*args, **kwargs):
        dynamic, static = partition((fun, args, kwargs), is_array)
        f = tree_map(lambda leaf: _OWNER if leaf is owner else leaf, static[0])
        out_dynamic, out_static = run(dynamic, Static((f, *static[1:])))
        return combine(out_dynamic, out_static.value)

    return jitted

"""``filter_jit``: ``jit`` with array leaves traced and every other leaf static."""

from __future__ import annotations

import functools

from ..compiler.jit import jit
from ._filters import combine, is_array, partition
from ._static import Static


def _run(dynamic, static: Static):
    fun, args, kwargs = combine(dynamic, static.value)
    out_dynamic, out_static = partition(fun(*args, **kwargs), is_array)
    return out_dynamic, Static(out_static)



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
    run = jit(_run)  # one cache per filter_jit, keyed on the static part and the avals

    @functools.wraps(fun)
    def jitted(*args, **kwargs):
        dynamic, static = partition((fun, args, kwargs), is_array)
        out_dynamic, out_static = run(dynamic, Static(static))
        return combine(out_dynamic, out_static.value)

    return jitted

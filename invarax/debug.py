"""``invarax.debug``: JAX's ``jax.debug`` — ``print``, ``callback`` and ``breakpoint`` — and
Equinox's ``debug.assert_max_traces``, ``debug.get_num_traces``, ``debug.backward_nan``,
``debug.store_dce``, ``debug.inspect_dce``, ``debug.breakpoint_if`` and
``debug.announce_transform``.

``visualize_array_sharding`` draws which device holds which block of an array.

``debug.print`` and ``debug.callback`` work eagerly and inside ``jit``, ``vmap`` and
``grad`` (see ``invarax.ops.callbacks``): the values they show are the ones the program
computes, in program order; under ``vmap`` once per example, under ``grad`` the primal
values, during the forward pass.
"""

from __future__ import annotations

import sys

import numpy as np

from .core.array import Array, to_array
from .core.pytree import tree_flatten, tree_unflatten
from .core.trace import EVAL_TRACE, Tracer, current_trace
from .ops.callbacks import debug_callback


def _split(args, kwargs):
    """The array leaves of ``(args, kwargs)`` and a function rebuilding them from values."""
    leaves, tree = tree_flatten((args, kwargs))
    dynamic = [i for i, leaf in enumerate(leaves) if _is_arraylike(leaf)]

    def rebuild(values):
        full = list(leaves)
        for i, v in zip(dynamic, values, strict=True):
            full[i] = v
        return tree_unflatten(tree, full)

    return [to_array(leaves[i], "a debug argument") for i in dynamic], rebuild


def _is_arraylike(x) -> bool:
    return isinstance(x, Array) or (hasattr(x, "shape") and hasattr(x, "dtype")) or (
        isinstance(x, (bool, int, float, complex)))


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` for its effect, also inside transformations.

    Arguments:
        callback: a Python function; it receives concrete ``Array``s (and the other
            leaves of ``args``/``kwargs`` as given) and its return value is ignored.
        *args, **kwargs: pytrees of arrays.
        ordered: accepted as JAX's; invarax runs effects in program order always.
        partitioned: accepted as JAX's (one device).

    Returns:
        None.

    Example:
        >>> import invarax
        >>> seen = []
        >>> f = invarax.jit(lambda x: invarax.debug.callback(seen.append, x * 2) or x)
        >>> _ = f(jnp.arange(3)); seen
        [Array([0, 2, 4], dtype=int32)]
    """
    arrays, rebuild = _split(args, kwargs)

    def flat(*values):
        a, k = rebuild(values)
        callback(*a, **k)

    debug_callback(flat, *arrays, ordered=ordered)


def print(fmt: str, *args, ordered=False, **kwargs) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with the values the program computes.

    Arguments:
        fmt: a ``str.format`` string.
        *args, **kwargs: pytrees of arrays (other leaves are formatted as given).
        ordered: accepted as JAX's; prints always come in program order.

    Returns:
        None.

    Example:
        >>> import invarax
        >>> @invarax.jit
        ... def f(x):
        ...     invarax.debug.print("x = {x}, sum = {}", jnp.sum(x), x=x)
        ...     return x + 1
        >>> _ = f(jnp.array([1.0, 2.0]))
        x = [1. 2.], sum = 3.0
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the first argument is the format string, got "
                        f"{type(fmt).__name__}; write debug.print('{{}}', x)")

    def show(*a, **k):
        sys.stdout.write(fmt.format(*a, **k) + "\n")

    callback(show, *args, ordered=ordered, **kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,  # noqa: A001
               token=None, **kwargs):
    """Enter Python's debugger (``pdb``) with the caller's values, also inside transformations.

    Eagerly ``pdb`` stops in the calling frame itself. Inside ``jit``, ``vmap``, ``grad``,
    ``cond``, ``scan``, ... it is a debug callback, as JAX's: each time the program runs
    it, ``pdb`` starts on a copy of the caller's local variables in which every array is
    the concrete value computed there (under ``vmap`` once per example, under ``grad`` the
    primal values); ``c`` continues the program. Only the calling frame is captured, and
    the debugger is ``pdb`` whatever ``backend`` (JAX's own debugger is not reproduced);
    ``filter_frames``, ``num_frames`` and ``kwargs`` are accepted and ignored.

    Arguments:
        ordered: accepted as JAX's (effects run in program order always).
        token: returned unchanged (JAX's token-threading form).

    Returns:
        ``token``.
    """
    return _enter(sys._getframe(1), ordered, token)


def _enter(frame, ordered, token):
    """``breakpoint``'s work, for the caller's ``frame``."""
    import pdb

    if current_trace() is EVAL_TRACE:
        pdb.Pdb().set_trace(frame)
        return token
    leaves, tree = tree_flatten(dict(frame.f_locals))
    dynamic = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Array)]
    f_globals, where = frame.f_globals, f"{frame.f_code.co_filename}:{frame.f_lineno}"

    def enter(*values):
        full = list(leaves)
        for i, value in zip(dynamic, values, strict=True):
            full[i] = value
        sys.stdout.write(f"invarax.debug.breakpoint at {where}: the caller's variables, "
                         "with the values computed; 'c' continues\n")
        pdb.Pdb().run("pass", f_globals, tree_unflatten(tree, full))

    debug_callback(enter, *(leaves[i] for i in dynamic), ordered=ordered)
    return token


def breakpoint_if(pred, **kwargs):
    """Equinox's ``debug.breakpoint_if``: ``breakpoint(**kwargs)`` if any element of
    ``pred`` is True (under ``vmap``, of any example).

    Eagerly ``pdb`` stops in the calling frame; inside ``jit`` (and the other
    transformations) it is a ``lax.cond`` on the predicate whose true branch is
    ``breakpoint``'s debug callback: ``pdb`` starts, when the program runs and ``pred``
    holds, on the caller's variables with their computed values.

    Arguments:
        pred: a bool, or an array of bools.
        **kwargs: ``breakpoint``'s keyword arguments (``token``, ``ordered``, ...).

    Returns:
        ``token`` (None if not given).
    """
    from . import lax
    from .module.internal import unvmap_any

    frame, token = sys._getframe(1), kwargs.get("token")
    ordered = kwargs.get("ordered", False)
    if current_trace() is EVAL_TRACE and not isinstance(pred, Tracer):
        return _enter(frame, ordered, token) if np.any(np.asarray(pred)) else token
    return lax.cond(unvmap_any(pred), lambda: _enter(frame, ordered, token), lambda: token)


__all__ = ["breakpoint", "breakpoint_if", "callback", "print"]

from .distributed.visualize import (  # noqa: E402
    inspect_array_sharding,
    visualize_array_sharding,
    visualize_sharding,
)

__all__ += ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]

from .module._dce import inspect_dce, store_dce  # noqa: E402
from .module._debug import assert_max_traces, get_num_traces  # noqa: E402
from .module.internal._announce import announce_transform  # noqa: E402
from .module.internal._debug import debug_backward_nan as backward_nan  # noqa: E402

__all__ += ["announce_transform", "assert_max_traces", "backward_nan", "get_num_traces",
            "inspect_dce", "store_dce"]

"""``error_if`` and ``branched_error_if``: raise from inside ``jit``/``vmap``/``grad`` when a
traced predicate holds, as Equinox's."""

from __future__ import annotations

import os
import warnings

from ..compiler.passes import EFFECTFUL
from ..core.pytree import tree_flatten, tree_unflatten
from ..ops import reductions as red
from ..ops.checks import EquinoxRuntimeError, EquinoxTracetimeError, error_if_p  # noqa: F401  (re-exported)
from ._filters import combine, is_array, partition

_ON_ERROR = ("raise", "nan", "off", "breakpoint")

# A check stays in compiled programs even when its output is unused (as under jit(grad),
# where only the tangent is returned): beyond Equinox, whose check is removed there.
EFFECTFUL.add(error_if_p)


def _scalar(value, what: str, kind):
    """``value`` as a scalar Array: any element of a bool array, the max of an int array."""
    from .. import numpy as jnp

    x = jnp.asarray(value)
    if x.dtype.kind not in kind:
        hint = ("; compare to make one, e.g. error_if(x, x < 0, msg)" if kind == "b"
                else "; pass the position of the message in msgs")
        raise TypeError(f"{what} must be a {'bool' if kind == 'b' else 'integer'} array, got "
                        f"dtype {x.dtype}{hint}")
    if x.ndim:
        x = (red.reduce_or if kind == "b" else red.reduce_max)(x, tuple(range(x.ndim)))
    return x


def resolve_on_error(on_error: str) -> str:
    """``on_error`` checked, ``"default"`` read from ``EQX_ON_ERROR`` (else ``"raise"``)."""
    if on_error == "default":
        on_error = os.environ.get("EQX_ON_ERROR", "raise")
    if on_error not in _ON_ERROR:
        raise ValueError(f"on_error must be one of 'default', {', '.join(map(repr, _ON_ERROR))}"
                         f"; got {on_error!r}")
    if on_error == "breakpoint":
        raise ValueError("on_error='breakpoint' is not supported by invarax: use 'raise' and "
                         "run the function without jit to inspect the values")
    return on_error


def branched_error_if(x, pred, index, msgs, *, on_error: str = "default"):
    """Return ``x``; raise ``EquinoxRuntimeError(msgs[index])`` where ``pred`` holds.

    As Equinox's ``branched_error_if``: the check runs with the program, so a traced
    ``pred`` raises when the compiled function runs. Under ``vmap`` one error covers the
    batch (any example's ``pred``, the largest ``index``); under differentiation ``x``'s
    tangent passes through unchanged, and the check still runs (also under
    ``jit(grad(f))``, where Equinox's check is removed as dead code).

    Arguments:
        x: any pytree holding at least one array (the check is threaded through them).
        pred: a bool (Python or array of any shape; any True element fails).
        index: an int (Python or array; its largest element is used) into ``msgs``.
        msgs: the error messages.
        on_error: ``"raise"``, ``"nan"`` (return ``x`` filled with NaN instead: integers
            with their largest value, bools with True), ``"off"`` (no check), or
            ``"default"``: the ``EQX_ON_ERROR`` environment variable, else ``"raise"``.
            (``"breakpoint"`` is not supported.)

    Returns:
        ``x``, bitwise.

    Example:
        >>> branched_error_if(jnp.ones(2), jnp.array(False), 1, ["a", "b"])
        Array([1., 1.], dtype=float32)
        >>> branched_error_if(jnp.ones(2), jnp.array([False, True]), 1, ["a", "b"])
        Traceback (most recent call last):
        ...
        invarax.ops.checks.EquinoxRuntimeError: b
    """
    on_error = resolve_on_error(on_error)
    msgs = tuple(str(m) for m in msgs)
    if on_error == "off":
        return x
    if isinstance(pred, bool) and isinstance(index, int):
        if pred and on_error == "raise":
            raise EquinoxTracetimeError(msgs[index])
        if pred:  # on_error="nan": NaN at once, as Equinox, which warns of it
            warnings.warn(f"error_if: the predicate is True at trace time, so the error "
                          f"({msgs[index]!r}) is resolved now by returning NaN "
                          "(on_error='nan')", stacklevel=3)
        if not pred:
            return x
    dynamic, static = partition(x, is_array)
    leaves, treedef = tree_flatten(dynamic)
    if not leaves:
        raise ValueError("error_if: x holds no arrays to thread the check on to; pass the "
                         "arrays whose use should wait for the check")
    from .. import numpy as jnp

    outs = error_if_p.bind(_scalar(pred, "error_if's pred", "b"),
                           _scalar(index, "branched_error_if's index", "iu"),
                           *map(jnp.asarray, leaves), msgs=msgs, on_error=on_error)
    return combine(tree_unflatten(treedef, outs), static)


def error_if(x, pred, msg: str, *, on_error: str = "default"):
    """Return ``x``; raise ``EquinoxRuntimeError(msg)`` where ``pred`` holds, as Equinox's.

    ``branched_error_if(x, pred, 0, [msg])``: eagerly, under ``jit`` (when the compiled
    function runs), under ``vmap`` (if any example fails) and under ``grad``.

    Arguments:
        x: any pytree holding at least one array.
        pred: a bool, or a bool array (any True element fails).
        msg: the error message.
        on_error: as for ``branched_error_if``.

    Returns:
        ``x``, bitwise.

    Example:
        >>> f = jit(lambda x: error_if(x, x < 0, "x must be non-negative"))
        >>> f(jnp.array([1.0, 2.0]))
        Array([1., 2.], dtype=float32)
        >>> f(jnp.array([1.0, -2.0]))
        Traceback (most recent call last):
        ...
        invarax.ops.checks.EquinoxRuntimeError: x must be non-negative
    """
    return branched_error_if(x, pred, 0, [msg], on_error=on_error)

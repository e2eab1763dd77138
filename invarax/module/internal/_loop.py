"""Equinox's ``while_loop`` (kinds ``lax``, ``checkpointed``, ``bounded``) and ``scan``
(kinds ``lax``, ``checkpointed``), with ``max_steps`` and buffers.

- ``lax``: ``lax.while_loop`` (forward-mode differentiable), stopped after ``max_steps``.
- ``checkpointed``: ``lax.checkpointed_while_loop``, reverse-mode differentiable by
  binomial checkpointing (the backward pass recomputes the forward steps it needs).
- ``bounded``: nested ``scan``s of ``cond``s, ``base`` steps per level and
  ``ceil(log_base(max_steps))`` levels (each but the innermost checkpointed), so both
  modes differentiate; under ``vmap`` the loop stops when every example has, and an
  example that has finished keeps its carry (its steps select the old value).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.pytree import tree_leaves, tree_map
from .._filters import is_array
from ._buffers import _is_buffer, check_same_structure, unwrap_output, wrap_buffers
from ._nontraceable import nonbatchable
from ._unvmap import unvmap_any

_KINDS = ("lax", "checkpointed", "bounded")
_UNBOUNDED = int(np.iinfo(np.int32).max)  # a checkpointed loop's bound when max_steps is None


def _asarray(x):
    from ... import numpy as jnp

    return jnp.asarray(x)


def _predicate(out):
    p = _asarray(out)
    if p.shape != () or p.dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a bool scalar, got "
                        f"{p.dtype}{list(p.shape)}")
    return p


def _rewrite(cond_fun, body_fun, buffers):
    """``(cond, body)`` on the carry: buffers wrapped for the user's functions, the body's
    output unwrapped and checked; ``body(val, pred)`` gives ``(val as the body saw it,
    new val)``, its buffer writes obeying ``pred``."""

    def cond(val):
        return _predicate(cond_fun(wrap_buffers(buffers, val, True, None)))

    def body(val, pred=True):
        tag = object()
        bval = wrap_buffers(buffers, val, pred, tag)
        new = tree_map(_asarray, unwrap_output(body_fun(bval), tag))
        check_same_structure(val, new)
        return bval, new

    return cond, body


def while_loop(cond_fun, body_fun, init_val, *, max_steps=None, buffers=None, kind,
               checkpoints=None, base: int = 16):
    """A while loop, as Equinox's ``equinox.internal.while_loop``.

    Arguments:
        cond_fun, body_fun, init_val: as ``lax.while_loop``.
        max_steps: the loop stops after this many steps (a Python int; None: no bound).
        buffers: ``buffers(val)`` names arrays of the carry (a node or a sequence of
            them) that the body only reads with ``buf[i]`` and writes with
            ``buf.at[i].set(x, pred=...)``, each location once.
        kind: ``"lax"`` (forward-mode differentiable), ``"checkpointed"`` (reverse mode,
            by recomputation; needs ``max_steps`` or ``checkpoints``) or ``"bounded"``
            (both modes; needs ``max_steps``).
        checkpoints: for ``"checkpointed"``: how many carries are stored for the
            backward pass (default ``O(sqrt(max_steps))``).
        base: for ``"bounded"``: steps per level of nesting.

    Returns:
        The final carry.

    Example:
        >>> def f(x):
        ...     body = lambda c: (c[0] + 1, c[1] * x)
        ...     return while_loop(lambda c: c[0] < 3, body, (0, 1.0), kind="checkpointed",
        ...                       max_steps=8)[1]
        >>> grad(f)(2.0)  # d/dx x**3
        Array(12., dtype=float32, weak_type=True)
    """
    if kind not in _KINDS:
        raise ValueError(f"Unrecognised kind of while loop '{kind}'")
    init_val = tree_map(_asarray, init_val)
    if kind == "bounded":
        if max_steps is None:
            raise ValueError("kind='bounded' requires `max_steps` to be specified")
        return _bounded_while_loop(cond_fun, body_fun, init_val, max_steps, buffers, base)
    if max_steps is not None and type(max_steps) is not int:
        raise ValueError("`max_steps` must be a Python integer")
    cond, body = _rewrite(cond_fun, body_fun, buffers)
    if kind == "checkpointed":
        return _checkpointed(cond, lambda v: body(v)[1], init_val, max_steps, checkpoints)
    from ...lax import while_loop as lax_while_loop

    if max_steps is None:
        return lax_while_loop(cond, lambda v: body(v)[1], init_val)
    return lax_while_loop(lambda c: cond(c[1]) & (c[0] < max_steps),
                          lambda c: (c[0] + 1, body(c[1])[1]), (_asarray(0), init_val))[1]


def _checkpointed(cond, body, init_val, max_steps, checkpoints):
    from ...lax import checkpointed_while_loop

    if checkpoints is None:
        if max_steps is None:
            raise ValueError("Must specify either `max_steps` or `checkpoints` in "
                             "`equinox.internal.checkpointed_while_loop`.")
        # Equinox's default, O(sqrt(max_steps)) (0 for max_steps=0, an error there too).
        checkpoints = 1 if max_steps == 1 else (
            math.floor(-1.5 + math.sqrt(2 * max_steps + 0.25)) + 1)
    if checkpoints < 1:
        raise ValueError("Must have at least one checkpoint")
    if max_steps == 0:
        return init_val
    return checkpointed_while_loop(cond, body, init_val,
                                   max_steps=_UNBOUNDED if max_steps is None else max_steps,
                                   checkpoints=checkpoints)


def _bounded_while_loop(cond_fun, body_fun, init_val, max_steps, buffers, base):
    if not isinstance(max_steps, int) or max_steps < 0:
        raise ValueError("max_steps must be a non-negative integer")
    if max_steps == 0:
        return init_val
    from ... import numpy as jnp

    cond, body = _rewrite(cond_fun, body_fun, buffers)

    def bounded_cond(carry):
        step, pred, _ = carry
        return nonbatchable(unvmap_any(pred) & (step < max_steps),
                            name="`equinox.internal.while_loop`",
                            allow_constant_across_batch=True)

    def bounded_body(carry):
        step, pred, val = carry
        bval, new = body(val, pred)
        # A finished example keeps its carry; a buffer's writes obeyed ``pred`` already.
        new = tree_map(lambda old, n: n if _is_buffer(old) else jnp.where(pred, n, old),
                       bval, new, is_leaf=_is_buffer)
        return step + 1, pred & cond(new), new

    levels = 1  # the least power of base >= max_steps, in integers (no float log)
    while levels < max_steps:
        levels *= base
    carry = (_asarray(0), cond(init_val), init_val)
    return _nest(bounded_cond, bounded_body, carry, levels, base)[2]


def _nest(cond, body, carry, steps, base):
    """``steps`` (a power of ``base``) steps of ``body``, each level skipped by ``cond``."""
    if steps == 1:
        return body(carry)
    from ...lax import cond as lax_cond
    from ...lax import scan
    from ...transforms import checkpoint

    def level(c, _):
        inner = lambda v: _nest(cond, body, v, steps // base, base)  # noqa: E731
        return lax_cond(cond(c), inner, lambda v: v, c), None

    if steps != base:  # the innermost level is not checkpointed
        level = checkpoint(level, prevent_cse=False)
    return scan(level, carry, xs=None, length=base)[0]


def scan(f, init, xs, length=None, *, buffers=None, kind, checkpoints=None):
    """``lax.scan``, or (``kind="checkpointed"``) a scan whose backward pass recomputes the
    forward steps from at most ``checkpoints`` stored carries (``"all"``: every step).

    Arguments:
        f, init, xs, length: as ``lax.scan``.
        buffers: as for ``while_loop``, on the carry.
        kind: ``"lax"`` or ``"checkpointed"``.
        checkpoints: for ``"checkpointed"`` (default ``O(sqrt(length))``).

    Returns:
        ``(carry, ys)``, as ``lax.scan``.

    Example:
        >>> scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(3.0), kind="checkpointed")
        (Array(3., dtype=float32), Array([0., 0., 2.], dtype=float32))
    """
    from ... import numpy as jnp
    from ...lax import scan as lax_scan
    from .._make_jaxpr import filter_eval_shape

    init, xs = tree_map(_asarray, (init, xs))
    if kind == "lax":
        return lax_scan(f, init, xs, length)
    if kind != "checkpointed":
        raise ValueError(f"Unrecognised kind of scan '{kind}'")
    lengths = {x.shape[0] for x in tree_leaves(xs)} | ({length} if length is not None else set())
    if len(lengths) != 1:
        raise ValueError(f"Got inconsistent lengths in scan: {lengths}.")
    (length,) = lengths
    if checkpoints == "all":
        checkpoints = length

    def body_fun(val):
        i, carry, ys = val
        carry, y = f(carry, tree_map(lambda z: z[i], xs))
        return i + 1, carry, tree_map(lambda z, zs: zs.at[i].set(z), y, ys)

    _, y_struct = filter_eval_shape(f, init, tree_map(lambda z: z[0], xs))
    ys = tree_map(lambda z: jnp.empty((length, *z.shape), z.dtype), y_struct)
    _, carry, ys = while_loop(lambda val: True, body_fun, (0, init, ys),
                              buffers=_scan_buffers(buffers, init), kind="checkpointed",
                              max_steps=length, checkpoints=checkpoints)
    return carry, ys


def _scan_buffers(buffers, init):
    """The buffers of a checkpointed scan's loop: ``ys``, and the user's in the carry."""
    if buffers is None:
        return lambda val: val[2]
    nodes = buffers(init)
    single = any(node is nodes for node in tree_leaves(init, is_leaf=lambda n: n is nodes))
    if single or is_array(nodes):
        return lambda val: (buffers(val[1]), val[2])
    return lambda val: (*buffers(val[1]), val[2])

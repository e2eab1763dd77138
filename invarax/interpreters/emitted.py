"""The array operations that the transformations' own machinery emits: zeros for a
symbolic zero, a sum of cotangents, a broadcast or transpose of a batch axis.

They are primitives of ``ops/``, which sits above ``interpreters/``; so ``ops/`` hands them
down here when it defines them (``provide``), and ``interpreters/`` never imports ``ops/``.
Every module that defines them is imported by ``invarax`` itself, so they are always there.
"""

from __future__ import annotations

_OPS: dict = {}


def provide(**ops) -> None:
    """Register the ``ops/`` functions named here (called by the module that defines each).

    Example:
        >>> sorted(_OPS)
        ['add', 'broadcast_in_dim', 'reduce_sum', 'transpose']
    """
    _OPS.update(ops)


def add(x, y):
    """``x + y`` (lax ``add``), as traced under the current trace."""
    return _OPS["add"](x, y)


def reduce_sum(x, axes):
    """The sum of ``x`` over ``axes`` (lax ``reduce_sum``)."""
    return _OPS["reduce_sum"](x, axes)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """``x`` broadcast to ``shape`` (lax ``broadcast_in_dim``)."""
    return _OPS["broadcast_in_dim"](x, shape, broadcast_dimensions)


def transpose(x, permutation):
    """``x`` with its axes permuted (lax ``transpose``)."""
    return _OPS["transpose"](x, permutation)

"""``jax.interpreters.batching``: the ``vmap`` rule table, under JAX's names and contract.

``primitive_batchers`` is invarax's own table (not a copy): a rule put there is the one
``vmap`` uses. The contract is JAX's: ``rule(batched_args, batch_dims, **params) ->
(out, out_dim)``, a batch dimension being an int or ``not_mapped`` (``None``); lists for a
primitive with several results.
"""

from __future__ import annotations

import functools

from ...interpreters.batching import BatchTrace, BatchTracer, move_batch_axis, moveaxis, not_mapped
from ...interpreters.batching import batching_rules as primitive_batchers


def bdim_at_front(x, bdim, size, mesh_axis=None):
    """``x`` with its batch dimension first; an unbatched ``x`` broadcast to ``size``."""
    return move_batch_axis(x, bdim, 0, size)


def broadcast(x, sz, axis, mesh_axis=None):
    """``x`` with a new axis of length ``sz`` at ``axis`` (its values repeated)."""
    return move_batch_axis(x, not_mapped, axis, sz)


def _elementwise_batcher(prim, args, dims, **params):
    if all(d is not_mapped for d in dims):
        out = prim.bind(*args, **params)
        return out, ([not_mapped] * len(out) if prim.multiple_results else not_mapped)
    mapped = {d for d in dims if d is not not_mapped}
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not not_mapped)
    if len(mapped) == 1 and all(d is not not_mapped or x.ndim == 0
                                for x, d in zip(args, dims, strict=True)):
        (dim,) = mapped
    else:
        args, dim = [x if x.ndim == 0 and d is not_mapped else bdim_at_front(x, d, size)
                     for x, d in zip(args, dims, strict=True)], 0
    out = prim.bind(*args, **params)
    return out, ([dim] * len(out) if prim.multiple_results else dim)


def defvectorized(prim):
    """Batch ``prim`` by binding it on the batched operands (it maps over leading axes)."""
    primitive_batchers[prim] = functools.partial(_elementwise_batcher, prim)


defbroadcasting = defvectorized  # (a 0-d operand broadcasts, so both are one rule)

__all__ = [
    "BatchTrace", "BatchTracer", "bdim_at_front", "broadcast", "defbroadcasting",
    "defvectorized", "moveaxis", "not_mapped", "primitive_batchers",
]

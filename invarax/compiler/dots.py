"""Contractions in compiled programs (``lower._Program``).

A compiled program calls each ``dot_general`` with the same operand shapes every time (a
loop body: every iteration), so its layout (``kernels.contraction.layout``) is worked out
once, when the program is built, and each call goes straight to the canonical kernel
(``kernels.contraction.prepared``): the same operands handed to the same kernel as in eager
evaluation, so the same bits, without normalising the dimension numbers again. In a loop,
an rhs the same in every iteration (a weight) is packed for the kernel once, before the
loop, instead of at every call.

In a ``scan`` body, a product of a scanned slice ``x[i]`` and a value the same in every
iteration (an RNN's input projection ``x[i] @ W``) is computed for every iteration at once,
before the loop (``stacked_products``).
"""

from __future__ import annotations

import numpy as np

from ..core.ir import Eqn, Literal
from ..kernels.contraction import dot_general, prepared
from ..ops.contractions import dot_general_p


class Call:
    """The primitive of a rewritten item: its ``impl`` computes it; ``packs``: the impl is a
    prepared contraction, whose ``pack`` keeps a packing of an rhs the same in every
    iteration of a loop (``lower._Program`` packs it once, before the loop)."""

    multiple_results = False

    def __init__(self, name: str, impl, packs: bool = False):
        self.name, self.impl, self.packs = name, impl, packs

    def __repr__(self):
        return self.name


def contractions(items: list) -> list:
    """``items`` (a program's plan) with each ``dot_general`` calling its prepared
    contraction (an equation of no parameters whose primitive's ``impl`` is it).

    Example:
        >>> jaxpr = make_jaxpr(lambda x, w: x @ w)(
        ...     np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).jaxpr
        >>> [item.primitive.name for item in contractions(jaxpr.eqns)]
        ['dot_general']
    """
    out = list(items)
    for i, item in enumerate(items):
        if isinstance(item, Eqn) and item.primitive is dot_general_p:
            lhs, rhs = item.invars
            run = prepared(lhs.aval.shape, rhs.aval.shape, item.params["dimension_numbers"],
                           item.outvars[0].aval.dtype)
            out[i] = Eqn(Call("dot_general", run, packs=True), item.invars, item.outvars, {})
    return out


def stacked_products(items: list, invariant, scanned: dict) -> dict:
    """The products of a ``scan`` body computed for every iteration at once, before the loop.

    A ``dot_general`` without batch axes of a scanned slice ``x[i]`` (an input of the body
    whose id is in ``scanned``, which maps it to the name of the whole ``x``) and a value the
    same in every iteration (its id in ``invariant``) is, for every ``i`` together, one
    product of the whole ``x`` (its leading axis one more free axis), whose row ``i`` is the
    product of ``x[i]``: the canonical order depends on ``K`` alone, not on the number of
    rows, so each element has the bits the product in the loop gives it. One product of
    ``T`` times the rows runs nearer the kernel's peak, and splits across threads where the
    ``T`` small ones would not, in one call instead of ``T``.

    Arguments:
        items: the body's plan.
        invariant: the ids of the values the same in every iteration.
        scanned: ``{id(slice): name of the whole x}`` for the body's scanned inputs.

    Returns:
        ``{id(product's output): (product(lhs, rhs), name of the whole x, 0 or 1: the side
        of x)}``; ``product`` returns the stacked results, the scanned axis first.

    Example:
        >>> jaxpr = make_jaxpr(lambda w, x: x @ w)(
        ...     np.ones((3, 4), np.float32), np.ones((2, 3), np.float32)).jaxpr
        >>> w, x = jaxpr.invars
        >>> [(name, side) for _, name, side in stacked_products(
        ...     jaxpr.eqns, {id(w)}, {id(x): "x0"}).values()]
        [('x0', 0)]
    """
    out = {}
    for item in items:
        if not (isinstance(item, Eqn) and item.primitive is dot_general_p):
            continue
        (lc, rc), (lb, rb) = item.params["dimension_numbers"]
        lhs, rhs = item.invars
        if lb or rb or isinstance(lhs, Literal) or isinstance(rhs, Literal):
            continue
        if id(lhs) in scanned and id(rhs) in invariant:
            side, x, axis = 0, lhs, 0
            dims = ((tuple(d + 1 for d in lc), tuple(rc)), ((), ()))
        elif id(rhs) in scanned and id(lhs) in invariant:
            side, x, axis = 1, rhs, lhs.aval.ndim - len(lc)
            dims = ((tuple(lc), tuple(d + 1 for d in rc)), ((), ()))
        else:
            continue
        out[id(item.outvars[0])] = (_whole(dims, item.outvars[0].aval.dtype, axis),
                                    scanned[id(x)], side)
    return out


def _whole(dims, dtype, axis: int):
    """The product over the whole scanned operand, its scanned axis (at ``axis``) first."""

    def product(lhs, rhs):
        result = dot_general(lhs, rhs, dims, dtype)
        return result if axis == 0 else np.moveaxis(result, axis, 0)

    return product

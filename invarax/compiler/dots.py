"""Prepared calls and stacked products in compiled programs (``lower._Program``).

A compiled program calls each equation with the same operand shapes every time (a loop
body: every iteration), so where the lowering table has a ``prepare`` hook (the
contraction's: ``kernels.contraction.prepared``) the call is worked out once, when the
program is built, and each call goes straight to the kernel: the same operands handed to
the same kernel as in eager evaluation, so the same bits. In a loop, an rhs the same in
every iteration (a weight) is packed for the kernel once, before the loop, instead of at
every call (a prepared call with a ``pack``).

In a ``scan`` body, a product of a scanned slice ``x[i]`` and a value the same in every
iteration (an RNN's input projection ``x[i] @ W``) is computed for every iteration at once,
before the loop (``stacked_products``), where the lowering table has a ``stacked`` hook.
"""

from __future__ import annotations

from ..core.ir import Eqn, Literal
from ..core.lowering import lowering


class Call:
    """The primitive of a rewritten item: its ``impl`` computes it; ``packs``: the impl is a
    prepared call whose ``pack`` keeps a packing of an rhs the same in every iteration of a
    loop (``lower._Program`` packs it once, before the loop)."""

    multiple_results = False

    def __init__(self, name: str, impl, packs: bool = False):
        self.name, self.impl, self.packs = name, impl, packs

    def __repr__(self):
        return self.name


def contractions(items: list) -> list:
    """``items`` (a program's plan) with each equation whose lowering has a ``prepare`` hook
    calling its prepared function (an equation of no parameters whose primitive's ``impl``
    is it).

    Example:
        >>> jaxpr = make_jaxpr(lambda x, w: x @ w)(
        ...     np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).jaxpr
        >>> [item.primitive.name for item in contractions(jaxpr.eqns)]
        ['dot_general']
    """
    out = list(items)
    for i, item in enumerate(items):
        if isinstance(item, Eqn):
            prepare = lowering(item.primitive).prepare
            if prepare is not None:
                run = prepare(item)
                out[i] = Eqn(Call(item.primitive.name, run, packs=hasattr(run, "pack")),
                             item.invars, item.outvars, {})
    return out


def stacked_products(items: list, invariant, scanned: dict) -> dict:
    """The products of a ``scan`` body computed for every iteration at once, before the loop.

    An equation of two operands whose lowering has a ``stacked`` hook, one operand a scanned
    slice ``x[i]`` (an input of the body whose id is in ``scanned``, which maps it to the
    name of the whole ``x``) and the other a value the same in every iteration (its id in
    ``invariant``), is, for every ``i`` together, one product of the whole ``x`` whose row
    ``i`` is the product of ``x[i]`` (the hook says where that holds bit for bit: a
    ``dot_general`` without batch axes). One product of ``T`` times the rows runs nearer the
    kernel's peak, and splits across threads where the ``T`` small ones would not, in one
    call instead of ``T``.

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
        if not isinstance(item, Eqn):
            continue
        stacked = lowering(item.primitive).stacked
        if stacked is None:
            continue
        lhs, rhs = item.invars
        if isinstance(lhs, Literal) or isinstance(rhs, Literal):
            continue
        if id(lhs) in scanned and id(rhs) in invariant:
            side, x = 0, lhs
        elif id(rhs) in scanned and id(lhs) in invariant:
            side, x = 1, rhs
        else:
            continue
        product = stacked(item, side)
        if product is not None:
            out[id(item.outvars[0])] = (product, scanned[id(x)], side)
    return out

"""Prepared calls and stacked products in compiled programs (``lower._Program``).

A compiled program calls each equation with the same operand shapes every time (a loop
body: every iteration), so where the lowering table has a ``prepare`` hook (the
contraction's: ``kernels.contraction.prepared``) the call is worked out once, when the
program is built, and each call goes straight to the kernel: the same operands handed to
the same kernel as in eager evaluation, so the same bits. In a loop, an rhs the same in
every iteration (a weight) is packed for the kernel once, before the loop, instead of at
every call (a prepared call with a ``pack``).

In a program's top level, a product whose only reader adds it to a vector broadcast along
its leading axes (a layer's ``x @ W + b``) is computed with that addition as the kernel's
epilogue (``biased_products``), where the lowering table has a ``biased`` hook: each block
of the product gets its bias while it is in the cache, the same one addition per element.

In a ``scan`` body, a product of a scanned slice ``x[i]`` and a value the same in every
iteration (an RNN's input projection ``x[i] @ W``) is computed for every iteration at once,
before the loop (``stacked_products``), where the lowering table has a ``stacked`` hook.
"""

from __future__ import annotations

from ..core.ir import Eqn, Jaxpr, Literal
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


def biased_products(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with each ``add(product, broadcast(bias))`` (either order) computed by one
    call of the product's ``biased`` rule: where the product's only reader is the addition,
    the product is no output, and the broadcast repeats ``bias`` whole over leading axes
    (the table's ``tiles``). The broadcast goes too where nothing else reads it. The
    addition is the same one, of the same rounded product, so the bits are the same.

    Example:
        >>> jaxpr = make_jaxpr(lambda x, w, b: x @ w + b)(np.ones((2, 3), np.float32),
        ...     np.ones((3, 4), np.float32), np.ones(4, np.float32)).jaxpr
        >>> [str(e.primitive) for e in biased_products(jaxpr).eqns]
        ['dot_general+bias']
    """
    readers = {id(v): 1 for v in jaxpr.outvars}
    producer = {}
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if not isinstance(v, Literal):
                readers[id(v)] = readers.get(id(v), 0) + 1
        for v in eqn.outvars:
            producer[id(v)] = eqn
    replaced, gone = {}, set()
    for eqn in jaxpr.eqns:
        if lowering(eqn.primitive).operator != "+" or any(isinstance(v, Literal)
                                                          for v in eqn.invars):
            continue
        for side in (0, 1):
            dot = producer.get(id(eqn.invars[side]))
            bcast = producer.get(id(eqn.invars[1 - side]))
            if (dot is None or bcast is None or id(dot) in gone or id(bcast) in gone
                    or lowering(dot.primitive).biased is None
                    or readers[id(dot.outvars[0])] != 1):
                continue
            out, bias, tiles = eqn.outvars[0].aval, bcast.invars[0], lowering(bcast.primitive).tiles
            if (tiles is None or isinstance(bias, Literal) or bias.aval.dtype != out.dtype
                    or dot.outvars[0].aval.shape != out.shape
                    or dot.outvars[0].aval.dtype != out.dtype or not tiles(bcast)):
                continue
            # (side 1: the bias is add's first operand)
            run = lowering(dot.primitive).biased(dot, bias.aval.shape, side == 1)
            if run is None:
                continue
            replaced[id(eqn)] = Eqn(Call(f"{dot.primitive.name}+bias", run),
                                    [*dot.invars, bias], eqn.outvars, {})
            gone.add(id(dot))
            if readers[id(bcast.outvars[0])] == 1:
                gone.add(id(bcast))
            break
    if not replaced:
        return jaxpr
    eqns = [replaced.get(id(e), e) for e in jaxpr.eqns if id(e) not in gone]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns, check=False)

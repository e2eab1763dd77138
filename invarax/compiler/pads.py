"""Sums of zero-padded pieces in compiled programs (``lower._Program``).

The transpose of ``slice`` is ``pad`` with zeros, so the gradient of a value sliced into
pieces (an LSTM's gates: four column blocks of one product) arrives as a sum of pads,
``((pad(a) + pad(b)) + pad(c)) + pad(d)``: four full-size arrays of zeros filled and three
full-size additions. Where the pieces' regions do not overlap, each element of such a sum
is one piece's value ``v`` plus zeros, in some order, or zeros alone; IEEE addition gives
``v + 0`` for every such order (``-0 + +0 = +0`` either way, a NaN keeps its payload), and
``+0`` where no piece lands. So one array of zeros with each piece copied into its region,
then ``+ 0`` added once, has the bits of the sum: one item, ``pad_sum``, in place of the
tree of ``pad`` and ``add`` equations. The lowering table says which equations are such
additions (``sums_pieces``) and which are pieces, and where (``pad_piece``).
"""

from __future__ import annotations

import numpy as np

from ..core.ir import Eqn, Literal
from ..core.lowering import lowering
from .dots import Call


def pad_sums(items: list, keep) -> list:
    """``items`` (a program's plan) with each tree of float ``add`` equations (``sums_pieces``)
    whose leaves are two or more pieces (``pad`` equations with ``+0`` padding and no
    interior padding: a ``pad_piece``) of disjoint regions (every inner value read only by
    the tree, none in ``keep``) replaced by one ``pad_sum`` item computing the same bits.

    Example:
        >>> f = lambda a, b: (jnp.pad(a, ((0, 0), (0, 2))) + jnp.pad(b, ((0, 0), (2, 0))))
        >>> jaxpr = make_jaxpr(f)(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)).jaxpr
        >>> [str(item.primitive) for item in pad_sums(jaxpr.eqns, jaxpr.outvars)]
        ['pad_sum']
    """
    producer, uses = {}, {}
    for i, item in enumerate(items):
        for v in item.outvars:
            producer[id(v)] = i
        for v in item.invars:
            if not isinstance(v, Literal):
                uses[id(v)] = uses.get(id(v), 0) + 1
    for v in keep:
        uses[id(v)] = uses.get(id(v), 0) + 2
    out, gone = list(items), set()
    for j in range(len(items) - 1, -1, -1):
        root = items[j]
        if j in gone or not _sums(root) or root.outvars[0].aval.dtype.kind != "f":
            continue
        inner, leaves = [], []
        if not _leaves(root, items, producer, uses, inner, leaves) or len(leaves) < 2:
            continue
        regions = [lowering(items[i].primitive).pad_piece(items[i]) for i in leaves]
        if any(r is None for r in regions) or not _disjoint(regions):
            continue
        gone.update(inner)
        gone.update(leaves)
        aval = root.outvars[0].aval
        run = _pad_sum(tuple(aval.shape), np.dtype(aval.dtype), regions)
        out[j] = Eqn(Call("pad_sum", run), [items[i].invars[0] for i in leaves], root.outvars,
                     {})
    return [item for i, item in enumerate(out) if i not in gone]


def _sums(item) -> bool:
    return isinstance(item, Eqn) and lowering(item.primitive).sums_pieces


def _piece(item) -> bool:
    return isinstance(item, Eqn) and lowering(item.primitive).pad_piece is not None


def _leaves(add, items, producer, uses, inner, leaves) -> bool:
    """Collect the tree under ``add``: the indices of its inner adds and of its pad leaves
    (each read once); False if an operand is neither."""
    for v in add.invars:
        i = producer.get(id(v))
        if isinstance(v, Literal) or i is None or uses.get(id(v)) != 1:
            return False
        if _sums(items[i]):
            inner.append(i)
            if not _leaves(items[i], items, producer, uses, inner, leaves):
                return False
        elif _piece(items[i]):
            leaves.append(i)
        else:
            return False
    return True


def _disjoint(regions) -> bool:
    for a in range(len(regions)):
        for b in range(a):
            if all(p.start < q.stop and q.start < p.stop
                   for p, q in zip(regions[a], regions[b], strict=True)):
                return False
    return True


def _pad_sum(shape, dtype, regions):
    zero = dtype.type(0)

    def pad_sum(*pieces):
        out = np.zeros(shape, dtype)
        for piece, region in zip(pieces, regions, strict=True):
            out[region] = piece
        return np.add(out, zero, out=out)

    return pad_sum

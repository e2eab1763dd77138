"""Fusion groups with row values: the members that reduce rows in the middle of a group and
read the results back (``fusion.Group.kinds``), and the functions computing members on a
chunk's slices (the Python path, ``fusion._work_source``).

A *row value* of a group of shape ``S`` that reduces its axes from ``first`` on has shape
``S[:first]`` followed by unit axes: a reduction's result (``"reduce"``), an elementwise
function of row values (``"row"``), or a view of one (``"spread"``: a ``row_broadcast`` in
the lowering table, as a reshape adding a unit axis, or a broadcast back to ``S``, which
full members read). Softmax (a max, a difference, ``exp``, a sum, a quotient), layer norm
and their gradients form one such group. A chunk holds whole rows, so every row value of
the chunk's rows is computed from the chunk alone, by the impl eager evaluation calls, and
each row is reduced by the kernel eager calls: the same bits for any chunk and thread.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.ir import Literal
from ..core.lowering import lowering


def member(eqn, open_groups, owner, rows, min_size: int, chunk_bytes: int, new_group):
    """``(kind, group, first)`` if ``eqn`` joins an open group (a new one for a reduction of
    a large input, ``new_group(shape)``) as a member that reads or makes row values
    (``Group.kinds``), else None. ``open_groups``: shape -> open group; ``owner``: id(value)
    -> its group; ``rows``: id(row value) -> its group."""
    rule = lowering(eqn.primitive)
    if len(eqn.outvars) != 1:
        return None
    out = tuple(eqn.outvars[0].aval.shape)

    def row_group(v):  # the open group whose row value v is, or None
        group = rows.get(id(v))
        return group if group is not None and open_groups.get(group.shape) is group else None

    if rule.row_reduction and row_group(eqn.invars[0]) is None:  # of a full-size value?
        shape = eqn.invars[0].aval.shape
        group = owner.get(id(eqn.invars[0]))
        if group is None or open_groups.get(group.shape) is not group:
            group = open_groups.get(shape)  # (an input of the group)
            if group is None and len(shape) > 1 and math.prod(shape) >= max(min_size, 1):
                group = new_group(shape)  # opened here, kept if full members join it
            if group is None:
                return None
        axes, ndim = tuple(eqn.params["axes"]), len(group.shape)
        if (shape != group.shape or not axes or axes[0] == 0
                or axes != tuple(range(axes[0], ndim)) or group.first not in (None, axes[0])
                or not row_fits(group, axes[0], chunk_bytes)):
            return None
        return "reduce", group, axes[0]
    groups = {id(g): g for g in map(row_group, eqn.invars) if g is not None}
    if len(groups) != 1:
        return None
    (group,) = groups.values()
    first = group.first

    def row_shape(shape):
        return (len(shape) >= first and tuple(shape[:first]) == group.shape[:first]
                and all(d == 1 for d in shape[first:]))

    if rule.row_broadcast is not None and rule.row_broadcast(eqn, first):
        return ("spread", group, first) if row_shape(out) or out == group.shape else None
    if not row_shape(out) or not all(isinstance(v, Literal) or v.aval.shape == ()
                                     or row_shape(v.aval.shape) for v in eqn.invars):
        return None
    if rule.fusible:
        return "row", group, first
    axes, ndim = tuple(eqn.params.get("axes", ())), len(eqn.invars[0].aval.shape)
    if rule.row_reduction and axes and axes[0] >= first and axes == tuple(range(axes[0], ndim)):
        return "row", group, first  # (of trailing unit axes only: the row's one element)
    return None


def trim(group) -> list:
    """Trim ``group``'s row members that no other member reads: a ``"row"`` or ``"spread"``
    one leaves the group (returned, in program order, to run right after it: a small or a
    view), and a ``"reduce"`` one becomes one of the reductions that end the group
    (computed at the same point of a chunk: right after its operand)."""
    left, kept = [], []
    read = {}
    for m, args in enumerate(group.args):
        for a in args:
            read.setdefault(id(a), set()).add(m)
    for m in range(len(group.eqns) - 1, -1, -1):
        eqn, kind = group.eqns[m], group.kinds[m]
        if kind == "full" or read.get(id(eqn.outvars[0]), set()) & set(kept):
            kept.append(m)
        elif kind == "reduce":
            group.reductions.insert(0, eqn)
        else:
            left.insert(0, eqn)
    kept.reverse()
    for name in ("eqns", "args", "kinds"):
        setattr(group, name, [getattr(group, name)[m] for m in kept])
    if "reduce" not in group.kinds:
        group.first = None
    return left


def row_fits(group, first: int, chunk_bytes: int) -> bool:
    """Whether a row from axis ``first`` on fits in ``chunk_bytes`` in every full-size
    buffer the group may touch (its inputs, and a buffer per member: more than it uses)."""
    inputs = {id(a): a for a in group.external()
              if not isinstance(a, Literal) and a.aval.shape == group.shape}
    row_bytes = math.prod(group.shape[first:]) * sum(
        v.aval.dtype.itemsize for v in [*(e.outvars[0] for e in group.eqns), *inputs.values()])
    return row_bytes <= chunk_bytes


def function(eqn, kind: str, group):
    """The function computing a ``"reduce"``, ``"row"`` or ``"spread"`` member on the
    chunk's slices of its operands (each holding the chunk's rows: the group's shape from
    the chunk's axis on): the impl eager calls, or a view."""
    rule = lowering(eqn.primitive)
    if rule.row_reduction:
        return reducer(eqn, len(eqn.invars[0].aval.shape))
    if kind == "row":
        return bind_params(rule.kernel(eqn.invars[0].aval.dtype), eqn.params)
    # spread: a row value with unit axes after group.first, to the output's trailing axes
    unit = len(eqn.invars[0].aval.shape) - group.first
    tail = tuple(eqn.outvars[0].aval.shape[group.first:])
    ones = (1,) * len(tail)
    broadcast = any(d != 1 for d in tail)

    def spread(x):
        lead = x.shape[:x.ndim - unit]
        y = x.reshape(lead + ones)
        return np.broadcast_to(y, lead + tail) if broadcast else y

    return spread


def reducer(eqn, ndim: int):
    """``eqn``'s impl on a chunk, which holds the trailing ``ndim - k`` axes of the group's
    shape: the reduced axes are the chunk's last ones."""
    impl, params = lowering(eqn.primitive).impl, dict(eqn.params)
    count = ndim - eqn.params["axes"][0]  # (its axes run from there to the end)
    by_rank = {}

    def reduce(chunk):
        axes = by_rank.get(chunk.ndim)
        if axes is None:
            axes = by_rank[chunk.ndim] = tuple(range(chunk.ndim - count, chunk.ndim))
        return impl(chunk, **{**params, "axes": axes})

    return reduce


def bind_params(impl, params):
    """``impl`` with ``params`` bound (itself without)."""
    if not params:
        return impl

    def bound(*args):
        return impl(*args, **params)

    return bound

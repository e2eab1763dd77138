"""The JVPs of scatter-mul, scatter-min and scatter-max (the primitives are in ``gather.py``).

scatter-mul is linear in its operand only; its updates' tangents need, for each update,
the product of the other updates scattered to its slot, which sorts the updates by slot
(``sort``; here, so that ``sorting.py``, which gathers, and ``gather.py`` import no cycle).
scatter-min and scatter-max give each output the tangent of the value that won, ties
averaged (as JAX).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.array import ArrayImpl
from ..interpreters.ad import (
    UndefinedPrimal,
    Zero,
    instantiate,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    zeros_like_aval,
)
from . import elementwise as ew
from . import shape as sh
from .gather import (
    GatherScatterMode,
    _last_writers,
    _read_back,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)
from .sorting import sort_p


def _segmented_exclusive_product(x, segment):
    """``out[i]``: the product of the ``x[j]``, ``j < i``, of ``i``'s segment along axis 0
    (``segment`` labels contiguous runs), by log2(n) doubling steps (Hillis and Steele)."""
    n = x.shape[0]
    ones = sh.broadcast_in_dim(ArrayImpl(np.ones((), x.dtype)), x.shape, ())

    def shift(v, s, fill):  # v[i - s] along axis 0, ``fill`` for i < s
        s = min(s, n)
        head = sh.broadcast_in_dim(fill, (s, *v.shape[1:]), ())
        return sh.concatenate([head, sh.slice_in_dim(v, 0, n - s)], 0)

    def back(v, s):  # v[i - s] if it is in i's segment, else 1
        same = ew.eq(segment, shift(segment, s, ArrayImpl(np.asarray(-2, segment.dtype))))
        same = sh.broadcast_in_dim(same, x.shape, (0,))
        return ew.select(same, shift(v, s, ArrayImpl(np.ones((), x.dtype))), ones)

    out, s = back(x, 1), 1
    while s < n:
        out, s = ew.mul(out, back(out, s)), 2 * s
    return out


def _product_of_others(operand_shape, indices, updates, axes, mode):
    """For each update, the product of the other updates scattered to its slot: the updates
    sorted by slot, times segmented products of those before and after. No division, so
    it is exact where updates are 0, and so are its derivatives."""
    nbatch = indices.ndim - 1
    n = math.prod(indices.shape[:-1])
    rows = (n, *updates.shape[nbatch:])
    ids, last = (sh.reshape(a, (n,)) for a in _last_writers(operand_shape, indices, axes, mode))
    slot, order = sort_p.bind(last, ids, dimension=0, is_stable=True, num_keys=1)
    order = sh.reshape(order, (n, 1))
    clip = GatherScatterMode.CLIP
    x = gather_p.bind(sh.reshape(updates, rows), order, axes=(0,), mode=clip, fill_value=None)
    before = _segmented_exclusive_product(x, slot)
    after = _segmented_exclusive_product(sh.rev(x, (0,)), sh.rev(slot, (0,)))
    others = ew.mul(before, sh.rev(after, (0,)))
    unsorted = scatter_p.bind(zeros_like_aval(others.aval), order, others, axes=(0,), mode=clip)
    return sh.reshape(unsorted, updates.shape)


def _scatter_mul_jvp(primals, tangents, *, axes, mode):
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    params = {"axes": axes, "mode": mode}
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    terms = []
    if not isinstance(t_operand, Zero):
        terms.append(scatter_mul_p.bind(t_operand, indices, updates, **params))
    if not isinstance(t_updates, Zero):
        # d out / d update = operand * (the product of the other updates at its slot)
        others = _product_of_others(operand.shape, indices, updates, axes, mode)
        slots = zeros_like_aval(tangent_aval(operand.aval))
        summed = scatter_add_p.bind(slots, indices, ew.mul(t_updates, others), **params)
        terms.append(ew.mul(operand, summed))
    return out, terms[0] if len(terms) == 1 else ew.add(*terms)


def _scatter_mul_transpose(ct, operand, indices, updates, *, axes, mode):
    if isinstance(updates, UndefinedPrimal):
        raise ValueError("scatter-mul is linear in its operand only, not in its updates")
    if isinstance(ct, Zero):
        return [None, None, None]
    return [scatter_mul_p.bind(ct, indices, updates, axes=axes, mode=mode), None, None]


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _same(a, b):
    """``a == b``, NaN equal to NaN (so a NaN output has winners too)."""
    return ew.bitwise_or(ew.eq(a, b), ew.bitwise_and(ew.ne(a, a), ew.ne(b, b)))


def _defextremum_jvp(prim):
    """Register ``prim``'s JVP (scatter-min/max): each output's tangent is the mean tangent
    of the values equal to it, the operand's and the updates' scattered there (JAX's rule
    for ties)."""

    def rule(primals, tangents, *, axes, mode):
        operand, indices, updates = primals
        t_operand, t_updates = (instantiate(t) for t in tangents[::2])
        params = {"axes": axes, "mode": mode}
        out = prim.bind(operand, indices, updates, **params)
        operand_won = _same(operand, out)
        updates_won = _same(updates, _read_back(out, indices, axes, mode))
        dtype = t_operand.dtype
        count = scatter_add_p.bind(
            ew.convert_element_type(operand_won, dtype), indices,
            ew.convert_element_type(updates_won, dtype), **params,
        )
        summed = scatter_add_p.bind(
            ew.select(operand_won, t_operand, zeros_like_aval(t_operand.aval)), indices,
            ew.select(updates_won, t_updates, zeros_like_aval(t_updates.aval)), **params,
        )
        return out, ew.div(summed, count)

    jvp_rules[prim] = rule


_defextremum_jvp(scatter_min_p)
_defextremum_jvp(scatter_max_p)


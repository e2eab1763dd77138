"""Sharding propagation: where each output of an operation lives, from where its operands
live (JAX's sharding rules).

A spec here is a tuple with one entry per dimension: the mesh axes splitting it (``()``
if none). Each output dimension takes the sharding of the operand dimensions it comes
from: the one they agree on; a dimension split from a size-1 one, created, or reduced
away is not split. An element-wise result, a broadcast, ``reshape`` (a dimension kept,
or merged or split with only its major part sharded), ``transpose``, ``squeeze``, a
reduction and ``dot_general`` (batch dimensions, then the free dimensions of each
operand) follow that rule; an operation whose output has its first operand's rank
(slicing, padding, concatenation) keeps that operand's; anything else is replicated.

Where no rule applies (operands split differently along one dimension, a result naming a
mesh axis twice, a contracted dimension split in both operands, a reshape that moves a split
dimension's blocks) an ``Explicit`` mesh raises JAX's ``ShardingTypeError`` asking for
``out_sharding``, and an ``Auto`` one leaves that dimension unsplit. Values never depend
on any of this: it only says where the pieces of a result live.
"""

from __future__ import annotations

import math

from ..core import dtypes
from ..core.lowering import lowering
from ..ops.contractions import dot_general_p
from ..ops.shape import broadcast_in_dim_p, reshape_p, squeeze_p, transpose_p


class ShardingTypeError(TypeError):
    """An operation whose operands' shardings give its result no sharding (JAX's name):
    the fix is an ``out_sharding=`` argument or a ``reshard`` of an operand."""


def type_str(shape, spec, dtype) -> str:
    """``f32[8@X,4]``: a shape and dtype with the mesh axes splitting each dimension."""
    dims = []
    for n, axes in zip(shape, spec, strict=True):
        where = "" if not axes else f"@{axes[0]}" if len(axes) == 1 else f"@({','.join(axes)})"
        dims.append(f"{n}{where}")
    return f"{dtypes.short_name(dtype)}[{','.join(dims)}]"


class _Rules:
    """The output specs of one operation: ``strict`` (an ``Explicit`` mesh) raises where
    no rule applies, else that dimension is not split."""

    def __init__(self, primitive, avals, specs, out_avals, strict: bool, sizes: dict):
        self.primitive, self.avals, self.specs = primitive, avals, specs
        self.out_avals, self.strict, self.sizes = out_avals, strict, sizes

    def fail(self, message: str):
        if self.strict:
            raise ShardingTypeError(message)

    def inputs(self) -> str:
        return ", ".join(type_str(a.shape, s, a.dtype)
                         for a, s in zip(self.avals, self.specs, strict=True))

    def once(self, spec, out) -> tuple:
        """``spec`` with a mesh axis named twice unsplit there (an error if strict)."""
        used, result = set(), []
        for axes in spec:
            if used & set(axes):
                self.fail(f"{self.primitive} operation with inputs: {self.inputs()} produces "
                          f"an illegally sharded result: {type_str(out.shape, spec, out.dtype)}"
                          ". Pass out_sharding=P(...) or reshard an operand "
                          "(jax.sharding.reshard) so that each mesh axis splits one dimension")
                axes = ()
            used |= set(axes)
            result.append(axes)
        return tuple(result)

    def run(self, params: dict) -> list:
        prim, kind = self.primitive, lowering(self.primitive)
        if kind.fusible and not prim.multiple_results:
            return [self.elementwise()]
        rule = {broadcast_in_dim_p: self.broadcast, reshape_p: self.reshape,
                transpose_p: self.transpose, squeeze_p: self.squeeze,
                dot_general_p: self.contract}.get(prim)
        if rule is None and kind.row_reduction:
            rule = self.reduce
        if rule is not None:
            return [self.once(rule(**params), self.out_avals[0])]
        if (self.avals and len(self.out_avals) == 1
                and len(self.out_avals[0].shape) == len(self.avals[0].shape)):
            return [self.same_rank()]
        return [((),) * len(a.shape) for a in self.out_avals]

    def same_rank(self) -> tuple:
        """An output of its first operand's rank (slicing, padding, concatenating, a
        cumulative sum): each dimension split as the operand's, where it still divides."""
        out = self.out_avals[0].shape
        return tuple(axes if n % math.prod(self.sizes[a] for a in axes) == 0 else ()
                     for n, axes in zip(out, self.specs[0], strict=True))

    def elementwise(self) -> tuple:
        out = self.out_avals[0]
        result = []
        for d in range(len(out.shape)):
            seen = {s[d] for a, s in zip(self.avals, self.specs, strict=True)
                    if len(a.shape) == len(out.shape) and s[d]}
            if len(seen) > 1:
                self.fail(f"{self.primitive} operation with inputs: {self.inputs()}: its "
                          f"operands are split over different mesh axes {sorted(seen)} along "
                          f"dimension {d}. Reshard one (jax.sharding.reshard) to match")
                seen = set()
            result.append(seen.pop() if seen else ())
        return self.once(tuple(result), out)

    def broadcast(self, shape, broadcast_dimensions, **_) -> tuple:
        (aval,), (spec,) = self.avals, self.specs
        out = [()] * len(shape)
        for j, i in enumerate(broadcast_dimensions):
            if aval.shape[j] == shape[i]:
                out[i] = spec[j]
        return tuple(out)

    def transpose(self, permutation, **_) -> tuple:
        return tuple(self.specs[0][p] for p in permutation)

    def squeeze(self, dimensions, **_) -> tuple:
        return tuple(s for d, s in enumerate(self.specs[0]) if d not in dimensions)

    def reduce(self, axes, **_) -> tuple:
        return tuple(s for d, s in enumerate(self.specs[0]) if d not in axes)

    def reshape(self, **_) -> tuple:
        """A merge takes its dimensions' axes in order when the split ones lead; a split
        gives the axes to its dimensions in order, each taking what divides it and passing
        on only when full (JAX's rule); anything else is not split."""
        (aval,), (spec,), out = self.avals, self.specs, self.out_avals[0].shape
        result = [()] * len(out)
        for ins, outs in _groups(aval.shape, out):
            split = [spec[d] for d in ins]
            if not any(split):
                continue
            placed = None
            if len(outs) == 1 and [bool(a) for a in split] == sorted(map(bool, split),
                                                                      reverse=True):
                placed = {outs[0]: tuple(a for axes in split for a in axes)}
            elif len(ins) == 1:
                placed = self._split(list(split[0]), [out[d] for d in outs], outs)
            if placed is None:
                self.fail(f"reshape of {type_str(aval.shape, spec, aval.dtype)} to shape "
                          f"{tuple(out)} would move the blocks of a split dimension: pass "
                          "out_sharding=P(...) to reshape, or reshard the operand first")
                continue
            for d, axes in placed.items():
                result[d] = axes
        return tuple(result)

    def _split(self, axes: list, sizes: list, dims: list):
        """``{dim: axes}`` for a dimension split over ``axes`` reshaped to ``sizes``."""
        placed = {}
        for d, n in zip(dims, sizes, strict=True):
            taken = []
            while axes and n % (math.prod(self.sizes[a] for a in taken) * self.sizes[axes[0]]) == 0:
                taken.append(axes.pop(0))
            placed[d] = tuple(taken)
            if axes and math.prod(self.sizes[a] for a in taken) != n:
                return None  # (the next dimension may take an axis only after a full one)
        return None if axes else placed

    def contract(self, dimension_numbers, **_) -> tuple:
        (lc, rc), (lb, rb) = dimension_numbers
        (la, ra), (ls, rs) = self.avals, self.specs
        lcs, rcs = tuple(a for d in lc for a in ls[d]), tuple(a for d in rc for a in rs[d])
        if lcs and rcs and lcs != rcs:
            self.fail(f"dot_general requires contracting dimensions to have consistent "
                      f"sharding, got {lcs} and {rcs}. Reshard an operand so they agree")
        elif lcs and rcs:
            self.fail("Contracting dimensions are sharded and it is ambiguous how the output "
                      "should be sharded. Please specify the output sharding via the "
                      f"`out_sharding` parameter. Got lhs_contracting_spec={lcs} and "
                      f"rhs_contracting_spec={rcs}")
        batch = []
        for i, j in zip(lb, rb, strict=True):
            if ls[i] and rs[j] and ls[i] != rs[j]:
                self.fail(f"dot_general's batch dimensions {i} and {j} are split over "
                          f"different mesh axes, {ls[i]} and {rs[j]}. Reshard an operand")
                batch.append(())
            else:
                batch.append(ls[i] or rs[j])
        lfree = [ls[d] for d in range(len(la.shape)) if d not in lc and d not in lb]
        rfree = [rs[d] for d in range(len(ra.shape)) if d not in rc and d not in rb]
        return (*batch, *lfree, *rfree)


def _groups(old, new) -> list:
    """The dimensions of ``old`` and of ``new`` (a reshape) that hold the same elements:
    pairs ``(old dims, new dims)`` of equal size, size-1 dimensions left out."""
    i = j = 0
    out = []
    old_dims = [d for d, n in enumerate(old) if n != 1]
    new_dims = [d for d, n in enumerate(new) if n != 1]
    while i < len(old_dims) and j < len(new_dims):
        ins, outs = [old_dims[i]], [new_dims[j]]
        a, b = old[old_dims[i]], new[new_dims[j]]
        i, j = i + 1, j + 1
        while a != b:
            if a < b:
                ins.append(old_dims[i])
                a *= old[old_dims[i]]
                i += 1
            else:
                outs.append(new_dims[j])
                b *= new[new_dims[j]]
                j += 1
        out.append((ins, outs))
    return out


def output_specs(primitive, params, avals, specs, out_avals, strict: bool, sizes: dict):
    """The spec of each output of ``primitive`` bound with ``params`` on operands of
    ``avals`` split as ``specs`` (``sizes``: the mesh's axis sizes)."""
    return _Rules(primitive, avals, specs, out_avals, strict, sizes).run(params)

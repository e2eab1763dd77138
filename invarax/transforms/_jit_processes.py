"""``jit`` with shardings across processes: a data-parallel program runs on each process's rows.

When an argument of a sharded ``jit`` is split across processes (``P("batch")`` over a
mesh of every device, say), each process runs the program on its own rows of it (the
``P``-th part of the axis, in process order), keeping every bit of the unsharded program:

- element-wise operations, broadcasts, reductions over other axes and contractions whose
  split axis is a free axis compute each output element from the same inputs as the
  unsharded program, so they run on the local rows;
- a contraction over the split axis, when each process's rows are whole blocks of 256 (the
  canonical contraction's blocks, docs/numerics.md), computes the sum of each of its
  blocks (one batched ``dot_general``, each block an FMA chain from zero, as the canonical
  kernel does), gathers every process's block sums (one ``Iallgather``) and adds them in
  block order: ``C = s_0 + s_1 + ...``, the canonical combination;
- any other operation on a split value gathers it (one ``Iallgather``) and runs on the
  whole array, as every process.

Outputs still split at the end are gathered, so each process holds every output's global
value, as with the other sharded programs. The program is the optimised jaxpr of the call
(``make_jaxpr(optimize=True)``, bitwise the traced program), cached per signature and run
operation by operation.
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl, to_array
from ..core.ir import Literal
from ..core.lowering import lowering
from ..core.pytree import tree_flatten, tree_unflatten
from ..distributed import _transport, across
from ..distributed import devices as _devices
from ..distributed.shardings import NamedSharding
from ..ops.contractions import dot_general_p
from ..ops.shape import broadcast_in_dim_p
from ._make_jaxpr import make_jaxpr

KB = 256  # the canonical contraction's block of terms
def split_axis(sharding, shape) -> int | None:
    """The axis of an argument placed with ``sharding`` that this program splits across
    processes: the first one its spec splits over a mesh that spans processes, if the
    process count divides it."""
    if not isinstance(sharding, NamedSharding) or not across.spans_processes(sharding):
        return None
    count = _devices.process_count()
    for d, axes in enumerate(sharding.spec._axes(len(shape))):
        if axes and shape[d] % count == 0 and shape[d] >= count:
            return d
    return None


class SplitProgram:
    """The jaxprs of ``fun`` per signature, run with some arguments split by process."""

    def __init__(self, fun):
        self.fun = fun
        self._cache = {}

    def __call__(self, args: tuple, axes: list):
        leaves, in_tree = tree_flatten(args)
        leaves = [to_array(x, "a jit argument") for x in leaves]
        key = (in_tree, tuple((x.shape, x.dtype, x.weak_type) for x in leaves))
        entry = self._cache.get(key)
        if entry is None:
            out_tree = []

            def flat(*xs):
                out, tree = tree_flatten(self.fun(*tree_unflatten(in_tree, xs)))
                out_tree.append(tree)
                return out

            closed = make_jaxpr(flat, optimize=True)(*leaves)
            entry = self._cache[key] = (closed, out_tree[0])
        closed, out_tree = entry
        return tree_unflatten(out_tree, _Run(closed).run(leaves, axes))


class _Run:
    """One run: values are ``(array, axis)``, ``axis`` None for a whole (global) value,
    else the axis of which this process holds its rows."""

    def __init__(self, closed):
        self.closed = closed
        self.count = _devices.process_count()
        self.index = _devices.process_index()
        self.transport = _transport.current()

    def run(self, leaves, axes) -> list:
        jaxpr, env = self.closed.jaxpr, {}
        for var, value in zip(jaxpr.constvars, self.closed.consts, strict=True):
            env[id(var)] = (value, None)
        for var, x, axis in zip(jaxpr.invars, leaves, axes, strict=True):
            env[id(var)] = (x, None) if axis is None else (self.local(x, axis), axis)

        def read(v):
            return (v.val, None) if isinstance(v, Literal) else env[id(v)]

        for eqn in jaxpr.eqns:
            values = [read(v) for v in eqn.invars]
            if all(a is None for _, a in values):
                outs = self.bind(eqn, [x for x, _ in values]), None
            else:
                outs = self.split(eqn, values)
            results, axis = outs
            if not eqn.primitive.multiple_results:
                results = (results,)
            for var, value in zip(eqn.outvars, results, strict=True):
                env[id(var)] = (value, axis)
        return [self.whole(*read(v)) for v in jaxpr.outvars]

    # -- moving rows ------------------------------------------------------------------------

    def local(self, x, axis: int):
        """This process's rows of the whole value ``x`` along ``axis``."""
        width = x.shape[axis] // self.count
        index = (slice(None),) * axis + (slice(self.index * width, (self.index + 1) * width),)
        value = x._value if isinstance(x, ArrayImpl) else np.asarray(x)
        return ArrayImpl(value[index], getattr(x, "weak_type", False))

    def whole(self, x, axis):
        """The whole value of ``x`` (this process's rows along ``axis``): gathered."""
        if axis is None:
            return x
        rows = np.ascontiguousarray(np.moveaxis(np.asarray(x), axis, 0))
        stacked = np.moveaxis(self.transport.allgather(rows), 0, axis).copy()
        return ArrayImpl(stacked, x.weak_type)

    @staticmethod
    def bind(eqn, args):
        return eqn.primitive.bind(*args, **eqn.params)

    # -- the rules ----------------------------------------------------------------------------

    def split(self, eqn, values):
        # What an equation is comes from the lowering table (elementwise: ``fusible``; a
        # reduction of its ``axes``, each row on its own: ``row_reduction``).
        prim, rule = eqn.primitive, None
        kind = lowering(prim)
        if kind.fusible and not prim.multiple_results:
            rule = self._elementwise(eqn, values, eqn.outvars[0].aval.shape)
        elif prim is broadcast_in_dim_p:
            rule = self._broadcast(eqn, values)
        elif kind.row_reduction:
            rule = self._reduce(eqn, values)
        elif prim is dot_general_p:
            rule = self._contract(eqn, values)
        if rule is not None:
            return rule
        return self.bind(eqn, [self.whole(x, a) for x, a in values]), None

    def _elementwise(self, eqn, values, out):
        axes = {a for _, a in values if a is not None}
        if len(axes) != 1:
            return None
        (axis,) = axes
        args = []
        for (x, a), var in zip(values, eqn.invars, strict=True):
            shape = var.aval.shape
            if a is None and shape == out:
                x = self.local(x, axis)
            elif (a is None and shape != ()) or (a is not None and shape != out):
                return None
            args.append(x)
        return self.bind(eqn, args), axis

    def _broadcast(self, eqn, values):
        ((x, a),) = values
        target = eqn.params["broadcast_dimensions"][a]
        shape = list(eqn.params["shape"])
        if eqn.invars[0].aval.shape[a] != shape[target]:
            return None  # the split axis is broadcast from size 1
        shape[target] = x.shape[a]
        params = {**eqn.params, "shape": tuple(shape)}
        return eqn.primitive.bind(x, **params), target

    def _reduce(self, eqn, values):
        ((x, a),) = values
        reduced = eqn.params["axes"]
        if a in reduced:
            return None
        return self.bind(eqn, [x]), a - sum(1 for r in reduced if r < a)

    def _contract(self, eqn, values):
        (lhs, la), (rhs, ra) = values
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lfree = [d for d in range(len(eqn.invars[0].aval.shape)) if d not in lc and d not in lb]
        rfree = [d for d in range(len(eqn.invars[1].aval.shape)) if d not in rc and d not in rb]
        if la is not None and ra is None and la in lfree:
            return self.bind(eqn, [lhs, rhs]), len(lb) + lfree.index(la)
        if ra is not None and la is None and ra in rfree:
            return self.bind(eqn, [lhs, rhs]), len(lb) + len(lfree) + rfree.index(ra)
        if len(lc) != 1 or lb:
            return None
        # The split axis contracted: the other operand's paired axis is cut alike.
        if la is None and ra == rc[0]:
            lhs, la = self.local(lhs, lc[0]), lc[0]
        elif ra is None and la == lc[0]:
            rhs, ra = self.local(rhs, rc[0]), rc[0]
        if (la, ra) != (lc[0], rc[0]) or lhs.shape[la] % KB:
            return None
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            return None
        return self._block_sums(eqn, lhs, la, rhs, ra), None

    def _block_sums(self, eqn, lhs, la, rhs, ra):
        """The canonical contraction over the split axis: every block's sum, in block order."""
        blocks = lhs.shape[la] // KB

        def by_block(x, axis):
            moved = np.moveaxis(np.asarray(x), axis, 0)
            return ArrayImpl(np.ascontiguousarray(moved).reshape(blocks, KB, *moved.shape[1:]),
                             x.weak_type)

        sums = dot_general_p.bind(
            by_block(lhs, la), by_block(rhs, ra), dimension_numbers=(((1,), (1,)), ((0,), (0,))),
            precision=eqn.params.get("precision"),
            preferred_element_type=eqn.params.get("preferred_element_type"))
        every = self.transport.allgather(np.asarray(sums))
        total = every[0].copy()
        for block in every[1:]:
            total += block
        return ArrayImpl(total, sums.weak_type)

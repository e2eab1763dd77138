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
- a sum over the split axis (leading the summed axes), when each process's rows are a node
  of the pairwise summation's tree, sums the local rows, gathers the sums and adds them as
  the tree's upper nodes do;
- any other operation on a split value gathers it (one ``Iallgather``) and runs on the
  whole array, as every process.

Outputs still split at the end are gathered, so each process holds every output's global
value, as with the other sharded programs. The program is the optimised jaxpr of the call
(``make_jaxpr(optimize=True)``, bitwise the traced program), cached per signature. Its plan
(per split of the arguments) puts each equation in a stage: the gathering operations of
stage ``k`` read only values of stages ``<= k``, and the local operations of stage ``k`` only
values made before the gathers of stage ``k - 1`` finished. Each stage's local operations run
as one compiled program (``jit``: fused, bitwise the operations one by one), then its
gathering operations, so a data-parallel train step is two compiled programs around the
gradients' sums.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..compiler.jit import Jitted
from ..core.array import ArrayImpl, to_array
from ..core.ir import Literal
from ..core.lowering import lowering
from ..core.pytree import tree_flatten, tree_unflatten
from ..distributed import _transport, across
from ..distributed import devices as _devices
from ..distributed.shardings import NamedSharding
from ..ops.contractions import dot_general_p
from ..ops.reductions import reduce_sum_p
from ..ops.shape import broadcast_in_dim_p, slice_in_dim
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


def pairwise_tree(length: int, count: int):
    """The pairwise summation's tree over ``length`` terms cut into ``count`` equal runs, as
    nested pairs of run indices (docs/numerics.md, "Reductions": a run of more than 128
    terms splits after ``length // 2`` rounded down to a multiple of 8), or None where a run
    is not one of its nodes.

    >>> pairwise_tree(1024, 4), pairwise_tree(1024, 3), pairwise_tree(64, 2)
    (((0, 1), (2, 3)), None, None)
    """
    if length % count:
        return None
    width = length // count

    def node(start, stop):
        if stop - start == width and start % width == 0:
            return start // width
        n = stop - start
        half = n // 2 - n // 2 % 8
        if n <= 128 or start // width == (stop - 1) // width:
            return None
        left, right = node(start, start + half), node(start + half, stop)
        return None if left is None or right is None else (left, right)

    return node(0, length) if count > 1 else None


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
            entry = self._cache[key] = (closed, out_tree[0], {})
        closed, out_tree, plans = entry
        plan = plans.get(tuple(axes))
        if plan is None:
            plan = plans[tuple(axes)] = _Plan(closed, axes)
        return tree_unflatten(out_tree, plan.run(leaves))


class _Step:
    """How one equation runs: ``kind`` "local" (on this process's values, after cutting the
    whole operands ``cut``, with ``params``) or, gathering, "blocks", "sum" or "gather"."""

    def __init__(self, eqn, kind, axis=None, cut=(), params=None, tree=None):
        self.eqn, self.kind, self.axis, self.cut, self.tree = eqn, kind, axis, cut, tree
        self.params = eqn.params if params is None else params


class _Plan:
    """The stages of one program for one split of its arguments (see the module's doc)."""

    def __init__(self, closed, axes):
        self.closed, self.axes = closed, list(axes)
        self.count, self.index = _devices.process_count(), _devices.process_index()
        jaxpr = closed.jaxpr
        self.axis, stage = {}, {}
        for var, axis in zip(jaxpr.invars, axes, strict=True):
            self.axis[id(var)], stage[id(var)] = axis, 0
        stages = []  # per stage: (local steps, gathering steps)
        for eqn in jaxpr.eqns:
            ins = [v for v in eqn.invars if not isinstance(v, Literal)]
            k = max((stage.get(id(v), 0) for v in ins), default=0)
            step = self._step(eqn, [self.axis_of(v) for v in eqn.invars])
            while len(stages) <= k:
                stages.append(([], []))
            stages[k][step.kind != "local"].append(step)
            for var in eqn.outvars:
                self.axis[id(var)] = step.axis
                stage[id(var)] = k + (step.kind != "local")
        read_later = self._reads_after(stages, jaxpr.outvars)
        self.stages = [(_Segment(self, local, read_later[k]) if local else None, comms)
                       for k, (local, comms) in enumerate(stages)]

    def axis_of(self, v):
        return None if isinstance(v, Literal) else self.axis.get(id(v))

    @staticmethod
    def _reads_after(stages, outvars) -> list:
        """Per stage: the ids of the variables read outside its local steps (by the outputs,
        any gathering step, or another stage's local steps)."""
        def read(steps):
            return {id(v) for s in steps for v in s.eqn.invars if not isinstance(v, Literal)}

        local = [read(steps) for steps, _ in stages]
        outside = {id(v) for v in outvars if not isinstance(v, Literal)}
        outside |= read(step for _, comms in stages for step in comms)
        return [outside.union(*(r for j, r in enumerate(local) if j != k))
                for k in range(len(stages))]

    # -- running --------------------------------------------------------------------------

    def run(self, leaves) -> list:
        jaxpr, env = self.closed.jaxpr, {}
        transport = _transport.current()
        for var, value in zip(jaxpr.constvars, self.closed.consts, strict=True):
            env[id(var)] = value
        for var, x, axis in zip(jaxpr.invars, leaves, self.axes, strict=True):
            env[id(var)] = self.local(x, axis) if axis is not None else _plain(x)

        def read(v):
            return v.val if isinstance(v, Literal) else env[id(v)]

        for segment, comms in self.stages:
            if segment is not None:
                outs = segment(*[env[i] for i in segment.inputs])
                env.update(zip(segment.outputs, outs, strict=True))
            if not comms:
                continue
            args = [[read(v) for v in step.eqn.invars] for step in comms]
            parts = [self._parts(step, a) for step, a in zip(comms, args, strict=True)]
            every = iter(_exchange([x for ps in parts for x in ps], transport))
            for step, a, ps in zip(comms, args, parts, strict=True):
                results = self._finish(step, a, [next(every) for _ in ps])
                if not step.eqn.primitive.multiple_results:
                    results = (results,)
                for var, value in zip(step.eqn.outvars, results, strict=True):
                    env[id(var)] = value
        outs = [read(v) for v in jaxpr.outvars]
        split = [(i, x, self.axis_of(v))
                 for i, (x, v) in enumerate(zip(outs, jaxpr.outvars, strict=True))
                 if self.axis_of(v) is not None]
        every = _exchange([_rows(x, axis) for _, x, axis in split], transport)
        for (i, x, axis), stacked in zip(split, every, strict=True):
            outs[i] = _unrows(stacked, axis, x.weak_type)
        return outs

    def rows(self, length: int) -> tuple:
        """This process's rows ``(start, stop)`` of an axis of the whole ``length``."""
        width = length // self.count
        return self.index * width, (self.index + 1) * width

    def local(self, x, axis: int):
        """This process's rows of the whole value ``x`` along ``axis``."""
        start, stop = self.rows(x.shape[axis])
        index = (slice(None),) * axis + (slice(start, stop),)
        value = x._value if isinstance(x, ArrayImpl) else np.asarray(x)
        return ArrayImpl(value[index], getattr(x, "weak_type", False))

    # -- the gathering steps: what each process sends, and what it makes of everyone's --

    def _parts(self, step, args) -> list:
        """What this process contributes to ``step`` (NumPy arrays, the same shapes in every
        process)."""
        eqn = step.eqn
        if step.kind == "gather":
            return [_rows(x, a) for x, v in zip(args, eqn.invars, strict=True)
                    if (a := self.axis_of(v)) is not None]
        for i, axis in step.cut:
            args[i] = self.local(args[i], axis)
        if step.kind == "sum":
            return [np.asarray(eqn.primitive.bind(args[0], **eqn.params))]
        # "blocks": the sum of each block of the canonical contraction over the split axis.
        (lc, rc), _ = eqn.params["dimension_numbers"]
        blocks = args[0].shape[lc[0]] // KB

        def by_block(x, axis):
            moved = np.moveaxis(np.asarray(x), axis, 0)
            return ArrayImpl(np.ascontiguousarray(moved).reshape(blocks, KB, *moved.shape[1:]),
                             x.weak_type)

        return [np.asarray(dot_general_p.bind(
            by_block(args[0], lc[0]), by_block(args[1], rc[0]),
            dimension_numbers=(((1,), (1,)), ((0,), (0,))),
            precision=eqn.params.get("precision"),
            preferred_element_type=eqn.params.get("preferred_element_type")))]

    def _finish(self, step, args, every):
        """``step``'s results from every process's parts (``every``: per part, the list of
        every process's, in process order)."""
        eqn = step.eqn
        weak = eqn.outvars[0].aval.weak_type
        if step.kind == "gather":
            stacked = iter(every)
            args = [x if (a := self.axis_of(v)) is None else _unrows(next(stacked), a,
                                                                      x.weak_type)
                    for x, v in zip(args, eqn.invars, strict=True)]
            return eqn.primitive.bind(*args, **eqn.params)
        (sums,) = every
        if step.kind == "sum":  # the pairwise tree's upper nodes
            def add(node):
                return sums[node] if isinstance(node, int) else add(node[0]) + add(node[1])

            return ArrayImpl(np.asarray(add(step.tree), sums[0].dtype), weak)
        blocks = [block for theirs in sums for block in theirs]  # in block order
        total = blocks[0].copy()
        for block in blocks[1:]:
            total += block
        return ArrayImpl(total, weak)

    # -- the rules ------------------------------------------------------------------------

    def _step(self, eqn, axes) -> _Step:
        """How ``eqn`` runs, given the split axis (or None) of each operand. What an equation
        is comes from the lowering table (elementwise: ``fusible``; a reduction of its
        ``axes``, each row on its own: ``row_reduction``)."""
        if all(a is None for a in axes):
            return _Step(eqn, "local")
        prim, step = eqn.primitive, None
        kind = lowering(prim)
        if kind.fusible and not prim.multiple_results:
            step = self._elementwise(eqn, axes)
        elif prim is broadcast_in_dim_p:
            step = self._broadcast(eqn, axes)
        elif kind.row_reduction:
            step = self._reduce(eqn, axes)
        elif prim is dot_general_p:
            step = self._contract(eqn, axes)
        return step if step is not None else _Step(eqn, "gather")

    def _elementwise(self, eqn, axes):
        split = {a for a in axes if a is not None}
        if len(split) != 1:
            return None
        (axis,) = split
        out, cut = eqn.outvars[0].aval.shape, []
        for i, (var, a) in enumerate(zip(eqn.invars, axes, strict=True)):
            shape = var.aval.shape
            if a is None and shape == out:
                cut.append((i, axis))
            elif (a is None and shape != ()) or (a is not None and shape != out):
                return None
        return _Step(eqn, "local", axis, tuple(cut))

    def _broadcast(self, eqn, axes):
        (a,) = axes
        target = eqn.params["broadcast_dimensions"][a]
        shape = list(eqn.params["shape"])
        if eqn.invars[0].aval.shape[a] != shape[target]:
            return None  # the split axis is broadcast from size 1
        shape[target] //= self.count
        return _Step(eqn, "local", target, params={**eqn.params, "shape": tuple(shape)})

    def _reduce(self, eqn, axes):
        (a,) = axes
        reduced = tuple(eqn.params["axes"])
        if a not in reduced:
            return _Step(eqn, "local", a - sum(1 for r in reduced if r < a))
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        if eqn.primitive is not reduce_sum_p or reduced != tuple(sorted(reduced)) \
                or a != reduced[0] or dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            return None
        # The split axis leads the summed ones, so each process's rows are a contiguous run
        # of every output's terms: where the runs are nodes of the pairwise tree, the nodes
        # above add the gathered sums of the runs as the tree does.
        length = math.prod(eqn.invars[0].aval.shape[r] for r in reduced)
        tree = pairwise_tree(length, self.count)
        return None if tree is None else _Step(eqn, "sum", tree=tree)

    def _contract(self, eqn, axes):
        la, ra = axes
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lfree = [d for d in range(len(eqn.invars[0].aval.shape)) if d not in lc and d not in lb]
        rfree = [d for d in range(len(eqn.invars[1].aval.shape)) if d not in rc and d not in rb]
        if la is not None and ra is None and la in lfree:
            return _Step(eqn, "local", len(lb) + lfree.index(la))
        if ra is not None and la is None and ra in rfree:
            return _Step(eqn, "local", len(lb) + len(lfree) + rfree.index(ra))
        if len(lc) != 1 or lb:
            return None
        # The split axis contracted: the other operand's paired axis is cut alike.
        cut = ()
        if la is None and ra == rc[0]:
            cut, la = ((0, lc[0]),), lc[0]
        elif ra is None and la == lc[0]:
            cut, ra = ((1, rc[0]),), rc[0]
        length = eqn.invars[0].aval.shape[lc[0]]
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        if (la, ra) != (lc[0], rc[0]) or (length // self.count) % KB \
                or dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            return None
        return _Step(eqn, "blocks", cut=cut)


class _Segment:
    """A stage's local steps as one compiled program: ``inputs`` and ``outputs`` are the ids
    of the variables it reads from before and leaves for after it."""

    def __init__(self, plan, steps, read_later):
        made, inputs = set(), []
        for step in steps:
            for v in step.eqn.invars:
                if not isinstance(v, Literal) and id(v) not in made and id(v) not in inputs:
                    inputs.append(id(v))
            made |= {id(v) for v in step.eqn.outvars}
        self.inputs = inputs
        self.outputs = [id(v) for s in steps for v in s.eqn.outvars if id(v) in read_later]

        def program(*xs):
            env = dict(zip(inputs, xs, strict=True))
            for step in steps:
                args = [v.val if isinstance(v, Literal) else env[id(v)] for v in step.eqn.invars]
                for i, axis in step.cut:
                    args[i] = slice_in_dim(args[i], *plan.rows(args[i].shape[axis]), axis=axis)
                outs = step.eqn.primitive.bind(*args, **step.params)
                if not step.eqn.primitive.multiple_results:
                    outs = (outs,)
                env.update(zip((id(v) for v in step.eqn.outvars), outs, strict=True))
            return [env[i] for i in self.outputs]

        self._compiled = Jitted(program)

    def __call__(self, *xs):
        return self._compiled(*xs)


def _rows(x, axis):
    """The rows of ``x`` along ``axis``, as a NumPy array with that axis first."""
    return np.moveaxis(np.asarray(x), axis, 0)


def _unrows(every, axis, weak_type):
    """The whole value (a new array) from every process's ``_rows``."""
    merged = np.concatenate(every)
    return ArrayImpl(np.ascontiguousarray(np.moveaxis(merged, 0, axis)), weak_type)


def _exchange(parts: list, transport) -> list:
    """Every process's ``parts`` (the same shapes and dtypes in each), in one gather: per
    part, the list of every process's, in process order (views of the transport's buffer:
    read them before the next gather)."""
    if not parts:
        return []
    # One buffer of bytes, each part starting on a 64-byte boundary.
    sizes = [p.nbytes for p in parts]
    starts = [0, *itertools.accumulate(-(-n // 64) * 64 for n in sizes)]

    def write(mine):
        for p, start, n in zip(parts, starts, sizes, strict=False):
            mine[start:start + n].view(p.dtype).reshape(p.shape)[...] = p

    every = transport.allgather_views(starts[-1], write)
    return [[theirs[start:start + n].view(p.dtype).reshape(p.shape) for theirs in every]
            for p, start, n in zip(parts, starts, sizes, strict=False)]


def _plain(x):
    """``x`` as an array placed nowhere (the compiled stages run on this process alone)."""
    return ArrayImpl(x._value, x.weak_type) if isinstance(x, ArrayImpl) else x

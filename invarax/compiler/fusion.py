"""Elementwise fusion: groups of elementwise equations evaluated chunk by chunk, on threads.

A *fusion group* is a set of elementwise equations (``fusible`` in the lowering table,
``invarax/core/lowering.py``) with one output shape, large enough to pay for
chunking (``min_size`` elements, ``min_work`` elements times members). Its inputs
are arrays of that shape and 0-d scalars: a ``scalar_broadcast`` (``broadcast_in_dim``)
of a 0-d operand to the group's shape is read as that scalar. ``plan`` groups a jaxpr's equations
greedily, in program order: an elementwise equation joins the open group of its
shape, and a group is emitted (closed) just before the first other equation that
reads one of its values, so every group runs after all its inputs exist and
before all its readers.

A group runs chunk by chunk over its elements: a chunk is a range of positions
along one axis, with all the elements after it (the first axis whose trailing
block fits), sized so that the chunk's slices of every buffer it touches fit in
a core's L2 cache (``chunk_bytes``). For each chunk every member equation
runs on the chunk's slices, in program order, its result written into a small
scratch buffer that is reused from chunk to chunk (so the intermediates stay in
the cache), or straight into the full output array for a value that the rest of
the program reads. Each member is computed by its own impl, the one eager
evaluation calls (its rule's ``kernel(dtype)``): a ufunc impl writes into the buffer
(``ufunc(*slices, out=buffer)``: the same loop and dtypes), any other impl runs on the
slices and the chunk is copied in. An elementwise impl gives an element the same bits
whatever the length, offset or stride of the array around it, so neither the
chunk size nor the scalar standing for a broadcast changes a bit (N3), and
tests check it for every primitive.

Chunks are independent, so they run on threads when the group is large (NumPy's
ufuncs release the GIL): the threads take runs of consecutive chunks from one
queue, ``$INVARAX_NUM_THREADS`` threads at most (the kernels' rule), each with at least
``min_per_thread`` element-operations (elements times members). A chunk's bits do
not depend on the thread that computes it, so the thread count never changes a
result (N5).

An output may be written into the buffer of an input that the program no longer
needs (``reusable``): the lowering decides which, and the group only guarantees
that the input's chunk is read before the output's chunk is written over it.

A group may end in row reductions (``row_reduction`` in the lowering table: sum, product,
max, min, and, or, argmax, argmin): a member's value whose only reader is a reduction over
trailing axes (all the axes from some axis ``p >= 1`` on) is never materialised. The group
is then chunked along the kept axes in whole rows (a chunk holds at least one row of
``prod(shape[p:])`` elements), and right after the member computes a chunk, the
reduction's impl (the one eager calls) reduces that chunk's rows into the chunk's slice of
the reduced output. The kernels reduce each row on its own, in an order fixed by the row
length (docs/numerics.md), so a row gives the same bits whether it is reduced with the
whole array or with its chunk, on any thread (N3, N5). A row whose chunk would not fit in
``chunk_bytes`` leaves the reduction out of the group, which then materialises its value
as before. Such a group's chunks hold at least ``min_reduce_chunk`` elements, since each
reduction call has a fixed cost.

The scratch buffers of a run are views of one 64-byte aligned block, taken from the
buffer pool (``core/buffers.py``) and given back after the run: a large fresh block would
have its pages faulted in at every call, which cost a reducing group with large chunks up
to twice its time.

A group may also reduce rows in the middle and read the results back, broadcast along the
rows (softmax, layer norm and their gradients: ``Group.kinds``, ``fusion_rows.py``): its
chunks hold whole rows, its row values are computed chunk by chunk from the chunk's rows
alone, with eager's impls, and such a group is formed from ``min_row_size`` elements.

A group whose members all have a native form runs instead as one generated C function
(``fusion_native.py``) once it is compiled (in the background): the same chunks, taken by
the threads in the same way, and the same bits; the flag ``invarax_native_fusion`` turns
that off, and a missing compiler leaves every group on the path above.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from ..core import buffers
from ..core.ir import Jaxpr, Literal
from ..core.lowering import lowering
from ..kernels._support import in_parallel, num_threads
from . import fusion_native, fusion_rows

# Measured on a 2-core AMD EPYC (1 MiB L2 per core, 32 MiB L3), float32:
# chunk_bytes: a chunk's bytes in all the buffers it touches (inputs, scratch, outputs);
#   384 KiB to 1.5 MiB are within 3% of each other, 256 KiB is 10% slower (the calls per
#   chunk cost about 1 us each). chunk: elements per chunk instead (tests); None: auto.
# min_size, min_work: the smallest group, in elements and in element-operations
#   (elements x members). Equation by equation, ufunc results already go into dead
#   buffers (lower.py), so chunking pays where intermediates would leave the caches and
#   where threads help: the expression (7 members) on one thread is as fast
#   chunked at 2**20 elements and 1.1-1.8x faster from 2**21 on; cheap groups (a * 2 + b,
#   max(a - b, 0), exp alone) gain little or lose up to 20% on one thread, and gain
#   from threads only when the other cores are idle; at 10**6 elements they lose 15-50%
#   chunked, which min_work keeps out. min_size 2**19 lets in jacfwd's 1000 x 1000
#   tangent groups (5 members): 1.3-1.5 ms fused against 4.8-6.2 ms equation by
#   equation, where each fresh 4 MB intermediate costs its page faults.
# min_per_thread: the fewest element-operations worth a thread (a thread's start and
#   wait cost tens of microseconds). threads: None reads the kernels' rule
#   ($INVARAX_NUM_THREADS, else the usable CPUs).
# min_reduce_chunk: the fewest elements of a chunk of a group that ends in reductions
#   (whole rows still). A reduction's call costs about 5 us on top of its kernel, 32
#   calls for 32 rows of 1000 each made jacfwd's group (1000 x 1000) slower than
#   materialising it: 1.12 against 1.10 ms on one thread; with 2**18 (4 chunks) it takes
#   1.00 ms, and 0.74 against 1.04 ms on two threads (scratch blocks pooled).
# min_row_size: the smallest group that reduces rows and reads them back (row groups).
#   One thread, CPU time (2-core Zen 4, loaded): layer norm's gradient, (8, 128, 256)
#   float32: 0.59 ms native, 1.07 by the Python path, 1.04 unfused; at (8, 128, 64)
#   0.37, 0.38 and 0.43 ms; softmax (8, 4, 128, 128): 0.80, 0.82 and 0.85 ms. Natively
#   the group also runs on threads, where the unfused ufuncs run on one.
# min_native_size, min_native_work, min_native_per_thread: the same for a group of two or
#   more elementwise members that all have a native form (fusion_native.capable): one C
#   pass, its threads (the kernels' pool) joining in microseconds. Jitted, float32, two
#   threads, 2-core Zen 4, fused against equation by equation: W - 0.01 g 14.8 against
#   11.7 us at 2**15 elements, 18.5/19.2 at 2**16, 25.5/34.0 at 2**17, 38/53 at 2**18;
#   tanh(x) with 1 - y*y 30/33 us at 2**15, 47/53 at 2**16, 73/91 at 2**17; with a thread
#   per 2**15 element-operations (2**16: tanh's chain at 2**15 40 us, one thread). Until
#   its native code is loaded such a group runs its Python path (chunked ufuncs).
_SETTINGS = {"chunk_bytes": 768 * 1024, "chunk": None, "min_size": 2**19,
             "min_work": 2**22, "min_per_thread": 2**19, "threads": None,
             "min_reduce_chunk": 2**18, "min_row_size": 2**16,
             "min_native_size": 2**15, "min_native_work": 2**17,
             "min_native_per_thread": 2**15}


@contextlib.contextmanager
def _settings(**changes):
    """Temporarily change ``_SETTINGS`` (tests): ``chunk`` and ``threads`` apply at each
    call, ``min_size`` when a program is compiled."""
    unknown = set(changes) - set(_SETTINGS)
    if unknown:
        raise KeyError(f"unknown fusion settings {sorted(unknown)}")
    saved = dict(_SETTINGS)
    _SETTINGS.update(changes)
    try:
        yield
    finally:
        _SETTINGS.clear()
        _SETTINGS.update(saved)


class Group:
    """A fusion group: its member equations, inputs and materialised outputs.

    Attributes:
        shape: the shape of every member's output.
        eqns: the members, in program order.
        args: for each member, its input atoms (a broadcast scalar replaced by its operand).
        invars: the external inputs (Vars of ``shape`` or 0-d, and Literals), in first-use order.
        outvars: the members' outputs that the rest of the program reads, then the
            outputs of ``reductions``.
        reusable: for each output, the full-size inputs whose buffer it may be written into.
        reductions: the row reductions that end the group: equations whose operand is a
            member's value that no member reads (their outputs are the last outvars).
        kinds: for each member, ``"full"`` (an elementwise equation of ``shape``),
            ``"reduce"`` (a row reduction of a full member's value whose result later
            members read), ``"row"`` (an elementwise equation, or a reduction of unit axes,
            of row values: ``shape[:first]`` with unit axes after) or ``"spread"`` (a
            ``row_broadcast`` of a row value, to a row shape or to ``shape``).
        first: the first axis that the ``"reduce"`` members reduce (None without them).
    """

    def __init__(self, shape):
        self.shape = shape
        self.eqns, self.args, self.kinds = [], [], []
        self.invars, self.outvars, self.reusable = [], [], []
        self.reductions = []
        self.first = None  # the first reduced axis of its "reduce" members
        self._runner = None

    def __repr__(self):
        names = " ".join(e.primitive.name for e in [*self.eqns, *self.reductions])
        return f"Group({self.shape}: {names})"

    def row_length(self) -> int:
        """The elements of a row that every chunk keeps whole (1 without reductions)."""
        first = min((_first_reduced(r) for r in self.reductions), default=len(self.shape))
        return math.prod(self.shape[min(first, self.first or first):])

    def _reads(self) -> list:
        """Each member's input atoms, then each reduction's operand."""
        return [*self.args, *([r.invars[0]] for r in self.reductions)]

    def external(self) -> list:
        """The atoms that the members and reductions read from outside the group."""
        inside = {id(v) for e in self.eqns for v in e.outvars}
        return [a for args in self._reads() for a in args if id(a) not in inside]

    def finish(self, needed) -> None:
        """Set ``invars``, ``outvars`` and ``reusable``; ``needed(v)``: read outside."""
        inside = {id(v) for e in self.eqns for v in e.outvars}
        seen = set()
        last_read = {}
        for m, args in enumerate(self._reads()):  # (a reduced input is never reused)
            for a in args:
                if id(a) not in inside:
                    if id(a) not in seen:
                        seen.add(id(a))
                        self.invars.append(a)
                    last_read[id(a)] = m
        for m, eqn in enumerate(self.eqns):
            out = eqn.outvars[0]
            if needed(out):
                self.outvars.append(out)
                self.reusable.append([
                    v for v in self.invars
                    if not isinstance(v, Literal) and v.aval.shape == self.shape
                    and out.aval.shape == self.shape
                    and v.aval.dtype == out.aval.dtype and last_read[id(v)] <= m
                ])
        for r in self.reductions:
            self.outvars.append(r.outvars[0])
            self.reusable.append([])

    def runner(self):
        """The compiled group: ``run(*invars, *out_buffers) -> outputs`` (a buffer may be None)."""
        if self._runner is None:
            self._runner = _Runner(self)
        return self._runner


def ufunc_of(eqn):
    """The NumPy ufunc (or kernel taking ``out=``, as invarax's elementary functions) that
    computes ``eqn`` and can write into a buffer, or None."""
    rule = lowering(eqn.primitive)
    if not rule.fusible or eqn.params or len(eqn.outvars) != 1:
        return None
    kernel = rule.kernel(eqn.invars[0].aval.dtype)
    writes = isinstance(kernel, np.ufunc) or getattr(kernel, "writes_out", False)
    return kernel if writes else None


def fusable(eqn, min_size: int) -> bool:
    """Whether ``eqn`` may join a fusion group."""
    if not lowering(eqn.primitive).fusible or len(eqn.outvars) != 1:
        return False
    shape = eqn.outvars[0].aval.shape
    return len(shape) > 0 and math.prod(shape) >= max(min_size, 1)


def _scalar_broadcast(eqn, min_size: int) -> bool:
    return (lowering(eqn.primitive).scalar_broadcast and eqn.invars[0].aval.shape == ()
            and len(eqn.outvars[0].aval.shape) > 0
            and math.prod(eqn.outvars[0].aval.shape) >= max(min_size, 1))


def plan(jaxpr: Jaxpr, sizes=None) -> list:
    """The program as a list of items to run in order: equations and fusion ``Group``s.

    A group with less work than ``min_work`` element-operations is dissolved: its
    equations run one by one, and the program is grouped again without them. ``sizes``
    may replace the settings ``min_size``, ``min_work`` and ``min_row_size`` (a backend
    whose groups pay at any size: the GPU's).

    Example:
        >>> plan(make_jaxpr(lambda x: jnp.sin(x) * 2.0)(np.ones(2**21)).jaxpr)
        [Group((2097152,): sin mul)]
    """
    settings = {**_SETTINGS, **(sizes or {})}
    banned = set()
    while True:
        items, bcasts = _group(jaxpr, banned, settings)
        small = [g for g in items if isinstance(g, Group) and _too_small(g, settings)]
        if not small:
            break
        banned.update(id(e) for g in small for e in g.eqns)
    items = [x for item in _absorb_reductions(items, jaxpr.outvars) for x in (
        [item, *fusion_rows.trim(item)] if isinstance(item, Group) else [item])]
    # A value read outside the group that computes it is materialised.
    outside = {id(v) for v in jaxpr.outvars}
    for item in items:
        outside.update(id(v) for v in (item.external() if isinstance(item, Group)
                                        else item.invars))
    # A broadcast that only groups read (as its scalar) is not computed at all.
    unread = {id(e) for e in bcasts if id(e.outvars[0]) not in outside}
    items = [item for item in items if id(item) not in unread]
    for item in items:
        if isinstance(item, Group):
            item.finish(lambda v: id(v) in outside)
    return items


def _too_small(group: Group, settings) -> bool:
    """Whether ``group`` has too little work to run as a group (``_SETTINGS``)."""
    if "full" not in group.kinds:
        return True
    size = math.prod(group.shape)
    if size >= settings["min_size"] and size * len(group.eqns) >= settings["min_work"]:
        return False
    return not (size >= settings["min_native_size"] and len(group.eqns) > 1
                and size * len(group.eqns) >= settings["min_native_work"]
                and all(kind == "full" for kind in group.kinds)
                and all(map(fusion_native.capable, group.eqns)))


def _first_reduced(eqn) -> int:
    """The first reduced axis of a row reduction (its axes run from there to the end)."""
    return eqn.params["axes"][0]


def _absorb_reductions(items, outvars) -> list:
    """Move into its group each row reduction of a member's value that nothing else reads.

    The reduction must keep an axis and reduce the trailing ones, and one row must fit in
    ``chunk_bytes`` in every full-size buffer the group may touch (its inputs, and a
    buffer per member: more than the scratch buffers it uses).
    Moving the reduction up to its group is safe: its only operand exists there.
    """
    reads = {}
    for v in outvars:
        reads[id(v)] = reads.get(id(v), 0) + 1
    member_of = {}
    for item in items:
        atoms = item.external() if isinstance(item, Group) else item.invars
        for v in atoms:
            reads[id(v)] = reads.get(id(v), 0) + 1
        if isinstance(item, Group):
            member_of.update((id(e.outvars[0]), item) for e in item.eqns)
    absorbed = set()
    for item in items:
        if isinstance(item, Group) or not lowering(item.primitive).row_reduction:
            continue
        (v,) = item.invars
        group = member_of.get(id(v))
        if group is None or reads.get(id(v)) != 1 or v.aval.shape != group.shape:
            continue
        axes, ndim = tuple(item.params["axes"]), len(group.shape)
        if not axes or axes != tuple(range(axes[0], ndim)) or axes[0] == 0:
            continue
        if not fusion_rows.row_fits(group, axes[0], _SETTINGS["chunk_bytes"]):
            continue
        group.reductions.append(item)
        absorbed.add(id(item))
    return [item for item in items if id(item) not in absorbed]


def _group(jaxpr: Jaxpr, banned, settings):
    """Group the equations (but those in ``banned``) greedily; return the items and the
    broadcasts of scalars that groups read as their operand."""
    min_size = min(settings["min_size"], settings["min_native_size"])  # (see _too_small)
    min_row = min(settings["min_size"], settings["min_row_size"])
    items, open_groups, owner, scalar_of, bcasts = [], {}, {}, {}, []
    rows = {}  # id(row value) -> its group

    def close(group):
        items.append(group)
        del open_groups[group.shape]

    def close_readers(eqn, keep=None):
        for v in eqn.invars:
            group = owner.get(id(v))
            if group is not None and group is not keep and open_groups.get(
                    group.shape) is group:
                close(group)

    for eqn in jaxpr.eqns:
        joined = (None if id(eqn) in banned else
                  fusion_rows.member(eqn, open_groups, owner, rows, min_row,
                                     _SETTINGS["chunk_bytes"], Group))
        if joined is not None:
            kind, group, group.first = joined
            open_groups[group.shape] = group
            close_readers(eqn, keep=group)
            group.eqns.append(eqn)
            group.kinds.append(kind)
            group.args.append([scalar_of.get(id(v), v) for v in eqn.invars])
            out = eqn.outvars[0]
            owner[id(out)] = group
            if out.aval.shape != group.shape:
                rows[id(out)] = group
            continue
        shape = eqn.outvars[0].aval.shape if eqn.outvars else None
        group = open_groups.get(shape)
        if id(eqn) not in banned and (fusable(eqn, min_size) or fusable(eqn, min_row) and (
                group is not None and group.first is not None)):  # (a smaller row group)
            if group is None:
                group = open_groups[shape] = Group(shape)
            close_readers(eqn, keep=group)  # (another group's row values)
            group.eqns.append(eqn)
            group.kinds.append("full")
            group.args.append([scalar_of.get(id(v), v) for v in eqn.invars])
            owner[id(eqn.outvars[0])] = group
            continue
        close_readers(eqn)
        if _scalar_broadcast(eqn, min(min_row, min_size)):
            scalar_of[id(eqn.outvars[0])] = eqn.invars[0]
            bcasts.append(eqn)
        items.append(eqn)
    for group in list(open_groups.values()):
        close(group)
    return items, bcasts


class _Runner:
    """Runs a group: allocates its outputs and computes them chunk by chunk, on threads."""

    def __init__(self, group: Group):
        self.shape = group.shape
        self.size = math.prod(group.shape)
        self.work_per_element = len(group.eqns)
        self.out_avals = [(v.aval.shape, v.aval.dtype) for v in group.outvars]
        self.n_in = len(group.invars)
        self.row = group.row_length()
        self.reduces = bool(group.reductions) or group.first is not None
        self._group, self._python = group, None
        self._chunks = {}
        self.native = fusion_native.prepare(group)  # None: the Python path only

    def python(self):
        """``(work, scratch_dtypes, element_bytes)`` of the Python path, generated at its
        first use (a group whose native code this process has already loaded never needs
        it); ``element_bytes``: one element's bytes in every full-size buffer a chunk
        touches."""
        if self._python is None:
            group = self._group
            work, scratch_dtypes, _ = _work_source(group)
            self._python = work, scratch_dtypes, sum(d.itemsize for d in (
                *scratch_dtypes,
                *(v.aval.dtype for v in group.outvars if v.aval.shape == group.shape),
                *(v.aval.dtype for v in group.invars if v.aval.shape == group.shape)))
        return self._python

    def _chunk_elements(self) -> int:
        """Elements of a chunk: ``chunk``, else as many as fit in ``chunk_bytes``."""
        return _SETTINGS["chunk"] or max(256, _SETTINGS["chunk_bytes"] // self.python()[2])

    def chunks(self):
        """``(scratch_shape, [(index, rows), ...])`` for the current chunk size."""
        chunk = self._chunk_elements()
        if self.reduces:  # whole rows, and enough of them to pay for a reduction's call
            chunk = max(chunk, self.row, _SETTINGS["min_reduce_chunk"])
        plan = self._chunks.get(chunk)
        if plan is None:
            plan = self._chunks[chunk] = _chunks(self.shape, chunk)
        return plan

    def __call__(self, *args):
        # Called inside the program's np.errstate(all="ignore"); pool threads set their own.
        ins, bufs = args[: self.n_in], args[self.n_in:]
        outs = [np.empty(shape, dt) if b is None else b
                for b, (shape, dt) in zip(bufs, self.out_avals, strict=True)]
        native = self.native is not None and self.native.ready() and \
            self.native.pointers(ins, outs)
        if native:
            self._run_native(*native)
            return outs
        scratch_shape, chunks = self.chunks()
        threads = self._threads(len(chunks))
        arrays = (*ins, *outs)
        if threads <= 1:
            self._run(iter([chunks]), scratch_shape, arrays)
            return outs
        # The threads take runs of chunks from one queue, so a thread slowed by another
        # process takes fewer; which thread computes a chunk never changes its bits.
        size = max(1, len(chunks) // (8 * threads))
        queue = iter([chunks[i:i + size] for i in range(0, len(chunks), size)])
        in_parallel([functools.partial(self._run, queue, scratch_shape, arrays),
                     *[functools.partial(self._run_in_thread, queue, scratch_shape, arrays)
                       for _ in range(threads - 1)]])
        return outs

    def _threads(self, pieces: int, native: bool = False) -> int:
        """Threads for ``pieces`` chunks (or native blocks): one per ``min_per_thread``
        element-operations (``min_native_per_thread`` natively, if fewer)."""
        least = _SETTINGS["min_per_thread"]
        if native:
            least = min(least, _SETTINGS["min_native_per_thread"])
        threads = self.size * self.work_per_element // least
        if threads > 1:
            threads = min(_SETTINGS["threads"] or num_threads(), pieces, threads)
        return threads

    def _run_native(self, items, repeat):
        """The compiled group on runs of whole blocks (about eight a thread), taken by the
        threads of the kernels' pool."""
        block = self.native.block(repeat, _SETTINGS["chunk"] or fusion_native.BLOCK)
        blocks = -(-self.size // block)
        threads = self._threads(blocks, native=True)
        run = block * -(-blocks // (8 * threads)) if threads > 1 else self.size
        self.native(items, self.size, run, block, threads)

    def _run(self, queue, scratch_shape, arrays):
        work, scratch_dtypes, _ = self.python()
        count = math.prod(scratch_shape)
        align = buffers.ALIGN
        sizes = [-(-count * dt.itemsize // align) * align for dt in scratch_dtypes]
        block = buffers.take_block(sum(sizes)) if sizes else None
        try:
            scratch, offset = [], 0
            for dt, size in zip(scratch_dtypes, sizes, strict=True):
                scratch.append(block[offset:offset + count * dt.itemsize].view(dt).reshape(
                    scratch_shape))
                offset += size
            rows = scratch_shape[0]
            for chunks in queue:  # a list iterator: next() is atomic under the GIL
                work(chunks, rows, *scratch, *arrays)
        finally:
            if block is not None:
                buffers.give(block.base)  # free again once this run's views are gone

    def _run_in_thread(self, queue, scratch_shape, arrays):
        with np.errstate(all="ignore"):  # a thread starts with NumPy's default error state
            self._run(queue, scratch_shape, arrays)


def _chunks(shape, chunk: int):
    """Split ``shape`` into chunks: a range of one axis, with every element after it.

    The split axis is the first whose trailing block fits in ``chunk`` elements; each
    chunk takes ``k`` consecutive positions of it (``k * block <= chunk``, at least one).
    """
    axis = next(a for a in range(len(shape)) if math.prod(shape[a + 1:]) <= chunk)
    block = math.prod(shape[axis + 1:])
    k = max(1, min(chunk // max(block, 1), shape[axis]))
    out = []
    for prefix in np.ndindex(*shape[:axis]):
        for lo in range(0, shape[axis], k):
            hi = min(lo + k, shape[axis])
            out.append(((*prefix, slice(lo, hi)), hi - lo))
    return (k, *shape[axis + 1:]), out


def _work_source(group: Group):
    """Generate ``work(chunks, rows, *scratch, *invars, *outputs)``: the group's chunk loop.

    ``chunks`` holds ``(index, n)`` pairs: the chunk is ``array[index]`` for every full-size
    array, and ``n`` its length along the split axis (``rows`` for a whole chunk, which
    the scratch buffers hold).

    Returns:
        ``(work, scratch_dtypes, source)``.
    """
    namespace = {}
    loc = {}  # id(atom) -> its name in the loop
    params_in, lines = [], []
    for j, v in enumerate(group.invars):
        if isinstance(v, Literal):
            namespace[f"k{j}"] = v.val._value
            loc[id(v)] = f"k{j}"
            params_in.append(f"_k{j}")  # passed, but the constant is used
        elif v.aval.shape == ():
            params_in.append(f"s{j}")
            loc[id(v)] = f"s{j}"
        else:
            params_in.append(f"i{j}")
            lines.append(f"a{j} = i{j}[index]")
            loc[id(v)] = f"a{j}"
    materialised = {id(v): k for k, v in enumerate(group.outvars)}
    lines += [f"c{k} = o{k}[index]" for k in range(len(group.outvars))]
    reduced = {}  # id(member or input value) -> [(output name, reduction)]
    for r in group.reductions:
        reduced.setdefault(id(r.invars[0]), []).append((f"c{materialised[id(r.outvars[0])]}", r))
    for j, v in enumerate(group.invars):  # a reduction of an input: first
        for i, (dst_r, r) in enumerate(reduced.get(id(v), ())):
            namespace[f"ri{j}_{i}"] = fusion_rows.reducer(r, len(group.shape))
            lines.append(f"{dst_r}[...] = ri{j}_{i}({loc[id(v)]})")

    last = {}
    for m, args in enumerate(group.args):
        for a in args:
            last[id(a)] = m
    scratch_dtypes, free = [], {}  # free: dtype -> names of unused scratch buffers
    for m, (eqn, args, kind) in enumerate(zip(group.eqns, group.args, group.kinds,
                                               strict=True)):
        ins = ", ".join(loc[id(a)] for a in args)
        out, fn = eqn.outvars[0], f"f{m}"
        if kind != "full":  # a small value of the chunk's rows, or a broadcast view
            namespace[fn] = fusion_rows.function(eqn, kind, group)
            loc[id(out)] = f"w{m}"
            lines.append(f"w{m} = {fn}({ins})")
            if id(out) in materialised:
                lines.append(f"c{materialised[id(out)]}[...] = w{m}")
            for j, (dst_r, r) in enumerate(reduced.get(id(out), ())):
                namespace[f"r{m}_{j}"] = fusion_rows.reducer(r, len(group.shape))
                lines.append(f"{dst_r}[...] = r{m}_{j}(w{m})")
            continue
        for a in args:  # a value dead after this member lends its buffer to the result
            name = loc[id(a)]
            if last[id(a)] == m and name.startswith("t") and name not in free.get(
                    a.aval.dtype, ()):
                free.setdefault(a.aval.dtype, []).append(name)
        if id(out) in materialised:
            dst = f"c{materialised[id(out)]}"
        else:
            pool = free.setdefault(out.aval.dtype, [])
            if pool:
                dst = pool.pop()
            else:
                dst = f"t{len(scratch_dtypes)}"
                scratch_dtypes.append(out.aval.dtype)
            if id(out) not in last:  # never read: its buffer is free again at once
                pool.append(dst)
        loc[id(out)] = dst
        ufunc = ufunc_of(eqn)
        if ufunc is not None:
            namespace[fn] = ufunc
            lines.append(f"{fn}({ins}, out={dst})")
        else:
            kernel = lowering(eqn.primitive).kernel(eqn.invars[0].aval.dtype)
            namespace[fn] = fusion_rows.bind_params(kernel, eqn.params)
            lines.append(f"{dst}[...] = {fn}({ins})")
        # Reduce the chunk's rows now, before a later member reuses the buffer.
        for j, (dst_r, r) in enumerate(reduced.get(id(out), ())):
            namespace[f"r{m}_{j}"] = fusion_rows.reducer(r, len(group.shape))
            lines.append(f"{dst_r}[...] = r{m}_{j}({dst})")
    scratch = [f"t{r}" for r in range(len(scratch_dtypes))]
    whole = [f"T{r}" for r in range(len(scratch_dtypes))]
    outs = [f"o{k}" for k in range(len(group.outvars))]
    head = [f"def work(chunks, rows, {', '.join([*whole, *params_in, *outs])}):",
            "    for index, n in chunks:"]
    if scratch:  # a shorter last chunk uses the first n rows of each scratch buffer
        head += [f"        {', '.join(scratch)}, = {', '.join(whole)},",
                 "        if n != rows:",
                 f"            {', '.join(scratch)}, = {', '.join(w + '[:n]' for w in whole)},"]
    source = "\n".join([*head, *(f"        {line}" for line in lines)])
    exec(compile(source, "<invarax.fusion>", "exec"), namespace)
    return namespace["work"], scratch_dtypes, source

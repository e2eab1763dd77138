"""Fusion groups as native code: a group's whole chain of members in one C function.

A fusion group (``fusion.py``) whose every member has a per-element C form (``c`` in the
lowering table, ``c_forms.py``) or is one of invarax's elementary functions (``exp``,
``sin``, ``tanh``, ``atan2``, ... of float32 or float64 arrays), and whose row reductions,
if any, are float32 or float64 sums, products, maxima or minima, is written as one C
function ``int work(void **p, int64_t start, int64_t stop)`` computing the group's flat
elements ``[start, stop)`` (whole rows), in blocks of about ``BLOCK`` elements (whole rows)
that stay in the L1/L2 cache. In each block the members run in program order: consecutive
C forms in one loop over the block's elements (the compiler vectorizes it; values live in
registers), an elementary function by a call of the compiled kernel's own C loop, and a
reduction of a member's value by a call of the reduction kernel's C loop on the block's
rows (``kernels._support.c_entry``: the code eager evaluation runs, at the same dispatch
level). A value is stored only where another loop or call reads it (a block buffer) or the
program does (its output array). Each element, and each row, gets exactly the operations
of the Python path, so the same bits whatever the block, chunk or thread (N3, N5).

The source does not depend on the values of literals (they are passed, like 0-d inputs,
by pointer), so the compiled object (``native_build``: cached on disk, keyed by source,
compiler, flags and CPU) serves every group of the same structure. From the group's
first call with the flag ``invarax_native_fusion`` on, it is taken at once if this process
has loaded it already, else compiled (or read from the cache) by one background thread:
the group runs its Python path until the object is loaded, and keeps it if no compiler
runs or the compilation fails (the same bits).
"""

from __future__ import annotations

import ctypes
import math
import os
import queue
import threading

import numpy as np

from ..core.config import config
from ..core.ir import Literal
from ..core.lowering import lowering
from ..kernels import _native
from ..kernels._support import c_entry
from ..kernels.reductions import ONE_TERM_ADDS_ZERO
from . import c_forms
from .native_build import load, loaded

#: Elements of a block: the block buffers of a group (at most 8 bytes an element each) and
#: the block's slices of its arrays stay in a core's L1/L2 cache.
BLOCK = 1024

#: The shortest block worth the native path (a broadcast operand whose period has no
#: longer divisor leaves the group on its Python path).
MIN_BLOCK = 128

# The groups waiting for their compilation, taken one by one by one background thread (a
# thread per group would cost each first call its starts, and the GIL at once).
_LOADS = {"queue": queue.Queue(), "thread": None, "lock": threading.Lock()}


def _loader() -> None:
    jobs = _LOADS["queue"]
    while True:
        native = jobs.get()
        try:
            native._load()
        finally:
            jobs.task_done()


def _submit(native) -> None:
    """Queue ``native``'s compilation; start the loader thread if none runs."""
    with _LOADS["lock"]:
        _LOADS["queue"].put(native)
        thread = _LOADS["thread"]
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=_loader, daemon=True, name="invarax-fusion-cc")
            _LOADS["thread"] = thread
            thread.start()


def _after_fork() -> None:
    """In a forked child: no loader thread, and a fresh queue and lock (a parent's thread
    may have held them); the child's groups queue their compilations again."""
    _LOADS.update(queue=queue.Queue(), thread=None, lock=threading.Lock())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def wait() -> None:
    """Wait for the compilations under way (tests; a program never needs to)."""
    _LOADS["queue"].join()


def _entry(eqn):
    """``("elementary" | "elementary2", code)`` if ``eqn`` runs an elementary kernel's C loop
    on float32 or float64 arrays, else None."""
    rule = lowering(eqn.primitive)
    if not rule.fusible or len(eqn.outvars) != 1:
        return None
    dtype = np.dtype(eqn.invars[0].aval.dtype)
    if dtype not in (np.float32, np.float64):
        return None
    return getattr(rule.kernel(dtype), "entry", None)


_ENTRIES = ("elementary", "elementary2", "reduce")


def capable(eqn) -> bool:
    """Whether the elementwise equation ``eqn`` has a native form: an elementary kernel's C
    loop or a per-element C form (the test ``group_source`` applies to a full member)."""
    if _entry(eqn) is not None:
        return True
    try:
        c_forms.expr(eqn, [f"a{j}" for j in range(len(eqn.invars))], vector=True)
    except c_forms.Unsupported:
        return False
    return True


def _reductions(group) -> dict:
    """``id(member value) -> [(output index, op code)]`` of the group's row reductions:
    float32 or float64 ones whose impl runs the kernels' ``reduce`` (its ``entry``)."""
    first = len(group.outvars) - len(group.reductions)
    reduced = {}
    for k, r in enumerate(group.reductions, first):
        entry = getattr(lowering(r.primitive).impl, "entry", None)
        if entry is None or np.dtype(r.invars[0].aval.dtype) not in (np.float32, np.float64):
            raise c_forms.Unsupported(f"{r.primitive.name} of {r.invars[0].aval.str_short()}")
        reduced.setdefault(id(r.invars[0]), []).append((k, entry[1]))
    return reduced


def group_source(group):
    """``(source, uses_elementary)``: the C source of ``work`` for ``group``; ``p`` points
    at the group's invars (arrays: their elements; 0-d values and literals: the value),
    its outputs and the ``_ENTRIES``' addresses. ``start`` and ``stop`` are whole rows of
    ``group.row_length()`` elements. Raises ``c_forms.Unsupported``.

    In a group with row values (``Group.kinds``), a row value lives in a buffer of one
    element per row of the block (or in its output array, or its input's); a loop of full
    members then runs row by row (``r``), reading the spread row values once per row, and
    a loop of row members runs over the block's rows."""
    row = group.row_length()
    if group.reductions and row < 2:  # (the impl adds 0 or copies: not the C loop)
        raise c_forms.Unsupported("rows of one element")
    rowwise = group.first is not None
    R = math.prod(group.shape[group.first:]) if rowwise else row  # noqa: N806
    reduced, pending, body_first = _reductions(group), [], []
    home = {}  # id(atom) -> ("s", C name) | ("p", full pointer) | ("r", row pointer)
    head, k = [], 0
    for j, v in enumerate(group.invars):
        t = c_forms.ctype(v.aval)
        if isinstance(v, Literal) or v.aval.shape == ():
            if isinstance(v, Literal) and np.dtype(v.aval.dtype) == np.bool_:
                home[id(v)] = ("s", c_forms.literal(v))
            else:
                head.append(f"const {t} s{j} = *(const {t} *)p[{j}];")
                home[id(v)] = ("s", f"s{j}")
        elif v.aval.shape != group.shape:  # a row-shaped input, repeating every P rows
            head += [f"const {t} *i{j} = (const {t} *)p[{j}];",
                     f"const int64_t P{j} = (int64_t)(intptr_t)p[{len(group.invars)}"
                     f" + {len(group.outvars)} + {len(_ENTRIES)} + {j}];"]
            home[id(v)] = ("q", f"i{j}[(b0 / {R} + r) % P{j}]")
        else:  # (a broadcast operand repeats every P elements: P divides the block)
            head += [f"const {t} *i{j} = (const {t} *)p[{j}];",
                     f"const int64_t P{j} = (int64_t)(intptr_t)p[{len(group.invars)}"
                     f" + {len(group.outvars)} + {len(_ENTRIES)} + {j}];"]
            home[id(v)] = ("p", f"(i{j} + b0 % P{j})")
    n_in = len(group.invars)
    outputs = {id(v): k for k, v in enumerate(group.outvars)}
    for k, v in enumerate(group.outvars):
        head.append(f"{c_forms.ctype(v.aval)} *o{k} = ({c_forms.ctype(v.aval)} *)p[{n_in + k}];")
    k = n_in + len(group.outvars)
    head += [f"void (*const elem)(int, int, const void *, void *, ptrdiff_t) = p[{k}];",
             f"void (*const elem2)(int, int, const void *, const void *, void *, ptrdiff_t)"
             f" = p[{k + 1}];",
             f"int (*const red)(int, int, const void *, ptrdiff_t, ptrdiff_t, ptrdiff_t, "
             f"ptrdiff_t, void *) = p[{k + 2}];", "int status = 0;"]
    entries = [_entry(e) for e in group.eqns]
    # the segment of each member: a run of full C forms, or one call or row member
    alone = [e is not None or kind != "full" for e, kind in zip(entries, group.kinds,
                                                                strict=True)]
    segment, seg = [], 0
    for m in range(len(group.eqns)):
        if alone[m] or (m and alone[m - 1]):
            seg += m > 0
        segment.append(seg)
    for v in group.invars:  # the reductions of inputs come first
        for k, op in reduced.get(id(v), ()):
            if home[id(v)][0] != "p":
                raise c_forms.Unsupported("a reduction of a broadcast input")
            dbl = int(c_forms.ctype(v.aval) == "double")
            body_first.append(f"status |= red({dbl}, {op}, {home[id(v)][1]}, n / {row}, "
                              f"{row}, {row}, 1, (o{k} + b0 / {row}));")
    read_in = {}  # id(value) -> the segments reading it
    for m, args in enumerate(group.args):
        for a in args:
            read_in.setdefault(id(a), set()).add(segment[m])
    blocks, rows_buf, body = [], [], body_first
    loop, loads, reads, outer = [], {}, [], []  # a loop's statements; its loads come first

    def flush():
        if loop:
            inner = [*(f"    {x}" for x in (*reads, *loop))]
            if rowwise:
                body.extend([f"for (int64_t r = 0; r < n / {R}; r++) {{",
                             *(f"    {x}" for x in outer),
                             f"    for (int64_t j = r * {R}; j < (r + 1) * {R}; j++) {{",
                             *(f"    {x}" for x in inner), "    }", "}"])
            else:
                body.extend(["for (int64_t j = 0; j < n; j++) {", *inner, "}"])
        body.extend(pending)
        pending.clear()
        loop.clear()
        loads.clear()
        reads.clear()
        outer.clear()

    def elem_of(a):  # element j of atom a inside a loop (a row value's: row r's)
        kind, name = home[id(a)]
        if kind == "s" or kind == "l":
            return name
        if name not in loads:
            loads[name] = f"e{len(loads)}"
            load = f"const {c_forms.ctype(a.aval)} {loads[name]} = {_element(kind, name)};"
            (reads if kind == "p" else outer).append(load)
        return loads[name]

    def row_dest(out):  # where a row value goes: its output array, or a row buffer
        if id(out) in outputs:
            return f"(o{outputs[id(out)]} + b0 / {R})"
        rows_buf.append(c_forms.ctype(out.aval))
        return f"u{len(rows_buf) - 1}"

    for m, (eqn, args, entry, kind) in enumerate(zip(group.eqns, group.args, entries,
                                                     group.kinds, strict=True)):
        out = eqn.outvars[0]
        t = c_forms.ctype(out.aval)
        dbl = int(t == "double")
        if kind != "full":
            flush()
            if id(out) in reduced:
                raise c_forms.Unsupported("a reduction of a row value")
            body.extend(_row_member(eqn, kind, args, entry, home, row_dest, R, dbl))
            if kind == "spread" and id(out) in outputs:  # written out: a loop of its own
                if out.aval.shape != group.shape:
                    raise c_forms.Unsupported("a row value's view read outside the group")
                loop.append(f"(o{outputs[id(out)]} + b0)[j] = {elem_of(out)};")
                flush()
            continue
        later = read_in.get(id(out), set()) - {segment[m]}
        if id(out) in outputs:
            dest = f"(o{outputs[id(out)]} + b0)"
        elif later or entry is not None or id(out) in reduced:
            dest = f"t{len(blocks)}"
            blocks.append(t)
        else:
            dest = None
        reduce_calls = [f"status |= red({dbl}, {op}, {dest}, n / {row}, {row}, "
                       f"{row}, 1, (o{k} + b0 / {row}));" for k, op in reduced.get(id(out), ())]
        if entry is not None:
            flush()
            if any(home[id(a)][0] != "p" for a in args):
                raise c_forms.Unsupported(f"{eqn.primitive.name} of a 0-d or row operand")
            fn, code = entry
            call = "elem" if fn == "elementary" else "elem2"
            body.append(f"{call}({code}, {dbl}, "
                        f"{', '.join(home[id(a)][1] for a in args)}, {dest}, n);")
            body.extend(reduce_calls)  # (the reduced value is this call's output)
            home[id(out)] = ("p", dest)
            continue
        if segment[m] != (segment[m - 1] if m else 0) or (m and entries[m - 1] is not None):
            flush()
        value = c_forms.expr(eqn, [elem_of(a) for a in args], vector=True)
        loop.append(f"const {t} v{m} = {value};")
        pending.extend(reduce_calls)  # after the loop
        if dest is not None:
            loop.append(f"{dest}[j] = v{m};")
        home[id(out)] = ("l", f"v{m}")
        if later:
            home[id(out)] = ("p", dest)  # (this loop reads v{m}: its name is in loads)
            loads[dest] = f"v{m}"
    flush()
    allocs = [*(("t", i, t, "blk") for i, t in enumerate(blocks)),
              *(("u", i, t, f"(blk / {R} + 1)") for i, t in enumerate(rows_buf))]
    lines = [c_forms.PRELUDE, "#include <stddef.h>", "#include <stdlib.h>",
             "int work(void **p, int64_t start, int64_t stop, int64_t blk) {",
             *(f"    {h}" for h in head),
             *(f"    {t} *{c}{i} = malloc({size} * sizeof({t}));" for c, i, t, size in allocs),
             *([f"    if ({' || '.join(f'!{c}{i}' for c, i, _, _ in allocs)}) status = 1;"]
               if allocs else []),
             "    for (int64_t b0 = start; b0 < stop && !status; b0 += blk) {",
             "        const int64_t n = stop - b0 < blk ? stop - b0 : blk;",
             *(f"        {x}" for x in body), "    }",
             *(f"    free({c}{i});" for c, i, _, _ in allocs), "    return status;", "}"]
    return "\n".join(lines) + "\n", any(e is not None for e in entries)


def _element(kind: str, name: str) -> str:
    """Element ``j`` of a full value's pointer, or row ``r`` of a row value's."""
    return {"p": f"{name}[j]", "r": f"{name}[r]", "q": name}[kind]


def _row_member(eqn, kind, args, entry, home, row_dest, R, dbl):  # noqa: N803
    """The C statements of a ``"reduce"``, ``"spread"`` or ``"row"`` member (``Group.kinds``)
    of a block: ``n / R`` rows. Sets the home of its value."""
    out = eqn.outvars[0]
    if kind == "spread":  # the operand's row pointer, read once per row of a full loop
        home[id(out)] = home[id(args[0])]
        return []
    red = getattr(lowering(eqn.primitive).impl, "entry", None)
    if kind == "reduce":
        if (red is None or np.dtype(out.aval.dtype) not in (np.float32, np.float64) or R < 2
                or home[id(args[0])][0] != "p"):
            raise c_forms.Unsupported(f"{eqn.primitive.name} of {out.aval.str_short()}")
        src = home[id(args[0])][1]
        dest = row_dest(out)
        home[id(out)] = ("r", dest)
        return [f"status |= red({dbl}, {red[1]}, {src}, n / {R}, {R}, {R}, 1, {dest});"]
    if any(home[id(a)][0] == "p" for a in args):
        raise c_forms.Unsupported(f"{eqn.primitive.name} of a full value")
    t = c_forms.ctype(out.aval)
    dest = row_dest(out)
    home[id(out)] = ("r", dest)
    if entry is not None:
        fn, code = entry
        call = "elem" if fn == "elementary" else "elem2"
        if any(home[id(a)][0] != "r" for a in args):
            raise c_forms.Unsupported(f"{eqn.primitive.name} of a 0-d or repeated operand")
        return [f"{call}({code}, {dbl}, {', '.join(home[id(a)][1] for a in args)}, {dest}, "
                f"n / {R});"]

    def elem(a):
        kind, name = home[id(a)]
        return _element(kind, name) if kind in "rq" else name

    if lowering(eqn.primitive).row_reduction:  # of unit axes: the term (plus zero for a sum)
        if red is None or np.dtype(out.aval.dtype) not in (np.float32, np.float64):
            raise c_forms.Unsupported(f"{eqn.primitive.name} of {out.aval.str_short()}")
        x = elem(args[0])
        value = f"NAN_FIRST({x}, ({t})0, +)" if red[1] in ONE_TERM_ADDS_ZERO else x
    else:
        value = c_forms.expr(eqn, [elem(a) for a in args], vector=True)
    return [f"for (int64_t r = 0; r < n / {R}; r++) {dest}[r] = {value};"]


class Native:
    """A group's compiled ``work``, loaded on a background thread; ``ready()`` says whether
    it can run."""

    def __init__(self, group, source: str, uses_elementary: bool):
        self.source, self.uses_elementary = source, uses_elementary
        self.fn = None
        self.calls = 0  # C calls made (tests)
        self.dtypes = [np.dtype(v.aval.dtype) for v in group.invars]
        self.arrays = [not isinstance(v, Literal) and v.aval.shape != () for v in group.invars]
        self.rowish = [a and v.aval.shape != group.shape
                       for a, v in zip(self.arrays, group.invars, strict=True)]
        self.literals = {j: np.asarray(v.val._value, self.dtypes[j]).reshape(1)
                         for j, v in enumerate(group.invars) if isinstance(v, Literal)}
        self.row = group.row_length()
        self._blocks = {}  # (periods, limit) -> block (block's answer: the same every call)
        self.tail = [c_entry(name) for name in _ENTRIES]
        self.started = False

    def _load(self):
        """Compile (or read from the cache) and take the group's ``work`` (loader thread)."""
        fn = load(self.source, "work")
        if fn is not None:
            self._adopt(fn)

    def _adopt(self, fn):
        """Take the loaded C function ``fn`` as the group's ``work``."""
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
        self.address = ctypes.cast(fn, ctypes.c_void_p).value
        self.fn = fn

    def ready(self) -> bool:
        """Whether the compiled group runs this call; the first call with the flag
        ``invarax_native_fusion`` on starts its compilation."""
        if not config.read("invarax_native_fusion"):
            return False
        if not self.started:
            self.started = True
            fn = loaded(self.source, "work")  # (another group of this structure loaded it)
            if fn is not None:
                self._adopt(fn)
            else:
                _submit(self)
        return self.fn is not None and (not self.uses_elementary
                                        or config.read("invarax_exact_elementary"))

    def pointers(self, ins, outs):
        """``(items, repeat)``: the items of a call's ``p`` (``_native.run_ranges``: the
        arrays, then the kernels' entry addresses and the periods of the inputs) and the
        periods of its broadcast operands (for ``block``); None where an operand has
        another layout or leaves too short a block (the Python path runs)."""
        items, periods, repeat, single = [], [], set(), []
        for j, (x, dtype, array) in enumerate(zip(ins, self.dtypes, self.arrays, strict=True)):
            period = 1
            if j in self.literals:
                x = self.literals[j]
            elif array:
                period = _period(x, dtype)
                if period is None:
                    return None  # (a copy costs more than the native path saves)
                if period == 1 and x.size > 1 and not self.rowish[j]:
                    single.append(j)  # one value: read from a block of copies (below)
                elif period < x.size and not self.rowish[j]:  # (rows: read by their index)
                    repeat.add(period)
            else:
                x = np.asarray(x, dtype).reshape(1)
            periods.append(period)
            items.append(x)
        for o in outs:
            if not (o.flags.c_contiguous and o.flags.writeable):
                return None
            items.append(o)
        block = self.block(repeat)
        if block is None or block < MIN_BLOCK:
            return None
        for j in single:  # (b0 % block + j < 2 * block for every block b0 of the call)
            items[j], periods[j] = np.full(2 * block, ins[j][(0,) * ins[j].ndim]), block
        return (*items, *self.tail, *periods), repeat  # (an invar's period is p[... + j])

    def block(self, repeat: set, limit: int = BLOCK):
        """The block length: whole rows, at most ``max(limit, row)`` elements, dividing the
        period of each broadcast operand (``repeat``); None if there is none."""
        key = (frozenset(repeat), limit)
        if key not in self._blocks:
            most = max(min(BLOCK, limit), self.row) // self.row
            common = math.gcd(*repeat)  # (0 without periods: every block divides it)
            self._blocks[key] = next((k * self.row for k in range(most, 0, -1)
                                      if common % (k * self.row) == 0), None)
        return self._blocks[key]

    def __call__(self, items, size: int, run: int, block: int, threads: int) -> None:
        """``work`` on ``[0, size)`` with the ``items`` of ``pointers``: in runs ``[lo, lo +
        run)`` taken by up to ``threads`` threads of the kernels' own pool
        (``_native.run_ranges``: a worker joins in microseconds, where a Python thread pool
        takes about 80). Which thread computes a run never changes its bits."""
        self.calls += 1
        if _native.run_ranges(self.address, items, size, run, block, threads):
            raise MemoryError("a native fusion group could not allocate its buffers")


def _period(x, dtype):
    """``P`` if ``x`` (of the group's shape) repeats a C-contiguous block of its last axes
    every ``P`` elements (``x.size`` if contiguous), else None."""
    if not isinstance(x, np.ndarray) or x.dtype != dtype:
        return None
    if x.flags.c_contiguous:
        return x.size
    q = 0
    while q < x.ndim and (x.strides[q] == 0 or x.shape[q] == 1):
        q += 1
    expected = x.itemsize
    for a in range(x.ndim - 1, q - 1, -1):
        if x.shape[a] != 1 and x.strides[a] != expected:
            return None
        expected *= x.shape[a]
    return math.prod(x.shape[q:])


def prepare(group):
    """The group's ``Native`` (compiled in the background from its first call), or None
    where the group has a member, a reduction or a dtype without a native form."""
    try:
        source, uses = group_source(group)
    except c_forms.Unsupported:
        return None
    return Native(group, source, uses)

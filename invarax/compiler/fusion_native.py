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
compiler, flags and CPU) serves every group of the same structure. It is compiled on a
background thread, from the group's first call with the flag ``invarax_native_fusion`` on:
the group runs its Python path until the object is loaded, and keeps it if no compiler
runs or the compilation fails (the same bits).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import threading

import numpy as np

from ..core.config import config
from ..core.ir import Literal
from ..core.lowering import lowering
from ..kernels._support import c_entry
from . import c_forms
from .native_build import load

#: Elements of a block: the block buffers of a group (at most 8 bytes an element each) and
#: the block's slices of its arrays stay in a core's L1/L2 cache.
BLOCK = 1024

#: The shortest block worth the native path (a broadcast operand whose period has no
#: longer divisor leaves the group on its Python path).
MIN_BLOCK = 128

_PENDING = []  # the compilations under way (threads), for wait()


def wait() -> None:
    """Wait for the compilations under way (tests; a program never needs to)."""
    for thread in list(_PENDING):
        thread.join()


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
    ``group.row_length()`` elements. Raises ``c_forms.Unsupported``."""
    row = group.row_length()
    if group.reductions and row < 2:  # (the impl adds 0 or copies: not the C loop)
        raise c_forms.Unsupported("rows of one element")
    reduced, pending = _reductions(group), []
    home = {}  # id(atom) -> ("s", C name) | ("p", pointer expr at the block's start)
    head, k = [], 0
    for j, v in enumerate(group.invars):
        t = c_forms.ctype(v.aval)
        if isinstance(v, Literal) or v.aval.shape == ():
            if isinstance(v, Literal) and np.dtype(v.aval.dtype) == np.bool_:
                home[id(v)] = ("s", c_forms.literal(v))
            else:
                head.append(f"const {t} s{j} = *(const {t} *)p[{j}];")
                home[id(v)] = ("s", f"s{j}")
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
    # the segment of each member: a run of C forms, or one elementary call
    segment, seg = [], 0
    for m, entry in enumerate(entries):
        if entry is not None or (m and entries[m - 1] is not None):
            seg += m > 0
        segment.append(seg)
    read_in = {}  # id(value) -> the segments reading it
    for m, args in enumerate(group.args):
        for a in args:
            read_in.setdefault(id(a), set()).add(segment[m])
    blocks, body = [], []
    loop, loads, reads = [], {}, []  # a loop's statements; its loads come first

    def flush():
        if loop:
            body.extend(["for (int64_t j = 0; j < n; j++) {",
                         *(f"    {x}" for x in (*reads, *loop)), "}"])
        body.extend(pending)
        pending.clear()
        loop.clear()
        loads.clear()
        reads.clear()

    def elem_of(a):  # element j of atom a inside a loop
        kind, name = home[id(a)]
        if kind == "s" or kind == "l":
            return name
        if name not in loads:
            loads[name] = f"e{len(loads)}"
            reads.append(f"const {c_forms.ctype(a.aval)} {loads[name]} = {name}[j];")
        return loads[name]

    for m, (eqn, args, entry) in enumerate(zip(group.eqns, group.args, entries, strict=True)):
        out = eqn.outvars[0]
        t = c_forms.ctype(out.aval)
        later = read_in.get(id(out), set()) - {segment[m]}
        if id(out) in outputs:
            dest = f"(o{outputs[id(out)]} + b0)"
        elif later or entry is not None or id(out) in reduced:
            dest = f"t{len(blocks)}"
            blocks.append(t)
        else:
            dest = None
        reduce_calls = [f"status |= red({int(t == 'double')}, {op}, {dest}, n / {row}, {row}, "
                       f"{row}, 1, (o{k} + b0 / {row}));" for k, op in reduced.get(id(out), ())]
        if entry is not None:
            flush()
            if any(home[id(a)][0] != "p" for a in args):
                raise c_forms.Unsupported(f"{eqn.primitive.name} of a 0-d operand")
            dbl = int(t == "double")
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
    lines = [c_forms.PRELUDE, "#include <stddef.h>", "#include <stdlib.h>",
             "int work(void **p, int64_t start, int64_t stop, int64_t blk) {",
             *(f"    {h}" for h in head),
             *(f"    {t} *t{i} = malloc(blk * sizeof({t}));" for i, t in enumerate(blocks)),
             *([f"    if ({' || '.join(f'!t{i}' for i in range(len(blocks)))}) status = 1;"]
               if blocks else []),
             "    for (int64_t b0 = start; b0 < stop && !status; b0 += blk) {",
             "        const int64_t n = stop - b0 < blk ? stop - b0 : blk;",
             *(f"        {x}" for x in body), "    }",
             *(f"    free(t{i});" for i in range(len(blocks))), "    return status;", "}"]
    return "\n".join(lines) + "\n", any(e is not None for e in entries)


class Native:
    """A group's compiled ``work``, loaded on a background thread; ``ready()`` says whether
    it can run."""

    def __init__(self, group, source: str, uses_elementary: bool):
        self.source, self.uses_elementary = source, uses_elementary
        self.fn = None
        self.calls = 0  # C calls made (tests)
        self.dtypes = [np.dtype(v.aval.dtype) for v in group.invars]
        self.arrays = [not isinstance(v, Literal) and v.aval.shape != () for v in group.invars]
        self.literals = {j: np.asarray(v.val._value, self.dtypes[j]).reshape(1)
                         for j, v in enumerate(group.invars) if isinstance(v, Literal)}
        self.row = group.row_length()
        self.tail = [c_entry(name) for name in _ENTRIES]
        self.started = False

    def _load(self):
        try:
            fn = load(self.source, "work")
            if fn is not None:
                fn.restype = ctypes.c_int
                fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
                self.fn = fn
        finally:
            with contextlib.suppress(ValueError):
                _PENDING.remove(threading.current_thread())

    def ready(self) -> bool:
        """Whether the compiled group runs this call; the first call with the flag
        ``invarax_native_fusion`` on starts its compilation."""
        if not config.read("invarax_native_fusion"):
            return False
        if not self.started:
            self.started = True
            thread = threading.Thread(target=self._load, daemon=True, name="invarax-fusion-cc")
            _PENDING.append(thread)
            thread.start()
        return self.fn is not None and (not self.uses_elementary
                                        or config.read("invarax_exact_elementary"))

    def pointers(self, ins, outs):
        """``(p, kept, repeat)``: the ``p`` array of a call, the arrays it points into (kept
        alive) and the periods of its broadcast operands (for ``block``); None where an
        operand has another layout or leaves too short a block (the Python path runs)."""
        kept, ptrs, periods, repeat = [], [], [], set()
        for j, (x, dtype, array) in enumerate(zip(ins, self.dtypes, self.arrays, strict=True)):
            period = 1
            if j in self.literals:
                x = self.literals[j]
            elif array:
                period = _period(x, dtype)
                if period is None:
                    return None  # (a copy costs more than the native path saves)
                if period < x.size:
                    repeat.add(period)
            else:
                x = np.asarray(x, dtype).reshape(1)
            periods.append(period)
            kept.append(x)
            ptrs.append(x.ctypes.data)
        for o in outs:
            if not (o.flags.c_contiguous and o.flags.writeable):
                return None
            ptrs.append(o.ctypes.data)
        block = self.block(repeat)
        if block is None or block < MIN_BLOCK:
            return None
        ptrs += [*self.tail, *periods]  # (an invar's period is p[... + j])
        return (ctypes.c_void_p * len(ptrs))(*ptrs), kept, repeat

    def block(self, repeat: set, limit: int = BLOCK):
        """The block length: whole rows, at most ``max(limit, row)`` elements, dividing the
        period of each broadcast operand (``repeat``); None if there is none."""
        most = max(min(BLOCK, limit), self.row) // self.row
        for k in range(most, 0, -1):
            if all(period % (k * self.row) == 0 for period in repeat):
                return k * self.row
        return None

    def __call__(self, p, start: int, stop: int, block: int) -> None:
        self.calls += 1
        if self.fn(p, start, stop, block):
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

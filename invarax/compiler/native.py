"""Native loops: a ``scan`` or ``while`` whose body is elementwise arithmetic, in C.

A loop body (after ``jit``'s passes) whose every equation is one of the operations below
(a per-element C form ``c``, a full reduction ``c_fold`` or a ``scalar_broadcast`` in the
lowering table, ``core/lowering.py``), on 0-d values and arrays of one shape, is written
as one C function running the whole loop, compiled (``native_build``: the C compiler that
built Python's extensions, ``-O3 -march=native -ffp-contract=off``, never fast-math),
cached on disk and called through ``ctypes``. Arrays are computed element by element, all
the elementwise equations of the body in one C loop (which the compiler vectorizes) up to
a full ``reduce_or`` or ``reduce_and``, whose 0-d result the rest of the body may read
(``_Body``); array carries are double-buffered. Each operation gives exactly the bits
NumPy's ufunc gives on 0-d operands, which the Python loop (``lower.compile_loop``) and
eager evaluation compute:

- float ``+ - * /`` are IEEE operations in the operands' precision (SSE/AVX, no double
  rounding, no FMA); a NaN operand's payload is kept as NumPy's scalar loop keeps it (the
  first operand's if it is NaN, else the second's); ``max``/``min`` return the first
  operand when it is NaN or strictly greater (smaller), else the second, as NumPy's;
  ``sqrt``, ``floor`` and ``ceil`` of a NaN quiet it, as NumPy's;
- integer ``+ - *``, ``neg`` and ``abs`` wrap around (computed in ``uint64_t``: signed
  overflow is undefined in C); a float-to-integer conversion truncates and saturates, NaN
  giving 0 (XLA's rule, which invarax's ``convert_element_type`` implements);
- comparisons, ``select_n`` (an int32 index clipped), ``is_finite``, bitwise ``and or xor
  not``, ``integer_pow`` (binary powering in the order of its impl), ``broadcast_in_dim``
  of a 0-d value and the other conversions are C's, which are NumPy's.

Anything else (another primitive, arrays of two shapes, float16, a partial reduction) keeps
the loop in Python (``lower.compile_loop``), as does a missing or failing compiler: the
same bits, slower. The config flag ``invarax_native_loops`` (default True) turns native
loops off; a ``scan`` of little work (``MIN_WORK``) runs as Python, where the C call's
overhead would dominate. The first call of a new loop pays the compilation (0.05-0.2 s
with GCC; later calls and later processes load the cached object).
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from ..core.ir import Jaxpr, Literal
from ..core.lowering import lowering
from .c_forms import PRELUDE as _PRELUDE
from .c_forms import Unsupported as _Unsupported
from .c_forms import ctype as _ctype
from .c_forms import expr as _expr
from .c_forms import literal as _literal
from .native_build import cache_path, load

__all__ = ["cache_path", "load", "native_scan", "native_while", "scan_source", "while_source"]


# A scan of fewer iterations x equations than this runs as the Python loop (same bits).
MIN_WORK = 32

def out_shape(eqn) -> tuple:
    return eqn.outvars[0].aval.shape


def loop_shape(*jaxprs) -> tuple:
    """The one shape of the non-0-d values of ``jaxprs`` (() if none): the native path
    computes 0-d values and arrays of a single shape, elementwise."""
    shapes = set()
    for j in jaxprs:
        for v in (*j.constvars, *j.invars, *j.outvars,
                  *(w for e in j.eqns for w in (*e.invars, *e.outvars))):
            if isinstance(v, Literal) and v.aval.shape != ():
                raise _Unsupported("an array literal")
            _ctype(v.aval)
            shapes.add(v.aval.shape)
    shapes.discard(())
    if len(shapes) > 1:
        raise _Unsupported(f"values of shapes {sorted(shapes)}")
    if any(0 in s for s in shapes):
        raise _Unsupported("empty arrays")
    return shapes.pop() if shapes else ()


class _Body:
    """The C statements (``lines``) of one run of ``jaxpr``. ``inputs``: for each input, the
    C name of a 0-d value or a pointer to an array's elements; ``dests``: for each output,
    None (0-d: its expression is in ``outs``) or the pointers its elements are written to.

    Arrays are computed elementwise in phases: one C loop over the elements runs every
    elementwise equation of a phase, and a phase ends with a full reduction (``reduce_or``
    or ``reduce_and``), whose 0-d result the next phases may read. An array read in a later
    phase is kept in a scratch buffer (``scratch``: names and C types, of ``size``
    elements each)."""

    def __init__(self, jaxpr: Jaxpr, inputs, dests, prefix: str, size: int, lits: list):
        self.scratch, self.size, self.lines, self.lits = [], size, [], lits
        self.vals = {}  # id(var) -> ("s", expr) | ("u", scalar expr) | ("p", pointer)
        for v, name in zip((*jaxpr.constvars, *jaxpr.invars), inputs, strict=True):
            self.vals[id(v)] = ("s" if v.aval.shape == () else "p", name)
        self.computed = set()  # ids of the arrays computed in a phase loop
        phase_of, phase = {}, 0
        for k, eqn in enumerate(jaxpr.eqns):
            if len(eqn.outvars) != 1:
                raise _Unsupported(f"{eqn.primitive.name} with {len(eqn.outvars)} outputs")
            if lowering(eqn.primitive).c_fold is not None:
                x = eqn.invars[0].aval
                if x.shape == () or tuple(eqn.params["axes"]) != tuple(range(len(x.shape))):
                    raise _Unsupported(f"{eqn.primitive.name} over axes {eqn.params['axes']}")
                phase_of[k], phase = phase, phase + 1
            elif out_shape(eqn) == () and any(v.aval.shape != () for v in eqn.invars):
                raise _Unsupported(f"{eqn.primitive.name} of an array to a 0-d value")
            else:
                phase_of[k] = phase
        written = {id(v): [d for w, d in zip(jaxpr.outvars, dests, strict=True)
                           if w is v and d is not None] for v in jaxpr.outvars}
        later = {}  # id(array var) -> the last phase reading it
        for k, eqn in enumerate(jaxpr.eqns):
            for v in eqn.invars:
                if not isinstance(v, Literal):
                    later[id(v)] = max(later.get(id(v), -1), phase_of[k])
        for p in range(phase + 1):
            self._phase(jaxpr, [k for k in phase_of if phase_of[k] == p], p, prefix, later,
                        written)
        copies = []  # array outputs computed in no phase: inputs and broadcast scalars
        for v, d in zip(jaxpr.outvars, dests, strict=True):
            if d is not None and (isinstance(v, Literal) or id(v) not in self.computed):
                kind, expr = ("s", self._lit(v)) if isinstance(v, Literal) else self.vals[id(v)]
                copies.append(f"{d}[j] = {expr}[j];" if kind == "p" else f"{d}[j] = {expr};")
        if copies:
            self.lines += [f"for (int64_t j = 0; j < {size}; j++) {{",
                           *(f"    {c}" for c in copies), "}"]
        self.outs = [None if d is not None else self._scalar(v)
                     for v, d in zip(jaxpr.outvars, dests, strict=True)]

    @staticmethod
    def _uniform(eqn) -> bool:
        return lowering(eqn.primitive).scalar_broadcast and eqn.invars[0].aval.shape == ()

    def _lit(self, v) -> str:
        """A literal: a bool inline, a number read from the function's parameters, so that
        the source (and its compilation) does not depend on the values of constants."""
        if np.dtype(v.aval.dtype) == np.bool_:
            return _literal(v)
        self.lits.append(v)
        return f"L{len(self.lits) - 1}"

    def _scalar(self, v) -> str:
        if isinstance(v, Literal):
            return self._lit(v)
        kind, expr = self.vals[id(v)]
        if kind != "s":
            raise _Unsupported("an array read as a 0-d value")
        return expr

    def _elem(self, v, loads, lines) -> str:
        """The C expression of element ``j`` of ``v`` inside a phase loop."""
        if isinstance(v, Literal):
            return self._lit(v)
        kind, expr = self.vals[id(v)]
        if kind in "slu":
            return expr
        if expr not in loads:  # a pointer: load the element once per phase
            loads[expr] = f"e{len(loads)}_{expr.strip('()').split()[0]}"
            lines.insert(len(loads) - 1, f"const {_ctype(v.aval)} {loads[expr]} = {expr}[j];")
        return loads[expr]

    def _phase(self, jaxpr, ks, p, prefix, later, written):
        loads, body, accs, stored = {}, [], [], []
        for k in ks:
            eqn = jaxpr.eqns[k]
            out = eqn.outvars[0]
            name = f"{prefix}{k}"
            t = _ctype(out.aval)
            fold = lowering(eqn.primitive).c_fold
            if fold is not None:
                init, op = fold
                accs.append(f"{t} {name} = ({t}){init};")
                body.append(f"{name} {op} {self._elem(eqn.invars[0], loads, body)};")
                self.vals[id(out)] = ("s", name)
                continue
            if self._uniform(eqn):  # a 0-d value broadcast: each element is that value
                self.vals[id(out)] = ("u", self._scalar(eqn.invars[0]))
                continue
            if out.aval.shape == ():
                expr = _expr(eqn, [self._scalar(v) for v in eqn.invars])
                self.lines.append(f"const {t} {name} = {expr};")
                self.vals[id(out)] = ("s", name)
                continue
            body.append(f"const {t} {name} = "
                        f"{_expr(eqn, [self._elem(v, loads, body) for v in eqn.invars], True)};")
            self.vals[id(out)] = ("l", name)
            self.computed.add(id(out))
            for d in written.get(id(out), []):
                body.append(f"{d}[j] = {name};")
            if later.get(id(out), -1) > p:
                buf = f"{prefix}s{len(self.scratch)}"
                self.scratch.append((buf, t))
                body.append(f"{buf}[j] = {name};")
                stored.append((id(out), buf))
        if body:
            self.lines += [*accs, f"for (int64_t j = 0; j < {self.size}; j++) {{",
                           *(f"    {line}" for line in body), "}"]
        for i, buf in stored:  # later phases read the scratch buffer
            self.vals[i] = ("p", buf)


class _Function:
    """A C function ``int loop(void **p, ...)`` over the values ``avals`` that ``p`` points
    at, in order: 0-d ones are read into locals, arrays are pointers; ``carry`` (indices)
    are double-buffered arrays (the body writes the next carry into a second buffer and the
    two swap) or locals, written back at the end."""

    def __init__(self, avals, names, carry, size):
        self.size = size
        self.head, self.tail, self.swap = [], [], []
        self.scratch = []
        for k, (a, n) in enumerate(zip(avals, names, strict=True)):
            t = _ctype(a)
            if a.shape == ():
                self.head.append(f"{t} {n} = *({t} *)p[{k}];")
                if k in carry:
                    self.tail.append(f"*({t} *)p[{k}] = {n};")
            elif k in carry:
                self.head.append(f"{t} *{n} = ({t} *)p[{k}];")
                self.scratch.append((f"{n}n", t))
                self.swap.append(f"{{ {t} *w = {n}; {n} = {n}n; {n}n = w; }}")
                self.tail.append(f"if ({n} != ({t} *)p[{k}]) {{ memcpy(p[{k}], {n}, "
                                 f"{size} * sizeof({t})); {n}n = {n}; }}")
            else:
                self.head.append(f"const {t} *{n} = (const {t} *)p[{k}];")

    def source(self, signature, loop, bodies, lits, first_lit) -> str:
        scratch = self.scratch + [s for b in bodies for s in b.scratch]
        lines = [_PRELUDE, "#include <stdlib.h>", f"int {signature} {{",
                 *(f"    {h}" for h in self.head)]
        lines += [f"    const {_ctype(v.aval)} L{k} = *(const {_ctype(v.aval)} *)"
                  f"p[{first_lit + k}];" for k, v in enumerate(lits)]
        lines += [f"    {t} *{n} = malloc({self.size} * sizeof({t}) + 1);" for n, t in scratch]
        if scratch:
            lines.append(f"    if ({' || '.join(f'!{n}' for n, _ in scratch)}) return 1;")
        lines += [f"    {line}" for line in loop]
        lines += [f"    {line}" for line in self.tail]
        lines += [f"    free({n});" for n, _ in scratch]
        lines += ["    return 0;", "}"]
        return "\n".join(lines) + "\n"


def scan_source(jaxpr: Jaxpr, num_consts: int, num_carry: int):
    """``(source, literals)``: C source of ``int loop(void **p, int64_t start, int64_t
    count, int64_t step)``, the scan of ``jaxpr`` (see ``lower.compile_loop``); ``p`` points
    at the consts, the carry (read, then written at the end), the xs, the ys (contiguous)
    and the values of ``literals``. Raises ``_Unsupported`` for a body the native path does
    not compute."""
    size = math.prod(loop_shape(jaxpr))
    avals = [v.aval for v in (*jaxpr.constvars, *jaxpr.invars)]
    n_const = len(jaxpr.constvars) + num_consts
    n_in = len(avals)
    n_x = n_in - n_const - num_carry
    y_avals = [v.aval for v in jaxpr.outvars[num_carry:]]
    names = [f"a{k}" for k in range(n_const + num_carry)]
    fn = _Function([*avals[:n_const + num_carry], *avals[n_const + num_carry:],
                    *y_avals], [*names, *(f"x{k}" for k in range(n_x)),
                                *(f"y{k}" for k in range(len(y_avals)))],
                   range(n_const, n_const + num_carry), size)
    xs = [f"x{k}[i]" if a.shape == () else f"(x{k} + i * {size})"
          for k, a in enumerate(avals[n_const + num_carry:])]
    carry = names[n_const:]
    dests = [*(f"{n}n" if a.shape else None for n, a in
               zip(carry, avals[n_const:n_const + num_carry], strict=True)),
             *(f"(y{k} + i * {size})" if a.shape else None for k, a in enumerate(y_avals))]
    for k, a in enumerate(avals[n_const + num_carry:]):  # xs and ys: always pointers
        fn.head[n_const + num_carry + k] = (f"const {_ctype(a)} *x{k} = "
                                            f"(const {_ctype(a)} *)p[{n_const + num_carry + k}];")
    for k, a in enumerate(y_avals):
        fn.head[n_in + k] = f"{_ctype(a)} *y{k} = ({_ctype(a)} *)p[{n_in + k}];"
    lits = []
    body = _Body(jaxpr, [*names, *xs], dests, "t", size, lits)
    loop = ["for (int64_t s = 0; s < count; s++) {", "    const int64_t i = start + s * step;",
            *(f"    {line}" for line in body.lines)]
    loop += [f"    y{k}[i] = {o};" for k, (a, o) in
             enumerate(zip(y_avals, body.outs[num_carry:], strict=True)) if a.shape == ()]
    new = [(f"n{k}", a, o) for k, (a, o) in
           enumerate(zip(avals[n_const:n_const + num_carry], body.outs[:num_carry],
                         strict=True))
           if a.shape == ()]
    loop += [f"    const {_ctype(a)} {n} = {o};" for n, a, o in new]
    loop += [f"    {carry[int(n[1:])]} = {n};" for n, _, _ in new]
    loop += [f"    {s}" for s in fn.swap] + ["}"]
    return fn.source("loop(void **p, int64_t start, int64_t count, int64_t step)", loop,
                     [body], lits, n_in + len(y_avals)), lits


def while_source(cond: Jaxpr, body: Jaxpr, cond_nconsts: int, body_nconsts: int):
    """``(source, literals)``: C source of ``int loop(void **p)``, the while of ``cond``
    and ``body`` (see ``lower.compile_while``); ``p`` points at the cond consts (constvars
    first), the body consts (likewise), the carry (read, then written at the end) and the
    values of ``literals``."""
    size = math.prod(loop_shape(cond, body))
    nc = len(cond.constvars) + cond_nconsts
    nb = len(body.constvars) + body_nconsts
    c_avals = [v.aval for v in (*cond.constvars, *cond.invars)]
    b_avals = [v.aval for v in (*body.constvars, *body.invars)]
    carry = b_avals[nb:]
    cc, bc = [f"c{k}" for k in range(nc)], [f"b{k}" for k in range(nb)]
    ks = [f"k{k}" for k in range(len(carry))]
    fn = _Function([*c_avals[:nc], *b_avals], [*cc, *bc, *ks],
                   range(nc + nb, nc + nb + len(carry)), size)
    lits = []
    c = _Body(cond, [*cc, *ks], [None], "u", size, lits)
    b = _Body(body, [*bc, *ks], [f"{k}n" if a.shape else None
                                 for k, a in zip(ks, carry, strict=True)], "t", size, lits)
    loop = ["for (;;) {", *(f"    {line}" for line in c.lines),
            f"    if (!({c.outs[0]})) break;", "    {", *(f"        {line}" for line in b.lines)]
    new = [(f"n{k}", a, o) for k, (a, o) in enumerate(zip(carry, b.outs, strict=True))
           if a.shape == ()]
    loop += [f"        const {_ctype(a)} {n} = {o};" for n, a, o in new]
    loop += [f"        {ks[int(n[1:])]} = {n};" for n, _, _ in new]
    loop += [f"        {s}" for s in fn.swap] + ["    }", "}"]
    return fn.source("loop(void **p)", loop, [c, b], lits, nc + nb + len(carry)), lits


# ---------------------------------------------------------------------------------------
# The loops as Python functions (the signatures of lower.compile_loop / compile_while).


class _Caller:
    """Calls a loop's C function on ``avals`` (then ``n_out`` output arrays) and returns the
    carry (the indices ``carry``). The 0-d values go through a per-thread staging buffer
    whose pointers are computed once (``ndarray.ctypes`` costs microseconds per array);
    arrays are passed as they are (contiguous; the carry copied: the loop writes it)."""

    def __init__(self, fn, avals, carry, n_out, lits):
        self.fn, self.carry, n = fn, carry, len(avals)
        self.scalars = [k for k, a in enumerate(avals) if a.shape == ()]
        lit_slots = range(len(self.scalars), len(self.scalars) + len(lits))
        self.arrays = [(k, np.dtype(a.dtype), k in carry) for k, a in enumerate(avals)
                       if a.shape != ()]
        slots = {k: i for i, k in enumerate(self.scalars)}
        array_at = {k: i for i, (k, _, _) in enumerate(self.arrays)}
        self.out_plan = [(True, slots[k]) if k in slots else (False, array_at[k])
                         for k in carry]
        dtypes = [np.dtype(a.dtype) for a in (*(avals[k] for k in self.scalars),
                                              *(v.aval for v in lits))]

        class Staging(threading.local):
            def __init__(self):
                self.buf = np.zeros(max(len(dtypes), 1), np.uint64)
                raw = self.buf.view(np.uint8)
                self.views = [raw[8 * i:8 * i + d.itemsize].view(d).reshape(())
                              for i, d in enumerate(dtypes)]
                base = self.buf.ctypes.data
                self.ptrs = (ctypes.c_void_p * (n + n_out + len(lits)))(
                    *(base + 8 * slots[k] if k in slots else None for k in range(n)),
                    *[None] * n_out, *(base + 8 * i for i in lit_slots))
                for i, v in zip(lit_slots, lits, strict=True):
                    self.views[i][()] = v.val._value

        self.local = Staging()  # each thread sees its own buffer and pointers

    def __call__(self, values, outs, *extra):
        st = self.local
        views, ptrs = st.views, st.ptrs
        for k, view in zip(self.scalars, views, strict=False):  # (the literals' are set)
            view[()] = values[k]
        kept = []
        for k, dtype, written in self.arrays:
            a = np.array(values[k], dtype) if written else np.ascontiguousarray(values[k], dtype)
            kept.append(a)
            ptrs[k] = a.ctypes.data
        for i, y in enumerate(outs, len(values)):
            ptrs[i] = y.ctypes.data
        if self.fn(ptrs, *extra):
            raise MemoryError("a native loop could not allocate its buffers")
        return [views[i][()] if scalar else kept[i] for scalar, i in self.out_plan]


def native_scan(jaxpr: Jaxpr, num_consts: int, num_carry: int, fallback):
    """``loop(*consts, *carry, *xs, *ys, order)`` running natively, or None (the body is
    not native, or no compiler runs). ``fallback`` (the Python loop) runs an ``order`` that
    is not a ``range``, a short loop (``MIN_WORK``), or all calls if the compilation (on
    the first call that needs it) fails."""
    try:
        source, lits = scan_source(jaxpr, num_consts, num_carry)
    except _Unsupported:
        return None
    if cache_path(source) is None:  # no compiler runs
        return None
    avals = [v.aval for v in (*jaxpr.constvars, *jaxpr.invars)]
    n_in = len(jaxpr.constvars) + num_consts + num_carry
    x_avals = [a.update(shape=(0, *a.shape)) for a in avals[n_in:]]  # whole arrays
    n = len(avals)
    work = max(len(jaxpr.eqns), 1)
    built = []  # the _Caller, or None if the compilation failed: built on the first long run

    def run(*args):
        order = args[-1]
        ys = args[n:-1]
        if type(order) is not range or len(order) * work < MIN_WORK or not all(
                y.flags.c_contiguous and y.flags.writeable for y in ys):
            return fallback(*args)  # (a short loop: the C call's overhead, ~5 us, dominates)
        if not built:
            fn = load(source)
            if fn is not None:
                fn.restype = ctypes.c_int
                fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
            built.append(fn and _Caller(fn, [*avals[:n_in], *x_avals],
                                        range(n_in - num_carry, n_in),
                                        len(jaxpr.outvars) - num_carry, lits))
        if built[0] is None:
            return fallback(*args)
        return built[0](args[:n], ys, order.start, len(order), order.step)

    run.source = source
    run.native = True
    return run


def native_while(cond: Jaxpr, body: Jaxpr, cond_nconsts: int, body_nconsts: int):
    """``loop(*cond_consts, *body_consts, *carry)`` running natively, or None."""
    try:
        source, lits = while_source(cond, body, cond_nconsts, body_nconsts)
    except _Unsupported:
        return None
    fn = load(source)
    if fn is None:
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p]
    avals = [*(v.aval for v in (*cond.constvars, *cond.invars[:cond_nconsts])),
             *(v.aval for v in (*body.constvars, *body.invars))]
    n = len(avals)
    call = _Caller(fn, avals, range(n - (len(body.invars) - body_nconsts), n), 0, lits)

    def run(*args):
        return call(args, ())

    run.source = source
    run.native = True
    return run

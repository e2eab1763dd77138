"""Fusion groups as CUDA kernels: a group's chain of members, one thread per element.

The same group description as the native CPU path (``fusion_native.py``) and the same
per-element C forms (``c_forms.py``, from the lowering table), so a GPU group computes each
element by the operations of the unfused ops, bit for bit (N3): a member with a C form is
its expression; an elementary function (every one of invarax's own: ``exp`` to ``digamma``,
``atan2`` and ``pow``; float32 or float64) calls the per-element function of
``csrc/elementary_scalar.h`` or ``csrc/elementary_scalar_more.h``, which the CPU's loops also
give every element. A group that ends in row reductions (sums, products, maxima, minima: the CPU
groups' float32 and float64 ones) runs one thread a row: it computes the row's elements,
keeps each reduced value in a scratch buffer, and reduces the row by
``csrc/device/order.h``, the canonical order. The kernel is

    extern "C" __global__ void group(void *a0, ..., long long n)

whose parameters (kernel parameters: no pointer table to copy to the device before a
launch) are, in order, the group's invars (arrays: their elements; 0-d values: a pointer
to the value; literals are written into the source), its outputs, each invar's period
``P`` (a ``long long``: a broadcast operand repeats every ``P`` elements, element ``i``
reads ``i % P``), and the scratch buffers; it gathers them into the table ``p`` that the
element function reads. The functions are plain C, so the host compiles the same source
(``group_host(p, n)`` runs the threads in turn) and the tests compare it with the unfused
ops on the CPU. A row group (whose reductions are read back inside the group: softmax,
layer norm, attention) runs one thread a row (``_row_group_kernel``). Members without a
per-element form raise ``c_forms.Unsupported``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.ir import Literal
from ..core.lowering import lowering
from ..kernels.elementary import NAMES
from ..kernels.reductions import ONE_TERM_ADDS_ZERO
from . import c_forms
from .fusion_native import _entry, _period, _reductions

#: An elementary member's per-element C function (the one the CPU's loops give every element)
#: by C type and part: ``impl.entry``'s ``elementary`` codes exp to cosh
#: (csrc/elementary_scalar.h), log2 to digamma (``elementary_more``) and ``elementary2``'s
#: atan2 and pow (both csrc/elementary_scalar_more.h).
_FIRST_MORE = NAMES.index("log2")
_CALLS = {("elementary", "float"): "elem_f32_value", ("elementary", "double"): "elem_f64_scalar",
          ("elementary_more", "float"): "elem_more_f32_value",
          ("elementary_more", "double"): "elem_more_f64",
          ("elementary2", "float"): "elem2_f32_value", ("elementary2", "double"): "elem2_f64"}


def _elementary_call(entry, t: str, operands) -> tuple:
    """``(C value, whether it needs elementary_scalar_more.h)`` of an elementary member."""
    kind, code = entry
    if kind == "elementary" and code >= _FIRST_MORE:
        kind = "elementary_more"
    return f"{_CALLS[kind, t]}({code}, {', '.join(operands)})", kind != "elementary"

#: A row reduction's C value over the row ``r`` of ``row`` elements (order.h), by the
#: kernels' reduction numbers (native.h: sum, prod, max, min).
_FOLDS = {0: "ord_sum_{t}(r, row, 1)", 1: "ord_prod_{t}(r, row, 1)",
          2: "r[ord_extremum_{t}(r, row, 1, 1)]", 3: "r[ord_extremum_{t}(r, row, 1, 0)]"}


@dataclass(frozen=True)
class GroupKernel:
    """A group's generated source, and how it is launched: ``n`` threads, one an element
    (``per_row`` False: ``n`` is the group's size) or one a row (``n`` is the number of
    rows); ``p`` ends with one scratch buffer of the group's size for each NumPy dtype of
    ``scratch`` (a member's values that the row's reductions read back).
    ``uses_elementary``: a member is one of invarax's elementary functions, so the kernel
    gives the CPU's bits only while ``config.invarax_exact_elementary`` is on (off, the CPU
    computes them with NumPy; the CPU's native groups make the same check)."""

    source: str
    per_row: bool
    scratch: tuple
    uses_elementary: bool


def group_kernel(group) -> GroupKernel:
    """The CUDA (and host C) kernel of ``group`` (see the module docstring).

    Raises ``c_forms.Unsupported`` for a group this path does not compute."""
    if any(kind != "full" for kind in group.kinds):
        return _row_group_kernel(group)
    n_in, n_out = len(group.invars), len(group.outvars)
    lines, home, elementary, more = [], {}, False, False
    for j, v in enumerate(group.invars):
        t = c_forms.ctype(v.aval)
        if isinstance(v, Literal):
            home[id(v)] = c_forms.literal(v)
        elif v.aval.shape == ():
            lines.append(f"const {t} s{j} = *(const {t} *)p[{j}];")
            home[id(v)] = f"s{j}"
        else:
            lines.append(f"const {t} e{j} = ((const {t} *)p[{j}])"
                         f"[i % (long long)(intptr_t)p[{n_in + n_out + j}]];")
            home[id(v)] = f"e{j}"
    for m, (eqn, args) in enumerate(zip(group.eqns, group.args, strict=True)):
        out = eqn.outvars[0]
        t = c_forms.ctype(out.aval)
        entry = _entry(eqn)
        operands = [home[id(a)] for a in args]
        if entry is None:
            value = c_forms.expr(eqn, operands)
        elif entry[0] in ("elementary", "elementary2"):
            value, uses_more = _elementary_call(entry, t, operands)
            elementary, more = True, more or uses_more
        else:
            raise c_forms.Unsupported(f"{eqn.primitive.name} on the GPU")
        lines.append(f"const {t} v{m} = {value};")
        home[id(out)] = f"v{m}"
    first = n_out - len(group.reductions)
    for k, v in enumerate(group.outvars[:first]):
        lines.append(f"(({c_forms.ctype(v.aval)} *)p[{n_in + k}])[i] = {home[id(v)]};")
    scratch, folds = [], []  # a buffer per reduced value; the row's reductions of each
    for key, reductions in _reductions(group).items():
        where, t = n_in + n_out + n_in + len(scratch), _reduced_type(group, key)
        lines.append(f"(({t} *)p[{where}])[i] = {home[key]};")
        scratch.append(np.dtype(np.float64 if t == "double" else np.float32))
        for k, op in reductions:
            if op not in _FOLDS:
                raise c_forms.Unsupported(f"reduction {op} on the GPU")
            fold = _FOLDS[op].format(t="f64" if t == "double" else "f32")
            folds.append(f"{{ const {t} *r = ({t} *)p[{where}] + row0; "
                         f"(({t} *)p[{n_in + k}])[rr] = {fold}; }}")
    per_row = bool(group.reductions)
    if per_row:
        if group.row_length() < 2:
            raise c_forms.Unsupported("rows of one element")
        kernel_body = [f"const long long row = {group.row_length()}, row0 = rr * row;",
                       "for (long long i = row0; i < row0 + row; i++) group_element(p, i);",
                       *folds]
    else:
        kernel_body = ["group_element(p, rr);"]
    source = _source(more, ["GROUP_FN void group_element(void *const *p, long long i) {",
                            *(f"    {x}" for x in lines), "}",
                            "GROUP_FN void group_thread(void *const *p, long long rr) {",
                            *(f"    {x}" for x in kernel_body), "}"],
                     n_in, n_out, len(scratch))
    return GroupKernel(source, per_row, tuple(scratch), elementary)


def _source(more: bool, functions: list, n_in: int, n_out: int, n_scratch: int) -> str:
    """A group kernel's whole source around its ``group_thread`` (and helpers)."""
    return "\n".join([
        f'#include "elementary_scalar{"_more" if more else ""}.h"', '#include "order.h"',
        c_forms.PRELUDE,
        "#ifdef __CUDACC__", "#define GROUP_FN static __device__ __forceinline__",
        "#else", "#define GROUP_FN static inline", "#endif",
        *functions,
        "#ifdef __CUDACC__",
        *_entry_point(n_in, n_out, n_scratch),
        "#else",
        "void group_host(void *const *p, long long n) {",
        "    for (long long rr = 0; rr < n; rr++) group_thread(p, rr);", "}",
        "#endif", ""])


def _row_group_kernel(group) -> GroupKernel:
    """The kernel of a group with row members (``Group.kinds``: softmax, layer norm, the
    attention pattern), whose full-shaped inputs are passed whole (contiguous, of the
    group's shape; a row-shaped input repeats every P rows; 0-d: a pointer to the value):
    one thread a row of ``R = prod(shape[first:])`` elements, running
    the members in program order as the unfused ops would: a full member over the row's
    elements (into its output or a scratch buffer of the group's size), a ``"reduce"``
    member by the row's canonical reduction (order.h), a ``"row"`` member on the row's
    values, a ``"spread"`` member as its operand's row value."""
    R = math.prod(group.shape[group.first:])  # noqa: N806
    if R < 2 or (group.reductions and group.row_length() != R):
        raise c_forms.Unsupported("rows of one element, or reductions of other rows")
    n_in, n_out = len(group.invars), len(group.outvars)
    lines = [f"const long long R = {R}, j0 = rr * R;"]
    home = {}  # id(atom) -> ("s", a C value of the row) | ("p", pointer, period or None)
    for j, v in enumerate(group.invars):
        t = c_forms.ctype(v.aval)
        period = f"(long long)(intptr_t)p[{n_in + n_out + j}]"
        if isinstance(v, Literal):
            home[id(v)] = ("s", c_forms.literal(v))
        elif v.aval.shape == ():
            lines.append(f"const {t} s{j} = *(const {t} *)p[{j}];")
            home[id(v)] = ("s", f"s{j}")
        elif v.aval.shape != group.shape:  # row-shaped: row rr reads element rr % P
            lines.append(f"const {t} s{j} = ((const {t} *)p[{j}])[rr % {period}];")
            home[id(v)] = ("s", f"s{j}")
        else:  # (whole: a row group's full inputs are passed of its shape, period unread)
            lines.append(f"const {t} *i{j} = (const {t} *)p[{j}];")
            home[id(v)] = ("p", f"i{j}", None)
    outputs = {id(v): k for k, v in enumerate(group.outvars)}
    scratch, elementary, more = [], False, False

    def element(a):  # atom a at element j
        where = home[id(a)]
        if where[0] == "s":
            return where[1]
        return f"{where[1]}[j % {where[2]}]" if where[2] else f"{where[1]}[j]"

    def value_of(eqn, operands):
        nonlocal elementary, more
        entry = _entry(eqn)
        if entry is None:
            return c_forms.expr(eqn, operands)
        if entry[0] not in ("elementary", "elementary2"):
            raise c_forms.Unsupported(f"{eqn.primitive.name} on the GPU")
        value, uses_more = _elementary_call(entry, c_forms.ctype(eqn.outvars[0].aval), operands)
        elementary, more = True, more or uses_more
        return value

    def fold(op, t, pointer, dest):  # the row's canonical reduction, assigned to dest
        if op not in _FOLDS:
            raise c_forms.Unsupported(f"reduction {op} on the GPU")
        return (f"{{ const {t} *r = {pointer} + j0; const long long row = R; "
                f"{dest} = {_FOLDS[op].format(t='f64' if t == 'double' else 'f32')}; }}")

    def full_pointer(out, t):  # where a full value's elements go
        if id(out) in outputs:
            return f"(({t} *)p[{n_in + outputs[id(out)]}])"
        scratch.append(np.dtype(out.aval.dtype))
        return f"(({t} *)p[{2 * n_in + n_out + len(scratch) - 1}])"

    for m, (eqn, args, kind) in enumerate(zip(group.eqns, group.args, group.kinds,
                                               strict=True)):
        out = eqn.outvars[0]
        t = c_forms.ctype(out.aval)
        if kind == "full":
            pointer = full_pointer(out, t)
            lines.append(f"for (long long j = j0; j < j0 + R; j++) "
                         f"{pointer}[j] = {value_of(eqn, [element(a) for a in args])};")
            home[id(out)] = ("p", pointer, None)
            continue
        if kind == "spread":
            home[id(out)] = home[id(args[0])]
        elif kind == "reduce":
            red = getattr(lowering(eqn.primitive).impl, "entry", None)
            if (red is None or np.dtype(out.aval.dtype) not in (np.float32, np.float64)
                    or home[id(args[0])][0] != "p" or home[id(args[0])][2]):
                raise c_forms.Unsupported(f"{eqn.primitive.name} of {out.aval.str_short()}")
            lines += [f"{t} r{m};", fold(red[1], t, home[id(args[0])][1], f"r{m}")]
            home[id(out)] = ("s", f"r{m}")
        else:  # "row": of the row's values
            if any(home[id(a)][0] != "s" for a in args):
                raise c_forms.Unsupported(f"{eqn.primitive.name} of a full value")
            operands = [home[id(a)][1] for a in args]
            if lowering(eqn.primitive).row_reduction:  # of unit axes: the one term
                red = getattr(lowering(eqn.primitive).impl, "entry", None)
                if red is None or np.dtype(out.aval.dtype) not in (np.float32, np.float64):
                    raise c_forms.Unsupported(f"{eqn.primitive.name} of {out.aval.str_short()}")
                value = (f"{'add_f' if t == 'float' else 'add_d'}({operands[0]}, ({t})0)"
                         if red[1] in ONE_TERM_ADDS_ZERO else operands[0])
            else:
                value = value_of(eqn, operands)
            lines.append(f"const {t} r{m} = {value};")
            home[id(out)] = ("s", f"r{m}")
        if id(out) in outputs:  # a row value (or its view) read outside the group
            o = f"(({t} *)p[{n_in + outputs[id(out)]}])"
            lines.append(f"{o}[rr] = {home[id(out)][1]};" if out.aval.shape != group.shape
                         else f"for (long long j = j0; j < j0 + R; j++) {o}[j] = "
                              f"{home[id(out)][1]};")
    first = n_out - len(group.reductions)
    for k, r in enumerate(group.reductions, first):
        red = getattr(lowering(r.primitive).impl, "entry", None)
        src = home[id(r.invars[0])]
        t = c_forms.ctype(r.invars[0].aval)
        if red is None or t not in ("float", "double") or src[0] != "p" or src[2]:
            raise c_forms.Unsupported(f"{r.primitive.name} of {r.invars[0].aval.str_short()}")
        lines.append(fold(red[1], t, src[1], f"(({t} *)p[{n_in + k}])[rr]"))
    source = _source(more, ["GROUP_FN void group_thread(void *const *p, long long rr) {",
                            *(f"    {x}" for x in lines), "}"], n_in, n_out, len(scratch))
    return GroupKernel(source, True, tuple(scratch), elementary)


def _entry_point(n_in: int, n_out: int, n_scratch: int) -> list:
    """The CUDA kernel's lines: its parameters gathered into the table ``p``."""
    arrays, periods = n_in + n_out, range(n_in + n_out, n_in + n_out + n_in)
    params = [f"long long a{j}" if j in periods else f"void *a{j}"
              for j in range(arrays + n_in + n_scratch)]
    table = [f"(void *)(intptr_t)a{j}" if j in periods else f"a{j}" for j in range(len(params))]
    return [f'extern "C" __global__ void group({", ".join([*params, "long long n"])}) {{',
            f"    void *const p[{len(table) + 1}] = {{{', '.join([*table, '0'])}}};",
            "    long long rr = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
            "    if (rr < n) group_thread(p, rr);", "}"]


def _reduced_type(group, key) -> str:
    """The C type of the group's value ``key`` (``id``) that a reduction reads."""
    for r in group.reductions:
        if id(r.invars[0]) == key:
            return c_forms.ctype(r.invars[0].aval)
    raise AssertionError("not a reduced value")


def operands(group, arrays) -> tuple:
    """``(arrays, periods)`` for ``p``: the group's operand values (``arrays``: NumPy arrays
    of the group's shape or broadcast to it), each read in place
    where it is contiguous or a contiguous block of trailing axes repeated (its period),
    else a contiguous copy; 0-d values and literals have period 1."""
    ready, out = [], []
    for v, x in zip(group.invars, arrays, strict=True):
        period = 1
        if not (isinstance(v, Literal) or v.aval.shape == ()):
            period = _period(x, np.dtype(v.aval.dtype))
            if period is None:
                x = np.ascontiguousarray(x)
                period = x.size
        ready.append(x)
        out.append(period)
    return ready, out

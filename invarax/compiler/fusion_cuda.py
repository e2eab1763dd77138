"""Fusion groups as CUDA kernels: a group's chain of members, one thread per element.

The same group description as the native CPU path (``fusion_native.py``) and the same
per-element C forms (``c_forms.py``, from the lowering table), so a GPU group computes each
element by the operations of the unfused ops, bit for bit (N3): a member with a C form is
its expression; an elementary function (``exp`` to ``cosh``, float32 or float64) calls
``csrc/elementary_scalar.h``'s per-element function, which the CPU's loops also give every
element. The kernel is

    extern "C" __global__ void group(void *const *p, long long n)

with ``p`` (in device memory) holding the group's invars (arrays: their elements; 0-d
values: a pointer to the value; literals are written into the source), its outputs, and
then each invar's period ``P`` (a broadcast operand repeats every ``P`` elements: element
``i`` reads ``i % P``). The element function is plain C, so the host compiles the same
source (``group_host`` loops over the elements) and the tests compare it with the unfused
ops on the CPU. Groups with row reductions, and members without a per-element form, raise
``c_forms.Unsupported`` (they are not GPU groups yet).
"""

from __future__ import annotations

import numpy as np

from ..core.ir import Literal
from . import c_forms
from .fusion_native import _entry, _period

#: The elementary functions a GPU group computes (the kernels' first numbers: exp to cosh).
ELEMENTARY_CODES = range(11)


def group_source(group) -> str:
    """The CUDA (and host C) source of ``group``'s kernel (see the module docstring).

    Raises ``c_forms.Unsupported`` for a group this path does not compute."""
    if group.reductions:
        raise c_forms.Unsupported("row reductions")
    n_in, n_out = len(group.invars), len(group.outvars)
    lines, home = [], {}
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
        elif entry[0] == "elementary" and entry[1] in ELEMENTARY_CODES:
            value = (f"elem_f64_scalar({entry[1]}, {operands[0]})" if t == "double" else
                     f"elem_f32_value({entry[1]}, {operands[0]})")
        else:
            raise c_forms.Unsupported(f"{eqn.primitive.name} on the GPU")
        lines.append(f"const {t} v{m} = {value};")
        home[id(out)] = f"v{m}"
    for k, v in enumerate(group.outvars):
        t = c_forms.ctype(v.aval)
        lines.append(f"(({t} *)p[{n_in + k}])[i] = {home[id(v)]};")
    return "\n".join([
        '#include "elementary_scalar.h"', c_forms.PRELUDE,
        "#ifdef __CUDACC__", "#define GROUP_ELEMENT static __device__ __forceinline__",
        "#else", "#define GROUP_ELEMENT static inline", "#endif",
        "GROUP_ELEMENT void group_element(void *const *p, long long i) {",
        *(f"    {x}" for x in lines), "}",
        "#ifdef __CUDACC__",
        'extern "C" __global__ void group(void *const *p, long long n) {',
        "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
        "    if (i < n) group_element(p, i);", "}",
        "#else",
        "void group_host(void *const *p, long long n) {",
        "    for (long long i = 0; i < n; i++) group_element(p, i);", "}",
        "#endif", ""])


def periods(group, arrays) -> list:
    """The period of each invar for ``p`` (``arrays``: the group's operand values, of the
    group's shape or broadcast to it), or None where one is neither contiguous nor a
    contiguous block of trailing axes repeated."""
    out = []
    for v, x in zip(group.invars, arrays, strict=True):
        if isinstance(v, Literal) or v.aval.shape == ():
            out.append(1)
            continue
        period = _period(x, np.dtype(v.aval.dtype))
        if period is None:
            return None
        out.append(period)
    return out

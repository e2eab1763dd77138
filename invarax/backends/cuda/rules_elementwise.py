"""GPU rules of the elementwise operations: each a one-member fusion group.

An eager elementwise operation is compiled as the fusion group of its one equation
(``compiler/fusion_cuda.py``), so it computes each element by the per-element C form the
CPU's loops and groups use (or the CPU's own elementary function): the CPU's bits. A
kernel is made once per primitive, parameters and operand dtypes (0-d operands apart) and
cached; an operation it cannot express (a member without a per-element form) runs on the
host.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...compiler import c_forms, fusion_cuda
from ...compiler.fusion import Group
from ...core.aval import ShapedArray
from ...core.lowering import LOWERINGS, register_lowering
from ...interpreters.staging import trace_to_jaxpr
from ...kernels import cuda
from .runner import NotOnDevice, require_exact_elementary


@functools.cache
def _kernel(prim, params: tuple, operands: tuple):
    """The group kernel of ``prim`` with ``params`` on operands ``(dtype, is 0-d)``, and its
    output dtypes; None if it has no GPU form."""
    scalar = all(zero for _, zero in operands)
    avals = [ShapedArray((), d) if zero and not scalar else ShapedArray((1,), d)
             for d, zero in operands]
    closed = trace_to_jaxpr(lambda args: _bind(prim, args, dict(params)), avals,
                            f"the GPU kernel of {prim.name}")
    eqns = closed.jaxpr.eqns
    if len(eqns) != 1:
        return None
    eqn = eqns[0]
    group = Group((1,))
    group.eqns, group.args, group.kinds = [eqn], [list(eqn.invars)], ["full"]
    group.invars = list(dict.fromkeys(eqn.invars))
    group.outvars = list(eqn.outvars)
    try:
        return fusion_cuda.group_kernel(group), [v.aval.dtype for v in eqn.outvars]
    except c_forms.Unsupported:
        return None


def _bind(prim, args, params):
    out = prim.bind(*args, **params)
    return list(out) if prim.multiple_results else [out]


def _elementwise(prim):
    def impl(*xs, **params):
        cupy = cuda._cupy()
        key = tuple((np.dtype(x.dtype), x.ndim == 0) for x in xs)
        made = _kernel(prim, tuple(sorted(params.items())), key)
        if made is None:
            raise NotOnDevice(f"{prim.name} of {', '.join(str(d) for d, _ in key)} has no "
                              "per-element GPU form yet")
        kernel, dtypes = made
        if kernel.uses_elementary:
            require_exact_elementary(prim.name)
        shape = next((x.shape for x in xs if x.ndim), ())
        size = math.prod(shape)
        outs = [cupy.empty(shape, d) for d in dtypes]
        if size:
            cuda.group(kernel.source, xs, outs, size)
        return outs if prim.multiple_results else outs[0]
    return impl


def _register():
    for prim, rule in list(LOWERINGS["cpu"].items()):
        if rule.fusible:
            register_lowering(prim, platform="cuda", impl=_elementwise(prim))


_register()

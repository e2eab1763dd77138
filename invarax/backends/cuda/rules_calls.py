"""GPU rules of calls and loops: ``jit``, custom derivatives, ``checkpoint``, ``cond``,
``while_loop`` and ``scan``.

A call's body, a branch and a loop's body each run as a GPU program (``program.py``): the
CPU's optimised program, its fusion groups as one kernel each, every other operation by its
GPU rule, so it gives the CPU's bits of the call (``jit`` is bitwise eager: N3). A loop runs
on the host, its body on the device; the values that steer it (a ``cond`` index, a
``while`` predicate) are read back once per step.
"""

from __future__ import annotations

from ...compiler.call import jit_p
from ...control_flow.cond import cond_p
from ...control_flow.scan import scan_p
from ...control_flow.while_loop import while_p
from ...core.array import ArrayImpl
from ...core.aval import ShapedArray
from ...core.lowering import register_lowering
from ...distributed.shardings import on_device
from ...kernels import cuda
from ...transforms._checkpoint import checkpoint_p
from ...transforms._custom_jvp import custom_jvp_call_p
from ...transforms._custom_vjp import custom_vjp_call_p
from .program import program


def _call(param: str):
    def impl(device, *args, **params):
        return program(params[param])(device, args)
    return impl


def _cond(device, index, *operands, branches):
    return program(branches[int(index)])(device, operands)


def _while(device, *args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(program(cond_jaxpr)(device, (*cc, *carry))[0]):
        carry = program(body_jaxpr)(device, (*bc, *carry))
    return carry


def _scan(device, *args, jaxpr, length, linear, num_carry, num_consts, reverse, unroll):
    consts, carry = args[:num_consts], list(args[num_consts:num_consts + num_carry])
    xs = [(on_device(x, device), ShapedArray(x.shape[1:], x.dtype, x.weak_type))
          for x in args[num_consts + num_carry:]]
    ys = [[None] * length for _ in jaxpr.out_avals[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        step = [ArrayImpl.on_device(buffer[i], device, aval) for buffer, aval in xs]
        outs = program(jaxpr)(device, (*consts, *carry, *step))
        carry = outs[:num_carry]
        for column, y in zip(ys, outs[num_carry:], strict=True):
            column[i] = on_device(y, device)
    cupy = cuda._cupy()
    with device.context():
        stacked = [ArrayImpl.on_device(
            cupy.stack(column) if length else cupy.empty((0, *a.shape), a.dtype), device,
            ShapedArray((length, *a.shape), a.dtype, a.weak_type))
            for column, a in zip(ys, jaxpr.out_avals[num_carry:], strict=True)]
    return [*carry, *stacked]


def _register():
    rules = {jit_p: _call("jaxpr"), custom_jvp_call_p: _call("call_jaxpr"),
             custom_vjp_call_p: _call("call_jaxpr"), checkpoint_p: _call("jaxpr"),
             cond_p: _cond, while_p: _while, scan_p: _scan}
    for prim, impl in rules.items():
        register_lowering(prim, platform="cuda", impl=impl, on_arrays=True)


_register()

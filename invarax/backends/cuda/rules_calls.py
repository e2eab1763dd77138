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
from ...distributed.devices import CudaDevice
from ...distributed.shardings import SingleDeviceSharding, on_device
from ...kernels import cuda
from ...transforms._checkpoint import checkpoint_p
from ...transforms._custom_jvp import custom_jvp_call_p
from ...transforms._custom_vjp import custom_vjp_call_p
from .program import program
from .runner import target


def _run(prim, closed, args):
    """``closed`` on ``args`` as a GPU program (for ``prim``'s placement of ``args``)."""
    return program(closed)(prim, list(args))


def _committed(prim, args, outs):
    """``outs``, committed to the device when an operand of the call was."""
    device, committed = target(prim, args)
    if committed and isinstance(device, CudaDevice):
        for out in outs:
            if isinstance(out, ArrayImpl) and out._sharding is None:
                out._sharding = SingleDeviceSharding(device)
    return outs


def _call(prim, param: str):
    def impl(*args, **params):
        return _committed(prim, args, _run(prim, params[param], args))
    return impl


def _cond(index, *operands, branches):
    outs = _run(cond_p, branches[int(index)], operands)
    return _committed(cond_p, (index, *operands), outs)


def _while(*args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(_run(while_p, cond_jaxpr, (*cc, *carry))[0]):
        carry = _run(while_p, body_jaxpr, (*bc, *carry))
    return _committed(while_p, args, carry)


def _scan(*args, jaxpr, length, linear, num_carry, num_consts, reverse, unroll):
    device = target(scan_p, args)[0]
    consts, carry = args[:num_consts], list(args[num_consts:num_consts + num_carry])
    xs = [(on_device(x, device), ShapedArray(x.shape[1:], x.dtype, x.weak_type))
          for x in args[num_consts + num_carry:]]
    ys = [[None] * length for _ in jaxpr.out_avals[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        step = [ArrayImpl.on_device(buffer[i], device, aval) for buffer, aval in xs]
        outs = _run(scan_p, jaxpr, (*consts, *carry, *step))
        carry = outs[:num_carry]
        for column, y in zip(ys, outs[num_carry:], strict=True):
            column[i] = on_device(y, device)
    cupy = cuda._cupy()
    with device.context():
        stacked = [ArrayImpl.on_device(
            cupy.stack(column) if length else cupy.empty((0, *a.shape), a.dtype), device,
            ShapedArray((length, *a.shape), a.dtype, a.weak_type))
            for column, a in zip(ys, jaxpr.out_avals[num_carry:], strict=True)]
    return _committed(scan_p, args, [*carry, *stacked])


def _register():
    rules = {jit_p: _call(jit_p, "jaxpr"),
             custom_jvp_call_p: _call(custom_jvp_call_p, "call_jaxpr"),
             custom_vjp_call_p: _call(custom_vjp_call_p, "call_jaxpr"),
             checkpoint_p: _call(checkpoint_p, "jaxpr"),
             cond_p: _cond, while_p: _while, scan_p: _scan}
    for prim, impl in rules.items():
        register_lowering(prim, platform="cuda", impl=impl, on_arrays=True)


_register()

"""Eager operations on a GPU: where each runs, and running it there.

An operation runs on the device its committed operands are on (``device_put`` commits an
array; an operation's output is committed when one of its operands is), else on the
default device. Operands committed to different devices are an error that names both and
the fix. On a GPU the operation runs its ``"cuda"`` rule of the lowering table, on the
operands' buffers in that GPU's memory (a host array is copied there once: it keeps the
copy); its outputs stay there until read. A primitive without a GPU rule, or a case its
rule does not cover, runs on the host with the same bits (its operands are copied back,
its outputs stay host arrays placed on the GPU, copied there when first used) and a
warning names it once.
"""

from __future__ import annotations

import threading
import warnings

from ...core import backends, dtypes, narrow
from ...core.array import ArrayImpl
from ...core.config import config
from ...core.lowering import LOWERINGS
from ...core.trace import run_on_host
from ...distributed.devices import CudaDevice, default_device
from ...distributed.shardings import SingleDeviceSharding, on_device

#: Primitives that run on the host by nature (they call Python or another process): no
#: warning when they do.
HOST = frozenset({"debug_callback", "io_callback", "pure_callback", "all_gather",
                  "all_to_all", "axis_index", "pmax", "pmin", "ppermute", "psum",
                  "psum_scatter", "sharding_constraint"})


class NotOnDevice(Exception):
    """A GPU rule does not cover this case (the message says which): it runs on the host."""


def require_exact_elementary(what: str) -> None:
    """The GPU computes invarax's own elementary functions: with them switched off on the
    CPU (NumPy's ufuncs instead), ``what`` runs on the host, to keep the CPU's bits."""
    if not config.invarax_exact_elementary:
        raise NotOnDevice(f"{what} with invarax_exact_elementary off (the CPU then uses "
                          "NumPy's functions, which the GPU does not have)")


class CudaRunner(backends.Runner):
    """Puts eager operations on this process's GPUs (see the module docstring)."""

    def __init__(self, devices: list):
        self.devices = devices
        self._warned = set()
        self._lock = threading.Lock()

    def run(self, primitive, args, params, out_avals):
        device, committed = target(primitive, args)
        if device is None:
            return None
        if device == "host":  # committed to a CPU device: computed there, and stays there
            return _placed(run_on_host(primitive, args, [x.aval for x in args], params,
                                       out_avals), committed, primitive)
        rule = LOWERINGS.get("cuda", {}).get(primitive)
        if dtypes._ML_SET and (narrow.involves([x.aval for x in args]) or narrow.involves(
                out_avals if primitive.multiple_results else (out_avals,))):
            return self._host(primitive, args, params, out_avals, device, committed,
                              "the narrow types (bfloat16, float8, ...) run on the host")
        if rule is None:
            return self._host(primitive, args, params, out_avals, device, committed,
                              "it has no GPU kernel yet")
        if rule.on_arrays:  # (a call or a loop: its outputs may be its operands themselves)
            outs = rule.impl(device, *args, **params)
            return _placed(outs, SingleDeviceSharding(device) if committed else None, primitive)
        buffers = [on_device(x, device) for x in args]
        try:
            with device.context():
                outs = rule.impl(*buffers, **params)
        except NotOnDevice as e:
            return self._host(primitive, args, params, out_avals, device, committed, str(e))
        if primitive.multiple_results:
            return [_wrap(o, a, device, committed, primitive)
                    for o, a in zip(outs, out_avals, strict=True)]
        return _wrap(outs, out_avals, device, committed, primitive)

    def _host(self, primitive, args, params, out_avals, device, committed, why):
        if primitive.name not in HOST:
            self._warn(f"{primitive.name} runs on the host, not on the GPU: {why}. Its "
                       "results are the same bits; only the time differs.")
        avals = [x.aval for x in args]
        outs = run_on_host(primitive, args, avals, params, out_avals)
        return _placed(outs, SingleDeviceSharding(device) if committed else None, primitive)

    def _warn(self, message: str) -> None:
        with self._lock:
            if message in self._warned:
                return
            self._warned.add(message)
        warnings.warn(message + " (shown once)", RuntimeWarning, stacklevel=5)


def _placed(outs, sharding, primitive):
    """The outputs, those not yet placed committed with ``sharding`` (None: left as they
    are)."""
    if sharding is not None:
        for out in outs if primitive.multiple_results else (outs,):
            if isinstance(out, ArrayImpl) and out._sharding is None:
                out._sharding = sharding
    return outs


def target(primitive, args) -> tuple:
    """``(device, committed)``: the GPU an operation on ``args`` runs on and whether an
    operand is committed to it; ``("host", sharding)`` for operands committed to one CPU
    device (the outputs are placed there too); ``(None, ...)`` for the host otherwise."""
    committed = None
    for x in args:
        sharding = x._sharding
        if sharding is None:
            continue
        device = getattr(sharding, "_device", None)
        if not isinstance(device, CudaDevice):
            if any(isinstance(d, CudaDevice) for d in sharding.device_set):
                raise NotImplementedError(
                    f"{primitive.name}: an operand is placed with {sharding}, over several "
                    "GPUs; invarax places arrays on one GPU at a time so far. Put it on one "
                    "with invarax.device_put(x, invarax.devices('gpu')[0]).")
            device = "host"
        if committed is None:
            committed = (device, x)
        elif committed[0] is not device:
            raise ValueError(
                f"{primitive.name} received operands committed to different devices: one of "
                f"shape {committed[1].shape} is on {_where(committed[0])} and one of shape "
                f"{x.shape} is on {_where(device)}. Move one to the other's device first, "
                "e.g. invarax.device_put(x, y.devices().pop()).")
    if committed is not None:
        if committed[0] != "host":
            return committed[0], True
        sharding = committed[1]._sharding
        return ("host", sharding) if isinstance(sharding, SingleDeviceSharding) else (None, True)
    device = default_device()
    return (device, False) if isinstance(device, CudaDevice) else (None, False)


def _where(device) -> str:
    return "the CPU" if device == "host" else repr(device)


def _wrap(buffer, aval, device, committed: bool, primitive) -> ArrayImpl:
    if tuple(buffer.shape) != aval.shape or buffer.dtype != aval.dtype:
        raise AssertionError(
            f"internal error: the GPU rule of {primitive} gave {buffer.dtype}"
            f"{list(buffer.shape)}, its abstract eval {aval.str_short()}")
    out = ArrayImpl.on_device(buffer, device, aval)
    if committed:
        out._sharding = SingleDeviceSharding(device)
    return out


backends.FACTORIES["cuda"] = CudaRunner

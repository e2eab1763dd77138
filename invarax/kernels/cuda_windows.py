"""The gradient of max (min) windows on an NVIDIA GPU, CuPy arrays in and out, with the
CPU's bits: ``select_and_gather_add`` and ``select_and_scatter_add`` (the max-pooling
gradient) are ``window_argselect`` followed by ``window_gather`` or ``window_scatter_add``,
as on the CPU (``kernels.windows``).

Each output (or, for the scatter, each operand element) is computed by
``csrc/device/windows.h``: the first maximum (minimum) of a window in window order, or its
first NaN; the tangent at that position; and an operand element's sum of the values that
its windows' selections send it, in increasing output position, from +0. The scatter runs
one thread an operand element that visits the windows holding it in output order, so
no atomics. The kernels are ``csrc/device/windows_grad.cu``; float32 and float64.

This module needs CuPy and a GPU only when a function is called; importing it needs
neither.
"""

from __future__ import annotations

import math

import numpy as np

from . import cuda as _cuda  # _cuda._cupy() looked up per call: a stand-in set there is used
from .cuda import _kernel, _launch, window_desc

_SOURCE = "windows_grad.cu"
_OPS = ("max", "min")


def _desc(shape, params):
    """The window description of an operand of ``shape`` on the device, and the output
    shape, or None for the output shape when a window is empty (then nothing is selected)."""
    desc, out = window_desc(shape, *params)
    empty = 0 in params[0] or 0 in out
    return _cuda._cupy().asarray(desc), out, empty


def _indices(idx):
    return _cuda._cupy().ascontiguousarray(idx.astype(np.int32, copy=False))


def window_argselect(op: str, x, window, strides, padding, base_dilation, window_dilation):
    """The int32 window position (row-major) of each window's first maximum (``op`` =
    ``"max"``) or minimum, or first NaN, of the float CuPy array ``x`` padded with
    ``-inf`` (``+inf``) (the arguments of ``kernels.windows.window_argselect``): the CPU's."""
    if op not in _OPS:
        raise ValueError(f"window_argselect selects a window's 'max' or 'min', not {op!r}")
    cupy = _cuda._cupy()
    params = (window, strides, padding, base_dilation, window_dilation)
    desc, shape, empty = _desc(x.shape, params)
    idx = cupy.empty(shape, np.int32)
    if empty:
        idx[...] = 0
    else:
        _launch(_kernel("wgrad_argselect", x.dtype, _SOURCE), idx.size,
                (cupy.ascontiguousarray(x), idx, desc, np.int32(op == "max"),
                 np.int64(idx.size)))
    return idx


def window_gather(t, idx, window, strides, padding, base_dilation, window_dilation):
    """For every window, the float CuPy array ``t`` (padded and dilated with zeros) at the
    window position ``idx`` (``window_argselect``'s; the arguments of
    ``kernels.windows.window_gather``): the CPU's bits."""
    cupy = _cuda._cupy()
    params = (window, strides, padding, base_dilation, window_dilation)
    desc, shape, empty = _desc(t.shape, params)
    if tuple(idx.shape) != tuple(shape):
        raise ValueError(f"window_gather: idx has shape {idx.shape}, the windows of an "
                         f"operand of shape {t.shape} are {shape}")
    out = cupy.empty(shape, t.dtype)
    if empty:
        out[...] = 0
    else:
        _launch(_kernel("wgrad_gather", t.dtype, _SOURCE), out.size,
                (cupy.ascontiguousarray(t), _indices(idx), out, desc, np.int64(out.size)))
    return out


def window_scatter_add(src, idx, shape, window, strides, padding, base_dilation,
                       window_dilation):
    """The transpose of ``window_gather``: a new float CuPy array of ``shape`` whose element
    receiving the values ``src[o]`` (of the outputs ``o`` whose window position ``idx[o]``
    is that element) is ``((0 + s_a) + s_b) + ...`` in increasing output position, an
    element no value reaches +0 (the arguments of ``kernels.windows.window_scatter_add``):
    the CPU's bits."""
    cupy = _cuda._cupy()
    params = (window, strides, padding, base_dilation, window_dilation)
    desc, out_shape, empty = _desc(tuple(shape), params)
    if tuple(src.shape) != tuple(out_shape) or tuple(idx.shape) != tuple(out_shape):
        raise ValueError(f"window_scatter_add: src and idx must have the windows' shape "
                         f"{out_shape} (operand {tuple(shape)}), got {src.shape} and "
                         f"{idx.shape}")
    out = cupy.empty(tuple(shape), src.dtype)
    if empty:
        out[...] = 0
    elif math.prod(shape):
        _launch(_kernel("wgrad_scatter", src.dtype, _SOURCE), out.size,
                (cupy.ascontiguousarray(src), _indices(idx), out, desc, np.int64(out.size)))
    return out

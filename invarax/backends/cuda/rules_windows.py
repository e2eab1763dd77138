"""GPU rules of the gradient of max (min) windows: ``select_and_gather_add`` (a max
pool's tangent) and ``select_and_scatter_add`` (its cotangent, the max-pooling gradient).

As on the CPU (``ops/windowed.py``), each selects every window's first maximum (minimum)
and then gathers the tangent there or adds the cotangent there, in increasing output
position (``kernels/cuda_windows.py``): the CPU's bits. float32 and float64 run on the
GPU; other dtypes on the host.
"""

from __future__ import annotations

import numpy as np

from ...core.lowering import register_lowering
from ...kernels import cuda, cuda_windows
from ...ops import windowed
from .runner import NotOnDevice

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check(name: str, *operands) -> None:
    dtypes = [np.dtype(x.dtype) for x in operands]
    if any(d not in _FLOATS for d in dtypes):
        raise NotOnDevice(f"{name} of {', '.join(map(str, dtypes))} (the GPU computes it for "
                          "float32 and float64)")
    if operands[-1].ndim > cuda._WIN_DIMS:
        raise NotOnDevice(f"{name} of {operands[-1].ndim} axes (the GPU's windows take up "
                          f"to {cuda._WIN_DIMS})")


def _gather(t, x, *, op, **params):
    _check("select_and_gather_add", t, x)
    args = [params[p] for p in windowed._PARAMS]
    return cuda_windows.window_gather(t, cuda_windows.window_argselect(op, x, *args), *args)


def _scatter(s, x, *, op, **params):
    _check("select_and_scatter_add", s, x)
    args = [params[p] for p in windowed._PARAMS]
    idx = cuda_windows.window_argselect(op, x, *args)
    return cuda_windows.window_scatter_add(s, idx, x.shape, *args)


register_lowering(windowed.select_and_gather_add_p, platform="cuda", impl=_gather)
register_lowering(windowed.select_and_scatter_add_p, platform="cuda", impl=_scatter)

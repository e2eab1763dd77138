"""A stand-in for CuPy on machines without a GPU: enough of CuPy's API for
``invarax.kernels.cuda`` (arrays, ``cuda.Device``, ``cuda.function.Module``), with
"device" arrays in host memory and kernels run by ``gpu_host_kernels.c`` (the same
per-output functions the device code calls), so that the launch code — argument order and
types, strides, descriptors, output shapes, error paths — runs in CI. The kernels' PTX is
still compiled by NVRTC (``Module.load`` receives it); only its execution is replaced.
"""

from __future__ import annotations

import ctypes
import types
from pathlib import Path

import numpy as np

from invarax.compiler.native_build import load
from invarax.kernels import nvrtc


class ndarray(np.ndarray):  # noqa: N801  (CuPy's name)
    """A "device" array: a NumPy array with CuPy's ``get``."""

    def get(self) -> np.ndarray:
        return np.array(self, copy=True).view(np.ndarray)


def asarray(x, dtype=None):
    return np.array(x, dtype=dtype, copy=True).view(ndarray)


def empty(shape, dtype):
    return np.empty(shape, dtype).view(ndarray)


def empty_like(x):
    return np.empty_like(x).view(ndarray)


def ascontiguousarray(x):
    return np.ascontiguousarray(x).view(ndarray)


def ones(shape, dtype):
    return np.ones(shape, dtype).view(ndarray)


moveaxis = np.moveaxis  # (views keep the ndarray class)


_SOURCE = Path(__file__).with_name("gpu_host_kernels.c")


def _library(symbol: str):
    fn = load(_SOURCE.read_text(), symbol, includes=(str(nvrtc.CSRC), str(nvrtc.DEVICE)))
    if fn is None:
        raise RuntimeError("fake_cupy needs a C compiler")
    return fn


def _c(arg):
    if isinstance(arg, np.ndarray):
        return ctypes.c_void_p(arg.ctypes.data)
    if isinstance(arg, np.int64):
        return ctypes.c_longlong(int(arg))
    if isinstance(arg, np.int32):
        return ctypes.c_int(int(arg))
    raise TypeError(f"a kernel argument CuPy would not pass: {type(arg).__name__}")


class _Function:
    def __init__(self, name: str):
        self.name = name
        self.fn = _library(name)
        self.fn.restype = None
        self.launches = []  # (grid, block) of each launch (tests)

    # The argument that counts the threads a 1-d launch needs (rows, outputs or elements).
    _COUNT = {"reduce": 2, "conv": 4, "elementary": 3, "window": 3, "scan": 2,
              "scatter": 4, "elementary2": 4}

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        assert all(isinstance(g, int) and g > 0 for g in (*grid, *block)), (grid, block)
        self.launches.append((grid, block))
        if self.name.startswith("gemm"):  # 64 x 64 outputs a block, the batch on z
            m, n = int(args[3]), int(args[4])
            assert grid[0] * 64 >= n and grid[1] * 64 >= m and block == (16, 16), (grid, m, n)
        else:
            count = int(args[self._COUNT[self.name.split("_")[0]]])
            assert grid[0] * block[0] >= count and block[0] <= 1024, (grid, block, count)
        extra = (np.int64(grid[2]),) if self.name.startswith("gemm") else ()  # gridDim.z
        self.fn(*map(_c, (*args, *extra)))


class Module:
    """CuPy's ``cuda.function.Module``: ``load`` takes the PTX (checked to be PTX), and
    ``get_function`` gives the kernel of that name, run on the host."""

    def __init__(self):
        self.ptx = None

    def load(self, ptx: bytes) -> None:
        assert ptx.startswith(b"//") and b".visible .entry" in ptx
        self.ptx = ptx

    def get_function(self, name: str) -> _Function:
        assert f".visible .entry {name}(".encode() in self.ptx, f"no kernel {name} in the PTX"
        return _Function(name)


class Device:
    id = 0
    compute_capability = "90"

    def __init__(self, device=0):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass


cuda = types.SimpleNamespace(Device=Device, function=types.SimpleNamespace(Module=Module),
                             runtime=types.SimpleNamespace(getDeviceCount=lambda: 1))

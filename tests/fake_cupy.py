"""A stand-in for CuPy on machines without a GPU: enough of CuPy's API for
``invarax.kernels.cuda`` (arrays, ``cuda.Device``, ``cuda.function.Module``), with
"device" arrays in host memory and kernels run by ``gpu_host_kernels.c`` (the same
per-output functions the device code calls), so that the launch code — argument order and
types, strides, descriptors, output shapes, error paths — runs in CI. The kernels' PTX is
still compiled by NVRTC (``Module.load`` receives it); only its execution is replaced.
"""

from __future__ import annotations

import ctypes
import sys
import types
from pathlib import Path

import numpy as np

from invarax.compiler.native_build import load
from invarax.kernels import nvrtc


class ndarray:  # noqa: N801  (CuPy's name)
    """A "device" array: host memory behind CuPy's interface. As CuPy's, it refuses to
    become a NumPy array implicitly (``np.asarray`` raises; ``.get()`` copies), and NumPy's
    ufuncs refuse it (CuPy would run its own kernels, not the canonical ones), so a value
    that leaks from the GPU path into host code fails here as it would on a GPU."""

    __array_ufunc__ = None

    def __init__(self, a: np.ndarray):
        self._a = a

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    data = property(lambda self: types.SimpleNamespace(ptr=self._a.ctypes.data))
    T = property(lambda self: ndarray(self._a.T))

    def get(self) -> np.ndarray:
        return self._a.copy()

    def reshape(self, *shape):
        return ndarray(self._a.reshape(*shape))

    def transpose(self, *axes):
        return ndarray(self._a.transpose(*axes))

    def astype(self, dtype, copy=True):
        return ndarray(self._a.astype(dtype, copy=copy))

    def copy(self):
        return ndarray(self._a.copy())

    def __getitem__(self, index):
        return ndarray(self._a[_host(index)])

    def __setitem__(self, index, value):
        self._a[_host(index)] = _host(value)

    def __len__(self):
        return len(self._a)

    def __repr__(self):
        return f"fake_cupy.ndarray({self._a!r})"


def _host(x):
    """The host arrays behind ``x`` (an index, a value; nested in tuples)."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, tuple):
        return tuple(map(_host, x))
    return x


def _wrapped(fn):
    """A CuPy function made from NumPy's ``fn``: device arrays in, device arrays out."""
    def apply(*args, **kwargs):
        args = [[_host(a) for a in x] if isinstance(x, list | tuple) and x and isinstance(
            x[0], ndarray) else _host(x) for x in args]
        return ndarray(fn(*args, **{k: _host(v) for k, v in kwargs.items()}))
    return apply


def asarray(x, dtype=None):
    if isinstance(x, ndarray):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    x = np.array(x, dtype=dtype, copy=True)
    if x.dtype.kind not in "biufc":  # as CuPy: no ml_dtypes types, no objects
        raise TypeError(f"Unsupported dtype {x.dtype}")
    return ndarray(x)


empty = _wrapped(np.empty)
ones = _wrapped(np.ones)
empty_like = _wrapped(np.empty_like)
ascontiguousarray = _wrapped(np.ascontiguousarray)
moveaxis = _wrapped(np.moveaxis)
broadcast_to = _wrapped(np.broadcast_to)
concatenate = _wrapped(np.concatenate)
stack = _wrapped(np.stack)
take = _wrapped(np.take)
take_along_axis = _wrapped(np.take_along_axis)


_SOURCE = Path(__file__).with_name("gpu_host_kernels.c")


def _library(symbol: str):
    fn = load(_SOURCE.read_text(), symbol, includes=(str(nvrtc.CSRC), str(nvrtc.DEVICE)))
    if fn is None:
        raise RuntimeError("fake_cupy needs a C compiler")
    return fn


def _c(arg):
    """``arg`` as the host twin's C argument (a device array, or a host array for the
    tests that call the twins directly)."""
    if isinstance(arg, ndarray | np.ndarray):
        return ctypes.c_void_p(_host(arg).ctypes.data)
    if isinstance(arg, np.int64):
        return ctypes.c_longlong(int(arg))
    if isinstance(arg, np.int32):
        return ctypes.c_int(int(arg))
    raise TypeError(f"a kernel argument CuPy would not pass: {type(arg).__name__}")


class _Function:
    def __init__(self, name: str, fn=None):
        self.name = name
        self.fn = _library(name) if fn is None else fn
        self.fn.restype = None
        self.launches = []  # (grid, block) of each launch (tests)

    # The argument that counts the threads a 1-d launch needs (rows, outputs or elements).
    _COUNT = {"reduce": 2, "conv": 4, "elementary": 3, "window": 3, "scan": 2,
              "scatter": 4, "group": -1, "argsort": 3, "cumlogsumexp": 2, "elementary2": 4,
              "index": 0, "wgrad": 4}

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        assert all(isinstance(g, int) and g > 0 for g in (*grid, *block)), (grid, block)
        self.launches.append((grid, block))
        if self.name.startswith("gemm"):  # 64 x 64 outputs a block, the batch on z
            m, n = int(args[3]), int(args[4])
            assert grid[0] * 64 >= n and grid[1] * 64 >= m and block == (16, 16), (grid, m, n)
        else:
            count = int(args[self._COUNT[self.name.split("_")[0]]])
            assert grid[0] * block[0] >= count and block[0] <= 1024, (grid, block, count)
        if self.name == "group":  # the generated kernel's parameters, as group_host's table
            table = [arg._a.ctypes.data if isinstance(arg, ndarray) else int(arg)
                     for arg in args[:-1]]
            self.fn((ctypes.c_void_p * (len(table) + 1))(*table, 0), _c(args[-1]))
            return
        extra = ((np.int64(grid[2]),) if self.name.startswith("gemm")  # gridDim.z
                 else (np.int64(block[0]),) if self.name.startswith("argsort") else ())
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
        source = _GENERATED.get(self.ptx)
        if source is None:
            return _Function(name)
        fn = load(source, "group_host", includes=(str(nvrtc.CSRC), str(nvrtc.DEVICE)))
        assert fn is not None, "fake_cupy needs a C compiler"
        return _Function(name, fn)


#: The generated sources compiled to PTX in this process, by PTX (what ``install``
#: records), so that a module loaded from one runs the same source compiled for the host.
_GENERATED = {}


def _recording(compile_ptx):
    def compile_and_record(name, *, source=None, **options):
        ptx = compile_ptx(name, source=source, **options)
        if source is not None:
            _GENERATED[ptx.encode()] = source
        return ptx
    return compile_and_record


def install(monkeypatch, gpu: bool = True) -> None:
    """Make invarax take this module for CuPy for one test (``monkeypatch`` undoes it).

    ``gpu``: invarax finds its one GPU again (the device probe runs anew), so that eager
    operations and ``jit`` run through the GPU rules and these kernels; False: only
    ``invarax.kernels.cuda`` uses it, and every operation stays on the CPU.
    """
    from invarax.core import backends
    from invarax.distributed import devices
    from invarax.kernels import cuda as invarax_cuda

    monkeypatch.setattr(invarax_cuda, "_cupy", lambda: sys.modules[__name__])
    monkeypatch.setattr(nvrtc, "compile_ptx", _recording(nvrtc.compile_ptx))
    monkeypatch.setattr(devices._registry, "gpus", None if gpu else [])
    monkeypatch.setattr(backends, "_probed", not gpu)
    monkeypatch.setattr(backends, "RUNNER", None)
    invarax_cuda._module.cache_clear()


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


cuda = types.SimpleNamespace(
    Device=Device, function=types.SimpleNamespace(Module=Module),
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1,
                                  getDeviceProperties=lambda i: {"name": b"fake GPU"}))

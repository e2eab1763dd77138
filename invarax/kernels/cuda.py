"""The canonical kernels on an NVIDIA GPU, CuPy arrays in and out: row reductions, batched
contractions, convolutions, window reductions, scans, scatter and the elementary functions
(of one operand and of two).

The kernels are ``csrc/device/*.cu``, compiled by NVRTC (``nvrtc.py``) and loaded
with CuPy's ``Module`` (never ``RawModule``, which would add ``-ftz=true``). Each output
gets the operations of ``csrc/device/order.h`` (the order the CPU kernels compute) or of
``csrc/elementary_scalar.h`` and ``csrc/elementary_scalar_more.h`` (the functions the CPU's
loops give each element), so the results are the CPU's bits.

This module needs CuPy and a GPU only when a function is called; importing it needs
neither.
"""

from __future__ import annotations

import functools

import numpy as np

from . import nvrtc
from .elementary import NAMES, NAMES2
from .windows import out_shape, pad_index

_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
_ROWS = 256  # threads per block of the one-dimensional launches
_GT, _TILE = 16, 64  # the contraction's threads per side and outputs per side of a block


@functools.cache
def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise RuntimeError("the GPU kernels need CuPy: pip install 'invarax[cuda13]' (or "
                           "'invarax[cuda12]' for a CUDA 12 driver)") from e
    return cupy


@functools.cache
def _module(source: str, device_id: int, arch: str, text: str | None = None):
    """The loaded module of the device source ``source`` (or of the generated ``text``
    named ``source``) on device ``device_id``."""
    cupy = _cupy()
    with cupy.cuda.Device(device_id):
        module = cupy.cuda.function.Module()
        module.load(nvrtc.compile_ptx(source, source=text, arch=arch).encode())
    return module


def _arch() -> str:
    """The current device's virtual architecture (CuPy gives its capability as "90")."""
    return f"compute_{_cupy().cuda.Device().compute_capability}"


def _kernel(name: str, dtype, source: str = "kernels.cu", suffixes: dict = _SUFFIX):
    """The kernel ``name`` of ``source`` for ``dtype`` (``suffixes``: each dtype's suffix of
    the kernel names), compiled on first use for the current device."""
    if np.dtype(dtype) not in suffixes:
        names = [t.name for t in suffixes]
        raise TypeError(f"the GPU kernels compute {', '.join(names[:-1])} and {names[-1]}, got "
                        f"{np.dtype(dtype)}")
    module = _module(source, _cupy().cuda.Device().id, _arch())
    return module.get_function(f"{name}_{suffixes[np.dtype(dtype)]}")


def _launch(kernel, threads: int, args: tuple) -> None:
    """Launch ``kernel`` with at least ``threads`` threads in blocks of ``_ROWS`` (each
    thread checks its index against the count it is given)."""
    kernel(((threads + _ROWS - 1) // _ROWS,), (_ROWS,), args)


def _elements(x, axis: int) -> int:
    return x.strides[axis] // x.itemsize


def reduce_rows(op: str, x):
    """Reduce each row of the 2-d CuPy array ``x`` (any strides) by ``op``: ``"sum"``,
    ``"prod"``, ``"max"``, ``"min"``, ``"argmax"`` or ``"argmin"``, in the canonical order.

    Returns a CuPy array of ``x.shape[0]`` results (int64 indices for ``arg*``)."""
    cupy = _cupy()
    if x.ndim != 2:
        raise ValueError(f"reduce_rows reduces the rows of a 2-d array, got shape {x.shape}")
    m, k = x.shape
    if op.startswith("arg") and k == 0:
        raise ValueError(f"{op} of an empty row (shape {x.shape}): it needs k >= 1")
    args = [x, None, np.int64(m), np.int64(k), np.int64(_elements(x, 0)),
            np.int64(_elements(x, 1))]
    if op in ("sum", "prod"):
        name, out = f"reduce_{op}", cupy.empty(m, x.dtype)
    elif op in ("max", "min"):
        name, out = "reduce_extremum", cupy.empty(m, x.dtype)
        args.append(np.int32(op == "max"))
    elif op in ("argmax", "argmin"):
        name, out = "reduce_argextremum", cupy.empty(m, np.int64)
        args.append(np.int32(op == "argmax"))
    else:
        raise ValueError(f"unknown reduction {op!r}: sum, prod, max, min, argmax or argmin")
    args[1] = out
    if m:
        _launch(_kernel(name, x.dtype), m, tuple(args))
    return out


#: The elementary functions the GPU computes: every one of the CPU kernels' (``NAMES``),
#: and ``atan2`` and ``pow`` of two operands (``NAMES2``).
ELEMENTARY = NAMES
ELEMENTARY2 = NAMES2
#: The first function of the kernels ``elementary_more_*`` (elementary_scalar_more.h).
_FIRST_MORE = NAMES.index("log2")


def elementary(name: str, x):
    """``name`` (``"exp"``, ``"tanh"``, ``"lgamma"``, ...: ``ELEMENTARY``) of each element of
    the CuPy array ``x`` (float32: correctly rounded; float64: the CPU's algorithm), a new
    contiguous array of ``x``'s shape: the CPU's bits."""
    cupy = _cupy()
    if name not in ELEMENTARY:
        raise ValueError(f"the GPU computes the elementary functions {ELEMENTARY}, not {name!r}")
    code = NAMES.index(name)
    x = cupy.ascontiguousarray(x)
    y = cupy.empty_like(x)
    if x.size:
        kernel = _kernel("elementary" if code < _FIRST_MORE else "elementary_more", x.dtype,
                         "elementary.cu")
        _launch(kernel, x.size, (np.int32(code), x, y, np.int64(x.size)))
    return y


def elementary2(name: str, x, y):
    """``name`` (``"atan2"`` or ``"pow"``: ``ELEMENTARY2``) of each pair of elements of the
    CuPy arrays ``x`` and ``y`` of one shape and float dtype: ``atan2(x, y)`` is the angle of
    the point ``(y, x)``, ``pow(x, y)`` is ``x ** y`` with C99's special values (float32
    rounded once from a double-double; the CPU's bits). A new contiguous array of their
    shape. Operands are not broadcast: broadcast them first (``cupy.broadcast_to``)."""
    cupy = _cupy()
    if name not in ELEMENTARY2:
        raise ValueError(f"the GPU computes the two-operand functions {ELEMENTARY2}, not "
                         f"{name!r}")
    if x.shape != y.shape:
        raise ValueError(f"elementary2 takes operands of one shape, got {x.shape} and "
                         f"{y.shape}; broadcast them first (cupy.broadcast_to)")
    if x.dtype != y.dtype:
        raise TypeError(f"elementary2 takes operands of one dtype, got {x.dtype} and "
                        f"{y.dtype}; convert one first")
    x, y = cupy.ascontiguousarray(x), cupy.ascontiguousarray(y)
    out = cupy.empty_like(x)
    if x.size:
        _launch(_kernel("elementary2", x.dtype, "elementary.cu"), x.size,
                (np.int32(NAMES2.index(name)), x, y, out, np.int64(x.size)))
    return out


#: The indices of a convolution's description (csrc/device/order.h, ORD_CONV_*).
_CONV_FIELDS = ("N", "C", "O", "G", "B", *(f"{k}{a}" for k in ("S", "W", "Y", "STRIDE",
                                                                  "LHS_DIL", "RHS_DIL", "PAD_LO")
                                            for a in range(3)))


def conv_desc(lhs_shape, rhs_shape, window_strides, padding, lhs_dilation, rhs_dilation,
              feature_group_count: int, batch_group_count: int):
    """``(desc, out_shape)``: the int64 description that ``order.h``'s ``ord_conv`` reads of
    a convolution in canonical layout (the arguments of ``kernels.convolution.conv``), with
    up to three spatial axes, and the output's shape ``(N / B, O, *out_spatial)``."""
    spatial = len(lhs_shape) - 2
    if spatial > 3:
        raise ValueError(f"the GPU convolution has at most 3 spatial axes, got {spatial}")
    n, c, *sizes = lhs_shape
    o, _, *window = rhs_shape
    out = out_shape(pad_index(sizes, padding, lhs_dilation)[0], window, window_strides,
                    rhs_dilation)
    fill = (3 - spatial)  # trailing axes of size 1
    values = dict(N=n, C=c, O=o, G=feature_group_count, B=batch_group_count)
    for key, seq, one in (("S", sizes, 1), ("W", window, 1), ("Y", out, 1),
                          ("STRIDE", window_strides, 1), ("LHS_DIL", lhs_dilation, 1),
                          ("RHS_DIL", rhs_dilation, 1), ("PAD_LO", [lo for lo, _ in padding], 0)):
        for a, v in enumerate([*seq, *[one] * fill]):
            values[f"{key}{a}"] = v
    desc = np.array([values[k] for k in _CONV_FIELDS], np.int64)
    return desc, (n // batch_group_count, o, *out)


def conv(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
         feature_group_count: int = 1, batch_group_count: int = 1):
    """``lax.conv_general_dilated`` of CuPy arrays in canonical layout (``lhs`` ``(N, C,
    *spatial)``, ``rhs`` ``(O, C / G, *window)``, one float dtype; the arguments of
    ``kernels.convolution.conv``), each output the canonical contraction of its window's
    terms: the CPU's bits."""
    cupy = _cupy()
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"conv needs operands of one dtype, got {lhs.dtype} and {rhs.dtype}")
    desc, shape = conv_desc(lhs.shape, rhs.shape, window_strides, padding, lhs_dilation,
                            rhs_dilation, feature_group_count, batch_group_count)
    out = cupy.empty(shape, lhs.dtype)
    if out.size:
        kernel = _kernel("conv", lhs.dtype)
        _launch(kernel, out.size,
                (cupy.ascontiguousarray(lhs), cupy.ascontiguousarray(rhs), out,
                 cupy.asarray(desc), np.int64(out.size)))
    return out


#: The indices of a window reduction's description (csrc/device/order.h, ORD_WIN_*).
_WIN_DIMS = 6
_WINDOW_OPS = {"sum": 0, "max": 1, "min": 2}


def window_desc(shape, window, strides, padding, base_dilation, window_dilation):
    """``(desc, out_shape)``: the int64 description that ``order.h``'s ``ord_window`` reads
    of a window reduction of a contiguous operand of ``shape`` (the arguments of
    ``kernels.windows.window_reduce``, up to six axes), and the output's shape."""
    if len(shape) > _WIN_DIMS:
        raise ValueError(f"the GPU window reductions take at most {_WIN_DIMS} axes, got "
                         f"{len(shape)}")
    out = out_shape(pad_index(shape, padding, base_dilation)[0], window, strides,
                    window_dilation)
    fields = [shape, window, out, strides, [lo for lo, _ in padding], base_dilation,
              window_dilation]
    desc = [len(shape)]
    for values in fields:
        desc += [*values, *[1] * (_WIN_DIMS - len(shape))]
    return np.array(desc, np.int64), tuple(out)


def window_reduce(op: str, x, window, strides, padding, base_dilation, window_dilation):
    """``lax.reduce_window`` with ``lax.add`` (``op`` ``"sum"``), ``lax.max`` or ``lax.min``
    of the float CuPy array ``x`` (the arguments of ``kernels.windows.window_reduce``), each
    output its window reduced in the canonical order: the CPU's bits."""
    cupy = _cupy()
    if op not in _WINDOW_OPS:
        raise ValueError(f"unknown window reduction {op!r}: sum, max or min")
    desc, shape = window_desc(x.shape, window, strides, padding, base_dilation,
                              window_dilation)
    out = cupy.empty(shape, x.dtype)
    if out.size:
        kernel = _kernel("window", x.dtype)
        _launch(kernel, out.size,
                (cupy.ascontiguousarray(x), out, cupy.asarray(desc), np.int64(out.size),
                 np.int32(_WINDOW_OPS[op])))
    return out


_SCANS = {"sum": 0, "prod": 1, "max": 2, "min": 3}


def cumulative(kind: str, x, axis: int, reverse: bool):
    """The inclusive scan of the float CuPy array ``x`` along ``axis`` (the arguments of
    ``kernels.reductions.cumulative``: ``"sum"``, ``"prod"``, ``"max"`` or ``"min"``), each
    ``y[i] = op(y[i-1], x[i])`` in order: the CPU's bits. A new contiguous array."""
    cupy = _cupy()
    if kind not in _SCANS:
        raise ValueError(f"the GPU scans are {sorted(_SCANS)}, not {kind!r}")
    rows, shape = axis_rows(x, axis)
    m, k = rows.shape
    out = cupy.empty(rows.shape, x.dtype)
    if out.size:
        kernel = _kernel("scan", x.dtype)
        _launch(kernel, m,
                (rows, out, np.int64(m), np.int64(k), np.int64(_elements(rows, 0)),
                 np.int64(_elements(rows, 1)), np.int32(_SCANS[kind]), np.int32(reverse)))
    return from_axis_rows(out, shape, axis)


def axis_rows(x, axis: int):
    """``(rows, shape)``: the CuPy array ``x`` with ``axis`` moved last, as a 2-d ``(rows,
    k)`` array (a view where CuPy can), and the moved shape (for ``from_axis_rows``)."""
    moved = _cupy().moveaxis(x, axis, -1)
    return moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1]), moved.shape


def from_axis_rows(rows, shape, axis: int):
    """The inverse of ``axis_rows``: ``rows`` as an array of the moved ``shape``, its last
    axis moved back to ``axis`` (a new contiguous array)."""
    cupy = _cupy()
    return cupy.ascontiguousarray(cupy.moveaxis(rows.reshape(shape), -1, axis))


_SCATTERS = {"set": 0, "add": 1, "mul": 2, "min": 3, "max": 4}
#: The dtypes the scatter kernels take (integers wrap around; bools add as "or").
_SCATTER_SUFFIXES = {**_SUFFIX, np.dtype(np.bool_): "b8",
                     **{np.dtype(f"{k}{b // 8}"): f"{k}{b}" for k in ("i", "u")
                        for b in (8, 16, 32, 64)}}


def scatter_rows(target, rows, updates, combine: str) -> None:
    """Combine ``updates[i]`` into ``target[rows[i]]`` in place, for i in increasing order
    (the arguments of ``kernels.scatter.scatter_rows``: ``target`` a C-contiguous CuPy array
    ``(n, *rest)`` of a float, integer or bool dtype, ``rows`` ints in ``[0, n)``, duplicates
    allowed, or negative for an update to drop, ``updates`` ``(m, *rest)``): the CPU's bits,
    one thread a column of the rows."""
    cupy = _cupy()
    if combine not in _SCATTERS:
        raise ValueError(f"unknown combine {combine!r}: {', '.join(_SCATTERS)}")
    if not target.flags.c_contiguous:
        raise ValueError("scatter_rows writes a C-contiguous target in place; pass "
                         "cupy.ascontiguousarray(target)")
    m = rows.shape[0]
    width = int(np.prod(target.shape[1:], dtype=np.int64))
    if updates.shape != (m, *target.shape[1:]) or updates.dtype != target.dtype:
        raise ValueError(f"updates must be {(m, *target.shape[1:])} of {target.dtype}, got "
                         f"{updates.shape} of {updates.dtype}")
    if m and width:
        kernel = _kernel("scatter", target.dtype, suffixes=_SCATTER_SUFFIXES)
        _launch(kernel, width,
                (target, cupy.ascontiguousarray(rows.astype(np.int64)),
                 cupy.ascontiguousarray(updates), np.int64(m), np.int64(width),
                 np.int32(_SCATTERS[combine])))


def matmul(a, b):
    """The batched product ``(B, M, K) x (B, K, N) -> (B, M, N)`` of CuPy arrays of one float
    dtype (any strides), each output the canonical contraction (blocks of 256 FMA chains,
    block sums added in order)."""
    cupy = _cupy()
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"matmul multiplies (B, M, K) by (B, K, N), got shapes {a.shape} "
                         f"and {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"matmul needs operands of one dtype, got {a.dtype} and {b.dtype}")
    batch, m, k = a.shape
    n = b.shape[2]
    c = cupy.empty((batch, m, n), a.dtype)
    if c.size:
        grid = ((n + _TILE - 1) // _TILE, (m + _TILE - 1) // _TILE, batch)
        strides = [np.int64(_elements(x, i)) for x in (a, b) for i in range(3)]
        _kernel("gemm", a.dtype)(grid, (_GT, _GT), (a, b, c, np.int64(m), np.int64(n),
                                                    np.int64(k), *strides))
    return c


def group(source: str, ins: list, outs: list, n: int, scratch: list = ()):
    """Launch the generated fusion-group kernel ``source`` (``fusion_cuda.group_kernel``)
    with ``n`` threads: ``ins`` its invars' CuPy arrays, each passed whole (a contiguous
    copy where it is not, its period its size), ``outs`` its outputs' and ``scratch`` its
    scratch buffers."""
    cupy = _cupy()
    ins = [x if x.ndim == 0 else cupy.ascontiguousarray(x) for x in ins]
    module = _module("group.cu", cupy.cuda.Device().id, _arch(), source)
    _launch(module.get_function("group"), n,
            (*ins, *outs, *(np.int64(max(x.size, 1)) for x in ins), *scratch, np.int64(n)))

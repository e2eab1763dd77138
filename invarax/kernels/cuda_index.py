"""Gathers, scatters and dynamic slices on an NVIDIA GPU with their index arithmetic on the
device, CuPy arrays in and out: no index value is read back to the host.

``csrc/device/index.h`` writes the arithmetic once, as the CPU computes it: an index
vector's row in the merged indexed axes (each index clamped into its axis, in int64) and
whether it was in bounds (``ops.gather.gather_rows``), and a dynamic slice's start moved
into ``[0, dim - size]`` (``ops.dynamic_slicing.clamped_starts``). The kernels
(``csrc/device/index.cu``) then move values as their bytes, so any dtype moves and the
results are the CPU's bits.

This module needs CuPy and a GPU only when a function is called; importing it needs
neither.
"""

from __future__ import annotations

import math

import numpy as np

from . import cuda as _cuda  # _cuda._cupy() looked up per call: a stand-in set there is used
from .cuda import _kernel, _launch

#: The index dtypes (every integer type, as the CPU's ops take) and their kernels' suffixes.
_INDICES = {np.dtype(t): s for t, s in ((np.int8, "i8"), (np.uint8, "u8"), (np.int16, "i16"),
                                        (np.uint16, "u16"), (np.int32, "i32"),
                                        (np.uint32, "u32"), (np.int64, "i64"),
                                        (np.uint64, "u64"))}
#: The units values move in: an element of ``itemsize`` bytes is ``itemsize / unit`` units.
_UNITS = {np.dtype(t): s for t, s in ((np.uint8, "u8"), (np.uint16, "u16"), (np.uint32, "u32"),
                                      (np.uint64, "u64"))}
#: The most axes a dynamic slice has on the GPU (index.h's IDX_MAX_RANK).
MAX_RANK = 8
_SOURCE = "index.cu"


def _unit(itemsize: int, *arrays) -> np.dtype:
    """The widest unit (8, 4, 2 or 1 bytes) that divides ``itemsize`` and every array's
    address."""
    unit = 8
    while itemsize % unit or any(x.data.ptr % unit for x in arrays):
        unit //= 2
    return np.dtype(f"u{unit}")


def rows(indices, dims, drop: bool = False):
    """The row of each index vector of the integer CuPy array ``indices`` (shape
    ``batch + (k,)``) in the merged axes of sizes ``dims`` (``k`` of them): ``row = row * d
    + clip(index, 0, d - 1)`` over the axes in order, in int64, as ``gather_rows`` on the
    CPU. With ``drop``, a vector with an index outside its axis gets row -1.

    Returns a new int64 CuPy array of shape ``(prod(batch),)``."""
    cupy = _cuda._cupy()
    if indices.ndim == 0 or indices.shape[-1] != len(dims):
        raise ValueError(f"indices of shape {indices.shape} must end in an axis of "
                         f"{len(dims)}, one index per axis of sizes {list(dims)}")
    n = math.prod(indices.shape[:-1])
    out = cupy.empty(n, np.int64)
    if n:
        kernel = _kernel("index_rows", indices.dtype, _SOURCE, _INDICES)
        _launch(kernel, n, (np.int64(n), cupy.ascontiguousarray(indices),
                            cupy.asarray(np.asarray(dims, np.int64)), np.int64(len(dims)),
                            out, np.int32(drop)))
    return out


def take_rows(source, rows, fill=None):
    """``source[rows]`` along the first axis of the C-contiguous CuPy array ``source`` (any
    dtype), ``rows`` an int64 CuPy array of rows in ``[0, len(source))`` (as ``rows()``
    gives), or -1 where the result is ``fill`` (a NumPy scalar of ``source``'s dtype,
    copied bit for bit), when ``fill`` is given.

    Returns a new C-contiguous array of shape ``(len(rows), *source.shape[1:])``."""
    cupy = _cuda._cupy()
    if not source.flags.c_contiguous:
        raise ValueError("take_rows reads a C-contiguous source; pass "
                         "cupy.ascontiguousarray(source)")
    out = cupy.empty((rows.shape[0], *source.shape[1:]), source.dtype)
    filled = source if fill is None else cupy.asarray(
        np.asarray(fill).astype(source.dtype, casting="no").reshape(1))
    unit = _unit(source.dtype.itemsize, source, filled)
    per = source.dtype.itemsize // unit.itemsize  # units an element
    width = math.prod(source.shape[1:]) * per  # units a row
    if out.size and width:
        _launch(_kernel("index_take", unit, _SOURCE, _UNITS), out.size * per,
                (np.int64(out.size * per), source, cupy.ascontiguousarray(rows), filled, out,
                 np.int64(width), np.int64(per)))
    return out


def _window(big, small, starts, update: bool) -> None:
    """Move ``small`` (C-contiguous) from or (``update``) into the window of ``big`` at the
    clamped ``starts`` (0-d integer CuPy arrays, one per axis)."""
    cupy = _cuda._cupy()
    if big.ndim > MAX_RANK:
        raise ValueError(f"the GPU's dynamic slices have at most {MAX_RANK} axes, got "
                         f"{big.ndim}")
    if len(starts) != big.ndim:
        raise ValueError(f"one start index per axis of the operand of shape {big.shape}, got "
                         f"{len(starts)}")
    if not small.size:
        return
    fill = [1] * (MAX_RANK - big.ndim)
    unsigned = sum(1 << a for a, s in enumerate(starts) if s.dtype == np.uint64)
    desc = np.array([big.ndim, *big.shape, *fill, *small.shape, *fill,
                     *(s // big.itemsize for s in big.strides), *fill, unsigned], np.int64)
    # int64 values on the device (a uint64 start above 2**63 wraps: `unsigned` marks it)
    at = cupy.stack([s.astype(np.int64) for s in starts]) if starts else small
    unit = _unit(big.itemsize, big, small)
    per = big.itemsize // unit.itemsize
    _launch(_kernel("index_window", unit, _SOURCE, _UNITS), small.size * per,
            (np.int64(small.size * per), big, small, cupy.asarray(desc), at, np.int64(per),
             np.int32(update)))


def _strided(x):
    """``x``, or a contiguous copy when a stride is not a whole number of elements."""
    if any(s % x.itemsize for s in x.strides):
        return _cuda._cupy().ascontiguousarray(x)
    return x


def dynamic_slice(operand, starts, sizes):
    """``lax.dynamic_slice(operand, starts, sizes)`` of the CuPy array ``operand`` (any
    dtype and strides, up to ``MAX_RANK`` axes), ``starts`` its 0-d integer CuPy start
    indices, each moved into ``[0, dim - size]`` on the device as on the CPU.

    Returns a new C-contiguous array of shape ``sizes``."""
    out = _cuda._cupy().empty(tuple(sizes), operand.dtype)
    _window(_strided(operand), out, list(starts), update=False)
    return out


def dynamic_update_slice(operand, update, starts):
    """``lax.dynamic_update_slice(operand, update, starts)`` of CuPy arrays of one dtype (up
    to ``MAX_RANK`` axes): a copy of ``operand`` with ``update`` written at the ``starts``
    (0-d integer CuPy arrays), each moved into ``[0, dim - size]`` on the device as on the
    CPU."""
    if update.dtype != operand.dtype:
        raise TypeError(f"dynamic_update_slice needs one dtype, got {operand.dtype} and "
                        f"{update.dtype}")
    out = operand.copy()
    _window(out, _cuda._cupy().ascontiguousarray(update), list(starts), update=True)
    return out

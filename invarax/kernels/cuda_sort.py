"""Sorting and ``cumlogsumexp`` on an NVIDIA GPU, CuPy arrays in and out, with the CPU's bits.

A sort's result is a permutation of its operands, so it is the CPU's when the order
relation and the rule for equal keys are the CPU's: ``csrc/device/sort.h`` writes the
relations once (NumPy's, with NaNs last and ``-0.0 == 0.0``; its reverse; IEEE's total
order for ``top_k``), and every sort is stable. ``cumlogsumexp`` applies
``csrc/device/logsumexp.h``'s step, the CPU's formula on invarax's own ``exp`` and
``log1p``, in order. The kernels are ``csrc/device/sort.cu``.

This module needs CuPy and a GPU only when a function is called; importing it needs
neither.
"""

from __future__ import annotations

import numpy as np

from . import cuda as _cuda  # _cuda._cupy() looked up per call: a stand-in set there is used
from .cuda import _ROWS, _SUFFIX, _elements, _kernel, _launch

#: The key dtypes the GPU sorts, and their kernels' suffixes (bool sorts as its bytes;
#: float16 keys are sorted as float32).
_KEYS = {np.dtype(t): s for t, s in ((np.float32, "f32"), (np.float64, "f64"),
                                     (np.int8, "i8"), (np.uint8, "u8"), (np.int16, "i16"),
                                     (np.uint16, "u16"), (np.int32, "i32"),
                                     (np.uint32, "u32"), (np.int64, "i64"),
                                     (np.uint64, "u64"), (np.bool_, "u8"))}
#: sort.h's relations.
_ASCENDING, _DESCENDING, _TOTAL_DESC = 0, 1, 2
_PER_THREAD = 64  # a row's block: warps of threads with at least this many keys each, up
#                   to _ROWS threads
_MAX_GRID = 2**31 - 1


def _permutation(keys, axis: int, mode: int):
    """The int64 ``(rows, k)`` permutation that sorts the lines of ``keys`` along ``axis``
    stably, lexicographically (first key first) by sort.h's relation ``mode``: the CPU's,
    one stable sort per key from the last key to the first, each keeping the order the
    previous one left between equal keys."""
    cupy = _cuda._cupy()
    perm = scratch = None
    for i, key in enumerate(reversed(keys)):
        if key.dtype == np.float16:  # exactly converted, so in the same order (NaNs too)
            key = key.astype(np.float32)
        rows, _ = _cuda.axis_rows(key, axis)
        m, k = rows.shape
        if perm is None:
            perm, scratch = cupy.empty((m, k), np.int64), cupy.empty((m, k), np.int64)
        if m and k:
            kernel = _kernel("argsort", key.dtype, "sort.cu", _KEYS)
            threads = min(_ROWS, -(-k // (_PER_THREAD * 32)) * 32)
            kernel((min(m, _MAX_GRID),), (threads,),
                   (rows, perm, scratch, np.int64(m), np.int64(k),
                    np.int64(_elements(rows, 0)), np.int64(_elements(rows, 1)),
                    np.int32(mode), np.int32(i == 0)))
    return perm


def _check_axis(name: str, x, axis: int) -> int:
    if x.ndim == 0:
        raise ValueError(f"{name} sorts along an axis: got a 0-d array (reshape it to (1,))")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for shape {x.shape}")
    return axis % x.ndim


def sort(operands, dimension: int = -1, num_keys: int = 1) -> list:
    """``lax.sort``: the CuPy arrays ``operands`` (one shape, any strides) sorted along
    ``dimension`` by the first ``num_keys`` of them, lexicographically, stably (NaNs last,
    ``-0.0`` and ``0.0`` equal): the CPU's permutation, so its bits. Keys are float16,
    float32, float64, the 8- to 64-bit integers or bool; the other operands any dtype.

    Returns a list of new contiguous arrays."""
    operands = list(operands)
    if not operands:
        raise ValueError("sort needs at least one operand")
    shapes = {x.shape for x in operands}
    if len(shapes) != 1:
        raise ValueError(f"sort needs operands of one shape, got {sorted(shapes)}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and the number of "
                         f"operands, {len(operands)}")
    axis = _check_axis("sort", operands[0], dimension)
    perm = _permutation(operands[:num_keys], axis, _ASCENDING)
    cupy = _cuda._cupy()
    outs = []
    for x in operands:
        rows, shape = _cuda.axis_rows(x, axis)
        outs.append(_cuda.from_axis_rows(cupy.take_along_axis(rows, perm, 1), shape, axis))
    return outs


def sort_rows(x, descending: bool = False):
    """``jnp.sort(x, axis=-1, descending=descending)`` of the CuPy array ``x``: each row
    (along the last axis) sorted stably, NaNs last; ``descending`` reverses that
    ascending order (as ``jnp.sort``: NaNs first, equal keys in reverse input order)."""
    (out,) = sort([x], -1)
    return _cuda._cupy().ascontiguousarray(out[..., ::-1]) if descending else out


def argsort(x, axis: int = -1, descending: bool = False, dtype=np.int32):
    """``jnp.argsort(x, axis, descending=descending)`` of the CuPy array ``x``: the stable
    permutation (as ``dtype`` indices) that sorts each line along ``axis``, NaNs last;
    ``descending`` from the largest to the smallest, NaNs first, equal keys in input order
    (as ``jnp.argsort``)."""
    axis = _check_axis("argsort", x, axis)
    perm = _permutation([x], axis, _DESCENDING if descending else _ASCENDING)
    return _cuda.from_axis_rows(perm.astype(dtype), _cuda.axis_rows(x, axis)[1], axis)


def top_k(x, k: int, axis: int = -1):
    """``lax.top_k(x, k, axis=axis)`` of the CuPy array ``x``: the ``k`` largest entries of
    each line along ``axis`` by IEEE's total order (``+nan > inf > ... > 0.0 > -0.0 > ... >
    -inf > -nan``), largest first, equal entries by lowest index, and their int32 indices.

    Returns ``(values, indices)``, new contiguous arrays of ``x``'s shape with ``k`` along
    ``axis``."""
    axis = _check_axis("top_k", x, axis)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise ValueError(f"top_k needs 0 <= k <= {n} (axis {axis} of {x.shape}), got k={k}")
    perm = _permutation([x], axis, _TOTAL_DESC)[:, :k]
    rows, shape = _cuda.axis_rows(x, axis)
    shape = (*shape[:-1], k)
    return (_cuda.from_axis_rows(_cuda._cupy().take_along_axis(rows, perm, 1), shape, axis),
            _cuda.from_axis_rows(perm.astype(np.int32), shape, axis))


def cumlogsumexp(x, axis: int, reverse: bool = False):
    """``lax.cumlogsumexp(x, axis, reverse)`` of the float CuPy array ``x`` (any strides):
    ``y[i] = logaddexp(y[i-1], x[i])`` in order by the CPU's formula and its own ``exp`` and
    ``log1p``: the CPU's bits. A new contiguous array."""
    axis = _check_axis("cumlogsumexp", x, axis)
    rows, shape = _cuda.axis_rows(x, axis)
    out = _cuda._cupy().empty(rows.shape, x.dtype)
    m, k = rows.shape
    if out.size:
        kernel = _kernel("cumlogsumexp", x.dtype, "sort.cu", _SUFFIX)
        _launch(kernel, m, (rows, out, np.int64(m), np.int64(k), np.int64(_elements(rows, 0)),
                            np.int64(_elements(rows, 1)), np.int32(reverse)))
    return _cuda.from_axis_rows(out, shape, axis)

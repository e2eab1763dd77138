"""Reduction kernels: sum, product, max, min, and, or, argmax/argmin and cumulative scans.

Every reduction in invarax is computed here, and the order of floating-point
operations of each output element is a fixed function of the reduction length
``K`` alone: never of the other dimensions, the memory layout, the position of
the reduced axes or the batch size (contract N2/N4/N5).

This is the interim, NumPy-backed implementation; the compiled canonical kernels
documented in ``docs/numerics.md`` replace it in a later issue. It gets the
property cheaply: ``_rows`` moves the reduced axes to the end (keeping their
order), casts to the accumulation dtype *before* reducing, and makes the operand a
C-contiguous, aligned ``(M, K)`` array; each kernel then reduces along the last
axis. A NumPy reduction over a contiguous last axis without casting is not
buffered, so each row is handed to the inner loop whole, and:

- ``reduce_sum`` is ``0 + pairwise(row)``, NumPy's pairwise summation: a row of
  n < 8 elements is summed left to right from 0; for n <= 128, eight accumulators
  take elements i, i+8, i+16, ... (of the first n - n % 8), are combined as
  ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, and the last n % 8 elements
  are added left to right; above 128 the row splits at n2 = n // 2 rounded down to
  a multiple of 8, and ``pairwise(row[:n2]) + pairwise(row[n2:])``. The tests pin
  this order with a Python reference;
- ``reduce_prod`` is the sequential product ``((x0 * x1) * x2) ...``;
- ``reduce_max``/``reduce_min`` propagate NaN (as JAX); the sign of a zero result
  is that of the first zero met in row-major order of the reduced elements;
- ``reduce_and``/``reduce_or``, integer sums and products are exact (integers wrap);
- ``cumulative`` is the sequential scan ``y[i] = op(y[i-1], x[i])`` of each row;
- ``argmax``/``argmin`` give the first index of the extremum, a NaN counting as
  the extremum (so the index of the first NaN), as JAX.

The elements of a multi-axis reduction are taken in row-major order of the
reduced axes.
"""

from __future__ import annotations

import numpy as np


def _rows(x: np.ndarray, axes, dtype) -> tuple[np.ndarray, tuple]:
    """``x`` as a C-contiguous ``(M, K)`` array of ``dtype`` whose rows are the reduced elements.

    Arguments:
        x: the operand.
        axes: the reduced axes (sorted, non-negative).
        dtype: the dtype to reduce in; the cast happens here, never inside the reduce.

    Returns:
        ``(rows, out_shape)``: the rows, and the shape of the result (the kept axes).

    Example:
        >>> _rows(np.ones((2, 3, 4)), (0, 2), np.float32)[0].shape
        (3, 8)
    """
    kept = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    m = int(np.prod(out_shape, dtype=np.int64))
    k = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    moved = np.transpose(x, kept + list(axes))
    rows = np.require(moved, dtype=dtype, requirements="CA").reshape(m, k)
    return rows, out_shape


# The value of an empty reduction, per operation (infinities saturate for integers and bools).
IDENTITIES = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf, "and": -1, "or": 0}


def identity(op: str, dtype) -> np.ndarray:
    """The identity of reduction ``op`` as a 0-d array of ``dtype`` (what an empty reduction gives).

    Arguments:
        op: a key of ``IDENTITIES`` (``"sum"``, ``"max"``, ``"and"``, ...).
        dtype: a NumPy dtype.

    Returns:
        A 0-d NumPy array; ``-inf`` becomes the lowest integer (or False) for integer dtypes.

    Example:
        >>> identity("max", np.int8)
        array(-128, dtype=int8)
    """
    value, dtype = IDENTITIES[op], np.dtype(dtype)
    if np.isinf(value) and dtype.kind in "biu":
        if dtype.kind == "b":
            return np.asarray(value > 0)
        info = np.iinfo(dtype)
        value = info.min if value < 0 else info.max
    return np.asarray(value).astype(dtype)


def _reducer(ufunc, op: str):
    """A kernel ``f(x, axes, dtype)`` reducing with ``ufunc`` along the rows of ``_rows``."""

    def kernel(x: np.ndarray, axes, dtype) -> np.ndarray:
        rows, out_shape = _rows(x, axes, dtype)
        if rows.shape[1] == 0:
            return np.full(out_shape, identity(op, rows.dtype))
        return ufunc.reduce(rows, axis=1, dtype=rows.dtype).reshape(out_shape)

    return kernel


reduce_sum = _reducer(np.add, "sum")
reduce_prod = _reducer(np.multiply, "prod")
reduce_max = _reducer(np.maximum, "max")
reduce_min = _reducer(np.minimum, "min")
reduce_and = _reducer(np.bitwise_and, "and")
reduce_or = _reducer(np.bitwise_or, "or")

reduce_sum.__doc__ = """Sum of ``x`` over ``axes``, accumulated and returned in ``dtype``.

Arguments:
    x: a NumPy array.
    axes: the reduced axes, sorted and non-negative.
    dtype: the accumulation and result dtype (``x`` is cast to it first, so a bool
        sum in int32 is a count).

Returns:
    An array of ``dtype`` whose shape is ``x.shape`` without ``axes``.

Example:
    >>> reduce_sum(np.ones((2, 3), np.float32), (1,), np.float32)
    array([3., 3.], dtype=float32)
"""


def _arg_extremum(np_arg):
    def kernel(x: np.ndarray, axis: int, index_dtype) -> np.ndarray:
        rows, out_shape = _rows(x, (axis,), x.dtype)
        return np_arg(rows, axis=1).astype(index_dtype).reshape(out_shape)

    return kernel


argmax = _arg_extremum(np.argmax)
argmin = _arg_extremum(np.argmin)

argmax.__doc__ = """Index of the first maximum of ``x`` along ``axis`` (a NaN is the maximum).

Arguments:
    x: a NumPy array whose ``axis`` is not empty.
    axis: the reduced axis (non-negative).
    index_dtype: the integer dtype of the result.

Returns:
    An array of ``index_dtype`` whose shape is ``x.shape`` without ``axis``.

Example:
    >>> argmax(np.array([1.0, np.nan, 3.0, np.nan]), 0, np.int32)
    array(1, dtype=int32)
"""
argmin.__doc__ = argmax.__doc__.replace("maximum", "minimum").replace("argmax", "argmin")

# The binary operation of each scan (NaN propagates through every one of them).
SCANS = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "logsumexp": np.logaddexp,
}


def cumulative(kind: str, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """Inclusive scan of ``x`` along ``axis``: ``y[i] = op(y[i-1], x[i])``, sequentially.

    Arguments:
        kind: one of ``SCANS``: ``"sum"``, ``"prod"``, ``"max"``, ``"min"``, ``"logsumexp"``.
        x: a NumPy array (computed in its own dtype).
        axis: the scanned axis (non-negative).
        reverse: scan from the last element to the first.

    Returns:
        An array of ``x``'s shape and dtype.

    Example:
        >>> cumulative("sum", np.arange(4, dtype=np.int32), 0, reverse=True)
        array([6, 6, 5, 3], dtype=int32)
    """
    rows, out_shape = _rows(x, (axis,), x.dtype)
    if reverse:
        rows = np.ascontiguousarray(rows[:, ::-1])
    out = SCANS[kind].accumulate(rows, axis=1, dtype=rows.dtype)
    if reverse:
        out = out[:, ::-1]
    out = out.reshape(*out_shape, x.shape[axis])
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))

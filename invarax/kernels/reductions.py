"""Reduction kernels: sum, product, max, min, and, or, argmax/argmin and cumulative scans.

Every reduction in invarax is computed here, and the order of floating-point
operations of each output element is a fixed function of the reduction length
``K`` alone: never of the other dimensions, the memory layout, the position of
the reduced axes or the batch size (contract N2/N4/N5). ``docs/numerics.md``
states each order in full; in short, for float32 and float64:

- ``reduce_sum`` is ``0 + pairwise(row)``, NumPy's pairwise summation written out in
  the compiled kernel: a row of n < 8 elements is summed left to right from 0; for
  n <= 128, eight accumulators take elements i, i+8, i+16, ... (of the first
  n - n % 8), are combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``,
  and the last n % 8 elements are added left to right; above 128 the row splits at
  n2 = n // 2 rounded down to a multiple of 8, and
  ``pairwise(row[:n2]) + pairwise(row[n2:])``;
- ``reduce_prod`` is the sequential product ``((x0 * x1) * x2) ...``;
- ``reduce_max``/``reduce_min`` give ``row[argmax(row)]`` (``argmin``): NaN propagates
  (the first NaN), and a zero result has the sign of the first zero among the extrema;
- ``argmax``/``argmin`` give the first index of the extremum, a NaN counting as the
  extremum (so the index of the first NaN), as JAX;
- ``cumulative`` is the sequential scan ``y[i] = op(y[i-1], x[i])`` of each row.

The elements of a multi-axis reduction are taken in row-major order of the reduced
axes. float16 is reduced in float32 (exact conversions) and rounded once at the end.
A complex sum adds the real and the imaginary parts separately, each in the order
above; a complex product is sequential. Integer and bool reductions are exact
(integers wrap), so their order cannot matter; they use NumPy's.
"""

from __future__ import annotations

import math

import numpy as np

from . import _native
from ._support import in_parallel_task, num_threads, operand

#: Elements per thread below which a reduction runs on the calling thread alone. The rows
#: are split between the threads of the kernels' own pool, which join in microseconds: on a
#: Zen 4, float32 sums of 256 rows of 512 took 7.3 us on one thread and 4.6 us on two,
#: 1000 rows of 1000 60 and 36 us.
PER_THREAD = 1 << 16

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_HALF = np.dtype(np.float16)

# The op codes of _native.reduce.
_SUM, _PROD, _MAX, _MIN, _ARGMAX, _ARGMIN = range(6)
#: The ops whose result over one term is the term plus zero (the others copy the term).
ONE_TERM_ADDS_ZERO = (_SUM,)


def _rows(x: np.ndarray, axes, dtype) -> tuple[np.ndarray, tuple]:
    """``x`` as an aligned ``(M, K)`` array of ``dtype`` whose rows are the reduced elements.

    Arguments:
        x: the operand.
        axes: the reduced axes (sorted, non-negative).
        dtype: the dtype to reduce in; the cast happens here, never inside the reduce.

    Returns:
        ``(rows, out_shape)``: the rows (a strided view of ``x`` when NumPy can merge
        the axes without copying, else a copy), and the shape of the result (the kept
        axes).

    Example:
        >>> _rows(np.ones((2, 3, 4)), (0, 2), np.float32)[0].shape
        (3, 8)
    """
    kept = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    m = math.prod(out_shape)
    k = math.prod(x.shape[d] for d in axes)
    return operand(x, kept + list(axes), dtype, (m, k)), out_shape


def _native_rows(op: int, rows: np.ndarray, out_dtype) -> np.ndarray:
    """``_native.reduce`` of the float32/float64 ``rows`` into a new ``(M,)`` array; large
    reductions of several rows split the rows between threads (each row is reduced whole
    by one thread in the canonical order, so the count changes no bit: N5)."""
    m = rows.shape[0]
    out = np.empty(m, out_dtype)
    threads = 1 if in_parallel_task() else min(num_threads(), m, rows.size // PER_THREAD)
    _native.reduce(op, rows, out, max(1, threads))
    return out


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


def _reducer(ufunc, op: str, code):
    """A kernel ``f(x, axes, dtype)``: the compiled op ``code`` for floats, exact ``ufunc`` else."""

    def kernel(x: np.ndarray, axes, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        if code is not None and (dtype in _FLOATS or dtype == _HALF):
            wide = np.dtype(np.float32) if dtype == _HALF else dtype
            rows, out_shape = _rows(x, axes, wide)
            if rows.shape[1] == 1:  # one term: the order's result without the row loop
                out = (rows[:, 0] + wide.type(0) if code in ONE_TERM_ADDS_ZERO
                       else rows[:, 0].copy())
            else:
                out = _native_rows(code, rows, wide)
            return out.astype(dtype, copy=False).reshape(out_shape)
        rows, out_shape = _rows(x, axes, dtype)
        if dtype.kind == "c":
            return _complex(op, rows).reshape(out_shape)
        if rows.shape[1] == 0:
            return np.full(out_shape, identity(op, dtype))
        # Integers and bools: exact, so NumPy's order cannot show.
        return ufunc.reduce(rows, axis=1, dtype=dtype).reshape(out_shape)

    if code is not None:  # native fusion calls the C loop on float32/float64 rows of 2 or more
        kernel.entry = ("reduce", code)
    return kernel


def _complex(op: str, rows: np.ndarray) -> np.ndarray:
    """Complex sums (of the real and imaginary parts, each canonical) and sequential products."""
    if op == "sum":
        real = np.dtype(np.float32 if rows.dtype == np.complex64 else np.float64)
        out = np.empty(rows.shape[0], rows.dtype)
        out.real = _native_rows(_SUM, operand(rows.real, (0, 1), real, rows.shape), real)
        out.imag = _native_rows(_SUM, operand(rows.imag, (0, 1), real, rows.shape), real)
        return out
    if rows.shape[1] == 0:
        return np.ones(rows.shape[0], rows.dtype)
    # A scan is sequential by definition: its last element is ((x0 * x1) * x2) ...
    return np.multiply.accumulate(rows, axis=1)[:, -1].copy()


reduce_sum = _reducer(np.add, "sum", _SUM)
reduce_prod = _reducer(np.multiply, "prod", _PROD)
reduce_max = _reducer(np.maximum, "max", _MAX)
reduce_min = _reducer(np.minimum, "min", _MIN)
reduce_and = _reducer(np.bitwise_and, "and", None)
reduce_or = _reducer(np.bitwise_or, "or", None)

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


def _arg_extremum(code, np_arg):
    def kernel(x: np.ndarray, axis: int, index_dtype) -> np.ndarray:
        if x.dtype in _FLOATS or x.dtype == _HALF:
            wide = np.dtype(np.float32) if x.dtype == _HALF else x.dtype
            rows, out_shape = _rows(x, (axis,), wide)
            found = _native_rows(code, rows, np.int64)
        else:  # integers and bools: exact
            rows, out_shape = _rows(x, (axis,), x.dtype)
            found = np_arg(rows, axis=1)
        return found.astype(index_dtype).reshape(out_shape)

    return kernel


argmax = _arg_extremum(_ARGMAX, np.argmax)
argmin = _arg_extremum(_ARGMIN, np.argmin)

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

def _logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NumPy's ``logaddexp`` formula (``hi + log1p(exp(-|a - b|))``, ``a + log 2`` when equal,
    NaN propagated) with invarax's own ``exp`` and ``log1p``: the same bits on every CPU."""
    from .elementary import LOG2, elementary

    with np.errstate(invalid="ignore"):
        d = a - b
        hi = np.where(d > 0, a, b)
        out = hi + elementary("log1p", elementary("exp", -np.abs(d)))
        out = np.where(a == b, a + a.dtype.type(LOG2), out)  # equal infinities
        return np.where(np.isnan(d) & (a != b), d, out).astype(a.dtype, copy=False)


def _accumulate(op, x: np.ndarray, axis: int) -> np.ndarray:
    """``ufunc.accumulate``'s sequence ``y[i] = op(y[i-1], x[i])`` for an ``op`` that is not a
    ufunc, each step vectorised over the other axes."""
    x = np.moveaxis(x, axis, 0)
    out = np.empty_like(x)
    if x.shape[0]:
        out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = op(out[i - 1], x[i])
    return np.moveaxis(out, 0, axis)

# The scans that run natively (_native.scan's op codes), for float32 and float64.
_NATIVE_SCANS = {"sum": 0, "prod": 1}
# The binary operation of each scan (NaN propagates through every one of them).
SCANS = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "logsumexp": _logaddexp,
}


def cumulative(kind: str, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """Inclusive scan of ``x`` along ``axis``: ``y[i] = op(y[i-1], x[i])``, sequentially.

    A scan's order is fixed by its definition: each ``y[i]`` is one application of the
    elementwise ``op`` (a NumPy ufunc, whose bits never depend on the layout, or for
    ``logsumexp`` NumPy's ``logaddexp`` formula on invarax's own ``exp`` and ``log1p``) to
    ``y[i-1]`` and ``x[i]``. NumPy's ``accumulate`` computes exactly that, along any
    axis of any layout; float sums and products run the same steps in the compiled kernel
    (``_native.scan``), which costs less per call.

    Arguments:
        kind: one of ``SCANS``: ``"sum"``, ``"prod"``, ``"max"``, ``"min"``, ``"logsumexp"``.
        x: a NumPy array (computed in its own dtype).
        axis: the scanned axis (non-negative).
        reverse: scan from the last element to the first.

    Returns:
        A C-contiguous array of ``x``'s shape and dtype.

    Example:
        >>> cumulative("sum", np.arange(4, dtype=np.int32), 0, reverse=True)
        array([6, 6, 5, 3], dtype=int32)
    """
    code = _NATIVE_SCANS.get(kind)
    if code is not None and x.dtype in _FLOATS and x.dtype.isnative:
        x = x if x.flags.aligned else x.copy()  # (the kernel loads whole elements)
        # (O, N, I): the axes before and after the scanned one merged (a view where their
        # strides allow, else NumPy copies)
        shape = x.shape
        dims = ((1, shape[0], 1) if len(shape) == 1 else
                (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])))
        out = np.empty(dims, x.dtype)
        _native.scan(code, x.reshape(dims), out, reverse)
        return out.reshape(shape)
    flip = (slice(None),) * axis + (slice(None, None, -1),)
    x = x[flip] if reverse else x
    op = SCANS[kind]
    out = (op.accumulate(x, axis=axis, dtype=x.dtype) if isinstance(op, np.ufunc)
           else _accumulate(op, x, axis))
    return np.ascontiguousarray(out[flip] if reverse else out)

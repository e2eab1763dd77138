"""Window reductions (``lax.reduce_window``, pooling) and their gradients' scatters.

Every output element of a window reduction reduces the ``prod(window)`` elements of its
window of the padded, dilated operand, taken in row-major order of the window positions:
exactly ``reduce_sum`` / ``reduce_max`` / ``reduce_min`` of the explicit patches over
their window axes (``docs/numerics.md``, Window reductions). The patches are never built:
each window position is one strided view of the padded operand (of the output's shape),
and the canonical order is applied to these views elementwise, for all outputs at once:

- sum: ``+0 + pairwise(v[0], ..., v[K-1])``, NumPy's pairwise summation as the ``sum``
  kernel does it (eight accumulators from 8 terms, halves beyond 128);
- max (min): the first maximum (minimum) in window order, the first NaN if any, so a zero
  result has the sign of the first zero among the extrema.

The gradient of a max (min) window picks, for every output, the window position that
won (``window_argselect``); ``window_gather`` reads a tangent there and
``window_scatter_add`` adds cotangents there, in increasing output position, each into
the input element it came from. Selection, gather and scatter of floats run in the
compiled ``_native.window``; sums are NumPy additions of the strided views, in order.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import _native


def pad_index(shape, padding, dilation):
    """Where ``dilate_pad`` puts an operand of ``shape``: ``(padded shape, src, dst)``, with
    ``padded[dst] = x[src]`` (``src`` drops the elements that negative padding crops).

    Example:
        >>> pad_index((2,), [(1, 0)], [2])
        ((4,), (slice(0, 2, None),), (slice(1, 5, 2),))
    """
    full, src, dst = [], [], []
    for size, (lo, hi), d in zip(shape, padding, dilation, strict=True):
        dilated = (size - 1) * d + 1 if size else 0
        n = max(lo + dilated + hi, 0)
        first = -(lo // d) if lo < 0 else 0  # the first element that lands inside
        last = max(first, min(size, (n - 1 - lo) // d + 1 if n else 0))
        full.append(n)
        src.append(slice(first, last))
        dst.append(slice(lo + first * d, lo + first * d + (last - first) * d, d))
    return tuple(full), tuple(src), tuple(dst)


def dilate_pad(x: np.ndarray, padding, dilation, fill=0) -> np.ndarray:
    """``x`` with ``d - 1`` fill values between elements and ``(low, high)`` padding around
    them (negative padding crops); C-contiguous (``x`` itself when nothing changes).

    Example:
        >>> dilate_pad(np.ones(2), [(1, 0)], [2]).tolist()
        [0.0, 1.0, 0.0, 1.0]
    """
    if all(p == (0, 0) for p in padding) and all(d == 1 for d in dilation):
        return np.asarray(x, order="C")  # (ascontiguousarray makes a 0-d array 1-d)
    full, src, dst = pad_index(x.shape, padding, dilation)
    out = np.full(full, fill, x.dtype)
    if all(s.stop > s.start for s in src):
        out[dst] = x[src]
    return out


def out_shape(padded_shape, window, strides, dilation) -> tuple:
    """The number of windows along each axis.

    Example:
        >>> out_shape((7,), (3,), (2,), (1,))
        (3,)
    """
    shape = []
    for size, w, s, d in zip(padded_shape, window, strides, dilation, strict=True):
        span = (w - 1) * d + 1 if w else 0
        shape.append((size - span) // s + 1 if size >= span else 0)
    return tuple(shape)


def _views(xp, window, strides, dilation):
    """One strided view of ``xp`` per window position (row-major), each of the output's
    shape: view ``k`` holds, for every output, the element at window position ``k``."""
    out = out_shape(xp.shape, window, strides, dilation)
    for offsets in itertools.product(*(range(w) for w in window)):
        yield tuple(slice(o * d, o * d + (n - 1) * s + 1, s) if n else slice(0, 0)
                    for o, d, n, s in zip(offsets, dilation, out, strides, strict=True))


def _pairwise(views):
    """NumPy's pairwise sum of a list of equal-shape arrays, elementwise (the order of
    ``reduce_sum``'s kernel for each element)."""
    n = len(views)
    if n < 8:
        r = np.zeros_like(views[0])
        for v in views:
            r = r + v
        return r
    if n <= 128:
        acc = [views[j].copy() for j in range(8)]
        stop = n - n % 8
        for i in range(8, stop, 8):
            for j in range(8):
                acc[j] += views[i + j]
        r = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        for v in views[stop:]:
            r = r + v
        return r
    half = n // 2
    half -= half % 8
    return _pairwise(views[:half]) + _pairwise(views[half:])


_IDENTITY = {"sum": 0, "max": -np.inf, "min": np.inf}


def identity(op: str, dtype) -> object:
    """The identity of ``op`` (``"sum"``, ``"max"``, ``"min"``) in ``dtype``: the padding value.

    Example:
        >>> identity("max", np.dtype(np.int8))
        -128
    """
    dtype = np.dtype(dtype)
    if op == "sum" or dtype.kind in "fc":
        return _IDENTITY[op]
    if dtype.kind == "b":
        return op == "min"
    return np.iinfo(dtype).min if op == "max" else np.iinfo(dtype).max


def _geometry(padded_shape, window, strides, window_dilation):
    """``(outshape, step, woff)`` of the compiled window kernels for a C-contiguous padded
    operand: output ``o``'s window position ``j`` is at ``sum(o * step) + woff[j]``."""
    elems = [math.prod(padded_shape[i + 1:]) for i in range(len(padded_shape))]  # C strides
    outshape = out_shape(padded_shape, window, strides, window_dilation)
    step = np.array([s * e for s, e in zip(strides, elems, strict=True)], np.int64)
    woff = np.zeros(1, np.int64)
    for w, d, e in zip(window, window_dilation, elems, strict=True):
        woff = (woff[:, None] + np.arange(w, dtype=np.int64) * (d * e)).ravel()
    return np.array(outshape, np.int64), step, woff


def _compute_dtype(dtype):
    """The dtype of the compiled kernels for ``dtype`` (float16 runs in float32, exactly
    for selection), or None (integers: NumPy)."""
    if dtype.kind != "f":
        return None
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _select(op, x, window, strides, padding, base_dilation, window_dilation):
    """The first maximum (``op="max"``) or minimum of each window, or its first NaN, and
    its window position."""
    compute = _compute_dtype(x.dtype)
    if compute is None:  # integers and bools: NumPy, window position by window position
        xp = dilate_pad(x, padding, base_dilation, identity(op, x.dtype))
        views = [xp[v] for v in _views(xp, window, strides, window_dilation)]
        better = np.greater if op == "max" else np.less
        best, idx = views[0].copy(), np.zeros(views[0].shape, np.int32)
        for k, v in enumerate(views[1:], start=1):
            take = better(v, best)
            np.copyto(best, v, where=take)
            np.copyto(idx, k, where=take)
        return best, idx
    xp = dilate_pad(x.astype(compute, copy=False), padding, base_dilation, identity(op, compute))
    outshape, step, woff = _geometry(xp.shape, window, strides, window_dilation)
    best = np.empty(tuple(outshape), compute)
    idx = np.empty(tuple(outshape), np.int32)
    _native.window(0 if op == "max" else 1, xp, idx, best, outshape, step, woff)
    return best.astype(x.dtype, copy=False), idx


def _empty(op, x, window, strides, padding, base_dilation, window_dilation):
    """The output shape, and whether the windows are empty."""
    padded = pad_index(x.shape, padding, base_dilation)[0]
    return out_shape(padded, window, strides, window_dilation), 0 in window


def window_reduce(op: str, x: np.ndarray, window, strides, padding, base_dilation,
                  window_dilation) -> np.ndarray:
    """Reduce every window of ``x`` (padded with the identity of ``op``).

    Arguments:
        op: ``"sum"``, ``"max"`` or ``"min"``.
        x: the operand.
        window, strides, base_dilation, window_dilation: one int per axis.
        padding: one ``(low, high)`` pair per axis.

    Returns:
        The reductions, of ``x``'s dtype.

    Example:
        >>> window_reduce("sum", np.arange(5.0), (2,), (2,), [(0, 1)], (1,), (1,)).tolist()
        [1.0, 5.0, 4.0]
    """
    args = (window, strides, padding, base_dilation, window_dilation)
    shape, empty = _empty(op, x, *args)
    if empty or 0 in shape:
        return np.full(shape, identity(op, x.dtype), x.dtype)
    if op != "sum":
        return _select(op, x, *args)[0]
    xp = dilate_pad(x, padding, base_dilation, 0)
    views = [xp[v] for v in _views(xp, window, strides, window_dilation)]
    if x.dtype.kind == "b":
        r = views[0].copy()
        for v in views[1:]:
            r |= v
        return r
    return np.zeros((), x.dtype) + _pairwise(views)


def window_argselect(op: str, x: np.ndarray, window, strides, padding, base_dilation,
                     window_dilation) -> np.ndarray:
    """The window position (row-major index) of each window's first maximum (``op`` =
    ``"max"``) or minimum, or of its first NaN.

    Example:
        >>> window_argselect("max", np.array([1.0, 3.0, 3.0, 0.0]), (2,), (2,), [(0, 0)],
        ...                  (1,), (1,)).tolist()
        [1, 0]
    """
    args = (window, strides, padding, base_dilation, window_dilation)
    shape, empty = _empty(op, x, *args)
    if empty or 0 in shape:
        return np.zeros(shape, np.int32)
    return _select(op, x, *args)[1]


def window_gather(t: np.ndarray, idx: np.ndarray, window, strides, padding, base_dilation,
                  window_dilation) -> np.ndarray:
    """For every window, ``t`` (padded with zeros) at the window position ``idx``.

    Example:
        >>> window_gather(np.arange(4.0), np.array([1, 0]), (2,), (2,), [(0, 0)], (1,),
        ...               (1,)).tolist()
        [1.0, 2.0]
    """
    if idx.size == 0 or 0 in window:
        return np.zeros(idx.shape, t.dtype)
    compute = _compute_dtype(t.dtype)
    tp = dilate_pad(t.astype(compute, copy=False), padding, base_dilation, 0)
    outshape, step, woff = _geometry(tp.shape, window, strides, window_dilation)
    out = np.empty(idx.shape, compute)
    _native.window(2, tp, np.ascontiguousarray(idx, np.int32), out, outshape, step, woff)
    return out.astype(t.dtype, copy=False)


def window_scatter_add(src: np.ndarray, idx: np.ndarray, shape, window, strides, padding,
                       base_dilation, window_dilation) -> np.ndarray:
    """The transpose of ``window_gather``: each ``src`` value added into the element of an
    operand of ``shape`` at its window position ``idx``; an element receiving several gets
    ``((0 + s_a) + s_b) + ...`` in increasing (row-major) output position. float16 adds in
    float32 and rounds once.

    Example:
        >>> window_scatter_add(np.array([5.0, 7.0]), np.array([1, 0]), (4,), (2,), (2,),
        ...                    [(0, 0)], (1,), (1,)).tolist()
        [0.0, 5.0, 7.0, 0.0]
    """
    full, inner, outer = pad_index(shape, padding, base_dilation)
    compute = _compute_dtype(src.dtype)
    acc = np.zeros(full, compute)
    if idx.size and 0 not in window:
        outshape, step, woff = _geometry(full, window, strides, window_dilation)
        _native.window(3, np.ascontiguousarray(src, compute),
                       np.ascontiguousarray(idx, np.int32), acc, outshape, step, woff)
    out = np.zeros(shape, src.dtype)
    if all(s.stop > s.start for s in inner):
        out[inner] = acc[outer]
    return out

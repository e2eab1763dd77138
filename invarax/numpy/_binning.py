"""Binning in ``invarax.numpy``: ``searchsorted``, ``digitize``, ``interp``, ``bincount``,
``histogram`` and ``histogram_bin_edges``.

``searchsorted`` counts, for each value, the elements before it (a sum of comparisons
through the canonical kernels); ``bincount`` and ``histogram`` scatter-add, so under
``jit`` and ``vmap`` they need ``length=``/concrete bins, as in JAX.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl
from ..ops import shape as sh
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray, zeros
from ._differences import diff
from ._dtypes import finfo
from ._indexing import take
from ._joining import concatenate, stack
from ._promote import convert, promote_dtypes
from ._sorting import argsort
from ._stats import _flat, _float

_COMPARE_ALL_MAX = 1 << 20  # a.size * v.size up to which comparing all pairs is used


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Where each ``v`` would go in sorted 1-d ``a`` to keep it sorted.

    Arguments:
        a: a sorted 1-d array.
        v: the values to place.
        side: ``"left"`` (first suitable index) or ``"right"`` (last).
        sorter: indices that sort ``a``, if it is not sorted.
        method: JAX's: ``"compare_all"`` counts, for each value, the elements before it
            (memory ``a.size * v.size``); ``"sort"`` ranks ``a`` and ``v`` together by a
            stable sort (``O((n + m) log(n + m))``); ``"scan"`` (the default) and
            ``"scan_unrolled"`` use ``compare_all`` up to 2**20 pairs, ``sort`` beyond.
            The indices are the same whatever the method.

    Returns:
        An int32 array of ``v``'s shape.

    Example:
        >>> jnp.searchsorted(jnp.array([1, 2, 3]), jnp.array([2, 5]))
        Array([1, 3], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"jnp.searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"jnp.searchsorted: method must be 'scan', 'scan_unrolled', 'sort' "
                         f"or 'compare_all', got {method!r}")
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        raise ValueError(f"jnp.searchsorted: a must be 1-d, got shape {a.shape}")
    if sorter is not None:
        a = take(a, sorter)
    a, v = promote_dtypes(a, v)
    if method == "sort" or (method != "compare_all" and a.size * v.size > _COMPARE_ALL_MAX):
        return _searchsorted_by_sort(a, v, side)
    before = uf.less if side == "left" else uf.less_equal
    flags = before(a, sh.expand_dims(v, (v.ndim,)))
    return red.sum(flags, axis=-1, dtype=dtypes.default_int())


def _rank(x):
    """The position of each element of 1-d ``x`` in its stable sort."""
    order = argsort(x)
    iota = ArrayImpl(np.arange(x.shape[0], dtype=dtypes.default_int()))
    return zeros(x.shape, dtypes.default_int()).at[order].set(iota)


def _searchsorted_by_sort(a, v, side):
    # JAX's method: in the stable sort of v and a together, the number of elements of a
    # before each value is its rank there minus its rank among the values.
    flat = sh.reshape(v, (v.size,))
    if side == "left":
        rank = _rank(concatenate([flat, a]))[: v.size]
    else:
        rank = _rank(concatenate([a, flat]))[a.size:]
    return sh.reshape(uf.subtract(rank, _rank(flat)), v.shape)


def digitize(x, bins, right=False, *, method="scan"):
    """The index of the bin of each ``x`` (monotonic ``bins``, as ``numpy.digitize``).

    Example:
        >>> jnp.digitize(jnp.array([0.5, 1.5, 3.0]), jnp.array([1.0, 2.0, 3.0]))
        Array([0, 1, 3], dtype=int32)
    """
    bins = asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"jnp.digitize: bins must be 1-d, got shape {bins.shape}")
    side = "left" if right else "right"
    if bins.shape[0] < 2:
        return searchsorted(bins, x, side=side)
    increasing = searchsorted(bins, x, side=side)
    decreasing = uf.subtract(bins.shape[0], searchsorted(bins[::-1], x,
                                                         side="right" if right else "left"))
    return uf.where(uf.less_equal(bins[0], bins[-1]), increasing, decreasing)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (JAX's formula).

    Example:
        >>> xp, fp = jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 10.0, 20.0])
        >>> jnp.interp(jnp.array([0.5, 3.0]), xp, fp)
        Array([ 5., 20.], dtype=float32)
    """
    if period is not None:
        raise NotImplementedError("jnp.interp: period= is not supported yet")
    x, xp, fp = _float(x), _float(xp), _float(fp)
    n = xp.shape[0]
    i = uf.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    xp0, xp1 = take(xp, uf.subtract(i, 1)), take(xp, i)
    fp0, fp1 = take(fp, uf.subtract(i, 1)), take(fp, i)
    dx = uf.subtract(xp1, xp0)
    tiny = uf.less_equal(uf.abs(dx), np.spacing(finfo(xp.dtype).eps))
    f = uf.where(tiny, fp0, uf.add(fp0, uf.multiply(
        uf.divide(uf.subtract(x, xp0), uf.where(tiny, 1, dx)), uf.subtract(fp1, fp0))))
    f = uf.where(uf.less(x, xp[0]), fp[0] if left is None else left, f)
    return uf.where(uf.greater(x, xp[-1]), fp[-1] if right is None else right, f)


def _concrete_int(name, x):
    try:
        return int(np.asarray(x))
    except TypeError:
        raise TypeError(f"jnp.{name} has a data-dependent size here: pass length= (a Python "
                        "int) to use it under jit/vmap/grad") from None


def bincount(x, weights=None, minlength=0, *, length=None):
    """The number of occurrences (or the summed ``weights``) of each value of
    non-negative integer ``x``.

    Arguments:
        x: a 1-d array of non-negative integers.
        weights: an optional array of ``x``'s shape to sum instead of ones.
        minlength: the least length of the result.
        length: the length of the result (required under transformations, as in JAX);
            larger values are dropped, negative ones counted in bin 0 (as JAX).

    Returns:
        An array of length ``length`` (by default ``max(max(x) + 1, minlength)``).

    Example:
        >>> jnp.bincount(jnp.array([0, 1, 1, 3]))
        Array([1, 2, 0, 1], dtype=int32)
    """
    x = asarray(x)
    if not dtypes.is_integer(x.dtype) or x.ndim != 1:
        raise TypeError(f"jnp.bincount takes a 1-d integer array, got {x.dtype}{list(x.shape)}")
    if length is None:
        top = _concrete_int("bincount", red.max(x, initial=-1)) if x.size else -1
        length = max(top + 1, int(minlength))
    if weights is None:
        values = uf.add(zeros(x.shape, dtypes.default_int()), 1)
    else:
        values = asarray(weights)
    out = zeros((int(length),), values.dtype)
    return out.at[uf.maximum(x, 0)].add(values, mode="drop")  # negatives count at 0, as JAX


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The edges of ``histogram``'s bins.

    Example:
        >>> jnp.histogram_bin_edges(jnp.array([0.0, 1.0]), bins=2)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    a = _float(a)
    if not isinstance(bins, (int, np.integer)):
        return _float(bins)
    if range is None:
        lo, hi = red.min(a), red.max(a)
    else:
        lo, hi = convert(asarray(range[0]), a.dtype), convert(asarray(range[1]), a.dtype)
    same = uf.equal(lo, hi)
    lo, hi = uf.where(same, uf.subtract(lo, 0.5), lo), uf.where(same, uf.add(hi, 0.5), hi)
    steps = convert(ArrayImpl(np.arange(int(bins) + 1)), a.dtype)
    edges = uf.add(lo, uf.multiply(uf.subtract(hi, lo), uf.divide(steps, int(bins))))
    return edges.at[-1].set(hi)  # exactly the top, as linspace's endpoint


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The counts (or summed weights) of ``a``'s values in each bin, and the bin edges.

    Arguments:
        a: an array (flattened).
        bins: the number of equal bins, or the edges (increasing).
        range: ``(lo, hi)`` of the equal bins (default: ``a``'s min and max).
        weights: optional weights of ``a``'s shape.
        density: normalise so that the histogram integrates to 1.

    Returns:
        ``(hist, edges)``: the last bin includes its right edge, as NumPy.

    Example:
        >>> jnp.histogram(jnp.array([0.0, 0.2, 1.0]), bins=2)[0]
        Array([2., 1.], dtype=float32)
    """
    a = _flat(_float(a))
    edges = histogram_bin_edges(a, bins, range)
    n_bins = edges.shape[0] - 1
    which = uf.subtract(searchsorted(edges, a, side="right"), 1)
    which = uf.where(uf.equal(a, edges[-1]), n_bins - 1, which)
    inside = uf.logical_and(uf.greater_equal(a, edges[0]), uf.less_equal(a, edges[-1]))
    w = uf.add(uf.multiply(a, 0), 1) if weights is None else _flat(_float(weights))
    w = uf.where(inside, w, 0)
    which = uf.where(inside, which, n_bins)
    hist = zeros((n_bins,), w.dtype).at[which].add(w, mode="drop")
    if density:
        hist = uf.divide(hist, uf.multiply(red.sum(hist), diff(edges)))
    return hist, edges



def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The multidimensional histogram of ``sample`` (N points of D coordinates).

    Arguments:
        sample: an array of shape ``(N, D)``.
        bins: the number of equal bins per dimension, a sequence of them, or a sequence
            of D arrays of edges.
        range: a sequence of D ``(lo, hi)`` pairs (or None per dimension).
        weights: optional weights of shape ``(N,)``.
        density: normalise so that the histogram integrates to 1.

    Returns:
        ``(hist, edges)``: an array with one axis per dimension, and the list of edges.

    Example:
        >>> h, _ = jnp.histogramdd(jnp.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
        >>> h
        Array([[1, 0],
               [1, 1]], dtype=int32)
    """
    sample = _float(sample)
    if sample.ndim != 2:
        raise ValueError(f"jnp.histogramdd: sample must have shape (N, D), got {sample.shape}")
    n_dims = sample.shape[1]
    per_dim_bins = bins if isinstance(bins, (list, tuple)) else [bins] * n_dims
    ranges = range if range is not None else [None] * n_dims
    if len(per_dim_bins) != n_dims or len(ranges) != n_dims:
        raise ValueError(f"jnp.histogramdd: give one bins and range entry per dimension "
                         f"({n_dims})")
    edges, flat, inside = [], None, None
    for d in builtins.range(n_dims):
        column = sample[:, d]
        e = histogram_bin_edges(column, per_dim_bins[d], ranges[d])
        n_bins = e.shape[0] - 1
        which = uf.subtract(searchsorted(e, column, side="right"), 1)
        which = uf.where(uf.equal(column, e[-1]), n_bins - 1, which)
        ok = uf.logical_and(uf.greater_equal(column, e[0]), uf.less_equal(column, e[-1]))
        flat = which if flat is None else uf.add(uf.multiply(flat, n_bins), which)
        inside = ok if inside is None else uf.logical_and(inside, ok)
        edges.append(e)
    shape = tuple(e.shape[0] - 1 for e in edges)
    size = math.prod(shape)
    if weights is None:  # counts are integers, as JAX's histogramdd (not histogram)
        w = convert(inside, dtypes.default_int())
    else:
        w = uf.where(inside, _flat(_float(weights)), 0)
    hist = zeros((size,), w.dtype).at[uf.where(inside, flat, size)].add(w, mode="drop")
    hist = sh.reshape(hist, shape)
    if density:
        volume = None
        for d, e in enumerate(edges):
            widths = diff(e)
            widths = sh.reshape(widths, tuple(shape[d] if k == d else 1
                                              for k in builtins.range(n_dims)))
            volume = widths if volume is None else uf.multiply(volume, widths)
        hist = uf.divide(hist, uf.multiply(red.sum(hist), volume))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The two-dimensional histogram of the points ``(x, y)``.

    Returns:
        ``(hist, xedges, yedges)``.

    Example:
        >>> jnp.histogram2d(jnp.array([0.0, 1.0, 1.0]), jnp.array([0.0, 1.0, 0.0]), bins=2)[0]
        Array([[1, 0],
               [1, 1]], dtype=int32)
    """
    x, y = _float(x), _float(y)
    if not isinstance(bins, (int, np.integer)) and len(bins) == 2:
        bins = list(bins)
    hist, (x_edges, y_edges) = histogramdd(stack([x, y], axis=1), bins, range, weights,
                                           density)
    return hist, x_edges, y_edges


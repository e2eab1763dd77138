"""Quantiles of ``invarax.numpy``: ``quantile``, ``percentile``, ``median`` and their
``nan*`` forms (sorting, then interpolating between neighbours)."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..ops import shape as sh
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray
from ._indexing import take_along_axis
from ._promote import convert
from ._sorting import sort
from ._stats import _float

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    """The ``q``-th quantiles of ``a`` over ``axis`` (sorting, then interpolating).

    Arguments:
        a: an array.
        q: a quantile or array of quantiles in ``[0, 1]``; their axes come first.
        axis: None (flattened), an int or a tuple of ints.
        out, overwrite_input: accepted as NumPy's (``out`` must be None).
        method: ``"linear"``, ``"lower"``, ``"higher"``, ``"midpoint"`` or ``"nearest"``.
        keepdims: keep the reduced axes.

    Returns:
        The quantiles (NaN if the data has a NaN).

    Example:
        >>> jnp.quantile(jnp.array([1.0, 2.0, 4.0, 8.0]), 0.5)
        Array(3., dtype=float32)
    """
    return _quantile("quantile", a, q, axis, method, keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    """``quantile`` of the elements that are not NaN.

    Example:
        >>> jnp.nanquantile(jnp.array([1.0, jnp.nan, 3.0]), 0.5)
        Array(2., dtype=float32)
    """
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    """``quantile(a, q / 100)``.

    Example:
        >>> jnp.percentile(jnp.array([1.0, 2.0, 3.0]), 50)
        Array(2., dtype=float32)
    """
    return _quantile("percentile", a, uf.divide(q, 100), axis, method, keepdims, False)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    """``nanquantile(a, q / 100)``.

    Example:
        >>> jnp.nanpercentile(jnp.array([1.0, jnp.nan, 3.0]), 50)
        Array(2., dtype=float32)
    """
    return _quantile("nanpercentile", a, uf.divide(q, 100), axis, method, keepdims, True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over ``axis`` (the mean of the two middle values for an even count).

    Example:
        >>> jnp.median(jnp.array([3.0, 1.0, 4.0, 2.0]))
        Array(2.5, dtype=float32)
    """
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the elements that are not NaN.

    Example:
        >>> jnp.nanmedian(jnp.array([3.0, jnp.nan, 1.0]))
        Array(2., dtype=float32)
    """
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


def _quantile(name, a, q, axis, method, keepdims, ignore_nan):
    if method not in _METHODS:
        raise ValueError(f"jnp.{name}: method must be one of {_METHODS}, got {method!r}")
    a = _float(a)
    q = convert(asarray(q), a.dtype)
    ndim = a.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(
        d % ndim for d in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    keep = [d for d in range(ndim) if d not in axes]
    moved = sh.transpose(a, [*keep, *axes])
    n_reduced = int(math.prod([a.shape[d] for d in axes]))
    flat = sh.reshape(moved, (*[a.shape[d] for d in keep], n_reduced))
    data = sort(flat, axis=-1)  # NaNs last
    n_total = data.shape[-1]
    if ignore_nan:
        count = red.sum(uf.logical_not(uf.isnan(data)), axis=-1, keepdims=True, dtype=a.dtype)
    else:
        count = convert(asarray(n_total), a.dtype)
    q_flat = sh.reshape(q, (q.size,))
    pos = uf.multiply(sh.expand_dims(q_flat, tuple(range(data.ndim - 1))),
                      uf.subtract(count, 1))  # (..., nq)
    lo = uf.clip(uf.floor(pos), 0, max(n_total - 1, 0))
    hi = uf.clip(uf.ceil(pos), 0, max(n_total - 1, 0))
    idx = lambda p: convert(p, dtypes.default_int())  # noqa: E731
    lo_v = take_along_axis(data, idx(lo), axis=-1)
    hi_v = take_along_axis(data, idx(hi), axis=-1)
    if method == "lower":
        out = lo_v
    elif method == "higher":
        out = hi_v
    elif method == "midpoint":
        out = uf.multiply(uf.add(lo_v, hi_v), 0.5)
        out = uf.where(uf.equal(lo, hi), lo_v, out)
    elif method == "nearest":
        out = take_along_axis(data, idx(uf.clip(uf.round(pos), 0, max(n_total - 1, 0))), -1)
    else:
        frac = uf.subtract(pos, lo)
        out = uf.add(uf.multiply(lo_v, uf.subtract(1, frac)), uf.multiply(hi_v, frac))
    if ignore_nan:
        out = uf.where(uf.equal(count, 0), np.nan, out)
    else:
        out = uf.where(red.any(uf.isnan(data), axis=-1, keepdims=True), np.nan, out)
    # (*keep, nq) -> (*q.shape, *keep) (with kept axes as size 1 for keepdims)
    out = sh.transpose(out, [out.ndim - 1, *range(out.ndim - 1)])
    rest = [a.shape[d] if d in keep else 1 for d in range(ndim)] if keepdims else \
        [a.shape[d] for d in keep]
    return sh.reshape(out, (*q.shape, *rest))

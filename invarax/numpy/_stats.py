"""Statistics and NaN-aware reductions of ``invarax.numpy``: the ``nan*`` family,
``average``, ``ptp``, ``count_nonzero``, ``quantile``/``percentile``/``median``, ``cov``,
``corrcoef``, ``diff``/``ediff1d``/``gradient``/``trapezoid``, ``cumulative_sum``/
``cumulative_prod``, ``searchsorted``/``digitize``/``interp``, ``bincount``/``histogram``.

Every sum goes through ``jnp.sum`` (the canonical kernels), so these inherit N1-N5.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..ops import shape as sh
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray, zeros
from ._joining import concatenate
from ._promote import convert, promote_dtypes
from ._reductions import _axes


def _array(x):
    return x if isinstance(x, Array) else asarray(x)


def _float(a):
    (a,) = promote_dtypes(_array(a), to_inexact=True)
    return a


def _nan_fill(a, value):
    a = _array(a)
    if not dtypes.is_inexact(a.dtype):
        return a
    return uf.where(uf.isnan(a), convert(asarray(value), a.dtype), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``sum`` with NaNs counted as zero.

    Example:
        >>> jnp.nansum(jnp.array([1.0, jnp.nan, 2.0]))
        Array(3., dtype=float32)
    """
    return red.sum(_nan_fill(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``prod`` with NaNs counted as one.

    Example:
        >>> jnp.nanprod(jnp.array([3.0, jnp.nan, 2.0]))
        Array(6., dtype=float32)
    """
    return red.prod(_nan_fill(a, 1), axis, dtype, out, keepdims, initial, where)


def _nan_extremum(name, reduce, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = _array(a)
        if not dtypes.is_inexact(a.dtype):
            return reduce(a, axis, out, keepdims, initial, where)
        nan = uf.isnan(a)
        out_ = reduce(uf.where(nan, convert(asarray(fill), a.dtype), a), axis, out, keepdims,
                      initial, where)
        all_nan = red.all(nan, axis, keepdims=keepdims, where=where)
        return uf.where(all_nan, convert(asarray(np.nan), a.dtype), out_)

    f.__name__ = name
    f.__doc__ = f"""``{name[3:]}`` ignoring NaNs (NaN where every element is NaN).

    Example:
        >>> jnp.{name}(jnp.array([1.0, jnp.nan, 2.0]))
        Array({2 if name == "nanmax" else 1}., dtype=float32)
    """
    return f


nanmax = _nan_extremum("nanmax", red.max, -np.inf)
nanmin = _nan_extremum("nanmin", red.min, np.inf)


def _count_valid(a, axis, keepdims, where):
    valid = uf.logical_not(uf.isnan(a))
    return red.sum(valid, axis, dtype=a.dtype if a.dtype.kind == "f" else None,
                   keepdims=keepdims, where=where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """``mean`` of the elements that are not NaN (NaN where there are none).

    Example:
        >>> jnp.nanmean(jnp.array([1.0, jnp.nan, 2.0]))
        Array(1.5, dtype=float32)
    """
    a = _float(a)
    if dtype is not None:
        a = convert(a, dtypes.canonicalize(dtype))
    total = red.sum(_nan_fill(a, 0), axis, keepdims=keepdims, where=where)
    return uf.divide(total, convert(_count_valid(a, axis, keepdims, where), total.dtype))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """``var`` of the elements that are not NaN, with ``ddof`` delta degrees of freedom.

    Example:
        >>> jnp.nanvar(jnp.array([1.0, jnp.nan, 3.0]))
        Array(1., dtype=float32)
    """
    a = _float(a)
    if dtype is not None:
        a = convert(a, dtypes.canonicalize(dtype))
    mean = nanmean(a, axis, keepdims=True, where=where)
    centered = _nan_fill(uf.subtract(a, mean), 0)
    squares = uf.real(uf.multiply(centered, uf.conjugate(centered)))
    total = red.sum(squares, axis, keepdims=keepdims, where=where)
    count = convert(_count_valid(a, axis, keepdims, where), total.dtype)
    return uf.divide(total, uf.maximum(uf.subtract(count, ddof), 0))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """``std`` of the elements that are not NaN.

    Example:
        >>> jnp.nanstd(jnp.array([1.0, jnp.nan, 3.0]))
        Array(1., dtype=float32)
    """
    return uf.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def _nan_arg(name, arg, fill):
    def f(a, axis=None, out=None, keepdims=None):
        a = _array(a)
        if not dtypes.is_inexact(a.dtype):
            return arg(a, axis, out, keepdims)
        nan = uf.isnan(a)
        out_ = arg(uf.where(nan, convert(asarray(fill), a.dtype), a), axis, out, keepdims)
        return uf.where(red.all(nan, axis, keepdims=bool(keepdims)), -1, out_)

    f.__name__ = name
    f.__doc__ = f"""``{name[3:]}`` ignoring NaNs (-1 where every element is NaN).

    Example:
        >>> jnp.{name}(jnp.array([jnp.nan, 1.0, 2.0]))
        Array({2 if name == "nanargmax" else 1}, dtype=int32)
    """
    return f


nanargmax = _nan_arg("nanargmax", red.argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", red.argmin, np.inf)


def _nan_cumulative(name, cumulative, fill):
    def f(a, axis=None, dtype=None, out=None):
        return cumulative(_nan_fill(a, fill), axis, dtype, out)

    f.__name__ = name
    f.__doc__ = f"""``{name[3:]}`` with NaNs counted as {fill}.

    Example:
        >>> jnp.{name}(jnp.array([2.0, jnp.nan, 3.0]))
        Array([2., 2., {5 if name == "nancumsum" else 6}.], dtype=float32)
    """
    return f


nancumsum = _nan_cumulative("nancumsum", red.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", red.cumprod, 1)


def _cumulative_api(name, cumulative):
    def f(x, /, *, axis=None, dtype=None, include_initial=False):
        x = _array(x)
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"jnp.{name}: axis must be given for an array of more than "
                                 f"one dimension (shape {x.shape})")
            axis = 0
        x = sh.reshape(x, (1,)) if x.ndim == 0 else x
        out = cumulative(x, axis, dtype)
        if include_initial:
            shape = list(out.shape)
            shape[axis % out.ndim] = 1
            first = uf.add(zeros(tuple(shape), out.dtype), 0 if name == "cumulative_sum" else 1)
            out = concatenate([convert(first, out.dtype), out], axis=axis)
        return out

    f.__name__ = name
    f.__doc__ = f"""The array-API ``{name}``: ``{cumulative.__name__}`` along ``axis``, with an
    optional initial element.

    Example:
        >>> jnp.{name}(jnp.array([1, 2, 3]), include_initial=True)
        Array([{_INCLUSIVE[name]}], dtype=int32)
    """
    return f


_INCLUSIVE = {"cumulative_sum": "0, 1, 3, 6", "cumulative_prod": "1, 1, 2, 6"}
cumulative_sum = _cumulative_api("cumulative_sum", red.cumsum)
cumulative_prod = _cumulative_api("cumulative_prod", red.cumprod)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The weighted mean ``sum(a * w) / sum(w)`` over ``axis`` (the mean without weights).

    Arguments:
        a: an array.
        axis: None, an int or a tuple of ints.
        weights: an array of ``a``'s shape, or 1-d along a single ``axis``.
        returned: also return the sum of the weights.
        keepdims: keep the reduced axes.

    Returns:
        The average (and the weight sum with ``returned``).

    Example:
        >>> jnp.average(jnp.array([1.0, 3.0]), weights=jnp.array([3.0, 1.0]))
        Array(1.5, dtype=float32)
    """
    a = _float(a)
    if weights is None:
        avg = red.mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        count = math.prod(a.shape[d] for d in _axes("average", a, axis))
        return avg, uf.add(uf.multiply(avg, 0), count)
    w = _array(weights)
    a, w = promote_dtypes(a, w, to_inexact=True)
    if w.shape != a.shape:
        if axis is None or not isinstance(axis, (int, np.integer)) or w.ndim != 1 \
                or w.shape[0] != a.shape[axis]:
            raise ValueError(f"jnp.average: weights of shape {w.shape} do not fit a of shape "
                             f"{a.shape} along axis {axis}; give weights of a's shape, or 1-d "
                             "weights with a single axis")
        shape = [1] * a.ndim
        shape[axis] = w.shape[0]
        w = sh.broadcast_in_dim(sh.reshape(w, tuple(shape)), a.shape, tuple(range(a.ndim)))
    scale = red.sum(w, axis, keepdims=keepdims)
    avg = uf.divide(red.sum(uf.multiply(a, w), axis, keepdims=keepdims), scale)
    return (avg, scale) if returned else avg


def ptp(a, axis=None, out=None, keepdims=False):
    """The range ``max - min`` over ``axis`` ("peak to peak").

    Example:
        >>> jnp.ptp(jnp.array([3, 1, 7]))
        Array(6, dtype=int32)
    """
    return uf.subtract(red.max(a, axis, out, keepdims), red.min(a, axis, out, keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements over ``axis``.

    Example:
        >>> jnp.count_nonzero(jnp.array([0, 1, 2, 0]))
        Array(2, dtype=int32)
    """
    return red.sum(uf.not_equal(_array(a), 0), axis, dtype=dtypes.default_int(),
                   keepdims=keepdims)


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
    from ._indexing import take_along_axis
    from ._sorting import sort

    if method not in _METHODS:
        raise ValueError(f"jnp.{name}: method must be one of {_METHODS}, got {method!r}")
    a = _float(a)
    q = convert(_array(q), a.dtype)
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


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]``, ``n`` times.

    Example:
        >>> jnp.diff(jnp.array([1, 4, 9, 16]))
        Array([3, 5, 7], dtype=int32)
    """
    a = _array(a)
    if a.ndim == 0:
        raise ValueError("jnp.diff needs at least a 1-d array, got a scalar")
    axis = axis % a.ndim
    parts = []
    for extra in (prepend, a, append):
        if extra is None or extra is a:
            parts += [] if extra is None else [a]
            continue
        e = _array(extra)
        if e.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            e = sh.broadcast_in_dim(convert(e, a.dtype), tuple(shape), ())
        parts.append(e)
    a = concatenate(parts, axis=axis) if len(parts) > 1 else a
    for _ in range(int(n)):
        m = a.shape[axis]
        upper = sh.slice_in_dim(a, 1, m, 1, axis)
        lower = sh.slice_in_dim(a, 0, max(m - 1, 0), 1, axis)
        a = uf.not_equal(upper, lower) if a.dtype == dtypes.bool_ else uf.subtract(upper, lower)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened array, with optional
    values before and after.

    Example:
        >>> jnp.ediff1d(jnp.array([1, 2, 4]), to_begin=0)
        Array([0, 1, 2], dtype=int32)
    """
    a = _array(ary)
    out = diff(sh.reshape(a, (a.size,)))
    parts = [out]
    if to_begin is not None:
        parts.insert(0, convert(_flat(to_begin), out.dtype))
    if to_end is not None:
        parts.append(convert(_flat(to_end), out.dtype))
    return concatenate(parts) if len(parts) > 1 else out


def _flat(x):
    x = _array(x)
    return sh.reshape(x, (x.size,))


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled ``f`` by central differences inside and one-sided
    differences at the edges (uniform scalar spacings).

    Arguments:
        f: an array.
        *varargs: one spacing for all axes, or one per axis (scalars).
        axis: None (all axes), an int or a tuple of ints.
        edge_order: 1 or None (JAX's restriction).

    Returns:
        One array per axis (a single array for a single axis).

    Example:
        >>> jnp.gradient(jnp.array([1.0, 2.0, 4.0, 7.0]))
        Array([1. , 1.5, 2.5, 3. ], dtype=float32)
    """
    if edge_order not in (None, 1):
        raise NotImplementedError("jnp.gradient supports edge_order=1 only, as JAX")
    f = _float(f)
    axes = tuple(range(f.ndim)) if axis is None else tuple(
        d % f.ndim for d in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise ValueError(f"jnp.gradient: give one spacing or {len(axes)}, got {len(varargs)}")
    out = []
    for d, h in zip(axes, spacing, strict=True):
        if np.ndim(h) != 0:
            raise NotImplementedError("jnp.gradient: coordinate arrays as spacing are not "
                                      "supported; give a scalar spacing")
        n = f.shape[d]
        if n < 2:
            raise ValueError(f"jnp.gradient needs at least 2 samples along axis {d}, got {n}")
        s = lambda lo, hi, d=d: sh.slice_in_dim(f, lo, hi, 1, d)  # noqa: E731
        inner = uf.divide(uf.subtract(s(2, n), s(0, n - 2)), 2.0 * h)
        first = uf.divide(uf.subtract(s(1, 2), s(0, 1)), h)
        last = uf.divide(uf.subtract(s(n - 1, n), s(n - 2, n - 1)), h)
        out.append(concatenate([first, inner, last], axis=d))
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of sampled ``y`` by the trapezoidal rule along ``axis``.

    Example:
        >>> jnp.trapezoid(jnp.array([1.0, 2.0, 3.0]))
        Array(4., dtype=float32)
    """
    y = _float(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    pairs = uf.add(sh.slice_in_dim(y, 1, n, 1, axis), sh.slice_in_dim(y, 0, max(n - 1, 0), 1, axis))
    if x is None:
        widths = dx
    else:
        x = _float(x)
        widths = diff(x, axis=axis if x.ndim == y.ndim else -1)
        if x.ndim != y.ndim:
            shape = [1] * y.ndim
            shape[axis] = n - 1
            widths = sh.reshape(widths, tuple(shape))
    return uf.multiply(red.sum(uf.multiply(pairs, widths), axis=axis), 0.5)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``m`` (and ``y``), as NumPy.

    Arguments:
        m: a 1-d or 2-d array, one variable per row (per column if not ``rowvar``).
        y: more variables, stacked after ``m``'s.
        rowvar: whether rows (True) or columns are the variables.
        bias: normalise by N (True) instead of N - 1.
        ddof: overrides ``bias``: normalise by N - ddof.
        fweights, aweights: integer frequency and real observation weights.

    Returns:
        The covariance matrix (a scalar for a single variable).

    Example:
        >>> jnp.cov(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        Array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
    """
    from ._contractions import matmul
    from ._joining import atleast_2d

    x = atleast_2d(_float(m))
    if not rowvar and x.shape[0] != 1:
        x = sh.transpose(x, (1, 0))
    if y is not None:
        y = atleast_2d(_float(y))
        if not rowvar and y.shape[0] != 1:
            y = sh.transpose(y, (1, 0))
        x = concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = _float(fweights)
    if aweights is not None:
        aw = _float(aweights)
        w = aw if w is None else uf.multiply(w, aw)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    if w is None:
        f = x.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = uf.subtract(w_sum, ddof)
    else:
        f = uf.subtract(w_sum, uf.divide(uf.multiply(ddof, red.sum(uf.multiply(w, _float(
            aweights)))), w_sum))
    x = uf.subtract(x, avg[:, None])
    x_t = sh.transpose(x if w is None else uf.multiply(x, w), (1, 0))
    c = uf.divide(matmul(x, uf.conjugate(x_t)), f)
    return sh.reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True):
    """The Pearson correlation coefficients: ``cov`` normalised by the standard deviations
    (clipped to ``[-1, 1]``).

    Example:
        >>> jnp.corrcoef(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.5]]))[0, 1]
        Array(-0.98198044, dtype=float32)
    """
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return uf.divide(c, c)
    from ._matrix import diagonal

    std = uf.sqrt(uf.real(diagonal(c)))
    c = uf.divide(uf.divide(c, std[:, None]), std[None, :])
    return uf.clip(c, -1, 1) if c.dtype.kind != "c" else c


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps of more than ``discont`` replaced by their ``period`` complement
    (phase unwrapping, as NumPy and JAX).

    Example:
        >>> jnp.unwrap(jnp.array([0.0, 3.0, 6.5]))
        Array([0.      , 3.      , 0.216815], dtype=float32)
    """
    p = _float(p)
    axis = axis % p.ndim
    if p.shape[axis] == 0:
        return p
    discont = period / 2 if discont is None else discont
    interval = period / 2
    dd = diff(p, axis=axis)
    ddmod = uf.subtract(uf.remainder(uf.add(dd, interval), period), interval)
    ddmod = uf.where(uf.logical_and(uf.equal(ddmod, -interval), uf.greater(dd, 0)), interval,
                     ddmod)
    correct = uf.where(uf.less(uf.abs(dd), discont), 0, uf.subtract(ddmod, dd))
    n = p.shape[axis]
    rest = uf.add(sh.slice_in_dim(p, 1, n, 1, axis), red.cumsum(convert(correct, p.dtype), axis))
    return concatenate([sh.slice_in_dim(p, 0, 1, 1, axis), rest], axis=axis)

"""Statistics of ``invarax.numpy``: ``average``, ``ptp``, ``count_nonzero``, ``cov``,
``corrcoef``, ``cumulative_sum``/``cumulative_prod``; and the float and flat operands the
statistics modules share.

Every sum goes through ``jnp.sum`` (the canonical kernels), so these inherit N1-N5.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..ops import shape as sh
from . import _reductions as red
from . import _ufuncs as uf
from ._contractions import matmul
from ._creation import asarray, zeros
from ._joining import atleast_2d, concatenate
from ._matrix import diagonal
from ._promote import convert, promote_dtypes
from ._reductions import _axes


def _float(a):
    (a,) = promote_dtypes(asarray(a), to_inexact=True)
    return a


def _flat(x):
    x = asarray(x)
    return sh.reshape(x, (x.size,))


def _cumulative_api(name, cumulative):
    def f(x, /, *, axis=None, dtype=None, include_initial=False):
        x = asarray(x)
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
    w = asarray(weights)
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
    return red.sum(uf.not_equal(asarray(a), 0), axis, dtype=dtypes.default_int(),
                   keepdims=keepdims)


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
    std = uf.sqrt(uf.real(diagonal(c)))
    c = uf.divide(uf.divide(c, std[:, None]), std[None, :])
    return uf.clip(c, -1, 1) if c.dtype.kind != "c" else c

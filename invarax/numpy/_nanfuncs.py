"""The NaN-aware reductions of ``invarax.numpy``: ``nansum``, ``nanprod``, ``nanmax``,
``nanmin``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanargmax``, ``nanargmin``, ``nancumsum``,
``nancumprod`` (each the plain reduction of the data with its NaNs replaced).

Every sum goes through ``jnp.sum`` (the canonical kernels), so these inherit N1-N5.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray
from ._promote import convert
from ._stats import _float


def _nan_fill(a, value):
    a = asarray(a)
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
        a = asarray(a)
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
        a = asarray(a)
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

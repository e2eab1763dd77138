"""Differences and integrals of ``invarax.numpy``: ``diff``, ``ediff1d``, ``gradient``,
``trapezoid``, ``unwrap``."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..ops import shape as sh
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray
from ._joining import concatenate
from ._promote import convert
from ._stats import _flat, _float


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]``, ``n`` times.

    Example:
        >>> jnp.diff(jnp.array([1, 4, 9, 16]))
        Array([3, 5, 7], dtype=int32)
    """
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("jnp.diff needs at least a 1-d array, got a scalar")
    axis = axis % a.ndim
    parts = []
    for extra in (prepend, a, append):
        if extra is None or extra is a:
            parts += [] if extra is None else [a]
            continue
        e = asarray(extra)
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
    a = asarray(ary)
    out = diff(sh.reshape(a, (a.size,)))
    parts = [out]
    if to_begin is not None:
        parts.insert(0, convert(_flat(to_begin), out.dtype))
    if to_end is not None:
        parts.append(convert(_flat(to_end), out.dtype))
    return concatenate(parts) if len(parts) > 1 else out


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

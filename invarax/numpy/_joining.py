"""Joining and splitting: concatenate, stack (h/v/d/column), split, array_split, and
atleast_1d/2d/3d."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.trace import Tracer
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ._promote import asarray_arg, convert, promote_dtypes


def _atleast(name: str, ndim: int, arys) -> list:
    """``arys`` with at least ``ndim`` dims (NumPy's placement of the new size-1 axes)."""
    out = []
    for a in arys:
        x = asarray_arg(a, name)
        shape = (1,) * (ndim - x.ndim) + x.shape
        if ndim == 3 and x.ndim < 3:
            shape = {0: (1, 1, 1), 1: (1, *x.shape, 1), 2: (*x.shape, 1)}[x.ndim]
        out.append(sh.reshape(x, shape) if x.ndim < ndim else x)
    return out


def atleast_1d(*arys):
    """Arrays with at least one dimension (a scalar becomes shape ``(1,)``).

    Arguments:
        *arys: arrays or scalars.

    Returns:
        One array, or a list for several arguments.

    Example:
        >>> jnp.atleast_1d(1.0).shape
        (1,)
    """
    out = _atleast("atleast_1d", 1, arys)
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Arrays with at least two dimensions (``(n,)`` becomes ``(1, n)``).

    Arguments:
        *arys: arrays or scalars.

    Returns:
        One array, or a list for several arguments.

    Example:
        >>> jnp.atleast_2d(jnp.ones(3)).shape
        (1, 3)
    """
    out = _atleast("atleast_2d", 2, arys)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Arrays with at least three dimensions (``(n,)`` becomes ``(1, n, 1)`` and ``(m, n)``
    becomes ``(m, n, 1)``).

    Arguments:
        *arys: arrays or scalars.

    Returns:
        One array, or a list for several arguments.

    Example:
        >>> jnp.atleast_3d(jnp.ones(3)).shape
        (1, 3, 1)
    """
    out = _atleast("atleast_3d", 3, arys)
    return out[0] if len(out) == 1 else out


def concatenate(arrays, axis: int | None = 0, dtype=None) -> Array:
    """Join arrays along an existing axis; dtypes promote as in JAX.

    Arguments:
        arrays: a sequence of arrays of equal rank (at least 1) and equal shapes except
            along ``axis``.
        axis: the axis; None flattens every array first.
        dtype: the dtype of the result (default: the promoted dtype).

    Returns:
        The joined array.

    Example:
        >>> jnp.concatenate([jnp.arange(2), jnp.ones(1)])
        Array([0., 1., 1.], dtype=float32)
    """
    xs = [asarray_arg(a, "concatenate") for a in arrays]
    if not xs:
        raise ValueError("jnp.concatenate needs at least one array")
    if axis is None:
        xs, axis = [sh.reshape(x, (x.size,)) for x in xs], 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError(
            "zero-dimensional arrays cannot be concatenated; use jnp.stack, or jnp.atleast_1d first"
        )
    xs = promote_dtypes(*xs)
    if dtype is not None:
        xs = [convert(x, dtypes.canonicalize(dtype)) for x in xs]
    return sh.concatenate(xs, canonicalize_axis(axis, xs[0].ndim))


def stack(arrays, axis: int = 0, out=None, dtype=None) -> Array:
    """Join arrays of equal shape along a new axis.

    Arguments:
        arrays: a sequence of arrays of equal shape.
        axis: the position of the new axis in the result.
        out: unsupported (arrays are immutable); must be None.
        dtype: the dtype of the result (default: the promoted dtype).

    Returns:
        An array with one more dimension, of size ``len(arrays)`` at ``axis``.

    Example:
        >>> jnp.stack([jnp.zeros(2), jnp.ones(2)], axis=1)
        Array([[0., 1.],
               [0., 1.]], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    xs = [asarray_arg(a, "stack") for a in arrays]
    if not xs:
        raise ValueError("jnp.stack needs at least one array")
    if len({x.shape for x in xs}) > 1:
        raise ValueError(
            f"jnp.stack: all input arrays must have the same shape, got {[x.shape for x in xs]}"
        )
    axis = canonicalize_axis(axis, xs[0].ndim + 1)
    return concatenate([sh.expand_dims(x, (axis,)) for x in xs], axis, dtype)


def hstack(tup, dtype=None) -> Array:
    """Join arrays horizontally: along axis 1, or axis 0 for 1-d arrays.

    Arguments:
        tup: a sequence of arrays (scalars become 1-d).
        dtype: the dtype of the result.

    Returns:
        The joined array.

    Example:
        >>> jnp.hstack([jnp.zeros(2), jnp.ones(1)])
        Array([0., 0., 1.], dtype=float32)
    """
    xs = _atleast("hstack", 1, tup)
    return concatenate(xs, 0 if xs and xs[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None) -> Array:
    """Join arrays vertically (along axis 0); 1-d arrays become rows.

    Arguments:
        tup: a sequence of arrays.
        dtype: the dtype of the result.

    Returns:
        The joined array, at least 2-d.

    Example:
        >>> jnp.vstack([jnp.zeros(2), jnp.ones(2)]).shape
        (2, 2)
    """
    return concatenate(_atleast("vstack", 2, tup), 0, dtype)


def dstack(tup, dtype=None) -> Array:
    """Join arrays along the third axis (after making them at least 3-d).

    Arguments:
        tup: a sequence of arrays.
        dtype: the dtype of the result.

    Returns:
        The joined array, at least 3-d.

    Example:
        >>> jnp.dstack([jnp.zeros(2), jnp.ones(2)]).shape
        (1, 2, 2)
    """
    return concatenate(_atleast("dstack", 3, tup), 2, dtype)


def column_stack(tup) -> Array:
    """Join 1-d arrays as the columns of a 2-d array (2-d arrays join along axis 1).

    Arguments:
        tup: a sequence of arrays.

    Returns:
        A 2-d array (at least).

    Example:
        >>> jnp.column_stack([jnp.zeros(2), jnp.ones(2)])
        Array([[0., 1.],
               [0., 1.]], dtype=float32)
    """
    xs = [asarray_arg(a, "column_stack") for a in tup]
    xs = [sh.reshape(x, (x.size, 1)) if x.ndim < 2 else x for x in xs]
    return concatenate(xs, 1)


def _split_bounds(name: str, indices_or_sections, size: int, even: bool) -> list:
    """The ``(start, stop)`` of each part of an axis of ``size``."""
    if isinstance(indices_or_sections, Tracer):
        raise TypeError(
            f"jnp.{name} needs static indices_or_sections (the parts' shapes "
            "depend on it); mark the argument static with static_argnums"
        )
    spec = np.asarray(indices_or_sections)
    if spec.ndim == 1 and spec.size == 0:
        return [(0, size)]  # no cut (an empty list reads as float64, np.cumsum([]) is one)
    if spec.dtype.kind not in "iu" or spec.ndim > 1:
        raise TypeError(
            f"jnp.{name}: indices_or_sections must be an int or a 1-D sequence of integers, got "
            f"{indices_or_sections!r:.60}"
        )
    if spec.ndim:
        cuts = [0, *spec.tolist(), size]
        spans = [slice(a, b).indices(size)[:2] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        return [(a, max(a, b)) for a, b in spans]
    sections = int(spec)
    if sections <= 0:
        raise ValueError(
            f"jnp.{name}: the number of sections must be larger than 0, got {sections}"
        )
    if even and size % sections:
        raise ValueError(
            f"array split does not result in an equal division: an axis of size "
            f"{size} into {sections} sections; use jnp.array_split for unequal "
            "parts"
        )
    q, r = divmod(size, sections)
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + q + (i < r))
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _split(name: str, ary, indices_or_sections, axis: int, even: bool) -> list:
    x = asarray_arg(ary, name)
    axis = canonicalize_axis(axis, x.ndim)
    bounds = _split_bounds(name, indices_or_sections, x.shape[axis], even)
    return [sh.slice_in_dim(x, lo, hi, axis=axis) for lo, hi in bounds]


def split(ary, indices_or_sections, axis: int = 0) -> list:
    """Split an array into parts along an axis, as ``numpy.split``.

    Arguments:
        ary: the array.
        indices_or_sections: a number of equal sections, or the (static) indices where
            parts start (as NumPy: negative ones count from the end).
        axis: the axis to split.

    Returns:
        A list of arrays.

    Example:
        >>> [p.tolist() for p in jnp.split(jnp.arange(5), [2, 3])]
        [[0, 1], [2], [3, 4]]
    """
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary, indices_or_sections, axis: int = 0) -> list:
    """Split into parts like ``split``, but sections need not divide the axis evenly.

    Arguments:
        ary: the array.
        indices_or_sections: a number of sections (the first ``size % n`` are one longer)
            or the indices where parts start.
        axis: the axis to split.

    Returns:
        A list of arrays.

    Example:
        >>> [p.tolist() for p in jnp.array_split(jnp.arange(5), 2)]
        [[0, 1, 2], [3, 4]]
    """
    return _split("array_split", ary, indices_or_sections, axis, even=False)

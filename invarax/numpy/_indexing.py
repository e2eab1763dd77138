"""NumPy indexing: ``x[idx]``, ``take`` and ``take_along_axis``.

``x[idx]`` follows NumPy's rules with JAX's semantics. Basic indices (ints, slices,
``None``, ``...``) become static ``slice``, ``rev`` and ``reshape`` ops, and a traced
integer scalar a ``dynamic_slice``; advanced indices (integer and boolean arrays)
become one ``gather``. Out-of-bounds indices are clamped, as in JAX, whether arrays,
traced ints or static ints (which become index arrays then), so eager gives ``jit``'s
answer. ``x.at[idx]`` lives in ``_index_update``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.array import Array, ArrayImpl, to_array
from ..ops import indexing as ix
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ._creation import asarray
from ._index_parse import (
    convert_index,
    index_batch_shape,
    index_column,
    parse_index,
    stack_columns,
    static_index,
)
from ._promote import asarray_arg, broadcast_shapes
from ._ufuncs import remainder

__all__ = ["getitem", "take", "take_along_axis"]


def getitem(x, idx, mode=None, fill_value=None) -> Array:
    """``x[idx]``: NumPy indexing with JAX's semantics (installed as ``Array.__getitem__``).

    Arguments:
        x: the array.
        idx: ints, slices (any step), ``None``, ``...``, integer arrays (static or traced)
            and boolean arrays (concrete only), or a tuple of them.
        mode: None (``x[idx]``: out-of-bounds indices are clamped, static or traced),
            or a ``GatherScatterMode`` / ``"clip"``, ``"fill"``,
            ``"promise_in_bounds"`` for every index (``x.at[idx].get(mode=...)``).
        fill_value: the value of out-of-bounds reads in ``"fill"`` mode.

    Returns:
        The indexed array. Advanced indices that are next to each other keep their place
        in the result; separated ones put their dims first (NumPy's rule).

    Example:
        >>> x = jnp.arange(12).reshape(3, 4)
        >>> x[1:, jnp.array([0, 3])]
        Array([[ 4,  7],
               [ 8, 11]], dtype=int32)
    """
    x = to_array(x, "the indexed value")
    entries, bool_axes = parse_index(x.shape, idx, static_ints=mode is None)
    if bool_axes:
        x = sh.expand_dims(x, bool_axes)
    y, advanced = _basic_index(x, entries)
    if not advanced:
        return y
    mode = ix.GatherScatterMode.CLIP if mode is None else ix.GatherScatterMode.from_any(mode)
    return _advanced_index(y, advanced, mode, fill_value)


def _slice_window(start: int, stop: int, step: int, size: int):
    """``(lo, hi, stride, reversed)``: the lax.slice of a NumPy slice, in the coordinates of
    the axis reversed first if the step is negative."""
    n = len(range(start, stop, step))
    if n == 0:
        return 0, 0, 1, False
    if step > 0:
        return start, start + (n - 1) * step + 1, step, False
    lo = size - 1 - start
    return lo, lo + (n - 1) * -step + 1, -step, True


def _basic_index(x: Array, entries):
    """Apply the static entries with slice/rev/dynamic_slice/reshape; leave the axes of
    ``adv`` entries whole. Returns the array and ``[(axis, index_array)]`` of the ``adv``."""
    lo, hi, stride = [0] * x.ndim, list(x.shape), [1] * x.ndim
    reverse, dynamic, advanced, shape = [], {}, [], []
    axis = 0
    for kind, value in entries:
        if kind == "new":
            shape.append(1)
            continue
        if kind == "slice":
            lo[axis], hi[axis], stride[axis], flip = _slice_window(*value, x.shape[axis])
            reverse += [axis] if flip else []
            shape.append(len(range(*value)))
        elif kind == "int":
            lo[axis], hi[axis] = value, value + 1
        elif kind == "dyn":
            dynamic[axis] = value
        else:
            advanced.append((len(shape), value))
            shape.append(x.shape[axis])
        axis += 1
    y = sh.slice(sh.rev(x, reverse), lo, hi, stride)
    if dynamic:
        starts = [dynamic.get(a, 0) for a in range(y.ndim)]
        sizes = [1 if a in dynamic else d for a, d in enumerate(y.shape)]
        y = ix.dynamic_slice(y, starts, sizes)
    return sh.reshape(y, shape), advanced


def _advanced_index(y: Array, advanced, mode, fill_value) -> Array:
    axes = tuple(a for a, _ in advanced)
    batch = index_batch_shape([i for _, i in advanced])
    columns = [index_column(i, y.shape[a], len(batch) - i.ndim) for a, i in advanced]
    rest = tuple(d for a, d in enumerate(y.shape) if a not in axes)
    # Adjacent advanced indices keep their place; separated ones go first.
    at = axes[0] if axes == tuple(range(axes[0], axes[0] + len(axes))) else 0
    if math.prod(batch + rest) == 0:
        return zeros_of(y, rest[:at] + batch + rest[at:])
    out = ix.gather(y, stack_columns(columns, batch), axes=axes, mode=mode, fill_value=fill_value)
    return move_batch(out, len(batch), at)


def move_batch(x: Array, nbatch: int, at: int) -> Array:
    """Move the ``nbatch`` leading dims of ``x`` to position ``at`` of the other dims."""
    rest = list(range(nbatch, x.ndim))
    return sh.transpose(x, rest[:at] + list(range(nbatch)) + rest[at:])


def zeros_of(x: Array, shape: tuple) -> Array:
    """Zeros of ``x``'s dtype and weak type, of ``shape`` (the result of an empty index)."""
    return sh.broadcast_in_dim(ArrayImpl(np.zeros((), x.dtype), x.weak_type), shape, ())


# ---------------------------------------------------------------------------------------
# take, take_along_axis


_TAKE_MODES = {
    # mode: (gather mode, whether negative indices count from the end)
    None: (ix.GatherScatterMode.FILL_OR_DROP, True),
    "fill": (ix.GatherScatterMode.FILL_OR_DROP, True),
    "clip": (ix.GatherScatterMode.CLIP, False),
    "wrap": (ix.GatherScatterMode.PROMISE_IN_BOUNDS, False),
}


def _integer_indices(indices, name: str) -> Array:
    indices = asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(
            f"{name} indices must be of integer type, got {indices.dtype}; "
            "convert with .astype(int)"
        )
    return indices


def take(
    a,
    indices,
    axis=None,
    out=None,
    mode=None,
    unique_indices=False,
    indices_are_sorted=False,
    fill_value=None,
) -> Array:
    """Take elements of ``a`` along an axis, as ``numpy.take`` with JAX's modes.

    Arguments:
        a: the array.
        indices: an integer array (or a nested list of ints).
        axis: the axis to take along; None flattens ``a`` first.
        out: unsupported (arrays are immutable).
        mode: ``"fill"`` (default, as in JAX: out-of-bounds indices give ``fill_value``,
            negative ones count from the end), ``"clip"`` or ``"wrap"``.
        unique_indices, indices_are_sorted: accepted for JAX compatibility.
        fill_value: for ``"fill"``: NaN for inexact dtypes by default, the lowest signed
            or highest unsigned integer, True for bools.

    Returns:
        An array of shape ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.

    Example:
        >>> jnp.take(jnp.array([1., 2., 3.]), jnp.array([-1, 5]))
        Array([ 3., nan], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if mode == "raise":
        raise NotImplementedError(
            "The 'raise' mode to jnp.take is not supported: errors "
            "cannot depend on values; use mode='fill' or 'clip'."
        )
    if mode not in _TAKE_MODES:
        raise ValueError(f"Invalid mode {mode!r} for jnp.take; use 'fill', 'clip' or 'wrap'")
    x = asarray_arg(a, "take")
    index = _integer_indices(indices, "jnp.take")
    if axis is None:
        x, axis = sh.reshape(x, (x.size,)), 0
    axis = canonicalize_axis(axis, x.ndim)
    size = x.shape[axis]
    out_shape = x.shape[:axis] + index.shape + x.shape[axis + 1 :]
    if size == 0 and index.size:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if math.prod(out_shape) == 0:
        return zeros_of(x, out_shape)
    gather_mode, wrap = _TAKE_MODES[mode]
    if mode == "wrap":
        index = _wrap_modulo(index, size)
    column = index_column(index, size, 0, 1, wrap)
    got = ix.gather(x, column, axes=(axis,), mode=gather_mode, fill_value=fill_value)
    return move_batch(got, index.ndim, axis)


def _wrap_modulo(index: Array, size: int) -> Array:
    return remainder(convert_index(index), size)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None) -> Array:
    """Take values of ``arr`` at ``indices`` along ``axis``, as ``numpy.take_along_axis``.

    Arguments:
        arr: the array.
        indices: an integer array of ``arr``'s rank (1-d if ``axis`` is None), broadcast
            against ``arr`` except along ``axis`` (e.g. the result of ``argsort``).
        axis: the axis; None flattens ``arr`` first.
        mode: ``"fill"`` (default, as in JAX), ``"clip"`` or ``"promise_in_bounds"``;
            negative indices count from the end except in ``"promise_in_bounds"``.
        fill_value: the value of out-of-bounds reads in ``"fill"`` mode.

    Returns:
        An array of the broadcast shape of ``indices`` and ``arr`` (``indices``' size along
        ``axis``).

    Example:
        >>> x = jnp.array([[3., 1.], [0., 2.]])
        >>> jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)
        Array([[1., 3.],
               [0., 2.]], dtype=float32)
    """
    x = asarray_arg(arr, "take_along_axis")
    index = _integer_indices(indices, "take_along_axis")
    if axis is None:
        if index.ndim != 1:
            raise ValueError(
                f"take_along_axis indices must be 1-d if axis=None, got shape {index.shape}"
            )
        x, axis = sh.reshape(x, (x.size,)), 0
    if x.ndim != index.ndim:
        raise ValueError(
            f"indices and arr must have the same number of dimensions; {index.ndim} vs. {x.ndim}"
        )
    axis = canonicalize_axis(axis, x.ndim)
    out_shape = broadcast_shapes(index.shape, x.shape[:axis] + (1,) + x.shape[axis + 1 :])
    if x.shape[axis] == 0 or math.prod(out_shape) == 0:
        return zeros_of(x, out_shape)
    gather_mode = ix.GatherScatterMode.from_any(mode)
    wrap = gather_mode is not ix.GatherScatterMode.PROMISE_IN_BOUNDS
    columns = [
        index_column(index, x.shape[axis], wrap=wrap)
        if d == axis
        else static_index(
            np.arange(x.shape[d]).reshape([-1 if e == d else 1 for e in range(x.ndim)])
        )
        for d in range(x.ndim)
    ]
    return ix.gather(
        x,
        stack_columns(columns, out_shape),
        axes=tuple(range(x.ndim)),
        mode=gather_mode,
        fill_value=fill_value,
    )

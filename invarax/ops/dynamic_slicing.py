"""``dynamic_slice`` and ``dynamic_update_slice``: slices at start indices that may be traced.

Both are linear in their array operands (not the start indices) and have transpose rules.
Batching with unbatched starts takes the whole batch axis; with batched starts they become
a gather or scatter of each example's window (``gather.py``), so every example's bits are
the unbatched op's.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import (
    UndefinedPrimal,
    Zero,
    deflinear,
    zeros_like_aval,
)
from ..interpreters.batching import (
    axis_size_of,
    batching_rules,
    move_batch_axis,
    not_mapped,
)
from . import elementwise as ew
from . import shape as sh
from ._util import check_same_dtypes, lax_operands
from .gather import GatherScatterMode, _shift_axes, gather_p, scatter_p


def _check_start_indices(name: str, operand: ShapedArray, starts) -> None:
    if len(starts) != operand.ndim:
        raise TypeError(
            f"{name} needs one start index per dimension of the operand of shape "
            f"{operand.shape}, got {len(starts)}"
        )
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(f"{name} start indices must be integer scalars, got {s.str_short()}")


def clamped_starts(starts, shape, sizes) -> list:
    """Start indices moved into ``[0, dim - size]``, so that the slice fits (as XLA)."""
    return [min(max(int(s), 0), d - z) for s, d, z in zip(starts, shape, sizes, strict=True)]


def window(starts, sizes) -> tuple:
    return tuple(slice(s, s + z) for s, z in zip(starts, sizes, strict=True))


def _window_indices(shape, starts, start_dims, sizes, size: int, batch_column: bool):
    """Each example's window as gather/scatter index vectors, for batched start indices.

    Returns ``(indices, axes)``: ``axes`` are the axes the window does not cover whole,
    and ``indices`` of shape ``(size, *[sizes[a] for a in axes], k)`` holds, for each
    example and window position, ``start + offset`` on each of ``axes`` (the start
    clamped so that the window fits, as the unbatched op), after a column of the
    example's number if ``batch_column`` (``k`` counts it).
    """
    axes = tuple(a for a, (d, z) in enumerate(zip(shape, sizes, strict=True)) if z < d)
    grid = (size, *(sizes[a] for a in axes))
    dtype = dtypes.default_int()
    columns = [sh.broadcasted_iota(dtype, grid, 0)] if batch_column else []
    for j, a in enumerate(axes):
        start, bdim = starts[a], start_dims[a]
        # Clamp in the start's own dtype (whose range may not reach shape[a] - sizes[a]).
        high = min(shape[a] - sizes[a], np.iinfo(start.dtype).max)
        start = ew.max(start, ArrayImpl(np.zeros((), start.dtype)))
        start = ew.min(start, ArrayImpl(np.asarray(high, start.dtype)))
        if start.dtype != dtype:
            start = ew.convert_element_type(start, dtype)
        start = sh.broadcast_in_dim(start, grid, () if bdim is not_mapped else (0,))
        columns.append(ew.add(start, sh.broadcasted_iota(dtype, grid, j + 1)))
    if not columns:  # an unbatched operand read whole
        return sh.broadcast_in_dim(ArrayImpl(np.zeros((), dtype)), (*grid, 0), ()), axes
    columns = [sh.reshape(c, (*grid, 1)) for c in columns]
    return sh.concatenate(columns, len(grid)), axes


def _window_order(ndim: int, axes) -> list:
    """The permutation that takes a batch-first window to the layout of a gather's output
    or a scatter's updates over ``_window_indices``: the batch, ``axes``, the other axes."""
    return [0, *(1 + a for a in (*axes, *(a for a in range(ndim) if a not in axes)))]


# dynamic_slice: operand[start:start + size] per axis, starts clamped so the slice fits.
def _dynamic_slice_impl(operand, *starts, slice_sizes):
    return operand[window(clamped_starts(starts, operand.shape, slice_sizes), slice_sizes)]


def _dynamic_slice_abstract_eval(operand, *starts, slice_sizes):
    _check_start_indices("dynamic_slice", operand, starts)
    if len(slice_sizes) != operand.ndim or any(
        not 0 <= z <= d for z, d in zip(slice_sizes, operand.shape, strict=True)
    ):
        raise TypeError(
            f"dynamic_slice: slice_sizes {slice_sizes} need one size per dimension, "
            f"each between 0 and the operand's size (operand shape {operand.shape})"
        )
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


dynamic_slice_p = Primitive("dynamic_slice")
dynamic_slice_p.def_impl(_dynamic_slice_impl)
dynamic_slice_p.def_abstract_eval(_dynamic_slice_abstract_eval)
register_lowering(dynamic_slice_p)


def _dynamic_slice_transpose(ct, operand, *starts, slice_sizes):
    """``ct`` written into zeros at the same (clamped) start indices."""
    if isinstance(ct, Zero):
        return [None] * (1 + len(starts))
    zeros = zeros_like_aval(operand.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


deflinear(dynamic_slice_p, _dynamic_slice_transpose, linear_args=(0,))


def _dynamic_slice_batch(vals, dims, *, slice_sizes):
    (operand, *starts), (bdim, *start_dims) = vals, dims
    if all(d is not_mapped for d in start_dims):
        starts.insert(bdim, ArrayImpl(np.zeros((), dtypes.default_int())))
        sizes = (*slice_sizes[:bdim], operand.shape[bdim], *slice_sizes[bdim:])
        return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes), bdim
    size = axis_size_of(vals, dims)
    batched = bdim is not not_mapped
    shape = tuple(d for i, d in enumerate(operand.shape) if i != bdim)
    indices, axes = _window_indices(shape, starts, start_dims, slice_sizes, size, batched)
    gather_axes = (bdim, *_shift_axes(axes, bdim)) if batched else axes
    out = gather_p.bind(operand, indices, axes=gather_axes, mode=GatherScatterMode.CLIP,
                        fill_value=None)
    return sh.transpose(out, np.argsort(_window_order(len(shape), axes))), 0


batching_rules[dynamic_slice_p] = _dynamic_slice_batch


# dynamic_update_slice: operand with update written at the (clamped) start indices.
def _dynamic_update_slice_impl(operand, update, *starts):
    out = operand.copy()
    out[window(clamped_starts(starts, operand.shape, update.shape), update.shape)] = update
    return out


def _dynamic_update_slice_abstract_eval(operand, update, *starts):
    check_same_dtypes("dynamic_update_slice", (operand, update))
    _check_start_indices("dynamic_update_slice", operand, starts)
    if update.ndim != operand.ndim or any(
        u > d for u, d in zip(update.shape, operand.shape, strict=True)
    ):
        raise TypeError(
            f"dynamic_update_slice: the update of shape {update.shape} must have the "
            f"operand's rank and fit in its shape {operand.shape}"
        )
    return operand


dynamic_update_slice_p = Primitive("dynamic_update_slice")
dynamic_update_slice_p.def_impl(_dynamic_update_slice_impl)
dynamic_update_slice_p.def_abstract_eval(_dynamic_update_slice_abstract_eval)
register_lowering(dynamic_update_slice_p)


def _dynamic_update_slice_transpose(ct, operand, update, *starts):
    """The operand's cotangent is ``ct`` with the window zeroed; the update's, the window."""
    cts = [None] * (2 + len(starts))
    if isinstance(ct, Zero):
        return cts
    if isinstance(operand, UndefinedPrimal):
        cts[0] = dynamic_update_slice_p.bind(ct, zeros_like_aval(update.aval), *starts)
    if isinstance(update, UndefinedPrimal):
        cts[1] = dynamic_slice_p.bind(ct, *starts, slice_sizes=update.aval.shape)
    return cts


deflinear(dynamic_update_slice_p, _dynamic_update_slice_transpose, linear_args=(0, 1))


def _dynamic_update_slice_batch(vals, dims):
    (operand, update, *starts), (bdim, update_bdim, *start_dims) = vals, dims
    if all(d is not_mapped for d in start_dims):
        (operand, update), bdim = sh.same_batch_axis([operand, update], [bdim, update_bdim])
        starts.insert(bdim, ArrayImpl(np.zeros((), dtypes.default_int())))
        return dynamic_update_slice_p.bind(operand, update, *starts), bdim
    size = axis_size_of(vals, dims)
    shape = tuple(d for i, d in enumerate(operand.shape) if i != bdim)
    target = 0 if bdim is not_mapped else bdim
    operand = move_batch_axis(operand, bdim, target, size)
    update = move_batch_axis(update, update_bdim, 0, size)
    sizes = update.shape[1:]
    indices, axes = _window_indices(shape, starts, start_dims, sizes, size, True)
    update = sh.transpose(update, _window_order(len(shape), axes))
    axes = (target, *_shift_axes(axes, target))
    return scatter_p.bind(operand, indices, update, axes=axes, mode=GatherScatterMode.CLIP), target


batching_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch


def _start_index(s, size: int, wrap: bool) -> Array:
    """One start index as an integer scalar array; a negative one counts from the end if
    ``wrap``."""
    if isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
        s = int(s) + size if wrap and s < 0 else int(s)
        return ArrayImpl(np.asarray(min(max(s, 0), size), dtypes.default_int()))
    s = to_array(s, "start index")
    if s.shape != () or s.dtype.kind not in "iu":
        raise TypeError(
            f"start indices must be integer scalars, got {s.aval.str_short()}; "
            "convert with .astype(int)"
        )
    return wrap_negative(s, size) if wrap else s


def wrap_negative(index: Array, size: int) -> Array:
    """``index + size`` where a signed integer ``index`` is negative (as NumPy's ``x[-1]``).

    Arguments:
        index: an integer array (unsigned ones are returned as they are).
        size: the size of the indexed axis.

    Returns:
        ``index`` in the default int dtype, with negative entries counted from the end; a
        concrete ``index`` is computed at once (a constant under ``jit``).

    Example:
        >>> wrap_negative(jnp.array([-1, 2]), 5)
        Array([4, 2], dtype=int32)
    """
    if index.dtype.kind != "i":
        return index
    dtype = dtypes.default_int()
    if isinstance(index, ArrayImpl):
        value = index._value.astype(dtype)
        return ArrayImpl(np.where(value < 0, value + dtype.type(size), value))
    if index.dtype != dtype:
        index = ew.convert_element_type(index, dtype)
    zero, dim = (ArrayImpl(np.asarray(v, dtype)) for v in (0, size))
    return ew.select(ew.lt(index, zero), ew.add(index, dim), index)


def _start_indices(name: str, operand: Array, start_indices, allow_negative_indices) -> list:
    if isinstance(start_indices, Array) and start_indices.ndim == 1:
        start_indices = [
            sh.reshape(sh.slice(start_indices, (i,), (i + 1,)), ())
            for i in range(start_indices.shape[0])
        ]
    starts = list(start_indices)
    if len(starts) != operand.ndim:
        raise TypeError(
            f"lax.{name} needs one start index per dimension of the operand of "
            f"shape {operand.shape}, got {len(starts)}"
        )
    wraps = allow_negative_indices
    if isinstance(wraps, bool):
        wraps = [wraps] * operand.ndim
    return [_start_index(s, d, w) for s, d, w in zip(starts, operand.shape, wraps, strict=True)]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """Slice ``operand`` at start indices that may be traced: ``operand[s:s + size]`` per axis.

    Arguments:
        operand: the array to slice.
        start_indices: one integer scalar (static or traced) per dimension, or a 1-d array.
        slice_sizes: the static size of the slice along each dimension.
        allow_negative_indices: a bool, or one per dimension: whether a negative start
            counts from the end of the axis (as in JAX).

    Returns:
        An array of shape ``slice_sizes``. Starts are clamped so that the slice fits.

    Example:
        >>> dynamic_slice(jnp.arange(5), (3,), (3,))
        Array([2, 3, 4], dtype=int32)
    """
    x = to_array(operand, "lax.dynamic_slice operand")
    starts = _start_indices("dynamic_slice", x, start_indices, allow_negative_indices)
    sizes = tuple(int(z) for z in slice_sizes)
    return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """Write ``update`` into ``operand`` at start indices that may be traced.

    Arguments:
        operand: the array to update.
        update: an array of ``operand``'s dtype and rank that fits in its shape.
        start_indices: one integer scalar (static or traced) per dimension, or a 1-d array.
        allow_negative_indices: a bool, or one per dimension: whether a negative start
            counts from the end of the axis (as in JAX).

    Returns:
        ``operand`` with the window at the (clamped) start indices replaced by ``update``.

    Example:
        >>> dynamic_update_slice(jnp.zeros(4), jnp.ones(2), (3,))
        Array([0., 0., 1., 1.], dtype=float32)
    """
    x, u = lax_operands("dynamic_update_slice", (operand, update))
    starts = _start_indices("dynamic_update_slice", x, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(x, u, *starts)


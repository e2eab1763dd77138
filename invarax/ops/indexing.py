"""Indexing primitives: dynamic_slice, dynamic_update_slice, gather and the scatters.

invarax's gather/scatter form is simpler than XLA's ``GatherDimensionNumbers``:

- ``gather(operand, indices, *, axes, mode, fill_value)``: ``indices`` is an integer
  array of shape ``batch + (len(axes),)``; its last axis holds one index into each
  of the operand axes ``axes`` (in that order). The output has shape
  ``batch + rest``, where ``rest`` lists the operand's other axes, in order, taken
  whole::

      out[b..., r...] = operand[axes[j] at indices[b..., j], the other axes at r...]

- ``scatter*(operand, indices, updates, *, axes, mode)``: the same layout read the
  other way: ``updates`` has shape ``batch + rest``, and ``updates[b...]`` is combined
  into the part of ``operand`` that ``gather`` reads for ``b``. Duplicate index
  vectors combine all their updates, in update order (``scatter``: the last wins).

Every NumPy advanced index lowers to this form (basic indices stay static slices),
scatter-add is the transpose of gather, and a batched operand needs only one more
(iota) index column.

Differentiation: dynamic_slice, dynamic_update_slice, gather, scatter-add and scatter
are linear in their array operands (not the indices) and have transpose rules;
scatter-mul is linear in its operand only; scatter-min and scatter-max give each
output the tangent of the value that won, ties averaged (as JAX).

Batching (no per-example loop; values are only moved, or combined in each example's
update order, so every example's bits are the unbatched op's): a batched operand of a
gather or scatter with unbatched indices keeps its batch axis as one more axis taken
whole; batched indices add a batch dimension, and when the operand is batched too, an
iota index column for its batch axis. dynamic_slice and dynamic_update_slice with
unbatched starts take the whole batch axis; with batched starts they become a gather or
scatter of each example's window.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive, Tracer
from ..interpreters.ad import (
    UndefinedPrimal,
    Zero,
    deflinear,
    instantiate,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    zeros_like_aval,
)
from ..interpreters.batching import (
    axis_size_of,
    batching_rules,
    move_batch_axis,
    moveaxis,
    not_mapped,
)
from ..kernels import scatter_rows
from . import elementwise as ew
from . import shape as sh
from ._util import ANY, NUMBER, canonicalize_axis, check_kinds, check_same_dtypes, lax_operands


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with out-of-bounds index vectors.

    - ``CLIP``: each index is clamped into its axis, so every vector reads (or writes) a
      valid position.
    - ``FILL_OR_DROP``: gather gives ``fill_value`` for a vector with an out-of-bounds
      index; scatter drops its update.
    - ``PROMISE_IN_BOUNDS``: the caller promises in-bounds indices; if the promise is
      broken, invarax still gives a defined result: gather clamps, scatter drops.

    Example:
        >>> GatherScatterMode.from_any("fill")
        <GatherScatterMode.FILL_OR_DROP: 2>
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(mode) -> GatherScatterMode:
        """The mode for a mode, a string (``"clip"``, ``"fill"``, ``"drop"``,
        ``"promise_in_bounds"``) or None (``FILL_OR_DROP``, as in JAX)."""
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode not in _MODE_NAMES:
            raise ValueError(
                f"unknown gather/scatter mode {mode!r}; use one of "
                f"{', '.join(repr(m) for m in _MODE_NAMES if m)} or a GatherScatterMode"
            )
        return _MODE_NAMES[mode]


_MODE_NAMES = {
    None: GatherScatterMode.FILL_OR_DROP,
    "fill": GatherScatterMode.FILL_OR_DROP,
    "drop": GatherScatterMode.FILL_OR_DROP,
    "clip": GatherScatterMode.CLIP,
    "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
}


def _check_start_indices(name: str, operand: ShapedArray, starts) -> None:
    if len(starts) != operand.ndim:
        raise TypeError(
            f"{name} needs one start index per dimension of the operand of shape "
            f"{operand.shape}, got {len(starts)}"
        )
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(f"{name} start indices must be integer scalars, got {s.str_short()}")


def _clamped_starts(starts, shape, sizes) -> list:
    """Start indices moved into ``[0, dim - size]``, so that the slice fits (as XLA)."""
    return [min(max(int(s), 0), d - z) for s, d, z in zip(starts, shape, sizes, strict=True)]


def _window(starts, sizes) -> tuple:
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
    return operand[_window(_clamped_starts(starts, operand.shape, slice_sizes), slice_sizes)]


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
    out[_window(_clamped_starts(starts, operand.shape, update.shape), update.shape)] = update
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


# ---------------------------------------------------------------------------------------
# gather and scatter, in invarax's form (see the module docstring).


def _check_indices(name: str, operand: ShapedArray, indices: ShapedArray, axes):
    """``(batch, rest)``: the index batch shape and the shape of the operand's other axes."""
    if indices.dtype.kind not in "iu":
        raise TypeError(
            f"{name} indices must be an integer array, got {indices.str_short()}; "
            "convert with .astype(int)"
        )
    if len(set(axes)) != len(axes) or any(not 0 <= a < operand.ndim for a in axes):
        raise ValueError(
            f"{name}: axes {axes} must be distinct axes of the operand of shape {operand.shape}"
        )
    if indices.ndim == 0 or indices.shape[-1] != len(axes):
        raise TypeError(
            f"{name}: indices of shape {indices.shape} must end in an axis of size "
            f"{len(axes)}, one index per axis in axes={axes}"
        )
    rest = tuple(d for i, d in enumerate(operand.shape) if i not in axes)
    return indices.shape[:-1], rest


def _axes_to_front(x: np.ndarray, axes) -> np.ndarray:
    """``x`` with ``axes`` moved to the front and merged into one: shape ``(n, *rest)``."""
    moved = np.moveaxis(x, axes, range(len(axes)))
    k = len(axes)
    return moved.reshape((math.prod(moved.shape[:k]), *moved.shape[k:]))


def _rows(indices: np.ndarray, dims):
    """Each index vector's row in the merged axes (indices clamped), and whether it was in
    bounds."""
    rows = np.zeros(indices.shape[:-1], np.int64)
    valid = np.ones(indices.shape[:-1], np.bool_)
    for j, d in enumerate(dims):
        col = indices[..., j].astype(np.int64)
        valid &= (col >= 0) & (col < d)
        rows = rows * d + np.clip(col, 0, max(d - 1, 0))
    return rows, valid


def _default_fill(dtype: np.dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the lowest signed, highest unsigned, True."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max
    return True


def _gather_impl(operand, indices, *, axes, mode, fill_value):
    rows, valid = _rows(indices, [operand.shape[a] for a in axes])
    out = _axes_to_front(operand, axes)[rows]
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return out
    fill = np.asarray(_default_fill(operand.dtype) if fill_value is None else fill_value)
    keep = valid.reshape(valid.shape + (1,) * (out.ndim - valid.ndim))
    return np.where(keep, out, fill.astype(operand.dtype))


def _gather_abstract_eval(operand, indices, *, axes, mode, fill_value):
    batch, rest = _check_indices("gather", operand, indices, axes)
    empty = [a for a in axes if operand.shape[a] == 0]
    if empty and math.prod(batch):
        raise IndexError(
            f"gather: cannot index axis {empty[0]} of size 0 (operand shape "
            f"{operand.shape}) with a non-empty index of batch shape {batch}"
        )
    return ShapedArray(batch + rest, operand.dtype, operand.weak_type)


gather_p = Primitive("gather")
gather_p.def_impl(_gather_impl)
gather_p.def_abstract_eval(_gather_abstract_eval)
register_lowering(gather_p)


def _gather_jvp(primals, tangents, *, axes, mode, fill_value):
    operand, indices = primals
    out = gather_p.bind(operand, indices, axes=axes, mode=mode, fill_value=fill_value)
    # A filled (out-of-bounds) read is a constant: its tangent is 0, whatever the fill.
    return out, gather_p.bind(tangents[0], indices, axes=axes, mode=mode, fill_value=0)


def _gather_transpose(ct, operand, indices, *, axes, mode, fill_value):
    """Scatter-add of ``ct`` into zeros where the gather read: a filled read was no read,
    so fill mode drops it; the other modes clamp, as the gather did."""
    if isinstance(ct, Zero):
        return [None, None]
    fill = GatherScatterMode.FILL_OR_DROP
    scatter_mode = fill if mode is fill else GatherScatterMode.CLIP
    zeros = zeros_like_aval(operand.aval)
    return [scatter_add_p.bind(zeros, indices, ct, axes=axes, mode=scatter_mode), None]


jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose


def _shift_axes(axes, bdim: int) -> tuple:
    """Operand ``axes`` in the coordinates of the operand batched at ``bdim``."""
    return tuple(a + (a >= bdim) for a in axes)


def _index_batch_axis(indices, bdim):
    """``(indices, bdim)`` with the batch axis among the index batch dims (not last)."""
    if bdim == indices.ndim - 1:
        return moveaxis(indices, bdim, 0), 0
    return indices, bdim


def _with_batch_column(indices, bdim: int, size: int, axes, operand_bdim: int):
    """Indices batched at ``bdim`` with a first column that indexes the operand's batch
    axis ``operand_bdim`` (the example's number), and the axes to go with them."""
    dtype = indices.dtype
    if size - 1 > np.iinfo(dtype).max:
        dtype = dtypes.default_int()
        indices = ew.convert_element_type(indices, dtype)
    column = sh.broadcasted_iota(dtype, (*indices.shape[:-1], 1), bdim)
    axes = (operand_bdim, *_shift_axes(axes, operand_bdim))
    return sh.concatenate([column, indices], indices.ndim - 1), axes


def _gather_batch(vals, dims, *, axes, mode, fill_value):
    (operand, indices), (bdim, indices_bdim) = vals, dims
    params = {"mode": mode, "fill_value": fill_value}
    if indices_bdim is not_mapped:
        # The batch axis is one more operand axis read whole.
        axes = _shift_axes(axes, bdim)
        before = sum(a not in axes for a in range(bdim))
        return gather_p.bind(operand, indices, axes=axes, **params), indices.ndim - 1 + before
    indices, indices_bdim = _index_batch_axis(indices, indices_bdim)
    if bdim is not_mapped:
        return gather_p.bind(operand, indices, axes=axes, **params), indices_bdim
    size = axis_size_of(vals, dims)
    indices, axes = _with_batch_column(indices, indices_bdim, size, axes, bdim)
    return gather_p.bind(operand, indices, axes=axes, **params), indices_bdim


batching_rules[gather_p] = _gather_batch


def _read_back(x, indices, axes, mode, fill_value=0):
    """Each update's slice of ``x`` after a scatter in ``mode``: where it was written
    (``fill_value`` for an update the scatter dropped)."""
    clip = GatherScatterMode.CLIP
    gather_mode = clip if mode is clip else GatherScatterMode.FILL_OR_DROP
    return gather_p.bind(x, indices, axes=axes, mode=gather_mode, fill_value=fill_value)


def defscatter(name: str, combine: str, kinds: str) -> Primitive:
    """A scatter primitive that combines updates with ``combine`` (see ``kernels.scatter``).

    Arguments:
        name: the primitive's name.
        combine: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"``.
        kinds: the dtype kinds accepted.

    Returns:
        The primitive, with impl and abstract-eval rules defined.
    """

    def impl(operand, indices, updates, *, axes, mode):
        dims = [operand.shape[a] for a in axes]
        front = np.array(_axes_to_front(operand, axes))
        if front.shape[0]:
            rows, valid = _rows(indices, dims)
            rows, updates = rows.reshape(-1), updates.reshape((rows.size, *front.shape[1:]))
            if mode is not GatherScatterMode.CLIP:
                keep = valid.reshape(-1)
                rows, updates = rows[keep], updates[keep]
            scatter_rows(front, rows, updates, combine)
        return np.moveaxis(front.reshape((*dims, *front.shape[1:])), range(len(axes)), axes)

    def abstract_eval(operand, indices, updates, *, axes, mode):
        check_same_dtypes(name, (operand, updates))
        check_kinds(name, operand, kinds)
        batch, rest = _check_indices(name, operand, indices, axes)
        if updates.shape != batch + rest:
            raise TypeError(
                f"{name}: updates of shape {updates.shape} do not match the indexed shape "
                f"{batch + rest} (the index batch shape {batch}, then the operand's other "
                f"axes {rest})"
            )
        return operand

    prim = Primitive(name)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    register_lowering(prim)
    return prim


SCATTERS = {
    # primitive name (JAX's): (how duplicates combine, accepted kinds)
    "scatter": ("set", ANY),
    "scatter-add": ("add", NUMBER),
    "scatter-mul": ("mul", NUMBER),
    "scatter-min": ("min", ANY),
    "scatter-max": ("max", ANY),
}

scatter_p = defscatter("scatter", *SCATTERS["scatter"])
scatter_add_p = defscatter("scatter-add", *SCATTERS["scatter-add"])
scatter_mul_p = defscatter("scatter-mul", *SCATTERS["scatter-mul"])
scatter_min_p = defscatter("scatter-min", *SCATTERS["scatter-min"])
scatter_max_p = defscatter("scatter-max", *SCATTERS["scatter-max"])


def _scatter_batch_rule(prim: Primitive):
    """Register ``prim``'s batching rule. Unbatched indices: the operand's batch axis is
    one more axis updated whole. Batched indices: an iota column indexes the batch axis,
    so each example's updates go to its own slice, in its own update order."""

    def rule(vals, dims, *, axes, mode):
        (operand, indices, updates), (bdim, indices_bdim, updates_bdim) = vals, dims
        size = axis_size_of(vals, dims)
        target = 0 if bdim is not_mapped else bdim
        operand = move_batch_axis(operand, bdim, target, size)
        if indices_bdim is not_mapped:
            axes = _shift_axes(axes, target)
            before = sum(a not in axes for a in range(target))
            at = indices.ndim - 1 + before
        else:
            indices, at = _index_batch_axis(indices, indices_bdim)
            indices, axes = _with_batch_column(indices, at, size, axes, target)
        updates = move_batch_axis(updates, updates_bdim, at, size)
        return prim.bind(operand, indices, updates, axes=axes, mode=mode), target

    batching_rules[prim] = rule


for _prim in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _scatter_batch_rule(_prim)


def _scatter_add_transpose(ct, operand, indices, updates, *, axes, mode):
    """The operand's cotangent is ``ct``; each update's, its slice of ``ct``."""
    if isinstance(ct, Zero):
        return [None, None, None]
    operand_ct = ct if isinstance(operand, UndefinedPrimal) else None
    updates_ct = (
        _read_back(ct, indices, axes, mode) if isinstance(updates, UndefinedPrimal) else None
    )
    return [operand_ct, None, updates_ct]


deflinear(scatter_add_p, _scatter_add_transpose, linear_args=(0, 2))


def _last_writers(operand_shape, indices, axes, mode):
    """``(ids, last)``: each update's position in update order, and that of the last update
    written to its slot (the one ``scatter`` keeps), -1 for a dropped update; both of the
    index batch shape. Updates share a slot iff they share ``last``."""
    batch = indices.shape[:-1]
    index_dtype = dtypes.default_int()
    ids = sh.reshape(sh.iota(index_dtype, math.prod(batch)), batch)
    none = ArrayImpl(np.asarray(-1, index_dtype))
    table = sh.broadcast_in_dim(none, tuple(operand_shape[a] for a in axes), ())
    table_axes = tuple(range(len(axes)))
    table = scatter_p.bind(table, indices, ids, axes=table_axes, mode=mode)
    return ids, _read_back(table, indices, table_axes, mode, fill_value=-1)


def _scatter_transpose(ct, operand, indices, updates, *, axes, mode):
    """The operand's cotangent is ``ct`` where no update was written; each update's, its
    slice of ``ct`` if it was the last written there (it won), else 0."""
    if isinstance(ct, Zero):
        return [None, None, None]
    operand_ct = updates_ct = None
    zeros = zeros_like_aval(updates.aval)
    if isinstance(operand, UndefinedPrimal):
        operand_ct = scatter_p.bind(ct, indices, zeros, axes=axes, mode=mode)
    if isinstance(updates, UndefinedPrimal):
        ids, last = _last_writers(operand.aval.shape, indices, axes, mode)
        nbatch = indices.ndim - 1
        won = sh.broadcast_in_dim(ew.eq(last, ids), updates.aval.shape, tuple(range(nbatch)))
        updates_ct = ew.select(won, _read_back(ct, indices, axes, mode), zeros)
    return [operand_ct, None, updates_ct]


deflinear(scatter_p, _scatter_transpose, linear_args=(0, 2))


def _segmented_exclusive_product(x, segment):
    """``out[i]``: the product of the ``x[j]``, ``j < i``, of ``i``'s segment along axis 0
    (``segment`` labels contiguous runs), by log2(n) doubling steps (Hillis and Steele)."""
    n = x.shape[0]
    ones = sh.broadcast_in_dim(ArrayImpl(np.ones((), x.dtype)), x.shape, ())

    def shift(v, s, fill):  # v[i - s] along axis 0, ``fill`` for i < s
        s = min(s, n)
        head = sh.broadcast_in_dim(fill, (s, *v.shape[1:]), ())
        return sh.concatenate([head, sh.slice_in_dim(v, 0, n - s)], 0)

    def back(v, s):  # v[i - s] if it is in i's segment, else 1
        same = ew.eq(segment, shift(segment, s, ArrayImpl(np.asarray(-2, segment.dtype))))
        same = sh.broadcast_in_dim(same, x.shape, (0,))
        return ew.select(same, shift(v, s, ArrayImpl(np.ones((), x.dtype))), ones)

    out, s = back(x, 1), 1
    while s < n:
        out, s = ew.mul(out, back(out, s)), 2 * s
    return out


def _product_of_others(operand_shape, indices, updates, axes, mode):
    """For each update, the product of the other updates scattered to its slot: the updates
    sorted by slot, times segmented products of those before and after. No division, so
    it is exact where updates are 0, and so are its derivatives."""
    from .sorting import sort_p  # sorting imports this module

    nbatch = indices.ndim - 1
    n = math.prod(indices.shape[:-1])
    rows = (n, *updates.shape[nbatch:])
    ids, last = (sh.reshape(a, (n,)) for a in _last_writers(operand_shape, indices, axes, mode))
    slot, order = sort_p.bind(last, ids, dimension=0, is_stable=True, num_keys=1)
    order = sh.reshape(order, (n, 1))
    clip = GatherScatterMode.CLIP
    x = gather_p.bind(sh.reshape(updates, rows), order, axes=(0,), mode=clip, fill_value=None)
    before = _segmented_exclusive_product(x, slot)
    after = _segmented_exclusive_product(sh.rev(x, (0,)), sh.rev(slot, (0,)))
    others = ew.mul(before, sh.rev(after, (0,)))
    unsorted = scatter_p.bind(zeros_like_aval(others.aval), order, others, axes=(0,), mode=clip)
    return sh.reshape(unsorted, updates.shape)


def _scatter_mul_jvp(primals, tangents, *, axes, mode):
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    params = {"axes": axes, "mode": mode}
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    terms = []
    if not isinstance(t_operand, Zero):
        terms.append(scatter_mul_p.bind(t_operand, indices, updates, **params))
    if not isinstance(t_updates, Zero):
        # d out / d update = operand * (the product of the other updates at its slot)
        others = _product_of_others(operand.shape, indices, updates, axes, mode)
        slots = zeros_like_aval(tangent_aval(operand.aval))
        summed = scatter_add_p.bind(slots, indices, ew.mul(t_updates, others), **params)
        terms.append(ew.mul(operand, summed))
    return out, terms[0] if len(terms) == 1 else ew.add(*terms)


def _scatter_mul_transpose(ct, operand, indices, updates, *, axes, mode):
    if isinstance(updates, UndefinedPrimal):
        raise ValueError("scatter-mul is linear in its operand only, not in its updates")
    if isinstance(ct, Zero):
        return [None, None, None]
    return [scatter_mul_p.bind(ct, indices, updates, axes=axes, mode=mode), None, None]


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _same(a, b):
    """``a == b``, NaN equal to NaN (so a NaN output has winners too)."""
    return ew.bitwise_or(ew.eq(a, b), ew.bitwise_and(ew.ne(a, a), ew.ne(b, b)))


def _defextremum_jvp(prim):
    """Register ``prim``'s JVP (scatter-min/max): each output's tangent is the mean tangent
    of the values equal to it, the operand's and the updates' scattered there (JAX's rule
    for ties)."""

    def rule(primals, tangents, *, axes, mode):
        operand, indices, updates = primals
        t_operand, t_updates = (instantiate(t) for t in tangents[::2])
        params = {"axes": axes, "mode": mode}
        out = prim.bind(operand, indices, updates, **params)
        operand_won = _same(operand, out)
        updates_won = _same(updates, _read_back(out, indices, axes, mode))
        dtype = t_operand.dtype
        count = scatter_add_p.bind(
            ew.convert_element_type(operand_won, dtype), indices,
            ew.convert_element_type(updates_won, dtype), **params,
        )
        summed = scatter_add_p.bind(
            ew.select(operand_won, t_operand, zeros_like_aval(t_operand.aval)), indices,
            ew.select(updates_won, t_updates, zeros_like_aval(t_updates.aval)), **params,
        )
        return out, ew.div(summed, count)

    jvp_rules[prim] = rule


_defextremum_jvp(scatter_min_p)
_defextremum_jvp(scatter_max_p)


def _axes_param(axes, ndim: int) -> tuple:
    axes = (axes,) if isinstance(axes, (int, np.integer)) else axes
    return tuple(canonicalize_axis(a, ndim) for a in axes)


def _fill_param(fill_value):
    """A static Python scalar (or None): ``fill_value`` is a parameter, not an operand."""
    if fill_value is None or isinstance(fill_value, (bool, int, float, complex)):
        return fill_value
    if isinstance(fill_value, Tracer) or np.ndim(fill_value) != 0:
        raise TypeError(
            f"fill_value must be a static scalar, got {fill_value!r:.60}; pass a Python number"
        )
    return np.asarray(fill_value).item()


def gather(
    operand,
    indices,
    *,
    axes,
    mode=None,
    fill_value=None,
    indices_are_sorted=False,
    unique_indices=False,
):
    """Gather slices of ``operand`` at integer index vectors (invarax's form of ``lax.gather``).

    Arguments:
        operand: the array to read from.
        indices: an integer array of shape ``batch + (len(axes),)``: one index into each
            of ``operand``'s axes ``axes`` per batch position.
        axes: the operand axes that ``indices`` index, in the order of its last axis.
        mode: a ``GatherScatterMode`` or ``"clip"``, ``"fill"``, ``"promise_in_bounds"``;
            None means ``"fill"``, as in JAX.
        fill_value: the value read for out-of-bounds vectors in ``"fill"`` mode (default:
            NaN for inexact dtypes, the lowest signed, the highest unsigned value, True).
        indices_are_sorted, unique_indices: accepted for JAX compatibility (results never
            depend on them).

    Returns:
        An array of shape ``batch + rest``, ``rest`` being the operand's other axes in order.

    Example:
        >>> x = jnp.arange(6).reshape(2, 3)
        >>> gather(x, jnp.array([[2], [0]]), axes=(1,))
        Array([[2, 5],
               [0, 3]], dtype=int32)
    """
    x = to_array(operand, "lax.gather operand")
    idx = to_array(indices, "lax.gather indices")
    return gather_p.bind(
        x,
        idx,
        axes=_axes_param(axes, x.ndim),
        mode=GatherScatterMode.from_any(mode),
        fill_value=_fill_param(fill_value),
    )


def _scatter_wrapper(name: str, prim: Primitive, summary: str, example: str):
    def op(
        operand,
        indices,
        updates,
        *,
        axes,
        mode=None,
        indices_are_sorted=False,
        unique_indices=False,
    ):
        x, u = lax_operands(name, (operand, updates))
        idx = to_array(indices, f"lax.{name} indices")
        return prim.bind(
            x, idx, u, axes=_axes_param(axes, x.ndim), mode=GatherScatterMode.from_any(mode)
        )

    op.__name__ = name
    op.__doc__ = f"""{summary} (invarax's form of ``lax.{name}``).

    Arguments:
        operand: the array to update.
        indices: an integer array of shape ``batch + (len(axes),)``, as for ``gather``.
        updates: an array of ``operand``'s dtype and shape ``batch + rest``, ``rest`` being
            the operand's axes not in ``axes``, in order.
        axes: the operand axes that ``indices`` index.
        mode: a ``GatherScatterMode`` or ``"clip"``, ``"drop"``, ``"promise_in_bounds"``;
            None means ``"drop"``: updates at out-of-bounds vectors are dropped.
        indices_are_sorted, unique_indices: accepted for JAX compatibility (results never
            depend on them).

    Returns:
        ``operand`` with the updates combined in, in update order for duplicate indices.

    Example:
        >>> lax.{name}(jnp.ones(3), jnp.array([[0], [0]]), jnp.array([2., 3.]), axes=0)
        Array([{example}, 1., 1.], dtype=float32)
    """
    return op


scatter = _scatter_wrapper(
    "scatter", scatter_p, "Set slices of ``operand`` (the last update wins)", "3."
)
scatter_add = _scatter_wrapper(
    "scatter_add", scatter_add_p, "Add updates into slices of ``operand``", "6."
)
scatter_mul = _scatter_wrapper(
    "scatter_mul", scatter_mul_p, "Multiply slices of ``operand`` by updates", "6."
)
scatter_min = _scatter_wrapper(
    "scatter_min", scatter_min_p, "Minimum of ``operand``'s slices and updates", "1."
)
scatter_max = _scatter_wrapper(
    "scatter_max", scatter_max_p, "Maximum of ``operand``'s slices and updates", "3."
)

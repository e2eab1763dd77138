"""Gather and the scatters, in invarax's form (simpler than XLA's ``GatherDimensionNumbers``).

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

Differentiation: gather, scatter-add and scatter are linear in their array operands (not
the indices) and have transpose rules here; the JVPs of scatter-mul, scatter-min and
scatter-max, which sort, are in ``scatter_derivatives.py``.

Batching (no per-example loop; values are only moved, or combined in each example's
update order, so every example's bits are the unbatched op's): a batched operand of a
gather or scatter with unbatched indices keeps its batch axis as one more axis taken
whole; batched indices add a batch dimension, and when the operand is batched too, an
iota index column for its batch axis.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive, Tracer
from ..interpreters.ad import (
    UndefinedPrimal,
    Zero,
    deflinear,
    jvp_rules,
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


def gather_rows(indices: np.ndarray, dims):
    """Each index vector's row in the merged axes (indices clamped), and whether it was in
    bounds."""
    rows = np.zeros(indices.shape[:-1], np.int64)
    valid = np.ones(indices.shape[:-1], np.bool_)
    for j, d in enumerate(dims):
        col = indices[..., j].astype(np.int64)
        valid &= (col >= 0) & (col < d)
        rows = rows * d + np.clip(col, 0, max(d - 1, 0))
    return rows, valid


def default_fill(dtype: np.dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the lowest signed, highest unsigned, True."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max
    return True


def fill_of(dtype: np.dtype, fill_value) -> np.ndarray:
    """The value (0-d, of ``dtype``) a ``FILL_OR_DROP`` gather gives out of bounds."""
    return np.asarray(default_fill(dtype) if fill_value is None else fill_value).astype(dtype)


def _gather_impl(operand, indices, *, axes, mode, fill_value):
    rows, valid = gather_rows(indices, [operand.shape[a] for a in axes])
    out = _axes_to_front(operand, axes)[rows]
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return out
    keep = valid.reshape(valid.shape + (1,) * (out.ndim - valid.ndim))
    return np.where(keep, out, fill_of(operand.dtype, fill_value))


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
            rows, valid = gather_rows(indices, dims)
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

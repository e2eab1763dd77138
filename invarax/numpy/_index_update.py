"""``x.at[idx]``: functional index updates (set, add, multiply, min, max, divide, power,
apply) and ``get``, with JAX's semantics.

An update lowers to one scatter over ``x`` in invarax's form (``ops.indexing``): axes
taken by a full slice ``:`` stay whole, every other indexed axis gets an index column
(a static ``arange`` for a slice, the index array or scalar otherwise), and the value,
broadcast to the shape of ``x[idx]``, is transposed to the scatter's layout.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..core.array import Array
from ..ops import indexing as ix
from ..ops import shape as sh
from ._creation import asarray, ones_like
from ._index_parse import (
    as_index_array,
    index_batch_shape,
    index_column,
    parse_index,
    stack_columns,
)
from ._indexing import getitem
from ._promote import broadcast_shapes, broadcast_to_shape, convert, promote_dtypes
from ._reductions import max as reduce_max
from ._ufuncs import divide, power, where


class _Plan(NamedTuple):
    """A scatter for ``x.at[idx]``: ``x[idx]`` has ``shape``; a value of that shape, reshaped
    to ``kept`` (its ``None`` axes dropped) and transposed by ``perm``, is the scatter's
    ``updates`` for ``indices`` over ``axes``."""

    indices: Array
    axes: tuple
    shape: tuple
    kept: tuple
    perm: tuple


def _concat(parts) -> tuple:
    return tuple(d for part in parts for d in part)


def _items(shape: tuple, entries):
    """The parts of ``x[idx]``'s shape, in order, as ``(kind, dims, columns)``: ``new``
    (a ``None`` axis), ``rest`` (a whole axis), ``grid`` (a sliced axis, one static index
    column) or ``group`` (the advanced indices: their broadcast shape and ``(axis, index)``
    columns, where NumPy's rule places them)."""
    items, members, where, axis = [], [], [], 0
    for kind, value in entries:
        if kind == "new":
            items.append(("new", (1,), []))
            continue
        if kind == "slice":
            r = range(*value)
            whole = r == range(shape[axis])
            column = [] if whole else [(axis, as_index_array(np.asarray(r)))]
            items.append(("rest" if whole else "grid", (len(r),), column))
        else:
            where.append(len(items))
            members.append((axis, as_index_array(value)))
        axis += 1
    if members:
        group = ("group", index_batch_shape([a for _, a in members]), members)
        # Adjacent advanced indices keep their place; separated ones go first.
        items.insert(where[0] if len(set(where)) == 1 else 0, group)
    return items


def _plan(shape: tuple, entries) -> _Plan:
    items = _items(shape, entries)
    batch = _concat(dims for kind, dims, _ in items if kind in ("grid", "group"))
    columns, axes, offset = [], [], 0
    for kind, dims, cols in items:
        after = len(batch) - offset - len(dims)
        for axis, index in cols:
            columns.append(index_column(index, shape[axis], offset + len(dims) - index.ndim, after))
            axes.append(axis)
        offset += len(dims) if kind in ("grid", "group") else 0
    kept = [(kind, dims) for kind, dims, _ in items if kind != "new"]
    leading, trailing, position = [], [], 0
    for kind, dims in kept:
        span = range(position, position + len(dims))
        (trailing if kind == "rest" else leading).extend(span)
        position += len(dims)
    return _Plan(
        indices=stack_columns(columns, batch),
        axes=tuple(axes),
        shape=_concat(dims for _, dims, _ in items),
        kept=_concat(dims for _, dims in kept),
        perm=tuple(leading + trailing),
    )


def _update(x: Array, index, values, scatter, mode) -> Array:
    """``x`` with ``scatter`` (a lax scatter) applied at ``x[index]``; the result keeps
    ``x``'s dtype and weak type (the value is promoted with ``x``, then cast back, as JAX)."""
    entries, bool_axes = parse_index(x.shape, index, static_ints=mode is None)
    target = sh.expand_dims(x, bool_axes) if bool_axes else x
    plan = _plan(target.shape, entries)
    if math.prod(plan.shape) == 0:
        return x
    target, update = promote_dtypes(target, asarray(values))
    update = _broadcast_value(update, plan.shape)
    update = sh.transpose(sh.reshape(update, plan.kept), plan.perm)
    out = scatter(target, plan.indices, update, axes=plan.axes, mode=mode)
    return sh.reshape(convert(out, x.dtype, x.weak_type), x.shape)


def _broadcast_value(value: Array, shape: tuple) -> Array:
    try:
        fits = broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"cannot update an indexed part of shape {shape} with a value of "
            f"shape {value.shape}: the value must broadcast to {shape}"
        )
    return broadcast_to_shape(value, shape)


def _negative_out_of_bounds(shape, index, mode):
    """``index`` (integers and slices, one per leading axis) with each negative integer
    made out of bounds: the axis's size under ``mode="fill"``, else 0 (clamped, as JAX)."""
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    for axis, part in enumerate(parts):
        if isinstance(part, slice):
            out.append(part)
            continue
        i = None if part is None or part is Ellipsis else asarray(part)
        if i is None or i.dtype.kind not in "iu" or axis >= len(shape):
            raise NotImplementedError(
                "x.at[idx].get(wrap_negative_indices=False) takes integer indices and slices "
                f"for the leading axes only, got {part!r:.60}; index with those, or keep "
                "wrap_negative_indices=True")
        out.append(where(i < 0, shape[axis] if mode == "fill" else 0, i))
    return tuple(out)


class IndexUpdateHelper:
    """``x.at``: index it (``x.at[idx]``) to update or read ``x`` at ``idx`` functionally.

    Arguments:
        array: the array to update.

    Example:
        >>> jnp.zeros(3).at[1].set(5.0)
        Array([0., 5., 0.], dtype=float32)
    """

    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """``x.at[idx]``: the updates of ``x`` at ``idx`` (each returns a new array).

    Every method accepts JAX's keywords: ``mode`` (updates: None or ``"drop"`` drops
    out-of-bounds updates, ``"clip"`` clamps them, static ints included, as in JAX) and
    ``indices_are_sorted`` / ``unique_indices`` (hints; results never depend on them).
    Duplicate indices combine every update in index order for ``add``, ``multiply``,
    ``min`` and ``max``; for ``set`` the last one wins.

    Arguments:
        array: the array to update.
        index: the NumPy index, as for ``array[index]``.

    Example:
        >>> jnp.zeros(3).at[jnp.array([0, 0, 2])].add(1.0)
        Array([2., 0., 1.], dtype=float32)
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(
        self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
        out_sharding=None, wrap_negative_indices=True,
    ) -> Array:
        """``x[idx]``, with ``mode`` (``"fill"``, ``"clip"``, ``"promise_in_bounds"``) and
        ``fill_value`` for out-of-bounds reads. With ``wrap_negative_indices=False`` a
        negative integer index is out of bounds (filled, or clamped to 0), as JAX's.

        Example:
            >>> jnp.arange(4).at[jnp.array([-1, 2])].get(
            ...     wrap_negative_indices=False, mode="fill", fill_value=-7)
            Array([-7,  2], dtype=int32)
        """
        index = self.index if wrap_negative_indices else _negative_out_of_bounds(
            self.array.shape, self.index, mode)
        return getitem(self.array, index, mode=mode, fill_value=fill_value)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] = values`` (the last of duplicate indices wins)."""
        return _update(self.array, self.index, values, ix.scatter, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] += values``, every duplicate index included."""
        return _update(self.array, self.index, values, ix.scatter_add, mode)

    def multiply(
        self, values, *, indices_are_sorted=False, unique_indices=False, mode=None
    ) -> Array:
        """``x[idx] *= values``, every duplicate index included."""
        return _update(self.array, self.index, values, ix.scatter_mul, mode)

    mul = multiply

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] = minimum(x[idx], values)``, every duplicate index included."""
        return _update(self.array, self.index, values, ix.scatter_min, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] = maximum(x[idx], values)``, every duplicate index included."""
        return _update(self.array, self.index, values, ix.scatter_max, mode)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] /= values``: ``x`` divided by ones multiplied by the values at ``idx``
        (JAX's formulation; the result has ``jnp.divide``'s dtype)."""
        return divide(self.array, self._factors(values, mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] **= values``: ``x`` to the power of ones multiplied by the values at
        ``idx`` (JAX's formulation)."""
        return power(self.array, self._factors(values, mode))

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None) -> Array:
        """``x[idx] = func(x[idx])``, elementwise; an element indexed ``k`` times gets
        ``func`` applied ``k`` times (JAX's semantics). See ``_apply``."""
        return _apply(self.array, self.index, func, mode)

    def _factors(self, values, mode) -> Array:
        return _update(ones_like(self.array), self.index, values, ix.scatter_mul, mode)


def _apply(x: Array, index, func, mode) -> Array:
    """``x.at[index].apply(func)``: ``func`` maps a scalar of ``x``'s dtype to one of the
    same dtype, and is applied (batched over every element by ``vmap``, so each element's
    value is bitwise ``func`` of that scalar) as many times as the element is indexed:
    a ``while_loop`` up to the largest count, each step updating the elements not done.

    Example:
        >>> jnp.arange(5.0).at[jnp.array([0, 0, 2])].apply(lambda v: 2 * v + 1)
        Array([3., 1., 5., 3., 4.], dtype=float32)
    """
    from ..lax import while_loop
    from ..transforms._vmap import vmap

    if not callable(func):
        raise TypeError(f"x.at[idx].apply(func): func must be callable, got "
                        f"{type(func).__name__}")
    if x.size == 0:
        return x
    counts = _update(asarray(np.zeros(x.shape, np.int32)), index, 1, ix.scatter_add, mode)
    flat = sh.reshape(x, (x.size,))
    once = vmap(func)
    out = once(flat)
    if not isinstance(out, Array) or out.shape != flat.shape or out.dtype != x.dtype:
        got = (f"shape {out.shape[1:]} and dtype {out.dtype}" if isinstance(out, Array)
               else type(out).__name__)
        raise TypeError(f"x.at[idx].apply(func): func must map a scalar of dtype {x.dtype} "
                        f"to a scalar of the same dtype, but it returned {got}; cast "
                        f"inside func (e.g. .astype({x.dtype}))")
    counts = sh.reshape(counts, (x.size,))

    def body(state):
        step, y = state
        return step + 1, where(counts > step, once(y), y)

    _, flat = while_loop(lambda state: state[0] < reduce_max(counts), body,
                         (asarray(np.int32(0)), flat))
    return convert(sh.reshape(flat, x.shape), x.dtype, x.weak_type)  # x's weak type, as JAX

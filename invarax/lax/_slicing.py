"""JAX's one-axis conveniences over ``slice``, ``dynamic_slice``, ``dynamic_update_slice`` and
``gather``: ``index_in_dim``, ``dynamic_slice_in_dim``, ``dynamic_index_in_dim``,
``dynamic_update_slice_in_dim``, ``dynamic_update_index_in_dim`` and ``index_take``.

Each is a composition of those primitives (no rule of its own), so it is differentiable,
batchable and bitwise the same eagerly and under ``jit``.
"""

from __future__ import annotations

import itertools
import operator

import numpy as np

from ..core.array import to_array
from ..core.trace import Tracer
from ..ops import elementwise as el
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ..ops.indexing import dynamic_slice, dynamic_update_slice, gather


def _axis(name, x, axis):
    try:
        return canonicalize_axis(operator.index(axis), x.ndim)
    except (TypeError, ValueError) as e:
        raise ValueError(f"lax.{name}: axis {axis!r} is not an axis of an operand of shape "
                         f"{x.shape}") from e


def _starts(x, axis, index):
    return [index if a == axis else 0 for a in range(x.ndim)]


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The slice at static ``index`` along ``axis``: JAX's ``lax.index_in_dim``.

    Arguments:
        operand: an array.
        index: a Python int (negative counts from the end); out of bounds is an IndexError.
        axis: the axis to index.
        keepdims: keep ``axis`` (of size 1) in the result.

    Returns:
        ``operand``'s slice ``index`` along ``axis``.

    Example:
        >>> lax.index_in_dim(jnp.arange(6).reshape(2, 3), -1, axis=1, keepdims=False)
        Array([2, 5], dtype=int32)
    """
    x = to_array(operand, "lax.index_in_dim operand")
    axis = _axis("index_in_dim", x, axis)
    if isinstance(index, Tracer) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"lax.index_in_dim: index must be a Python int, got "
                        f"{type(index).__name__}; use lax.dynamic_index_in_dim for a traced "
                        "index")
    size = x.shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} "
                         f"with size {size}")
    out = sh.slice_in_dim(x, int(wrapped), int(wrapped) + 1, 1, axis)
    return out if keepdims else sh.squeeze(out, (axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0,
                         allow_negative_indices=True):
    """``dynamic_slice`` along one axis: JAX's ``lax.dynamic_slice_in_dim``.

    Arguments:
        operand: an array.
        start_index: an integer scalar, static or traced (clamped so the slice fits).
        slice_size: the static size of the slice along ``axis``.
        axis: the axis to slice.
        allow_negative_indices: whether a negative start counts from the end.

    Returns:
        ``operand`` with ``axis`` cut to ``slice_size`` elements from ``start_index``.

    Example:
        >>> lax.dynamic_slice_in_dim(jnp.arange(6), jnp.array(4), 3)
        Array([3, 4, 5], dtype=int32)
    """
    x = to_array(operand, "lax.dynamic_slice_in_dim operand")
    axis = _axis("dynamic_slice_in_dim", x, axis)
    sizes = list(x.shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(x, _starts(x, axis, start_index), sizes,
                         allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, allow_negative_indices=True):
    """The slice at a possibly traced ``index`` along ``axis`` (clamped into bounds):
    JAX's ``lax.dynamic_index_in_dim``.

    Arguments:
        operand: an array.
        index: an integer scalar, static or traced.
        axis: the axis to index.
        keepdims: keep ``axis`` (of size 1) in the result.
        allow_negative_indices: whether a negative index counts from the end.

    Returns:
        ``operand``'s slice ``index`` along ``axis``.

    Example:
        >>> lax.dynamic_index_in_dim(jnp.arange(6).reshape(3, 2), jnp.array(1), keepdims=False)
        Array([2, 3], dtype=int32)
    """
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices)
    return out if keepdims else sh.squeeze(out, (_axis("dynamic_index_in_dim", out, axis),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis,
                                allow_negative_indices=True):
    """``dynamic_update_slice`` along one axis: JAX's ``lax.dynamic_update_slice_in_dim``.

    Arguments:
        operand: the array to update.
        update: an array of ``operand``'s dtype and rank.
        start_index: an integer scalar, static or traced (clamped so ``update`` fits).
        axis: the axis along which ``update`` is placed.
        allow_negative_indices: whether a negative start counts from the end.

    Returns:
        ``operand`` with ``update`` written from ``start_index`` along ``axis``.

    Example:
        >>> lax.dynamic_update_slice_in_dim(jnp.zeros(4), jnp.ones(2), 1, axis=0)
        Array([0., 1., 1., 0.], dtype=float32)
    """
    x = to_array(operand, "lax.dynamic_update_slice_in_dim operand")
    axis = _axis("dynamic_update_slice_in_dim", x, axis)
    return dynamic_update_slice(x, update, _starts(x, axis, start_index),
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, allow_negative_indices=True):
    """Write ``update`` as the slice ``index`` along ``axis``: JAX's
    ``lax.dynamic_update_index_in_dim``.

    Arguments:
        operand: the array to update.
        update: an array of ``operand``'s dtype, with ``operand``'s rank (``axis`` of size
            1) or one less (without ``axis``).
        index: an integer scalar, static or traced (clamped into bounds).
        axis: the axis to index.
        allow_negative_indices: whether a negative index counts from the end.

    Returns:
        ``operand`` with its slice ``index`` along ``axis`` replaced by ``update``.

    Example:
        >>> lax.dynamic_update_index_in_dim(jnp.zeros((2, 2)), jnp.ones(2), 1, axis=0)
        Array([[0., 0.],
               [1., 1.]], dtype=float32)
    """
    x = to_array(operand, "lax.dynamic_update_index_in_dim operand")
    u = to_array(update, "lax.dynamic_update_index_in_dim update")
    axis = _axis("dynamic_update_index_in_dim", x, axis)
    if u.ndim == x.ndim - 1:
        u = sh.expand_dims(u, (axis,))
    return dynamic_update_slice_in_dim(x, u, index, axis, allow_negative_indices)


def index_take(src, idxs, axes):
    """Gather ``src[idxs[0][i], idxs[1][i], ...]`` over ``axes`` for each ``i``: JAX's
    ``lax.index_take``. Indices wrap modulo the axis size (so negative ones count from the
    end).

    Arguments:
        src: the array to read from.
        idxs: a sequence of integer arrays of one common shape ``(n,)``, one per axis.
        axes: the axes of ``src`` that ``idxs`` index, distinct, in the same order.

    Returns:
        An array of shape ``(n,) + rest``, ``rest`` being ``src``'s other axes in order.

    Example:
        >>> x = jnp.arange(12).reshape(3, 4)
        >>> lax.index_take(x, (jnp.array([2, -1]),), (0,))
        Array([[ 8,  9, 10, 11],
               [ 8,  9, 10, 11]], dtype=int32)
    """
    x = to_array(src, "lax.index_take src")
    idxs, axes = list(idxs), [_axis("index_take", x, a) for a in axes]
    if len(idxs) != len(axes) or not idxs:
        raise ValueError(f"lax.index_take: one index array per axis, got {len(idxs)} index "
                         f"arrays for axes {tuple(axes)}")
    columns = [to_array(i, "lax.index_take idxs") for i in idxs]
    shapes = {c.shape for c in columns}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise ValueError(f"lax.index_take: idxs must be 1-d arrays of one shape, got shapes "
                         f"{[c.shape for c in columns]}")
    columns = [el.rem(el.add(el.rem(c, x.shape[a]), x.shape[a]), x.shape[a])
               for c, a in zip(columns, axes, strict=True)]
    indices = sh.concatenate([sh.expand_dims(c, (1,)) for c in columns], 1)
    return gather(x, indices, axes=tuple(axes), mode="clip")


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into pieces of the given ``sizes``: JAX's ``lax.split``.

    Arguments:
        operand: an array.
        sizes: the pieces' lengths (non-negative Python ints), summing to the axis' length.
        axis: the axis to cut.

    Returns:
        A list of arrays, one per size.

    Example:
        >>> from invarax import lax
        >>> import invarax.numpy as jnp
        >>> lax.split(jnp.arange(5.0), [2, 3])
        [Array([0., 1.], dtype=float32), Array([2., 3., 4.], dtype=float32)]
    """
    x = to_array(operand, "lax.split operand")
    axis = _axis("split", x, axis)
    sizes = [operator.index(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        raise ValueError(f"lax.split: sizes {sizes} must be non-negative and sum to the "
                         f"length {x.shape[axis]} of axis {axis} of the operand {x.shape}")
    starts = [0, *itertools.accumulate(sizes)]
    return [sh.slice_in_dim(x, int(a), int(b), axis=axis)
            for a, b in zip(starts[:-1], starts[1:], strict=True)]

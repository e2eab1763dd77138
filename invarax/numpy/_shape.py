"""Shape functions of ``invarax.numpy``: reshape, transpose, flip, roll, tile, repeat (and,
re-exported, broadcasting, joining, splitting, padding, take and sort).

Shapes are static: every function reads only shapes and static arguments, never a
traced value, so each works eagerly and under ``jit`` alike. They move values and
never compute with them, so results are bitwise copies.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.array import Array
from ..core.trace import Tracer
from ..ops import indexing as ix
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ._broadcast import broadcast_arrays, broadcast_shapes, broadcast_to
from ._indexing import take, take_along_axis
from ._joining import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    concatenate,
    dstack,
    hstack,
    split,
    stack,
    vstack,
)
from ._pad import pad
from ._promote import asarray_arg, shape_arg
from ._sorting import argsort, sort
from ._ufuncs import remainder

__all__ = [
    "argsort",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "column_stack",
    "concatenate",
    "dstack",
    "expand_dims",
    "flip",
    "hstack",
    "moveaxis",
    "pad",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "sort",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "take",
    "take_along_axis",
    "tile",
    "transpose",
    "vstack",
]


def axis_tuple(axis, ndim: int, name: str) -> tuple:
    """``axis`` (an int or a sequence of ints) as distinct axes in ``[0, ndim)``."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"jnp.{name}: repeated axis in {axis}")
    return out


def reshape(a, shape, order: str = "C", *, copy=None) -> Array:
    """Give an array a new shape with the same number of elements, as ``numpy.reshape``.

    Arguments:
        a: the array.
        shape: an int or a tuple of ints; one entry may be -1 (inferred).
        order: ``"C"`` (row-major) or ``"F"`` (column-major: reshape of the transpose).
        copy: accepted for NumPy compatibility (arrays are immutable).

    Returns:
        The reshaped array.

    Example:
        >>> jnp.reshape(jnp.arange(6), (2, -1))
        Array([[0, 1, 2],
               [3, 4, 5]], dtype=int32)
    """
    x = asarray_arg(a, "reshape")
    shape = _infer_size(x, shape_arg(shape, "reshape"))
    if order == "C":
        return sh.reshape(x, shape)
    if order == "F":
        return transpose(sh.reshape(transpose(x), shape[::-1]))
    if order == "A":
        raise NotImplementedError("jnp.reshape order='A' is not supported; use 'C' or 'F'")
    raise ValueError(f"jnp.reshape: order must be 'C' or 'F', got {order!r}")


def _infer_size(x: Array, shape: tuple) -> tuple:
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in shape):
        raise ValueError(
            f"jnp.reshape: invalid shape {shape}: sizes must be >= 0, with at "
            "most one -1 (inferred)"
        )
    if not unknown:
        return shape
    known = math.prod(d for d in shape if d != -1)
    if known == 0 or x.size % known:
        raise TypeError(
            f"cannot reshape array of shape {x.shape} (size {x.size}) into shape "
            f"{shape}: the other sizes (product {known}) do not divide {x.size}"
        )
    return tuple(x.size // known if d == -1 else d for d in shape)


def ravel(a, order: str = "C") -> Array:
    """The array flattened to one dimension (``reshape(a, -1)``).

    Arguments:
        a: the array.
        order: ``"C"`` or ``"F"``.

    Returns:
        A 1-d array of ``a.size`` elements.

    Example:
        >>> jnp.ravel(jnp.ones((2, 2)))
        Array([1., 1., 1., 1.], dtype=float32)
    """
    x = asarray_arg(a, "ravel")
    return reshape(x, (x.size,), order)


def transpose(a, axes=None) -> Array:
    """Permute the axes of an array (reverse them if ``axes`` is None).

    Arguments:
        a: the array.
        axes: a permutation of ``range(a.ndim)`` (negative axes allowed), or None.

    Returns:
        The array with axis ``i`` of the result being axis ``axes[i]`` of ``a``.

    Example:
        >>> jnp.transpose(jnp.ones((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    x = asarray_arg(a, "transpose")
    if axes is None:
        return sh.transpose(x, tuple(reversed(range(x.ndim))))
    perm = tuple(canonicalize_axis(p, x.ndim) for p in axes)
    return sh.transpose(x, perm)


def swapaxes(a, axis1: int, axis2: int) -> Array:
    """Interchange two axes.

    Arguments:
        a: the array.
        axis1, axis2: the axes to swap.

    Returns:
        The array with ``axis1`` and ``axis2`` interchanged.

    Example:
        >>> jnp.swapaxes(jnp.ones((2, 3)), 0, -1).shape
        (3, 2)
    """
    x = asarray_arg(a, "swapaxes")
    perm = list(range(x.ndim))
    i, j = canonicalize_axis(axis1, x.ndim), canonicalize_axis(axis2, x.ndim)
    perm[i], perm[j] = j, i
    return sh.transpose(x, perm)


def moveaxis(a, source, destination) -> Array:
    """Move axes to new positions; the other axes keep their order.

    Arguments:
        a: the array.
        source: an axis or a sequence of axes.
        destination: their positions in the result (as many as ``source``).

    Returns:
        The array with its axes moved.

    Example:
        >>> jnp.moveaxis(jnp.ones((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    x = asarray_arg(a, "moveaxis")
    src = axis_tuple(source, x.ndim, "moveaxis")
    dst = axis_tuple(destination, x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError(
            f"jnp.moveaxis: source {source} and destination {destination} must "
            "have the same number of elements"
        )
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return sh.transpose(x, perm)


def expand_dims(a, axis) -> Array:
    """Insert size-1 axes.

    Arguments:
        a: the array.
        axis: an int or a tuple of ints: positions of the new axes in the result.

    Returns:
        The array with ``len(axis)`` more dimensions.

    Example:
        >>> jnp.expand_dims(jnp.ones(3), (0, -1)).shape
        (1, 3, 1)
    """
    x = asarray_arg(a, "expand_dims")
    count = 1 if isinstance(axis, (int, np.integer)) else len(axis)
    return sh.expand_dims(x, axis_tuple(axis, x.ndim + count, "expand_dims"))


def squeeze(a, axis=None) -> Array:
    """Remove size-1 axes.

    Arguments:
        a: the array.
        axis: None (every size-1 axis), an int or a tuple of ints; each must have size 1.

    Returns:
        The array without those axes.

    Example:
        >>> jnp.squeeze(jnp.ones((1, 3, 1)), axis=0).shape
        (3, 1)
    """
    x = asarray_arg(a, "squeeze")
    if axis is None:
        return sh.squeeze(x, tuple(i for i, d in enumerate(x.shape) if d == 1))
    return sh.squeeze(x, axis_tuple(axis, x.ndim, "squeeze"))


def flip(m, axis=None) -> Array:
    """Reverse the order of elements along axes.

    Arguments:
        m: the array.
        axis: None (every axis), an int or a tuple of ints.

    Returns:
        The array, reversed along those axes.

    Example:
        >>> jnp.flip(jnp.arange(3))
        Array([2, 1, 0], dtype=int32)
    """
    x = asarray_arg(m, "flip")
    axes = tuple(range(x.ndim)) if axis is None else axis_tuple(axis, x.ndim, "flip")
    return sh.rev(x, axes)


def roll(a, shift, axis=None) -> Array:
    """Roll elements along axes: those shifted past the end come back at the start.

    Arguments:
        a: the array.
        shift: an int (static, or a traced integer scalar) or a tuple of ints.
        axis: None (roll the flattened array, then restore the shape), an int or a tuple
            of ints (broadcast against ``shift``).

    Returns:
        The rolled array.

    Example:
        >>> jnp.roll(jnp.arange(5), 2)
        Array([3, 4, 0, 1, 2], dtype=int32)
    """
    x = asarray_arg(a, "roll")
    if axis is None:
        return sh.reshape(roll(sh.reshape(x, (x.size,)), shift, 0), x.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(
            f"jnp.roll: shift {shift} and axis {axis} must have the same length "
            "(or one of them a single value)"
        )
    count = max(len(shifts), len(axes))
    for s, ax in zip(shifts * (count // len(shifts)), axes * (count // len(axes)), strict=True):
        x = _roll_axis(x, s, canonicalize_axis(ax, x.ndim))
    return x


def _roll_axis(x: Array, shift, axis: int) -> Array:
    n = x.shape[axis]
    if n == 0:
        return x
    if isinstance(shift, Tracer):
        start = n - remainder(shift, n)
        doubled = sh.concatenate([x, x], axis)
        starts = [start if d == axis else 0 for d in range(x.ndim)]
        return ix.dynamic_slice(doubled, starts, x.shape)
    s = int(shift) % n
    if s == 0:
        return x
    return sh.concatenate(
        [sh.slice_in_dim(x, n - s, n, axis=axis), sh.slice_in_dim(x, 0, n - s, axis=axis)], axis
    )


def tile(A, reps) -> Array:
    """Repeat a whole array along each axis, as ``numpy.tile``.

    Arguments:
        A: the array.
        reps: an int or a tuple of non-negative ints (static), one per axis (``A`` or
            ``reps`` is padded with leading 1s to the same length).

    Returns:
        An array whose axis ``i`` is ``reps[i]`` copies of ``A``'s axis ``i``.

    Example:
        >>> jnp.tile(jnp.array([1, 2]), (2, 2))
        Array([[1, 2, 1, 2],
               [1, 2, 1, 2]], dtype=int32)
    """
    x = asarray_arg(A, "tile")
    reps = shape_arg(reps, "tile")
    if any(r < 0 for r in reps):
        raise ValueError(f"jnp.tile: reps must be non-negative, got {reps}")
    d = max(x.ndim, len(reps))
    x = sh.reshape(x, (1,) * (d - x.ndim) + x.shape)
    reps = (1,) * (d - len(reps)) + reps
    interleaved = tuple(n for pair in zip(reps, x.shape, strict=True) for n in pair)
    y = sh.broadcast_in_dim(x, interleaved, tuple(range(1, 2 * d, 2)))
    return sh.reshape(y, tuple(r * n for r, n in zip(reps, x.shape, strict=True)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None) -> Array:
    """Repeat each element of an array, as ``numpy.repeat``.

    Arguments:
        a: the array.
        repeats: a static int, or a concrete integer array with one count per element
            along ``axis``.
        axis: the axis; None repeats the flattened array.
        total_repeat_length: the static length of the result along ``axis``: longer
            results are cut, shorter ones padded by repeating ``a``'s last element
            (JAX's semantics).

    Returns:
        The array with each element repeated.

    Example:
        >>> jnp.repeat(jnp.array([1, 2]), jnp.array([1, 3]))
        Array([1, 2, 2, 2], dtype=int32)
    """
    x = asarray_arg(a, "repeat")
    if axis is None or x.ndim == 0:  # a 0-d array repeats as a 1-d one, whatever axis (JAX)
        x, axis = sh.reshape(x, (x.size,)), 0
    axis = canonicalize_axis(axis, x.ndim)
    counts = _static_repeats(repeats)
    if counts.ndim == 0 and total_repeat_length is None:
        r = int(counts)
        shape = x.shape[: axis + 1] + (r,) + x.shape[axis + 1 :]
        kept = tuple(d for d in range(x.ndim + 1) if d != axis + 1)
        y = sh.broadcast_in_dim(x, shape, kept)
        return sh.reshape(y, x.shape[:axis] + (x.shape[axis] * r,) + x.shape[axis + 1 :])
    n = x.shape[axis]
    if counts.ndim > 1 or counts.size not in (1, n):
        raise ValueError(
            f"jnp.repeat: repeats of shape {counts.shape} must be a scalar or "
            f"have one count per element along axis {axis} (size {n})"
        )
    index = np.repeat(np.arange(n), np.broadcast_to(counts, (n,)))
    if total_repeat_length is not None:
        total = int(total_repeat_length)
        index = np.concatenate([index[:total], np.full(max(total - len(index), 0), n - 1)])
    return take(x, index, axis=axis, mode="clip")


def _static_repeats(repeats) -> np.ndarray:
    if isinstance(repeats, Tracer):
        raise TypeError(
            "jnp.repeat needs static repeats (an int or a concrete array): the length of "
            "the result depends on them. Pass them as a NumPy array or mark the argument "
            "static with static_argnums."
        )
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "biu":
        raise TypeError(f"jnp.repeat: repeats must be integers, got dtype {counts.dtype}")
    if counts.size and min(counts.ravel().tolist()) < 0:
        raise ValueError(f"jnp.repeat: repeats must be non-negative, got {repeats}")
    return counts

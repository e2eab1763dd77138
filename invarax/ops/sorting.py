"""The sort primitive: sort one or more arrays of equal shape along one dimension by keys;
and top_k, the k largest entries along one dimension.

The order is JAX's: NaNs (of either sign) sort to the end, and ``-0.0`` and ``0.0``
compare equal, so a stable sort keeps their input order. Sorting is always stable
(a stable sort is also a valid unstable one), so equal keys never depend on the
algorithm, the thread count or the batch. top_k's order is JAX's too: IEEE's total order,
largest first (``+nan``, ``+inf``, ..., ``0.0``, ``-0.0``, ..., ``-inf``, ``-nan``), equal
entries by lowest index.

Differentiation: the JVP sorts an iota along to get the permutation, and applies it to
every operand's tangent with a gather (whose transpose is a scatter-add); top_k's JVP
gathers the tangent at the indices it returns.

Batching: the batch axis is one more axis that each line is sorted across; unbatched
operands are broadcast to it. Each line is sorted on its own, so every example's bits
are the unbatched sort's (N1).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import Zero, jvp_rules, tangent_aval
from ..interpreters.batching import batching_rules
from . import shape as sh
from ._util import canonicalize_axis
from .gather import GatherScatterMode, gather_p


def _permutation(keys, dimension: int) -> np.ndarray:
    """The stable permutation that sorts lexicographically by ``keys`` (first key first)."""
    perm = None
    for key in reversed(keys):
        if perm is not None:
            key = np.take_along_axis(key, perm, dimension)
        order = np.argsort(key, axis=dimension, kind="stable")
        perm = order if perm is None else np.take_along_axis(perm, order, dimension)
    return perm


def _sort_impl(*operands, dimension, is_stable, num_keys):
    perm = _permutation(operands[:num_keys], dimension)
    return [np.take_along_axis(x, perm, dimension) for x in operands]


def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    shapes = [x.shape for x in operands]
    if len(set(shapes)) != 1:
        raise TypeError(f"sort: all operands must have the same shape, got {shapes}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(
            f"sort: num_keys={num_keys} must be between 1 and the number of "
            f"operands, {len(operands)}"
        )
    if not 0 <= dimension < operands[0].ndim:
        raise ValueError(f"sort: dimension {dimension} is out of range for shape {shapes[0]}")
    return list(operands)


sort_p = Primitive("sort", multiple_results=True)
sort_p.def_impl(_sort_impl)
sort_p.def_abstract_eval(_sort_abstract_eval)
register_lowering(sort_p)


def _gather_along(tangents, index, dimension: int) -> list:
    """Each of ``tangents`` read at ``index`` along ``dimension``:
    ``out[..., i, ...] = t[..., index[..., i, ...], ...]``, one gather each (whose transpose
    is a scatter-add); a symbolic zero stays one, of ``index``'s shape."""
    shape = index.shape
    iotas = [sh.broadcasted_iota(index.dtype, shape, d) for d in range(len(shape))]
    iotas[dimension] = index
    indices = sh.concatenate([sh.reshape(i, (*shape, 1)) for i in iotas], len(shape))
    axes = tuple(range(len(shape)))
    return [
        Zero(ShapedArray(shape, t.aval.dtype, t.aval.weak_type)) if isinstance(t, Zero)
        else gather_p.bind(t, indices, axes=axes, mode=GatherScatterMode.CLIP, fill_value=None)
        for t in tangents
    ]


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    iota = sh.broadcasted_iota(dtypes.default_int(), primals[0].shape, dimension)
    *outs, permutation = sort_p.bind(
        *primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    return outs, _gather_along(tangents, permutation, dimension)


jvp_rules[sort_p] = _sort_jvp


def _sort_batch(vals, dims, *, dimension, is_stable, num_keys):
    operands, bdim = sh.same_batch_axis(vals, dims)
    outs = sort_p.bind(*operands, dimension=dimension + (dimension >= bdim),
                       is_stable=is_stable, num_keys=num_keys)
    return outs, [bdim] * len(outs)


batching_rules[sort_p] = _sort_batch


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort an array, or several arrays of equal shape by the first ``num_keys`` of them.

    Arguments:
        operand: an array, or a sequence of arrays of equal shape.
        dimension: the dimension to sort along.
        is_stable: accepted for JAX compatibility: invarax's sort is always stable.
        num_keys: how many of the operands (from the first) are keys, compared
            lexicographically; the others are permuted along.

    Returns:
        The sorted array, or a tuple of them for a sequence. NaNs go last; ``-0.0`` and
        ``0.0`` are equal keys.

    Example:
        >>> sort(jnp.array([3., jnp.nan, -1.]))
        Array([-1.,  3., nan], dtype=float32)
    """
    many = isinstance(operand, Sequence)
    operands = [to_array(x, "lax.sort operand") for x in (operand if many else [operand])]
    if not operands:
        raise ValueError("lax.sort needs at least one operand")
    if operands[0].ndim == 0:
        raise TypeError("lax.sort needs arrays of at least one dimension, got a 0-d array")
    dim = canonicalize_axis(dimension, operands[0].ndim, "sort dimension")
    outs = sort_p.bind(*operands, dimension=dim, is_stable=bool(is_stable), num_keys=int(num_keys))
    return tuple(outs) if many else outs[0]


def _descending_total_order(x: np.ndarray) -> np.ndarray:
    """Keys whose ascending order is ``x``'s IEEE total order reversed: a float's bits as a
    signed integer with a negative float's magnitude bits flipped (so ``-0.0 < 0.0`` and
    ``-nan`` is the least), then bitwise not, which reverses any integer order."""
    if dtypes.is_float(x.dtype):
        bits = x.view(f"i{x.itemsize}")
        x = bits ^ ((bits >> (8 * x.itemsize - 1)) & np.iinfo(bits.dtype).max)
    return ~x


def _top_k_impl(operand, *, k, axis):
    order = np.argsort(_descending_total_order(np.asarray(operand)), axis=axis, kind="stable")
    indices = order[(slice(None),) * axis + (slice(0, k),)]
    return [np.take_along_axis(operand, indices, axis), indices.astype(np.int32)]


def _top_k_abstract_eval(operand, *, k, axis):
    if dtypes.kind(operand.dtype) == "c":
        raise TypeError(f"lax.top_k orders real numbers, got {operand.dtype}: pass the real "
                        "part or the absolute value")
    shape = (*operand.shape[:axis], k, *operand.shape[axis + 1:])
    return [ShapedArray(shape, operand.dtype, operand.weak_type),
            ShapedArray(shape, np.dtype(np.int32))]


top_k_p = Primitive("top_k", multiple_results=True)
top_k_p.def_impl(_top_k_impl)
top_k_p.def_abstract_eval(_top_k_abstract_eval)
register_lowering(top_k_p)


def _top_k_jvp(primals, tangents, *, k, axis):
    values, indices = top_k_p.bind(*primals, k=k, axis=axis)
    return [values, indices], [*_gather_along(tangents, indices, axis),
                               Zero(tangent_aval(indices.aval))]


jvp_rules[top_k_p] = _top_k_jvp


def _top_k_batch(vals, dims, *, k, axis):
    (x,), (bdim,) = vals, dims
    return top_k_p.bind(x, k=k, axis=axis + (axis >= bdim)), [bdim, bdim]


batching_rules[top_k_p] = _top_k_batch


def top_k(operand, k: int, *, axis: int = -1):
    """The ``k`` largest entries along ``axis`` and their indices, as ``lax.top_k``.

    Arguments:
        operand: an array of real numbers, integers or bools, at least 1-d.
        k: how many entries, ``0 <= k <= operand.shape[axis]``.
        axis: the axis to search along (default: the last).

    Returns:
        ``(values, indices)``: ``operand``'s shape with ``k`` along ``axis``, the values
        largest first by IEEE's total order (``nan > inf > ... > 0.0 > -0.0 > ... > -inf >
        -nan``), equal values by lowest index, and their int32 indices.

    Example:
        >>> top_k(jnp.array([9., 3., 6., 4., 10.]), 3)
        (Array([10.,  9.,  6.], dtype=float32), Array([4, 0, 2], dtype=int32))
    """
    x = to_array(operand, "lax.top_k operand")
    if x.ndim == 0:
        raise TypeError("lax.top_k needs an array of at least one dimension, got a 0-d array")
    axis = canonicalize_axis(axis, x.ndim, "top_k axis")
    k = operator.index(k)
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(f"lax.top_k: k={k} must be between 0 and {x.shape[axis]}, the size of "
                         f"axis {axis} of shape {x.shape}")
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    return values, indices

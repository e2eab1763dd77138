"""The sort primitive: sort one or more arrays of equal shape along one dimension by keys.

The order is JAX's: NaNs (of either sign) sort to the end, and ``-0.0`` and ``0.0``
compare equal, so a stable sort keeps their input order. Sorting is always stable
(a stable sort is also a valid unstable one), so equal keys never depend on the
algorithm, the thread count or the batch.

Differentiation: the JVP sorts an iota along to get the permutation, and applies it to
every operand's tangent with a gather (whose transpose is a scatter-add).

Batching: the batch axis is one more axis that each line is sorted across; unbatched
operands are broadcast to it. Each line is sorted on its own, so every example's bits
are the unbatched sort's (N1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import Zero, jvp_rules
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


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = primals[0].shape
    index_dtype = dtypes.default_int()
    iotas = [sh.broadcasted_iota(index_dtype, shape, d) for d in range(len(shape))]
    *outs, iotas[dimension] = sort_p.bind(
        *primals, iotas[dimension], dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    # out[..., i, ...] = operand[..., permutation[..., i, ...], ...]: one gather per tangent.
    indices = sh.concatenate([sh.reshape(i, (*shape, 1)) for i in iotas], len(shape))
    axes = tuple(range(len(shape)))
    tangents_out = [
        t if isinstance(t, Zero)
        else gather_p.bind(t, indices, axes=axes, mode=GatherScatterMode.CLIP, fill_value=None)
        for t in tangents
    ]
    return outs, tangents_out


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

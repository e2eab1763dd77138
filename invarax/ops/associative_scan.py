"""``lax.associative_scan``: a parallel prefix scan built from slices, concatenations and ``fn``.

It needs no primitive of its own, so every transformation (``jvp``, ``grad``, ``vmap``,
``jit``) goes through it. The JVP rules of ``cumprod``, ``cummax``, ``cummin`` and
``cumlogsumexp`` differentiate it, as JAX's do.
"""

from __future__ import annotations

from ..core.array import to_array
from ..core.pytree import tree_flatten, tree_unflatten
from ._util import canonicalize_axis
from .shape import concatenate, expand_dims, reshape, rev, slice_in_dim


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan of ``elems`` along ``axis`` with an associative binary ``fn``.

    The scan pairs neighbours, scans the pairs recursively and fills in the rest
    (``2 n`` applications of ``fn`` in ``2 log2(n)`` rounds), so ``fn`` is applied in
    a tree order, not left to right: for a non-associative ``fn`` (floating-point
    ``+``) the result may differ in rounding from a sequential scan.

    Arguments:
        fn: an associative function of two pytrees shaped like ``elems`` that works
            elementwise along ``axis`` (it is called on slices of equal shapes).
        elems: a pytree of arrays of equal size along ``axis``.
        reverse: scan from the last element to the first.
        axis: the scanned axis (negative counts from the end).

    Returns:
        A pytree like ``elems``: element ``i`` along ``axis`` is
        ``fn(...fn(fn(e[0], e[1]), e[2])..., e[i])`` (up to the order of applications).

    Example:
        >>> lax.associative_scan(lax.add, jnp.arange(5))
        Array([ 0,  1,  3,  6, 10], dtype=int32)
    """
    if not callable(fn):
        raise TypeError(f"lax.associative_scan: fn must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise ValueError("lax.associative_scan needs at least one array in elems")
    leaves = [to_array(x, "lax.associative_scan elems") for x in leaves]
    axis = canonicalize_axis(axis, leaves[0].ndim)
    size = leaves[0].shape[axis]
    if any(x.ndim <= axis or x.shape[axis] != size for x in leaves):
        raise ValueError(
            "lax.associative_scan: the arrays of elems must have the same size along axis "
            f"{axis}, got shapes {[x.shape for x in leaves]}"
        )

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(
                f"lax.associative_scan: fn must return the structure of elems ({tree}), "
                f"got {out_tree}"
            )
        return [to_array(x, "lax.associative_scan fn output") for x in out]

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    scans = _scan(combine, leaves, axis)
    if reverse:
        scans = [rev(x, (axis,)) for x in scans]
    return tree_unflatten(tree, scans)


def _scan(combine, elems, axis):
    """The scan of the flat list ``elems``: odd positions by recursion on combined pairs,
    even positions from the odd ones."""
    n = elems[0].shape[axis]
    if n < 2:
        return elems
    pairs = combine(
        [slice_in_dim(e, 0, n - 1, 2, axis) for e in elems],
        [slice_in_dim(e, 1, n, 2, axis) for e in elems],
    )
    odd = _scan(combine, pairs, axis)  # positions 1, 3, 5, ...
    later_even = [slice_in_dim(e, 2, n, 2, axis) for e in elems]  # positions 2, 4, ...
    if n % 2 == 0:
        odd_before = [slice_in_dim(o, 0, n // 2 - 1, 1, axis) for o in odd]
    else:
        odd_before = odd
    even = [
        concatenate([slice_in_dim(e, 0, 1, 1, axis), s], axis)
        for e, s in zip(elems, combine(odd_before, later_even), strict=True)
    ]
    return [_interleave(a, b, axis) for a, b in zip(even, odd, strict=True)]


def _interleave(a, b, axis):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis``; ``a`` has one element more or as many."""
    m = b.shape[axis]
    pairs = concatenate(
        [expand_dims(slice_in_dim(a, 0, m, 1, axis), (axis + 1,)), expand_dims(b, (axis + 1,))],
        axis + 1,
    )
    shape = list(b.shape)
    shape[axis] = 2 * m
    out = reshape(pairs, shape)
    if a.shape[axis] > m:
        out = concatenate([out, slice_in_dim(a, m, m + 1, 1, axis)], axis)
    return out

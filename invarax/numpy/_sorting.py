"""``sort`` and ``argsort`` (JAX's signatures: ``stable`` and ``descending``, no ``kind``)."""

from __future__ import annotations

from ..core import dtypes
from ..core.array import Array
from ..ops import shape as sh
from ..ops import sorting
from ..ops._util import canonicalize_axis
from ._promote import asarray_arg


def _sort_args(name: str, a, axis, kind, order):
    if kind is not None:
        raise TypeError(
            f"'kind' argument to {name} is not supported. Use stable=True or "
            "stable=False to specify sort stability."
        )
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")
    x = asarray_arg(a, name)
    if axis is None:
        return sh.reshape(x, (x.size,)), 0
    if x.ndim == 0:
        raise ValueError(
            f"jnp.{name} of a 0-d array needs axis=None (there is no axis {axis} to sort along)"
        )
    return x, canonicalize_axis(axis, x.ndim)


def sort(
    a,
    axis: int | None = -1,
    *,
    kind=None,
    order=None,
    stable: bool = True,
    descending: bool = False,
) -> Array:
    """A sorted copy of an array, as ``numpy.sort`` (JAX's order: NaNs last, ``-0.0 == 0.0``).

    Arguments:
        a: the array.
        axis: the axis to sort along; None sorts the flattened array.
        kind, order: not supported (as in JAX); use ``stable``.
        stable: accepted; invarax's sort is always stable.
        descending: sort from largest to smallest (the ascending sort, reversed).

    Returns:
        The sorted array (flattened if ``axis`` is None).

    Example:
        >>> jnp.sort(jnp.array([2., jnp.nan, -1.]))
        Array([-1.,  2., nan], dtype=float32)
    """
    x, axis = _sort_args("sort", a, axis, kind, order)
    out = sorting.sort(x, dimension=axis, is_stable=stable)
    return sh.rev(out, (axis,)) if descending else out


def argsort(
    a,
    axis: int | None = -1,
    *,
    kind=None,
    order=None,
    stable: bool = True,
    descending: bool = False,
    dtype=None,
) -> Array:
    """The indices that sort an array, as ``numpy.argsort``.

    Arguments:
        a: the array.
        axis: the axis to sort along; None sorts the flattened array.
        kind, order: not supported (as in JAX); use ``stable``.
        stable: accepted; invarax's sort is always stable, so equal values keep their
            order (for ``descending`` too).
        descending: from the largest value to the smallest.
        dtype: the index dtype (default: int32, int64 with x64).

    Returns:
        An integer array of ``a``'s shape (flattened if ``axis`` is None).

    Example:
        >>> jnp.argsort(jnp.array([3, 1, 2, 1]))
        Array([1, 3, 2, 0], dtype=int32)
    """
    x, axis = _sort_args("argsort", a, axis, kind, order)
    index_dtype = dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype)
    iota = sh.broadcasted_iota(index_dtype, x.shape, axis)
    if descending:
        # Reversing first keeps equal values in input order once the result is reversed.
        x, iota = sh.rev(x, (axis,)), sh.rev(iota, (axis,))
    _, indices = sorting.sort((x, iota), dimension=axis, is_stable=stable, num_keys=1)
    return sh.rev(indices, (axis,)) if descending else indices

"""Functions whose output size depends on the data: ``nonzero``/``argwhere``/
``flatnonzero``, the ``unique`` family and the set operations (``union1d``,
``intersect1d``, ``setdiff1d``, ``setxor1d``), ``trim_zeros``; and the sort-based
``lexsort``, ``partition``/``argpartition``, ``sort_complex``.

As in JAX, the data-dependent functions take ``size=`` (and ``fill_value=``): with it
they work under every transformation (the result is cut or padded to ``size``);
without it they need concrete arrays, and a traced one raises an error saying so.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl
from ..core.errors import ConcretizationTypeError
from ..ops import shape as sh
from ..ops import sorting
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray, zeros
from ._joining import concatenate, stack
from ._logic import isin
from ._promote import convert
from ._shape import ravel, reshape
from ._sorting import argsort, sort


def _concrete_size(name, count):
    if not isinstance(count, ArrayImpl):
        raise ConcretizationTypeError(
            f"jnp.{name}: the size of the result depends on the data, which is traced here "
            f"(under jit, vmap or grad). Pass size=N (a Python int; fill_value= pads) to fix "
            "the size")
    return int(np.asarray(count))


def _int_iota(n):
    return ArrayImpl(np.arange(n, dtype=dtypes.default_int()))


def _compress_flat(mask, values, size, fill_value):
    """The entries of 1-d ``values`` where ``mask`` is true, cut or padded to ``size``."""
    pos = uf.subtract(red.cumsum(convert(mask, dtypes.default_int())), 1)
    target = uf.where(mask, pos, size)
    out = zeros((size,), values.dtype).at[target].set(values, mode="drop")
    count = red.sum(mask, dtype=dtypes.default_int())
    fill = convert(asarray(fill_value), values.dtype)
    return uf.where(uf.less(_int_iota(size), count), out, fill)


def flatnonzero(a, *, size=None, fill_value=None):
    """The flat indices of the nonzero elements of ``a``.

    Example:
        >>> jnp.flatnonzero(jnp.array([0, 3, 0, 4]))
        Array([1, 3], dtype=int32)
    """
    flat = ravel(asarray(a))
    mask = uf.not_equal(flat, 0)
    if size is None:
        size = _concrete_size("flatnonzero", red.sum(mask, dtype=dtypes.default_int()))
    fill = 0 if fill_value is None else fill_value
    return _compress_flat(mask, _int_iota(flat.size), int(size), fill)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ``a``, one array per dimension.

    Arguments:
        a: an array (at least 1-d).
        size: the length of each result (required under transformations).
        fill_value: the index used for padding (default 0), or one per dimension.

    Returns:
        A tuple of ``a.ndim`` integer arrays.

    Example:
        >>> jnp.nonzero(jnp.array([[0, 1], [2, 0]]))
        (Array([0, 1], dtype=int32), Array([1, 0], dtype=int32))
    """
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("jnp.nonzero of a 0-d array is not defined (as NumPy 2); use "
                         "jnp.atleast_1d(a)")
    flat = flatnonzero(a, size=size, fill_value=-1)
    valid = uf.greater_equal(flat, 0)
    coords, idx = [], uf.where(valid, flat, 0)
    for s in reversed(a.shape):
        coords.append(uf.remainder(idx, s))
        idx = uf.floor_divide(idx, s)
    coords = coords[::-1]
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * a.ndim
    return tuple(uf.where(valid, c, 0 if f is None else f)
                 for c, f in zip(coords, fills, strict=True))


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ``a``, one row per element.

    Example:
        >>> jnp.argwhere(jnp.array([[0, 1], [2, 0]]))
        Array([[0, 1],
               [1, 0]], dtype=int32)
    """
    a = asarray(a)
    if a.ndim == 0:  # as JAX: one row of no coordinates if a is nonzero, none otherwise
        n = size if size is not None else _concrete_size(
            "argwhere", red.sum(uf.not_equal(a, 0), dtype=dtypes.default_int()))
        return zeros((int(n), 0), dtypes.default_int())
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


def _sorted_runs(x, equal_nan):
    """``(perm, sorted, first)``: the stable sort of 1-d ``x`` and where each run starts."""
    n = x.shape[0]
    iota = _int_iota(n)
    s, perm = sorting.sort((x, iota), dimension=0, is_stable=True, num_keys=1)
    if n == 0:
        return perm, s, zeros((0,), dtypes.bool_)
    differs = uf.not_equal(s[1:], s[:-1])
    if equal_nan and dtypes.is_inexact(s.dtype):
        differs = uf.logical_and(differs, uf.logical_not(
            uf.logical_and(uf.isnan(s[1:]), uf.isnan(s[:-1]))))
    return perm, s, concatenate([ArrayImpl(np.ones(1, bool)), differs])


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    """The sorted distinct values of the flattened ``ar``, as ``numpy.unique`` with JAX's
    ``size=``.

    Arguments:
        ar: an array (flattened; ``axis`` is not supported yet).
        return_index: also return the index of each value's first occurrence.
        return_inverse: also return, for each element, the index of its value.
        return_counts: also return how often each value occurs.
        equal_nan: NaNs count as one value.
        size: the length of the result (required under transformations).
        fill_value: the padding value (default: the smallest value).
        sorted: accepted as JAX's (the result is always sorted).

    Returns:
        The values, or a tuple with the requested extra arrays.

    Example:
        >>> jnp.unique(jnp.array([3, 1, 3, 2]))
        Array([1, 2, 3], dtype=int32)
    """
    if axis is not None:
        raise NotImplementedError("jnp.unique(axis=...) is not supported yet; unique of the "
                                  "flattened array (axis=None) is")
    x = ravel(asarray(ar))
    perm, s, first = _sorted_runs(x, equal_nan)
    if size is None:
        size = _concrete_size("unique", red.sum(first, dtype=dtypes.default_int()))
    size = int(size)
    fill = (s[0] if x.size else zeros((), x.dtype)) if fill_value is None else fill_value
    values = _compress_flat(first, s, size, fill)
    extras = []
    group = uf.subtract(red.cumsum(convert(first, dtypes.default_int())), 1)
    if return_index:
        extras.append(_compress_flat(first, perm, size, 0))
    if return_inverse:
        inverse = zeros(x.shape, dtypes.default_int()).at[perm].set(group)
        extras.append(reshape(inverse, asarray(ar).shape) if asarray(ar).ndim > 1 else inverse)
    if return_counts:
        counts = zeros((size,), dtypes.default_int()).at[group].add(1, mode="drop")
        extras.append(counts)
    return (values, *extras) if extras else values


def unique_values(x, /, *, size=None, fill_value=None):
    """The array-API ``unique_values``: ``unique(x)``.

    Example:
        >>> jnp.unique_values(jnp.array([2, 1, 2]))
        Array([1, 2], dtype=int32)
    """
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The array-API ``unique_counts``: ``(values, counts)``.

    Example:
        >>> jnp.unique_counts(jnp.array([2, 1, 2])).counts
        Array([1, 2], dtype=int32)
    """
    from collections import namedtuple

    values, counts = unique(x, return_counts=True, size=size, fill_value=fill_value)
    return namedtuple("UniqueCountsResult", "values counts")(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The array-API ``unique_inverse``: ``(values, inverse_indices)``.

    Example:
        >>> jnp.unique_inverse(jnp.array([2, 1, 2])).inverse_indices
        Array([1, 0, 1], dtype=int32)
    """
    from collections import namedtuple

    values, inverse = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    inverse = reshape(inverse, asarray(x).shape)
    return namedtuple("UniqueInverseResult", "values inverse_indices")(values, inverse)


def unique_all(x, /, *, size=None, fill_value=None):
    """The array-API ``unique_all``: ``(values, indices, inverse_indices, counts)``.

    Example:
        >>> jnp.unique_all(jnp.array([2, 1, 2])).indices
        Array([1, 0], dtype=int32)
    """
    from collections import namedtuple

    values, index, inverse, counts = unique(x, True, True, True, size=size,
                                            fill_value=fill_value)
    inverse = reshape(inverse, asarray(x).shape)
    return namedtuple("UniqueAllResult", "values indices inverse_indices counts")(
        values, index, inverse, counts)


def _set_result(name, mask_fn, ar1, ar2, size, fill_value):
    x = ravel(asarray(ar1))
    _, s, first = _sorted_runs(x, True)
    mask = mask_fn(first, s)
    if size is None:
        size = _concrete_size(name, red.sum(mask, dtype=dtypes.default_int()))
    fill = (s[0] if x.size else zeros((), x.dtype)) if fill_value is None else fill_value
    return _compress_flat(mask, s, int(size), fill)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct values in either array.

    Example:
        >>> jnp.union1d(jnp.array([1, 3]), jnp.array([2, 3]))
        Array([1, 2, 3], dtype=int32)
    """
    both = concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))])
    return unique(both, size=size, fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted distinct values in both arrays.

    Example:
        >>> jnp.intersect1d(jnp.array([1, 2, 3]), jnp.array([3, 1, 5]))
        Array([1, 3], dtype=int32)
    """
    if return_indices:
        raise NotImplementedError("jnp.intersect1d(return_indices=True) is not supported yet")
    b = asarray(ar2)
    return _set_result("intersect1d", lambda first, s: uf.logical_and(first, isin(s, b)),
                       ar1, b, size, fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values of ``ar1`` that are not in ``ar2``.

    Example:
        >>> jnp.setdiff1d(jnp.array([1, 2, 3]), jnp.array([2]))
        Array([1, 3], dtype=int32)
    """
    b = asarray(ar2)
    return _set_result("setdiff1d", lambda first, s: uf.logical_and(
        first, isin(s, b, invert=True)), ar1, b, size, fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of the arrays.

    Example:
        >>> jnp.setxor1d(jnp.array([1, 2]), jnp.array([2, 3]))
        Array([1, 3], dtype=int32)
    """
    a, b = ravel(asarray(ar1)), ravel(asarray(ar2))

    def mask(first, s):
        return uf.logical_and(first, uf.logical_not(uf.logical_and(isin(s, a), isin(s, b))))

    return _set_result("setxor1d", mask, concatenate([a, b]), None, size, fill_value)


def trim_zeros(filt, trim="fb"):
    """``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros (concrete
    arrays only: the size depends on the data).

    Example:
        >>> jnp.trim_zeros(jnp.array([0, 1, 2, 0]))
        Array([1, 2], dtype=int32)
    """
    f = asarray(filt)
    nz = np.flatnonzero(np.asarray(_concrete_values("trim_zeros", f)))
    if not len(nz):
        return f[:0]
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else f.shape[0]
    return f[start:stop]


def _concrete_values(name, x):
    if not isinstance(x, ArrayImpl):
        raise ConcretizationTypeError(f"jnp.{name}: the size of the result depends on the "
                                      "data, which is traced here; it needs a concrete array")
    return x


def lexsort(keys, axis=-1):
    """The indices that sort by several keys, the last key first (stable).

    Example:
        >>> jnp.lexsort((jnp.array([1, 0, 2]), jnp.array([1, 1, 0])))
        Array([2, 1, 0], dtype=int32)
    """
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("jnp.lexsort needs at least one key")
    shape = np.broadcast_shapes(*(k.shape for k in keys))
    keys = [sh.broadcast_in_dim(k, shape, tuple(range(len(shape) - k.ndim, len(shape))))
            if k.shape != shape else k for k in keys]
    axis = axis % len(shape)
    iota = sh.broadcasted_iota(dtypes.default_int(), shape, axis)
    out = sorting.sort((*keys[::-1], iota), dimension=axis, is_stable=True,
                       num_keys=len(keys))
    return out[-1]


def sort_complex(a):
    """``a`` flattened along its last axis and sorted by real part, then imaginary part,
    as a complex array.

    Example:
        >>> jnp.sort_complex(jnp.array([2, 1]))
        Array([1.+0.j, 2.+0.j], dtype=complex64)
    """
    a = asarray(a)
    complex_dtype = np.result_type(a.dtype, np.complex64)
    return sort(convert(a, dtypes.canonicalize(complex_dtype)), axis=-1)


def partition(a, kth, axis=-1):
    """``a`` with the ``kth`` smallest element at position ``kth``, smaller ones before it
    and larger ones after (here: fully sorted, one valid such arrangement).

    Example:
        >>> jnp.partition(jnp.array([3, 1, 2]), 1)[1]
        Array(2, dtype=int32)
    """
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    """The indices of a ``partition`` of ``a`` (here: the stable sorting permutation).

    Example:
        >>> jnp.argpartition(jnp.array([3, 1, 2]), 1)[1]
        Array(2, dtype=int32)
    """
    return argsort(a, axis=axis)

"""Array creation beyond ``_creation``: triangles (``tri``, ``tril``, ``triu``), diagonals
(``diag``, ``diagonal``, ``diagflat``, ``fill_diagonal``), index arrays (``indices``,
``*_indices``, ``meshgrid``, ``ix_``, ``mgrid``/``ogrid``/``r_``/``c_``/``s_``),
``vander``, ``logspace``/``geomspace``, ``empty_like`` and the ``from*`` constructors.

Masks and index arrays depend only on shapes, so they are NumPy constants; the values
pass through ``where``/``select``, gathers and slices, so every transformation applies.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayImpl
from ..kernels.elementary import elementary2
from ..ops import shape as sh
from . import _ufuncs as uf
from ._contractions import _diagonal
from ._creation import asarray, linspace, ones_like, zeros, zeros_like
from ._joining import concatenate, stack
from ._promote import convert
from ._shape import tile


def _array(x, name):
    return x if isinstance(x, Array) else asarray(x)


def tri(N, M=None, k=0, dtype=None):
    """An ``N`` by ``M`` array with ones at and below the ``k``-th diagonal, zeros above.

    Arguments:
        N, M: the numbers of rows and columns (``M`` defaults to ``N``).
        k: the diagonal (0 main, positive above, negative below).
        dtype: the dtype (default float).

    Returns:
        The array.

    Example:
        >>> jnp.tri(2, 3, dtype=int)
        Array([[1, 0, 0],
               [1, 1, 0]], dtype=int32)
    """
    dtype = dtypes.canonicalize(dtype or dtypes.default_float())
    return ArrayImpl(np.tri(int(N), None if M is None else int(M), int(k), dtype=dtype))


def _triangle(name, m, k, below):
    m = _array(m, name)
    if m.ndim < 2:
        raise ValueError(f"jnp.{name} needs an array of at least 2 dimensions, got shape "
                         f"{m.shape}; for a vector v use jnp.{name}(jnp.diag(v))")
    n_rows, n_cols = m.shape[-2:]
    mask = np.tri(n_rows, n_cols, k if below else k - 1, dtype=bool)
    mask = mask if below else ~mask
    return uf.where(ArrayImpl(mask), m, zeros_like(m))


def tril(m, k=0):
    """The lower triangle of the last two axes of ``m`` (at and below diagonal ``k``).

    Arguments:
        m: an array of at least 2 dimensions.
        k: the diagonal.

    Returns:
        ``m`` with the elements above the diagonal set to zero.

    Example:
        >>> jnp.tril(jnp.ones((2, 2)))
        Array([[1., 0.],
               [1., 1.]], dtype=float32)
    """
    return _triangle("tril", m, k, True)


def triu(m, k=0):
    """The upper triangle of the last two axes of ``m`` (at and above diagonal ``k``).

    Arguments:
        m: an array of at least 2 dimensions.
        k: the diagonal.

    Returns:
        ``m`` with the elements below the diagonal set to zero.

    Example:
        >>> jnp.triu(jnp.ones((2, 2)))
        Array([[1., 1.],
               [0., 1.]], dtype=float32)
    """
    return _triangle("triu", m, k, False)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal of the ``(axis1, axis2)`` planes, as a last axis.

    Arguments:
        a: an array of at least 2 dimensions.
        offset: the diagonal (positive above the main one).
        axis1, axis2: the two axes.

    Returns:
        An array with those axes removed and the diagonal appended.

    Example:
        >>> jnp.diagonal(jnp.arange(6).reshape(2, 3), 1)
        Array([1, 5], dtype=int32)
    """
    a = _array(a, "diagonal")
    if a.ndim < 2:
        raise ValueError(f"jnp.diagonal needs at least 2 dimensions, got shape {a.shape}")
    axis1, axis2 = axis1 % a.ndim, axis2 % a.ndim
    if axis1 == axis2:
        raise ValueError(f"jnp.diagonal: axis1 and axis2 are both {axis1}; give two axes")
    rest = [d for d in range(a.ndim) if d not in (axis1, axis2)]
    a = sh.transpose(a, [*rest, axis1, axis2])
    n_rows, n_cols = a.shape[-2:]
    start_row, start_col = max(0, -offset), max(0, offset)
    length = max(0, min(n_rows - start_row, n_cols - start_col))
    lead = a.shape[:-2]
    square = sh.slice(a, (0,) * len(lead) + (start_row, start_col),
                      (*lead, start_row + length, start_col + length))
    if length == 0:
        return zeros((*lead, 0), a.dtype)
    return _diagonal(square, (a.ndim - 2, a.ndim - 1))


def diag(v, k=0):
    """The ``k``-th diagonal of a matrix, or a matrix with vector ``v`` on that diagonal.

    Arguments:
        v: a 1-d or 2-d array.
        k: the diagonal.

    Returns:
        For 2-d ``v`` its diagonal; for 1-d ``v`` a square matrix of side ``len(v) + |k|``.

    Example:
        >>> jnp.diag(jnp.array([1, 2]))
        Array([[1, 0],
               [0, 2]], dtype=int32)
    """
    v = _array(v, "diag")
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"jnp.diag takes a 1-d or 2-d array, got shape {v.shape}")
    n = v.shape[0] + abs(int(k))
    rows = np.arange(v.shape[0]) + max(0, -k)
    cols = np.arange(v.shape[0]) + max(0, k)
    return zeros((n, n), v.dtype).at[rows, cols].set(v)


def diagflat(v, k=0):
    """A matrix with the flattened ``v`` on its ``k``-th diagonal.

    Example:
        >>> jnp.diagflat(jnp.array([[1, 2]]))
        Array([[1, 0],
               [0, 2]], dtype=int32)
    """
    v = _array(v, "diagflat")
    return diag(sh.reshape(v, (v.size,)), k)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal set to ``val`` (JAX's form: pass ``inplace=False``).

    Arguments:
        a: an array of at least 2 dimensions, all of one size unless 2-d.
        val: a scalar or array of values, repeated along the diagonal.
        wrap: for a tall 2-d array, restart the diagonal after each ``N + 1`` rows.
        inplace: must be False (arrays are immutable).

    Returns:
        The new array.

    Example:
        >>> jnp.fill_diagonal(jnp.zeros((2, 2)), 5.0, inplace=False)
        Array([[5., 0.],
               [0., 5.]], dtype=float32)
    """
    if inplace:
        raise ValueError("jnp.fill_diagonal cannot modify an array in place (arrays are "
                         "immutable); call it with inplace=False and use the result")
    a = _array(a, "fill_diagonal")
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ValueError(f"jnp.fill_diagonal needs a 2-d array or one whose dimensions are "
                         f"all equal, got shape {a.shape}")
    flat_positions = np.zeros(a.shape, bool)
    np.fill_diagonal(flat_positions, True, wrap=wrap)
    where = np.nonzero(flat_positions.reshape(-1))[0]
    values = _array(val, "fill_diagonal")
    values = sh.reshape(values, (values.size,))
    reps = -(-len(where) // max(values.shape[0], 1))
    values = sh.slice_in_dim(tile(values, reps), 0, len(where), 1, 0) if len(where) else values
    flat = sh.reshape(a, (a.size,)).at[where].set(convert(values, a.dtype))
    return sh.reshape(flat, a.shape)


def _index_arrays(arrays):
    return tuple(ArrayImpl(x.astype(dtypes.default_int())) for x in arrays)


def tril_indices(n, k=0, m=None):
    """The row and column indices of the lower triangle of an ``n`` by ``m`` array.

    Example:
        >>> jnp.tril_indices(2)
        (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
    """
    return _index_arrays(np.tril_indices(int(n), int(k), None if m is None else int(m)))


def triu_indices(n, k=0, m=None):
    """The row and column indices of the upper triangle of an ``n`` by ``m`` array.

    Example:
        >>> jnp.triu_indices(2)
        (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    return _index_arrays(np.triu_indices(int(n), int(k), None if m is None else int(m)))


def _check_2d(name, arr):
    if len(arr.shape) != 2:
        raise ValueError(f"jnp.{name} takes a 2-d array, got shape {tuple(arr.shape)}")


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of 2-d ``arr``.

    Example:
        >>> jnp.tril_indices_from(jnp.ones((2, 2)))[1]
        Array([0, 0, 1], dtype=int32)
    """
    _check_2d("tril_indices_from", arr)
    return tril_indices(arr.shape[0], k, arr.shape[1])


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of 2-d ``arr``.

    Example:
        >>> jnp.triu_indices_from(jnp.ones((2, 2)))[1]
        Array([0, 1, 1], dtype=int32)
    """
    _check_2d("triu_indices_from", arr)
    return triu_indices(arr.shape[0], k, arr.shape[1])


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``ndim``-dimensional array of side ``n``.

    Example:
        >>> jnp.diag_indices(2)
        (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    return _index_arrays(np.diag_indices(int(n), int(ndim)))


def diag_indices_from(arr):
    """``diag_indices`` for ``arr`` (every dimension of one size).

    Example:
        >>> jnp.diag_indices_from(jnp.ones((2, 2)))[0]
        Array([0, 1], dtype=int32)
    """
    if len(arr.shape) < 2 or len(set(arr.shape)) != 1:
        raise ValueError(f"jnp.diag_indices_from needs at least 2 dimensions, all of one size;"
                         f" got shape {tuple(arr.shape)}")
    return diag_indices(arr.shape[0], len(arr.shape))


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``jnp.triu``).

    Example:
        >>> jnp.mask_indices(2, jnp.triu)
        (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    mask = np.asarray(mask_func(np.ones((int(n), int(n)), int), k)) != 0
    return _index_arrays(np.nonzero(mask))


def indices(dimensions, dtype=None, sparse=False):
    """Arrays of the index along each axis of an array of shape ``dimensions``.

    Example:
        >>> jnp.indices((2, 2))[0]
        Array([[0, 0],
               [1, 1]], dtype=int32)
    """
    dtype = dtypes.canonicalize(dtype or dtypes.default_int())
    out = np.indices(tuple(int(d) for d in dimensions), dtype=dtype, sparse=sparse)
    if sparse:
        return tuple(ArrayImpl(x) for x in out)
    return ArrayImpl(out)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-d coordinate vectors, as ``numpy.meshgrid``.

    Arguments:
        *xi: 1-d arrays.
        copy: accepted as NumPy's.
        sparse: return arrays with size-1 dimensions instead of full ones.
        indexing: ``"xy"`` (Cartesian: the first two outputs' axes swapped) or ``"ij"``.

    Returns:
        A list of arrays, one per input.

    Example:
        >>> [g.shape for g in jnp.meshgrid(jnp.arange(3), jnp.arange(2))]
        [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"jnp.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [_array(x, "meshgrid") for x in xi]
    for i, x in enumerate(arrays):
        if x.ndim != 1:
            raise ValueError(f"jnp.meshgrid takes 1-d arrays; argument {i} has shape {x.shape}")
    shape = [x.shape[0] for x in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(arrays):
        axis = (1 if i == 0 else 0 if i == 1 else i) if indexing == "xy" and len(arrays) > 1 \
            else i
        s = [1] * len(arrays)
        s[axis] = x.shape[0]
        y = sh.reshape(x, tuple(s))
        out.append(y if sparse else sh.broadcast_in_dim(y, tuple(shape), tuple(range(len(s)))))
    return out


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences: ``x[jnp.ix_(rows, cols)]`` is a block.

    Example:
        >>> [a.shape for a in jnp.ix_(jnp.array([0, 1]), jnp.array([2, 0, 1]))]
        [(2, 1), (1, 3)]
    """
    out = []
    for i, a in enumerate(args):
        a = _array(a, "ix_")
        if a.ndim != 1:
            raise ValueError(f"jnp.ix_ takes 1-d sequences; argument {i} has shape {a.shape}")
        s = [1] * len(args)
        s[i] = a.shape[0]
        out.append(sh.reshape(a, tuple(s)))
    return tuple(out)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-d ``x``: columns are powers of ``x``.

    Arguments:
        x: a 1-d array.
        N: the number of columns (default ``len(x)``).
        increasing: powers increase left to right (default: decrease).

    Returns:
        A ``len(x)`` by ``N`` array; each power is a product of ``x``'s in order.

    Example:
        >>> jnp.vander(jnp.array([1, 2, 3]), 3)
        Array([[1, 1, 1],
               [4, 2, 1],
               [9, 3, 1]], dtype=int32)
    """
    x = _array(x, "vander")
    if x.ndim != 1:
        raise ValueError(f"jnp.vander takes a 1-d array, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    cols, power = [], ones_like(x)
    for _ in range(n):
        cols.append(power)
        power = uf.multiply(power, x)
    out = stack(cols if increasing else cols[::-1], axis=1) if n else zeros((x.shape[0], 0),
                                                                            x.dtype)
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)`` (bounds concrete, computed in float64 by
    invarax's own ``pow``).

    Example:
        >>> jnp.logspace(0, 2, 3)
        Array([  1.,  10., 100.], dtype=float32)
    """
    exponents = np.linspace(float(start), float(stop), int(num), endpoint=endpoint, axis=axis)
    dtype = dtypes.canonicalize(dtype or dtypes.default_float())
    powers = elementary2("pow", np.full_like(exponents, float(base)), exponents)
    return ArrayImpl(powers.astype(dtype))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (concrete bounds).

    Example:
        >>> jnp.geomspace(1, 100, 3)
        Array([  1.,  10., 100.], dtype=float32)
    """
    dtype = dtypes.canonicalize(dtype or dtypes.default_float())
    return ArrayImpl(np.geomspace(np.asarray(start, np.float64), np.asarray(stop, np.float64),
                                  int(num), endpoint=endpoint, axis=axis).astype(dtype))


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """An array like ``prototype`` (zeros: there is no uninitialised memory), as JAX.

    Example:
        >>> jnp.empty_like(jnp.ones(2))
        Array([0., 0.], dtype=float32)
    """
    return zeros_like(prototype, dtype=dtype, shape=shape)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*indices(shape))``: an array from a function of index arrays.

    Example:
        >>> jnp.fromfunction(lambda i, j: i + j, (2, 2), dtype=int)
        Array([[0, 1],
               [1, 2]], dtype=int32)
    """
    grids = indices(shape, dtype=dtype)
    return function(*(grids[i] for i in range(len(shape))), **kwargs)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An array of the bytes of ``buffer`` read as ``dtype``.

    Example:
        >>> jnp.frombuffer(b"\\x01\\x02", dtype=jnp.uint8)
        Array([1, 2], dtype=uint8)
    """
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromiter(iterable, dtype, count=-1):
    """An array of the values of an iterable.

    Example:
        >>> jnp.fromiter(range(3), dtype=int)
        Array([0, 1, 2], dtype=int32)
    """
    return asarray(np.fromiter(iterable, dtype=dtype, count=count))


def fromstring(string, dtype=float, count=-1, *, sep):
    """An array of the numbers in a text ``string`` separated by ``sep``.

    Example:
        >>> jnp.fromstring("1 2", dtype=int, sep=" ")
        Array([1, 2], dtype=int32)
    """
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


class _IndexGrid:
    """``mgrid``/``ogrid``: NumPy's index grids as constants of the default dtypes."""

    def __init__(self, sparse):
        self._grid = np.ogrid if sparse else np.mgrid
        self._sparse = sparse

    def __getitem__(self, key):
        out = self._grid[key]
        convert_one = lambda x: ArrayImpl(x.astype(dtypes.canonicalize(x.dtype)))  # noqa: E731
        return [convert_one(x) for x in out] if self._sparse else convert_one(out)


mgrid = _IndexGrid(False)
ogrid = _IndexGrid(True)


class _Concatenator:
    """``r_``/``c_``: NumPy's concatenation by index syntax, arrays kept as arrays."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, parts = self.axis, self.ndmin, self.trans1d, []
        for item in items:
            if isinstance(item, str):
                spec = [int(s) for s in item.split(",")]
                axis = spec[0]
                if len(spec) > 1:
                    ndmin = spec[1]
                if len(spec) > 2:
                    trans1d = spec[2]
                continue
            if isinstance(item, slice):
                step = item.step
                if isinstance(step, complex):
                    part = linspace(item.start or 0, item.stop, int(abs(step)))
                else:
                    part = ArrayImpl(np.arange(item.start or 0, item.stop, step or 1))
            else:
                part = _array(item, "r_")
            part = _atleast(part, ndmin, trans1d)
            parts.append(part)
        return concatenate(parts, axis=axis)


def _atleast(x, ndmin, trans1d):
    if x.ndim >= ndmin:
        return x
    new = (1,) * (ndmin - x.ndim)
    if trans1d == -1:  # the array's own axes last, as NumPy
        return sh.reshape(x, new + x.shape)
    return sh.reshape(x, x.shape + new)


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)
s_ = np.s_
index_exp = np.index_exp


def fromfile(file, dtype=float, count=-1, sep="", offset=0):
    """An array of the data of a binary or text file, read by ``numpy.fromfile``.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> np.arange(3, dtype=np.int32).tofile(path)
        >>> jnp.fromfile(path, dtype=jnp.int32)
        Array([0, 1, 2], dtype=int32)
    """
    return asarray(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object with ``__dlpack__`` (NumPy arrays, CPU PyTorch tensors, ...).

    Arguments:
        x: the object.
        device, copy: accepted as JAX's (the data is copied to invarax's CPU array).

    Returns:
        An ``Array`` with ``x``'s values (its dtype canonicalised, as ``asarray``).

    Example:
        >>> jnp.from_dlpack(np.arange(3, dtype=np.int32))
        Array([0, 1, 2], dtype=int32)
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"jnp.from_dlpack needs an object with __dlpack__, got "
                        f"{type(x).__name__}; use jnp.asarray for other data")
    return asarray(np.from_dlpack(x))

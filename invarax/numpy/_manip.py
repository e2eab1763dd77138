"""Array manipulation in ``invarax.numpy``: ``append``/``insert``/``delete``, flips and
rotations, ``*split``, ``unstack``, ``permute_dims``/``matrix_transpose``, ``resize``,
``block``, ``concat``, ``astype``, ``choose``/``select``/``piecewise``/``compress``/
``extract``/``place``/``put``, ``kron``, ``cross``, ``matvec``/``vecmat``/``vecdot``,
``apply_along_axis``/``apply_over_axes``, ``vectorize``, ``unravel_index``/
``ravel_multi_index``."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl
from ..ops import shape as sh
from . import _contractions as con
from . import _ufuncs as uf
from ._creation import asarray, zeros
from ._indexing import take
from ._joining import concatenate, split, stack
from ._promote import convert, promote_dtypes
from ._shape import axis_tuple, flip, moveaxis, ravel, reshape, swapaxes, tile, transpose


def append(arr, values, axis=None):
    """``arr`` with ``values`` appended (both flattened when ``axis`` is None).

    Example:
        >>> jnp.append(jnp.array([1, 2]), 3)
        Array([1, 2, 3], dtype=int32)
    """
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def _static_indices(name, obj, size):
    try:
        idx = np.asarray(obj)
    except TypeError:
        raise TypeError(f"jnp.{name} needs concrete indices (the result's size depends on "
                        "them)") from None
    if idx.dtype.kind == "b":
        return np.nonzero(idx)[0]
    if isinstance(obj, slice):
        return np.arange(size)[obj]
    return idx


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries at ``obj`` (ints, a slice or a mask) along ``axis``.

    Example:
        >>> jnp.delete(jnp.array([1, 2, 3, 4]), jnp.array([0, 2]))
        Array([2, 4], dtype=int32)
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = axis % arr.ndim
    n = arr.shape[axis]
    idx = np.arange(n)[obj] if isinstance(obj, slice) else _static_indices("delete", obj, n)
    keep = np.setdiff1d(np.arange(n), np.asarray(idx).reshape(-1) % max(n, 1))
    return take(arr, ArrayImpl(keep.astype(dtypes.default_int())), axis=axis)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the index or indices ``obj`` along ``axis``.

    Example:
        >>> jnp.insert(jnp.array([1, 2, 3]), 1, 9)
        Array([1, 9, 2, 3], dtype=int32)
    """
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = axis % arr.ndim
    n = arr.shape[axis]
    idx = _static_indices("insert", obj, n + 1)
    values = convert(values, arr.dtype)
    values = reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
    if idx.ndim == 0:  # NumPy: one block, the values' first axis along ``axis``
        values = moveaxis(values, 0, axis)
        idx = np.full(values.shape[axis], int(idx))
    idx = idx.reshape(-1)
    idx = np.where(idx < 0, idx + n, idx)
    k = len(idx)
    shape = list(arr.shape)
    shape[axis] = k
    values = sh.broadcast_in_dim(values, tuple(shape), tuple(range(arr.ndim))) \
        if values.shape != tuple(shape) else values
    order = np.argsort(idx, kind="stable")
    positions = idx[order] + np.arange(k)
    is_new = np.zeros(n + k, bool)
    is_new[positions] = True
    source = np.empty(n + k, np.int64)
    source[~is_new] = np.arange(n)
    source[positions] = n + order
    both = concatenate([arr, values], axis=axis)
    return take(both, ArrayImpl(source.astype(dtypes.default_int())), axis=axis)


def fliplr(m):
    """``m`` reversed along axis 1.

    Example:
        >>> jnp.fliplr(jnp.array([[1, 2]]))
        Array([[2, 1]], dtype=int32)
    """
    return flip(m, 1)


def flipud(m):
    """``m`` reversed along axis 0.

    Example:
        >>> jnp.flipud(jnp.array([1, 2]))
        Array([2, 1], dtype=int32)
    """
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``.

    Example:
        >>> jnp.rot90(jnp.array([[1, 2], [3, 4]]))
        Array([[2, 4],
               [1, 3]], dtype=int32)
    """
    m = asarray(m)
    a0, a1 = axis_tuple(axes, m.ndim, "rot90")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def rollaxis(a, axis, start=0):
    """Move ``axis`` to before position ``start`` (NumPy's older ``moveaxis``).

    Example:
        >>> jnp.rollaxis(jnp.ones((2, 3, 4)), 2).shape
        (4, 2, 3)
    """
    a = asarray(a)
    axis = axis % a.ndim
    start = start % (a.ndim + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def _split_along(name, axis, min_ndim):
    def f(ary, indices_or_sections):
        ary = asarray(ary)
        if ary.ndim < min_ndim:
            raise ValueError(f"jnp.{name} needs at least {min_ndim} dimensions, got shape "
                             f"{ary.shape}")
        return split(ary, indices_or_sections, axis=1 if name == "hsplit" and ary.ndim > 1
                     else axis)

    f.__name__ = name
    f.__doc__ = f"""``split`` along axis {axis}{" (axis 0 for 1-d arrays)" if name == "hsplit"
                                                else ""}.

    Example:
        >>> [p.shape for p in jnp.{name}(jnp.ones((2, 2, 2)), 2)]
        {[(2, 1, 2)] * 2 if name == "hsplit" else [(1, 2, 2)] * 2 if name == "vsplit"
         else [(2, 2, 1)] * 2}
    """
    return f


hsplit = _split_along("hsplit", 0, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple.

    Example:
        >>> jnp.unstack(jnp.array([[1, 2], [3, 4]]))
        (Array([1, 2], dtype=int32), Array([3, 4], dtype=int32))
    """
    x = asarray(x)
    axis = axis % x.ndim
    return tuple(sh.squeeze(sh.slice_in_dim(x, i, i + 1, 1, axis), (axis,))
                 for i in range(x.shape[axis]))


def permute_dims(a, /, axes):
    """The array-API name of ``transpose(a, axes)``.

    Example:
        >>> jnp.permute_dims(jnp.ones((2, 3)), (1, 0)).shape
        (3, 2)
    """
    return transpose(a, axes)


def matrix_transpose(x, /):
    """``x`` with its last two axes swapped.

    Example:
        >>> jnp.matrix_transpose(jnp.ones((4, 2, 3))).shape
        (4, 3, 2)
    """
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"jnp.matrix_transpose needs at least 2 dimensions, got {x.shape}")
    return swapaxes(x, -1, -2)


def resize(a, new_shape):
    """``a`` flattened, repeated as needed and cut to ``new_shape``.

    Example:
        >>> jnp.resize(jnp.array([1, 2, 3]), (2, 2))
        Array([[1, 2],
               [3, 1]], dtype=int32)
    """
    a = ravel(asarray(a))
    shape = (int(new_shape),) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    size = math.prod(shape)
    if a.size == 0:
        return zeros(shape, a.dtype)
    repeated = tile(a, -(-size // a.size))
    return reshape(sh.slice_in_dim(repeated, 0, size, 1, 0), shape)


def block(arrays):
    """An array assembled from nested lists of blocks (the innermost along the last axis).

    Example:
        >>> jnp.block([[jnp.ones((1, 2)), jnp.zeros((1, 1))], [jnp.zeros((1, 3))]])
        Array([[1., 1., 0.],
               [0., 0., 0.]], dtype=float32)
    """
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0 if not isinstance(x, list) \
            else 1

    levels = depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for y in x:
                collect(y)
        else:
            leaves.append(asarray(x))

    collect(arrays)
    ndim = max([levels] + [x.ndim for x in leaves])

    def build(x, level):
        if not isinstance(x, list):
            x = asarray(x)
            return reshape(x, (1,) * (ndim - x.ndim) + x.shape)
        parts = [build(y, level + 1) for y in x]
        return concatenate(parts, axis=-(levels - level))

    return build(arrays, 0)


def concat(arrays, /, *, axis=0):
    """The array-API name of ``concatenate``.

    Example:
        >>> jnp.concat([jnp.array([1]), jnp.array([2])])
        Array([1, 2], dtype=int32)
    """
    return concatenate(arrays, axis=axis)


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype`` (the array-API function form of ``x.astype``).

    Example:
        >>> jnp.astype(jnp.array([1.7]), jnp.int32)
        Array([1], dtype=int32)
    """
    return asarray(x).astype(dtype)


def kron(a, b):
    """The Kronecker product: blocks ``a[i, j] * b``.

    Example:
        >>> jnp.kron(jnp.array([1, 2]), jnp.array([1, 10]))
        Array([ 1, 10,  2, 20], dtype=int32)
    """
    a, b = promote_dtypes(asarray(a), asarray(b))
    nd = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a_exp = reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    b_exp = reshape(b, tuple(x for d in b.shape for x in (1, d)))
    out = uf.multiply(a_exp, b_exp)
    return reshape(out, tuple(p * q for p, q in zip(a.shape, b.shape, strict=True)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or the z-component for 2-vectors) along an axis.

    Example:
        >>> jnp.cross(jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
        Array([0., 0., 1.], dtype=float32)
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(asarray(a), asarray(b))
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"jnp.cross: vectors must have 2 or 3 components, got {a.shape[-1]} "
                         f"and {b.shape[-1]}")

    def comp(x, i):
        return x[..., i] if i < x.shape[-1] else zeros(x.shape[:-1], x.dtype)

    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    c2 = uf.subtract(uf.multiply(a0, b1), uf.multiply(a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return c2
    c0 = uf.subtract(uf.multiply(a1, b2), uf.multiply(a2, b1))
    c1 = uf.subtract(uf.multiply(a2, b0), uf.multiply(a0, b2))
    return moveaxis(stack([c0, c1, c2], axis=-1), -1, axisc)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of vectors along ``axis`` (the first conjugated), batched.

    Example:
        >>> jnp.vecdot(jnp.array([[1.0, 2.0]]), jnp.array([3.0, 4.0]))
        Array([11.], dtype=float32)
    """
    a, b = asarray(x1), asarray(x2)
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    return con.matmul(uf.conjugate(a)[..., None, :], b[..., :, None],
                      preferred_element_type=preferred_element_type)[..., 0, 0]


def matvec(x1, x2, /):
    """Batched matrix-vector product: ``x1 @ x2[..., None]`` without the last axis.

    Example:
        >>> jnp.matvec(jnp.eye(2), jnp.array([1.0, 2.0]))
        Array([1., 2.], dtype=float32)
    """
    return con.matmul(asarray(x1), asarray(x2)[..., :, None])[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix product of the conjugated vector: ``conj(x1)[..., None, :] @ x2``.

    Example:
        >>> jnp.vecmat(jnp.array([1.0, 2.0]), jnp.eye(2))
        Array([1., 2.], dtype=float32)
    """
    return con.matmul(uf.conjugate(asarray(x1))[..., None, :], asarray(x2))[..., 0, :]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to each 1-d slice of ``arr`` along ``axis`` (by ``vmap``).

    Example:
        >>> jnp.apply_along_axis(jnp.sum, 1, jnp.ones((2, 3)))
        Array([3., 3.], dtype=float32)
    """
    from ..transforms._vmap import vmap

    arr = asarray(arr)
    axis = axis % arr.ndim
    f = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(arr.ndim - 1):
        f = vmap(f, in_axes=0 if i < axis else -1, out_axes=0 if i < axis else -1)
    return f(arr)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the reduced axes.

    Example:
        >>> jnp.apply_over_axes(jnp.sum, jnp.ones((2, 3)), [0, 1])
        Array([[6.]], dtype=float32)
    """
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        a = b if b.ndim == a.ndim else sh.expand_dims(b, (axis % a.ndim,))
    return a


def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of flat ``indices`` (clipped, as JAX).

    Example:
        >>> jnp.unravel_index(jnp.array([5]), (2, 3))
        (Array([1], dtype=int32), Array([2], dtype=int32))
    """
    idx = asarray(indices)
    shape = tuple(int(s) for s in shape)
    total = math.prod(shape)
    idx = uf.clip(idx, -total, total - 1)
    idx = uf.where(uf.less(idx, 0), uf.add(idx, total), idx)
    out = []
    for s in reversed(shape):
        out.append(uf.remainder(idx, s))
        idx = uf.floor_divide(idx, s)
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinates ``multi_index`` in an array of shape ``dims``.

    Example:
        >>> jnp.ravel_multi_index((jnp.array([1]), jnp.array([2])), (2, 3))
        Array([5], dtype=int32)
    """
    if order not in ("C", "F"):
        raise ValueError(f"jnp.ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    dims = tuple(int(d) for d in dims)
    coords = [asarray(i) for i in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"jnp.ravel_multi_index: {len(coords)} coordinate arrays for "
                         f"{len(dims)} dimensions")
    fixed = []
    for c, d in zip(coords, dims, strict=True):
        if mode == "wrap":
            c = uf.remainder(c, d)
        elif mode == "clip":
            c = uf.clip(c, 0, d - 1)
        elif mode != "raise":
            raise ValueError(f"jnp.ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', "
                             f"got {mode!r}")
        fixed.append(c)
    if order == "F":
        fixed, dims = fixed[::-1], dims[::-1]
    out = zeros((), dtypes.default_int())
    for c, d in zip(fixed, dims, strict=True):
        out = uf.add(uf.multiply(out, d), c)
    return out


class vectorize:  # noqa: N801  (NumPy's and JAX's name)
    """``pyfunc`` applied elementwise (or over core dimensions of ``signature``) by ``vmap``.

    Arguments:
        pyfunc: a function of arrays.
        excluded: positions or names of arguments passed through unvectorised.
        signature: a generalised-ufunc signature such as ``"(n),(n)->()"``.

    Example:
        >>> jnp.vectorize(lambda a, b: a + 2 * b)(jnp.array([1, 2]), 10)
        Array([21, 22], dtype=int32)
    """

    def __init__(self, pyfunc, *, excluded=frozenset(), signature=None):
        self.pyfunc, self.excluded, self.signature = pyfunc, set(excluded), signature
        self.__doc__ = getattr(pyfunc, "__doc__", None)

    def __call__(self, *args, **kwargs):
        from ..transforms._vmap import vmap

        if any(isinstance(k, str) for k in self.excluded) or kwargs:
            bound = {k: v for k, v in kwargs.items() if k in self.excluded}
            kwargs = {k: v for k, v in kwargs.items() if k not in self.excluded}
            if kwargs:
                raise TypeError("jnp.vectorize: pass vectorised arguments positionally, or "
                                f"list {sorted(kwargs)} in excluded=")
        else:
            bound = {}
        static = {i: a for i, a in enumerate(args) if i in self.excluded}
        dyn = [asarray(a) for i, a in enumerate(args) if i not in self.excluded]

        def call(*xs):
            it = iter(xs)
            full = [static[i] if i in static else next(it) for i in range(len(args))]
            return self.pyfunc(*full, **bound)

        cores = _core_dims(self.signature, len(dyn))
        batch = [x.shape[: x.ndim - len(c)] for x, c in zip(dyn, cores, strict=True)]
        shape = np.broadcast_shapes(*batch) if batch else ()
        dyn = [sh.broadcast_in_dim(x, shape + x.shape[x.ndim - len(c):], tuple(
            range(len(shape) - (x.ndim - len(c)), len(shape) + len(c))))
            if x.shape[: x.ndim - len(c)] != shape else x
            for x, c in zip(dyn, cores, strict=True)]
        f = call
        for _ in shape:
            f = vmap(f)
        return f(*dyn)


def _core_dims(signature, n):
    if signature is None:
        return [()] * n
    inputs = signature.split("->")[0]
    groups = [g.strip() for g in inputs.replace(" ", "").strip("()").split("),(")]
    dims = [tuple(d for d in g.split(",") if d) for g in groups]
    if len(dims) != n:
        raise ValueError(f"jnp.vectorize: signature {signature!r} has {len(dims)} inputs, "
                         f"got {n} arrays")
    return dims



"""Selection in ``invarax.numpy``: ``select``, ``piecewise``, ``choose``, ``compress``,
``extract``, and the functional forms of NumPy's in-place writers ``place``, ``put``,
``put_along_axis`` (``inplace=False``, as JAX)."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl
from ..ops import shape as sh
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import asarray, zeros
from ._indexing import take
from ._joining import stack
from ._promote import convert
from ._setops import nonzero
from ._shape import ravel, reshape, tile


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition is true, else ``default``.

    Example:
        >>> x = jnp.array([-1, 0, 1])
        >>> jnp.select([x < 0, x > 0], [x * 10, x * 100], default=7)
        Array([-10,   7, 100], dtype=int32)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"jnp.select: {len(condlist)} conditions but {len(choicelist)} "
                         "choices; give one choice per condition")
    out = asarray(default)
    for cond, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        out = uf.where(cond, choice, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x)`` where ``condlist[i]`` holds (an extra function: elsewhere).

    Every function is evaluated on all of ``x`` and the results selected (JAX
    evaluates them under ``switch``; the values are the same).

    Example:
        >>> x = jnp.array([-2.0, 3.0])
        >>> jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2])
        Array([2., 6.], dtype=float32)
    """
    x = asarray(x)
    conds = list(condlist) if isinstance(condlist, (list, tuple)) else [condlist]
    funcs = list(funclist)
    if len(funcs) == len(conds) + 1:
        conds.append(uf.logical_not(red.any(stack([asarray(c) for c in conds]), axis=0)))
    elif len(funcs) != len(conds):
        raise ValueError(f"jnp.piecewise: {len(conds)} conditions need {len(conds)} or "
                         f"{len(conds) + 1} functions, got {len(funcs)}")
    out = zeros(x.shape, x.dtype)
    for cond, f in zip(conds, funcs, strict=True):
        value = f(x, *args, **kw) if callable(f) else f
        out = uf.where(cond, convert(uf.add(zeros(x.shape, x.dtype), value), x.dtype), out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for each ``i``: pick among arrays by an index array.

    Example:
        >>> jnp.choose(jnp.array([0, 1, 0]), [jnp.array([1, 2, 3]), jnp.array([10, 20, 30])])
        Array([ 1, 20,  3], dtype=int32)
    """
    a = asarray(a)
    choices = [asarray(c) for c in choices]
    n = len(choices)
    if mode == "wrap":
        a = uf.remainder(a, n)
    elif mode == "clip":
        a = uf.clip(a, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"jnp.choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    out_ = choices[-1]
    for i in range(n - 2, -1, -1):
        out_ = uf.where(uf.equal(a, i), choices[i], out_)
    return out_


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` where the 1-d ``condition`` is true.

    Example:
        >>> jnp.compress(jnp.array([True, False, True]), jnp.array([1, 2, 3]))
        Array([1, 3], dtype=int32)
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    cond = ravel(asarray(condition))
    (idx,) = nonzero(cond, size=size, fill_value=-1 if size is not None else None)
    n = a.shape[axis]
    taken = take(a, uf.where(uf.less(idx, 0), 0, idx) if size is not None else idx, axis=axis,
                 mode="clip")
    if size is None:
        return taken
    mask_shape = [1] * a.ndim
    mask_shape[axis % a.ndim] = size
    mask = reshape(uf.less(idx, 0), tuple(mask_shape))
    del n
    return uf.where(mask, convert(asarray(fill_value), a.dtype), taken)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is true, flattened.

    Example:
        >>> jnp.extract(jnp.array([True, False, True]), jnp.array([1, 2, 3]))
        Array([1, 3], dtype=int32)
    """
    return compress(ravel(asarray(condition)), ravel(asarray(arr)), size=size,
                    fill_value=fill_value)


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with the positions where ``mask`` is true set to ``vals`` in order (repeated).

    Example:
        >>> jnp.place(jnp.array([1, 2, 3]), jnp.array([True, False, True]), jnp.array([9, 8]),
        ...           inplace=False)
        Array([9, 2, 8], dtype=int32)
    """
    if inplace:
        raise ValueError("jnp.place cannot modify an array in place (arrays are immutable); "
                         "call it with inplace=False and use the result")
    arr = asarray(arr)
    where = np.nonzero(np.asarray(mask).reshape(-1))[0]
    vals = ravel(asarray(vals))
    reps = -(-len(where) // max(vals.size, 1))
    vals = sh.slice_in_dim(tile(vals, max(reps, 1)), 0, len(where), 1, 0)
    flat = ravel(arr).at[ArrayImpl(where.astype(dtypes.default_int()))].set(
        convert(vals, arr.dtype))
    return reshape(flat, arr.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with the flat positions ``ind`` set to ``v`` (JAX's form: ``inplace=False``).

    Example:
        >>> jnp.put(jnp.zeros(3), jnp.array([0, 2]), jnp.array([1.0, 2.0]), inplace=False)
        Array([1., 0., 2.], dtype=float32)
    """
    if inplace:
        raise ValueError("jnp.put cannot modify an array in place (arrays are immutable); "
                         "call it with inplace=False and use the result")
    a = asarray(a)
    ind, v = ravel(asarray(ind)), ravel(asarray(v))
    v = uf.add(zeros(ind.shape, a.dtype), convert(v, a.dtype)) if v.size == 1 else v
    if mode == "wrap":
        ind = uf.remainder(ind, a.size)
    elif mode == "clip":
        ind = uf.clip(ind, 0, a.size - 1)
    return reshape(ravel(a).at[ind].set(convert(v, a.dtype), mode=None if mode in (
        "wrap", "clip", None) else mode), a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
    ``take_along_axis``; JAX's form: pass ``inplace=False``).

    Example:
        >>> jnp.put_along_axis(jnp.zeros((2, 2)), jnp.array([[1], [0]]), 5.0, axis=1,
        ...                    inplace=False)
        Array([[0., 5.],
               [5., 0.]], dtype=float32)
    """
    if inplace:
        raise ValueError("jnp.put_along_axis cannot modify an array in place (arrays are "
                         "immutable); call it with inplace=False and use the result")
    arr, idx = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
        idx = ravel(idx)
    axis = axis % arr.ndim
    if idx.ndim != arr.ndim:
        raise ValueError(f"jnp.put_along_axis: indices must have arr's number of dimensions "
                         f"({arr.ndim}), got shape {idx.shape}")
    shape = np.broadcast_shapes(tuple(1 if d == axis else s for d, s in enumerate(arr.shape)),
                                tuple(1 if d == axis else s for d, s in enumerate(idx.shape)))
    full = tuple(idx.shape[axis] if d == axis else s for d, s in enumerate(shape))
    idx = sh.broadcast_in_dim(idx, full, tuple(range(arr.ndim))) if idx.shape != full else idx
    where = tuple(idx if d == axis else ArrayImpl(np.arange(full[d], dtype=dtypes.default_int())
                                                  .reshape([-1 if e == d else 1
                                                            for e in range(arr.ndim)]))
                  for d in range(arr.ndim))
    values = convert(asarray(values), arr.dtype)
    return arr.at[where].set(values, mode=mode)


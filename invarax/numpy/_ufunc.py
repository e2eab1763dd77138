"""``jnp.ufunc`` and ``jnp.frompyfunc``: a NumPy-style universal function from a Python
function of scalars, with ``outer``, ``reduce``, ``accumulate`` and ``at``, as JAX's.

The elementwise call maps the function over broadcast arguments with ``vmap``;
``reduce`` and ``accumulate`` fold it left to right along an axis (unrolled: one call per
element, the order NumPy's and JAX's loops use); ``at`` applies it once per index, in
order, so repeated indices compose.
"""

from __future__ import annotations

import numpy as np

from ..ops import shape as sh
from ._creation import asarray
from ._joining import stack
from ._promote import broadcast_shapes, broadcast_to_shape


class ufunc:  # noqa: N801  (NumPy's and JAX's name)
    """A universal function of ``nin`` scalar arguments and ``nout`` results.

    Arguments:
        func: a function of ``nin`` scalars (0-d arrays) returning ``nout`` of them.
        nin, nout: the numbers of arguments and results.
        name: the name shown in its repr (default ``func.__name__``).
        nargs: accepted as JAX's.
        identity: the value ``reduce`` gives for an empty axis.
        call, reduce, accumulate, at, reduceat: optional faster implementations of the
            methods, used instead of the generic ones.

    Example:
        >>> f = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=0)
        >>> x = jnp.array([3.0, 4.0, 2.0])
        >>> f(x, 2.0)
        Array([7., 9., 5.], dtype=float32)
        >>> f.reduce(x), f.accumulate(x)  # reduce starts from the identity, as JAX's
        (Array(11., dtype=float32), Array([ 3., 13., 27.], dtype=float32))
    """

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None,
                 reduce=None, accumulate=None, at=None, reduceat=None):
        self._func, self.nin, self.nout = func, int(nin), int(nout)
        self.nargs = self.nin if nargs is None else int(nargs)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._call, self._reduce, self._accumulate, self._at = call, reduce, accumulate, at
        self._reduceat = reduceat

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args):
        if len(args) != self.nin:
            raise TypeError(f"{self!r} takes {self.nin} arguments, got {len(args)}")
        if self._call is not None:
            return self._call(*args)
        from ..transforms._vmap import vmap

        arrays = [asarray(a) for a in args]
        shape = broadcast_shapes(*(a.shape for a in arrays))
        arrays = [broadcast_to_shape(a, shape) if a.shape != shape else a for a in arrays]
        f = self._func
        for _ in shape:
            f = vmap(f)
        return f(*arrays)

    def _binary(self, name):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{self!r}.{name} needs a function of 2 arguments and 1 result "
                             f"(it has nin={self.nin}, nout={self.nout})")

    def outer(self, A, B, /):
        """``self(a, b)`` for every pair of elements: shape ``A.shape + B.shape``."""
        self._binary("outer")
        a, b = asarray(A), asarray(B)
        a = sh.reshape(a, a.shape + (1,) * b.ndim)
        return self(a, b)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """Fold ``self`` left to right along ``axis`` (from ``initial`` if given)."""
        self._binary("reduce")
        if self._reduce is not None:
            return self._reduce(a, axis, dtype=dtype, keepdims=keepdims, initial=initial,
                                where=where)
        if where is not None:
            raise NotImplementedError(f"{self!r}.reduce(where=...) is not supported yet")
        a = asarray(a)
        if dtype is not None:
            a = a.astype(dtype)
        if axis is None:
            a, axis = sh.reshape(a, (a.size,)), 0
        axis = axis % a.ndim
        items = _slices(a, axis)
        start = initial if initial is not None else self.identity  # as JAX: the identity
        if start is not None:  # starts the fold when there is one and no initial
            items.insert(0, broadcast_to_shape(asarray(start, a.dtype),
                                               a.shape[:axis] + a.shape[axis + 1:]))
        if not items:
            raise ValueError(f"{self!r}.reduce of an empty axis needs an identity or "
                             "initial=")
        out_ = self._fold(items)
        return sh.expand_dims(out_, (axis,)) if keepdims else out_

    def _fold(self, items):
        out_ = items[0]
        for item in items[1:]:
            out_ = self(out_, item)
        return asarray(out_)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running fold of ``self`` along ``axis``: element ``i`` folds ``a[:i+1]``."""
        self._binary("accumulate")
        if self._accumulate is not None:
            return self._accumulate(a, axis, dtype=dtype)
        a = asarray(a)
        if dtype is not None:
            a = a.astype(dtype)
        axis = axis % a.ndim
        running, outs = None, []
        for item in _slices(a, axis):  # from the first element, as JAX (not the identity)
            running = item if running is None else asarray(self(running, item))
            outs.append(running)
        return stack(outs, axis=axis) if outs else a

    def at(self, a, indices, b=None, /, *, inplace=True):
        """``a`` with ``self`` applied at ``indices`` (once per index, in order), as JAX:
        pass ``inplace=False``."""
        if inplace:
            raise ValueError(f"{self!r}.at cannot modify an array in place (arrays are "
                             "immutable); call it with inplace=False and use the result")
        if self._at is not None:
            return self._at(a, indices, b)
        a = asarray(a)
        idx = np.asarray(indices) if not isinstance(indices, tuple) else indices
        if isinstance(idx, tuple):
            raise NotImplementedError(f"{self!r}.at with a tuple of index arrays is not "
                                      "supported yet; give one integer array")
        idx = idx.reshape(-1)
        bs = None if b is None else broadcast_to_shape(asarray(b), (len(idx),) + a.shape[1:]) \
            if asarray(b).ndim else asarray(b)
        for k, i in enumerate(idx):
            current = a[int(i)]
            if b is None:
                new = self(current)
            else:
                new = self(current, bs if bs.ndim == 0 else bs[k])
            a = a.at[int(i)].set(new)
        return a

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """``reduce`` over the slices ``a[indices[i]:indices[i+1]]`` along ``axis``."""
        self._binary("reduceat")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        a = asarray(a)
        axis = axis % a.ndim
        idx = [int(i) for i in np.asarray(indices).reshape(-1)]
        outs = []
        for k, start in enumerate(idx):
            stop = idx[k + 1] if k + 1 < len(idx) else a.shape[axis]
            items = _slices(a, axis)[start: max(stop, start + 1)]  # NumPy: a[start] if empty
            outs.append(self._fold(items))  # from a[start], as JAX (not the identity)
        return stack(outs, axis=axis)


def _slices(a, axis):
    """The slices of ``a`` along ``axis``, that axis removed."""
    return [sh.squeeze(sh.slice_in_dim(a, i, i + 1, 1, axis), (axis,))
            for i in range(a.shape[axis])]


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``ufunc`` from a Python function of ``nin`` scalars.

    Example:
        >>> jnp.frompyfunc(lambda a, b: a - b, 2, 1).outer(jnp.arange(2), jnp.arange(3))
        Array([[ 0, -1, -2],
               [ 1,  0, -1]], dtype=int32)
    """
    return ufunc(func, nin, nout, identity=identity)


def _at_update(method):
    """An ``at`` using the ``x.at[...]`` update ``method`` (scatter: repeated indices
    combine, as applying the function once per index)."""

    def at(a, indices, b=None):
        return getattr(asarray(a).at[indices], method)(b)

    return at


def _builtin_ufuncs(jnp):
    """``(name, identity, reduce, accumulate, at)`` of JAX's 14 built-in ufuncs; None where
    the generic method applies."""
    from .. import lax

    def cumulative(scan):
        return lambda a, axis=0, dtype=None: scan(asarray(a) if dtype is None
                                                  else asarray(a).astype(dtype), axis)

    return [
        ("add", 0, jnp.sum, cumulative(lax.cumsum), _at_update("add")),
        ("multiply", 1, jnp.prod, cumulative(lax.cumprod), _at_update("multiply")),
        ("maximum", None, jnp.max, cumulative(lax.cummax), _at_update("max")),
        ("minimum", None, jnp.min, cumulative(lax.cummin), _at_update("min")),
        ("logical_and", True, jnp.all, None, None),
        ("logical_or", False, jnp.any, None, None),
        ("logical_xor", False, None, None, None),
        ("bitwise_and", -1, None, None, None),
        ("bitwise_or", 0, None, None, None),
        ("bitwise_xor", 0, None, None, None),
        ("logaddexp", -np.inf, None, cumulative(lax.cumlogsumexp), None),
        ("logaddexp2", -np.inf, None, None, None),
        ("subtract", None, None, None, None),
        ("negative", None, None, None, None),
    ]


def install_methods(jnp) -> None:
    """Give JAX's built-in ufuncs (``jnp.add``, ``jnp.maximum``, ...) their ``ufunc``
    methods: ``jnp.add.reduce``, ``jnp.maximum.accumulate``, ``jnp.add.at``,
    ``jnp.multiply.outer``, ... The functions stay plain functions (nothing is added to
    a call), with the methods as attributes; reductions and scans use the canonical
    kernels (``jnp.sum``, ``lax.cummax``, ...) where there is one."""
    for name, identity, reduce, accumulate, at in _builtin_ufuncs(jnp):
        func = getattr(jnp, name)
        nin = 1 if name == "negative" else 2
        u = ufunc(func, nin, 1, name=name, identity=identity, call=func,
                  reduce=_keyword_reduce(reduce), accumulate=accumulate, at=at)
        for method in ("outer", "reduce", "accumulate", "at", "reduceat"):
            setattr(func, method, getattr(u, method))
        func.identity, func.nin, func.nout, func.nargs = identity, nin, 1, nin


def _keyword_reduce(reduce):
    if reduce is None:
        return None
    def call(a, axis, **kwargs):  # the options given (jnp.all takes no dtype or initial)
        return reduce(a, axis=axis, **{k: v for k, v in kwargs.items() if v is not None})

    return call

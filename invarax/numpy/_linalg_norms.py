"""``jnp.linalg`` vector and matrix norms, with NumPy's and JAX's semantics.

Every norm is elementwise ops and ``jnp.sum``/``max``/``min``, so its bits come from
the reduction kernels; the matrix norms ``2``, ``-2`` and ``'nuc'`` reduce the singular
values that ``svdvals`` (the Jacobi SVD kernel) gives.
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl
from ..ops._util import canonicalize_axis
from . import _ufuncs as ufuncs
from ._linalg_decomp import inexact, svdvals
from ._reductions import max as _max
from ._reductions import min as _min
from ._reductions import sum as _sum
from ._shape import expand_dims, transpose

VECTOR_ORDS = "None, 2, 1, inf, -inf, 0 and any other number p"
MATRIX_ORDS = "None, 'fro', 'nuc', 1, -1, 2, -2, inf and -inf"


def _const(value, like) -> ArrayImpl:
    """``value`` as a strongly typed 0-d array of ``like``'s dtype (as JAX's ``lax._const``)."""
    return ArrayImpl(np.asarray(value, dtype=like.dtype))


def _root_sum_squares(x, axis, keepdims):
    return ufuncs.sqrt(
        _sum(ufuncs.real(ufuncs.multiply(x, ufuncs.conj(x))), axis=axis, keepdims=keepdims)
    )


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The vector norm of ``x`` over ``axis`` (all axes, as one flat vector, by default).

    Arguments:
        x: an array (integers are promoted to float).
        axis: None, an int or a tuple of ints: the axes holding the vector.
        keepdims: keep the reduced axes as size-1 dimensions.
        ord: 2 or None (Euclidean), 1, ``inf`` (max of ``|x|``), ``-inf`` (min), 0
            (the number of non-zeros) or any other number ``p``:
            ``sum(|x|**p) ** (1/p)``.

    Returns:
        The norm, of ``x``'s real floating dtype.

    Example:
        >>> jnp.linalg.vector_norm(jnp.array([3.0, 4.0]))
        Array(5., dtype=float32)
    """
    x = inexact(x, "linalg.vector_norm")
    if isinstance(ord, str):
        raise ValueError(
            f"jnp.linalg: invalid order {ord!r} for a vector norm; the supported orders are "
            f"{VECTOR_ORDS} (use jnp.inf, not 'inf')"
        )
    if ord is None or ord == 2:
        return _root_sum_squares(x, axis, keepdims)
    abs_x = ufuncs.abs(x)
    if ord == np.inf:
        return _max(abs_x, axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _min(abs_x, axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = ufuncs.not_equal(x, 0)
        return _sum(nonzero, axis=axis, keepdims=keepdims, dtype=abs_x.dtype)
    if ord == 1:
        return _sum(abs_x, axis=axis, keepdims=keepdims)
    p = _const(ord, abs_x)
    total = _sum(ufuncs.power(abs_x, p), axis=axis, keepdims=keepdims)
    return ufuncs.power(total, _const(np.reciprocal(p._value), abs_x))


def _matrix_norm(x, ord, axes, keepdims):
    """The matrix norm of ``x`` over the two ``axes`` (rows, columns)."""
    if ord is None or ord in ("f", "fro"):
        return _root_sum_squares(x, axes, keepdims)
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(x, ord, axes, keepdims)
    if ord not in (1, -1, np.inf, -np.inf):
        raise ValueError(
            f"jnp.linalg: invalid order {ord!r} for a matrix norm; the supported orders are "
            f"{MATRIX_ORDS}"
        )
    row, col = axes
    # ord 1: the largest column sum of |x|; ord inf: the largest row sum (-1, -inf: smallest).
    summed, kept = (row, col) if ord in (1, -1) else (col, row)
    if not keepdims and kept > summed:
        kept -= 1
    sums = _sum(ufuncs.abs(x), axis=summed, keepdims=keepdims)
    if ord > 0:
        return _max(sums, axis=kept, keepdims=keepdims, initial=0)
    return _min(sums, axis=kept, keepdims=keepdims)


def _singular_value_norm(x, ord, axes, keepdims):  # noqa: A002
    """The largest (2), smallest (-2) or summed ('nuc') singular values over ``axes``."""
    rest = [d for d in range(x.ndim) if d not in axes]
    s = svdvals(transpose(x, (*rest, *axes)))
    if ord == "nuc":
        out = _sum(s, axis=-1)
    else:
        out = _max(s, axis=-1) if ord == 2 else _min(s, axis=-1)
    return expand_dims(out, tuple(sorted(axes))) if keepdims else out


def _norm_axes(x, axis) -> tuple:
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(canonicalize_axis(a, x.ndim, "norm axis") for a in axes)
    if len(set(axes)) != len(axes) or not 1 <= len(axes) <= 2:
        raise ValueError(
            f"jnp.linalg.norm: axis={axis!r} for an array of shape {x.shape}: pass one axis "
            "for a vector norm or two different axes for a matrix norm"
        )
    return axes


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """A vector or matrix norm, as ``numpy.linalg.norm``.

    Arguments:
        x: an array (integers are promoted to float).
        ord: the order. Vectors: None/2, 1, ``inf``, ``-inf``, 0 or any number ``p``.
            Matrices: None/``'fro'`` (Frobenius), 1/-1 (max/min column sum of ``|x|``),
            ``inf``/``-inf`` (max/min row sum), 2/-2 (largest/smallest singular value),
            ``'nuc'`` (sum of the singular values).
        axis: None (``x`` is a vector or a matrix by its rank; with ``ord=None`` any rank
            gives the 2-norm of all elements), an int (vector norms) or a pair of ints
            (matrix norms).
        keepdims: keep the reduced axes as size-1 dimensions.

    Returns:
        The norm, of ``x``'s real floating dtype.

    Example:
        >>> jnp.linalg.norm(jnp.array([[1.0, -2.0], [3.0, 4.0]]), ord=1)
        Array(6., dtype=float32)
    """
    x = inexact(x, "linalg.norm")
    if axis is None:
        if ord is None:
            return _root_sum_squares(x, None, keepdims)
        axis = tuple(range(x.ndim))
    axes = _norm_axes(x, axis)
    if len(axes) == 1:
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
    return _matrix_norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """The matrix norm over the last two axes of ``x`` (a stack of matrices).

    Arguments:
        x: an array of at least 2 dimensions.
        keepdims: keep the reduced axes as size-1 dimensions.
        ord: as for matrices in ``norm``: ``'fro'``, ``'nuc'``, 1, -1, 2, -2, ``inf``
            or ``-inf``.

    Returns:
        One norm per matrix.

    Example:
        >>> jnp.linalg.matrix_norm(jnp.ones((2, 3, 3)), ord=jnp.inf)
        Array([3., 3.], dtype=float32)
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)

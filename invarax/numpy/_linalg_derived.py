"""``jnp.linalg`` functions built on the decompositions and on jnp: pinv, lstsq, matrix_rank,
cond, matrix_power, multi_dot, tensorsolve, tensorinv, and the array-API helpers (cross,
outer, trace, diagonal, vecdot, matmul, matrix_transpose, tensordot)."""

from __future__ import annotations

import functools
import math

import numpy as np

from ..transforms._custom_derivatives import custom_jvp
from . import _ufuncs as ufuncs
from ._contractions import _diagonal
from ._contractions import matmul as _matmul
from ._contractions import tensordot as _tensordot
from ._contractions import trace as _trace
from ._creation import asarray, eye
from ._dtypes import finfo
from ._joining import stack
from ._linalg_decomp import inexact, inv, matrices, solve, svd
from ._linalg_norms import norm
from ._promote import asarray_arg
from ._reductions import any as _any
from ._reductions import max as _max
from ._reductions import sum as _sum
from ._shape import broadcast_to, expand_dims, moveaxis, reshape, swapaxes


def matrix_transpose(x, /):
    """Swap the last two axes of ``x`` (a stack of matrices).

    Example:
        >>> jnp.linalg.matrix_transpose(jnp.ones((2, 3, 4))).shape
        (2, 4, 3)
    """
    x = asarray_arg(x, "linalg.matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.matrix_transpose needs at least 2 dimensions, got {x.shape}")
    return swapaxes(x, -1, -2)


def _mT(x):  # noqa: N802
    return swapaxes(x, -1, -2)


def _mH(x):  # noqa: N802
    """The conjugate transpose (the transpose of a real ``x``)."""
    return ufuncs.conjugate(_mT(x)) if x.dtype.kind == "c" else _mT(x)


def _eps(dtype) -> float:
    return float(finfo(dtype).eps)


# ---------------------------------------------------------------------------------------
# pinv, lstsq, matrix_rank, cond: through the SVD.


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _pinv(a, rtol):
    u, s, vh = svd(a, full_matrices=False)
    cutoff = ufuncs.multiply(expand_dims(_max(s, axis=-1, initial=0), -1), rtol)
    big = ufuncs.greater(s, cutoff)
    s_inv = ufuncs.where(big, ufuncs.divide(1, ufuncs.where(big, s, 1)), 0).astype(a.dtype)
    return _matmul(ufuncs.multiply(_mH(vh), expand_dims(s_inv, -2)), _mH(u))


@_pinv.defjvp
def _pinv_jvp(rtol, primals, tangents):
    # JAX's rule (Golub and Pereyra): finite even where singular values repeat.
    (a,), (a_dot,) = primals, tangents
    p = _pinv(a, rtol)
    if a.shape[-2] >= a.shape[-1]:
        s = _matmul(_matmul(p, _mH(p)), _mH(a_dot))
        t = _matmul(_matmul(_mH(a_dot), _mH(p)), p)
        p_dot = ufuncs.negative(_matmul(_matmul(p, a_dot), p))
        p_dot = p_dot + s - _matmul(_matmul(s, a), p) + t - _matmul(_matmul(p, a), t)
    else:
        s = _matmul(p, _matmul(_mH(p), _mH(a_dot)))
        t = _matmul(_mH(a_dot), _matmul(_mH(p), p))
        p_dot = ufuncs.negative(_matmul(p, _matmul(a_dot, p)))
        p_dot = p_dot + s - _matmul(s, _matmul(a, p)) + t - _matmul(p, _matmul(a, t))
    return p, p_dot


def pinv(a, rtol=None, hermitian: bool = False):
    """The Moore-Penrose pseudo-inverse of each matrix, through its SVD.

    Arguments:
        a: a (..., m, n) array.
        rtol: singular values at most ``rtol * max(s)`` count as zero; default
            ``10 * max(m, n) * eps``.
        hermitian: accepted for JAX compatibility (the general SVD is used).

    Returns:
        The (..., n, m) pseudo-inverse; its derivative is JAX's (finite at repeated
        singular values).

    Example:
        >>> jnp.linalg.pinv(jnp.array([[2.0, 0.0], [0.0, 0.0]]))
        Array([[0.5, 0. ],
               [0. , 0. ]], dtype=float32)
    """
    a = matrices(a, "pinv")
    if rtol is None:
        rtol = 10 * max(a.shape[-2:]) * _eps(a.dtype)
    return _pinv(a, float(rtol))


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """The least-squares solution of ``a @ x = b``, through the SVD of ``a`` (as JAX).

    Arguments:
        a: an (m, n) array.
        b: an (m,) or (m, k) array.
        rcond: singular values below ``rcond * s[0]`` count as zero; default
            ``eps * max(m, n)``.
        numpy_resid: return an empty ``resid`` where NumPy does (rank < n or m <= n).

    Returns:
        ``(x, resid, rank, s)``: the minimum-norm solution, the squared residual norms
        per column, the effective rank and the singular values of ``a``.

    Example:
        >>> x, resid, rank, s = jnp.linalg.lstsq(jnp.array([[2.0], [0.0]]), jnp.array([4.0, 1.0]))
        >>> x, int(rank)
        (Array([2.], dtype=float32), 1)
    """
    a, b = inexact(a, "linalg.lstsq"), inexact(b, "linalg.lstsq")
    if a.ndim != 2 or b.ndim not in (1, 2) or a.shape[0] != b.shape[0]:
        raise ValueError(
            f"jnp.linalg.lstsq needs a of shape (m, n) and b of shape (m,) or (m, k) with the "
            f"same m, got a {a.shape} and b {b.shape}"
        )
    vector = b.ndim == 1
    if vector:
        b = expand_dims(b, -1)
    m, n = a.shape
    if rcond is None:
        rcond = _eps(a.dtype) * max(m, n)
    u, s, vt = svd(a, full_matrices=False)
    mask = ufuncs.greater_equal(s, ufuncs.multiply(s[0], rcond).astype(s.dtype))
    rank = _sum(mask)
    safe_s = ufuncs.where(mask, s, 1).astype(a.dtype)
    s_inv = expand_dims(ufuncs.where(mask, ufuncs.divide(1, safe_s), 0), -1)
    x = _matmul(_mH(vt), ufuncs.multiply(s_inv, _matmul(_mH(u), b)))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray(np.zeros((0,), a.dtype))
    else:
        resid = ufuncs.square(norm(b - _matmul(a, x), axis=0))
    if vector:
        x = x[..., 0]
    return x, resid, rank, s


def matrix_rank(M, rtol=None, *, tol=None):  # noqa: N803
    """The number of singular values above ``tol`` (default ``rtol * max(s)``).

    Arguments:
        M: a (..., m, n) array (a vector has rank 1 unless it is zero).
        rtol: the relative tolerance; default ``max(m, n) * eps``.
        tol: an absolute tolerance, used instead of ``rtol`` if given.

    Returns:
        The ranks, int32, of ``M``'s batch shape.

    Example:
        >>> jnp.linalg.matrix_rank(jnp.array([[1.0, 2.0], [2.0, 4.0]]))
        Array(1, dtype=int32)
    """
    M = inexact(M, "linalg.matrix_rank")
    if M.ndim < 2:
        return _any(ufuncs.not_equal(M, 0)).astype(np.int32)
    s = svd(M, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = max(M.shape[-2:]) * _eps(s.dtype)
        tol = ufuncs.multiply(_max(s, axis=-1, initial=0), rtol).astype(s.dtype)
    tol = expand_dims(tol, -1) if np.ndim(tol) else tol
    return _sum(ufuncs.greater(s, tol), axis=-1, dtype=np.int32)


def cond(x, p=None):
    """The condition number of each square matrix in the norm ``p`` (default 2).

    Example:
        >>> jnp.linalg.cond(jnp.array([[2.0, 0.0], [0.0, 0.5]]))
        Array(4., dtype=float32)
    """
    x = matrices(x, "cond")
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        r = ufuncs.divide(s[..., -1], s[..., 0]) if p == -2 else ufuncs.divide(s[..., 0],
                                                                              s[..., -1])
    else:
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    nan_free = ufuncs.logical_not(_any(ufuncs.isnan(x), axis=(-2, -1)))
    return ufuncs.where(ufuncs.logical_and(ufuncs.isnan(r), nan_free), np.inf, r)


# ---------------------------------------------------------------------------------------
# Products and tensor solves.


def matrix_power(a, n: int):
    """``a`` raised to the integer power ``n`` (by repeated squaring; ``n < 0`` inverts).

    Example:
        >>> jnp.linalg.matrix_power(jnp.array([[1.0, 1.0], [0.0, 1.0]]), 3)
        Array([[1., 3.],
               [0., 1.]], dtype=float32)
    """
    a = asarray_arg(a, "linalg.matrix_power")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"jnp.linalg.matrix_power needs square matrices, got shape {a.shape}")
    try:
        n = int(n.__index__())
    except AttributeError:
        raise TypeError(f"jnp.linalg.matrix_power: n must be an int, got {n!r}") from None
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else _matmul(result, a)
        n >>= 1
        if n:
            a = _matmul(a, a)
    return result


def multi_dot(arrays, *, precision=None):
    """The product of the matrices ``arrays``, multiplied left to right (the first may be
    a vector, as the last).

    Example:
        >>> jnp.linalg.multi_dot([jnp.ones((2, 3)), jnp.ones((3, 4)), jnp.ones(4)])
        Array([12., 12.], dtype=float32)
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"jnp.linalg.multi_dot needs at least two arrays, got {len(arrays)}")
    return functools.reduce(_matmul, arrays)


def tensorinv(a, ind: int = 2):
    """The inverse of ``a`` as a linear map from its first ``ind`` axes to the rest.

    Example:
        >>> jnp.linalg.tensorinv(jnp.eye(4).reshape(4, 2, 2), ind=1).shape
        (2, 2, 4)
    """
    a = inexact(a, "linalg.tensorinv")
    out_shape, in_shape = a.shape[:ind], a.shape[ind:]
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if ind <= 0 or rows != cols:
        raise ValueError(
            f"jnp.linalg.tensorinv: the first ind={ind} axes of shape {a.shape} must hold as "
            f"many elements as the rest ({rows} vs {cols})"
        )
    return reshape(inv(reshape(a, (rows, cols))), (*in_shape, *out_shape))


def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x``.

    Example:
        >>> jnp.linalg.tensorsolve(2 * jnp.eye(4).reshape(2, 2, 4), jnp.ones((2, 2))).shape
        (4,)
    """
    a, b = inexact(a, "linalg.tensorsolve"), inexact(b, "linalg.tensorsolve")
    if axes is not None:
        a = moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape or math.prod(out_shape) != b.size:
        raise ValueError(
            f"jnp.linalg.tensorsolve: a of shape {a.shape} must start with b's shape "
            f"{b.shape} and its other axes must hold {b.size} elements"
        )
    x = solve(reshape(a, (b.size, b.size)), reshape(b, (b.size,)))
    return reshape(x, out_shape)


def cross(x1, x2, /, *, axis: int = -1):
    """The cross product of 3-vectors along ``axis`` (batch axes broadcast).

    Example:
        >>> jnp.linalg.cross(jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
        Array([0., 0., 1.], dtype=float32)
    """
    x1, x2 = asarray_arg(x1, "linalg.cross"), asarray_arg(x2, "linalg.cross")
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"jnp.linalg.cross needs 3-vectors along axis {axis}, got shapes "
                         f"{x1.shape} and {x2.shape}")
    a, b = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, axis)


def outer(x1, x2, /):
    """The outer product of two vectors.

    Example:
        >>> jnp.linalg.outer(jnp.array([1.0, 2.0]), jnp.array([1.0, 0.0, -1.0])).shape
        (2, 3)
    """
    x1, x2 = asarray_arg(x1, "linalg.outer"), asarray_arg(x2, "linalg.outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"jnp.linalg.outer needs two vectors, got shapes {x1.shape} and "
                         f"{x2.shape}")
    return ufuncs.multiply(expand_dims(x1, 1), expand_dims(x2, 0))


def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of each matrix's diagonal (``offset`` above the main one).

    Example:
        >>> jnp.linalg.trace(jnp.ones((2, 3, 3)))
        Array([3., 3.], dtype=float32)
    """
    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset: int = 0):
    """The diagonal (``offset`` above the main one) of each matrix of ``x``.

    Example:
        >>> jnp.linalg.diagonal(jnp.arange(4.0).reshape(2, 2))
        Array([0., 3.], dtype=float32)
    """
    x = asarray_arg(x, "linalg.diagonal")
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.diagonal needs at least 2 dimensions, got {x.shape}")
    rows, cols = x.shape[-2:]
    r0, c0 = min(max(-offset, 0), rows), min(max(offset, 0), cols)
    n = min(rows - r0, cols - c0)
    x = x[..., r0:r0 + n, c0:c0 + n]
    return _diagonal(x, (x.ndim - 2, x.ndim - 1))


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The dot product of vectors along ``axis`` (batch axes broadcast).

    Example:
        >>> jnp.linalg.vecdot(jnp.ones((2, 3)), jnp.arange(3.0))
        Array([3., 3.], dtype=float32)
    """
    x1, x2 = asarray_arg(x1, "linalg.vecdot"), asarray_arg(x2, "linalg.vecdot")
    a, b = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"jnp.linalg.vecdot: shapes {x1.shape} and {x2.shape} differ along "
                         f"axis {axis}")
    out = _matmul(expand_dims(ufuncs.conj(a), -2), expand_dims(b, -1))
    return out[..., 0, 0]


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """``jnp.matmul`` (the array API's ``linalg.matmul``).

    Example:
        >>> jnp.linalg.matmul(jnp.ones((2, 3)), jnp.ones(3))
        Array([3., 3.], dtype=float32)
    """
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """``jnp.tensordot`` (the array API's ``linalg.tensordot``).

    Example:
        >>> jnp.linalg.tensordot(jnp.ones((2, 3)), jnp.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    return _tensordot(x1, x2, axes=axes, precision=precision,
                      preferred_element_type=preferred_element_type)

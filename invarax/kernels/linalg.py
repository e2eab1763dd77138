"""The factorisation kernels: Cholesky, LU, triangular solve, QR, eigh and SVD.

Each takes NumPy arrays of shape ``(..., m, n)`` (leading axes are a batch) and factorises
every matrix on its own with the compiled code of ``csrc/linalg_impl.h``, whose order of
operations per matrix is written down in ``docs/numerics.md`` ("Factorisations"): a matrix
gets the same bits alone, in any batch, on any thread count (N1, N2, N5) and, having no
vendor code and no FMA besides the canonical gemm's, on any CPU (N6). Here only copies,
transposes and flips are made.
"""

from __future__ import annotations

import math

import numpy as np

from . import _native
from ._support import num_threads

CHOLESKY, LU, TRSM, QR, QR_Q, EIGH, SVD = range(7)


def _batch(x: np.ndarray, *, transpose=False, complex_ok=True) -> tuple:
    """A C-contiguous ``(B, m, n)`` float copy of ``x`` (its last two axes swapped if asked),
    and the batch shape; complex ``x`` only where ``complex_ok`` (all but Cholesky)."""
    kinds = (np.float32, np.float64, *((np.complex64, np.complex128) if complex_ok else ()))
    if x.dtype not in kinds:
        raise TypeError(
            f"invarax's factorisations take float32, float64, complex64 or complex128 "
            f"matrices (real only for Cholesky), got {x.dtype.name}"
        )
    if transpose:
        x = np.swapaxes(x, -1, -2)
    batch = x.shape[:-2]
    return np.array(x.reshape(math.prod(batch), *x.shape[-2:]), order="C"), batch


def _call(op, *operands, unit=False, k=0):
    _native.linalg(op, num_threads(), int(unit), k, *operands)


def cholesky(a: np.ndarray, *, symmetrize_input: bool = False) -> np.ndarray:
    """The lower Cholesky factor of each matrix (lower triangle read), all NaN if not PD;
    of ``(a + a^T) / 2`` if ``symmetrize_input`` (formed by the kernel, the same bits).

    Example:
        >>> cholesky(np.array([[4.0, 0.0], [2.0, 2.0]]))
        array([[2., 0.],
               [1., 1.]])
    """
    x, batch = _batch(a, complex_ok=False)
    _call(CHOLESKY, x, unit=symmetrize_input)
    return x.reshape(*batch, *x.shape[1:])


def lu(a: np.ndarray) -> tuple:
    """``(lu, pivots, permutation)`` of each ``m x n`` matrix: LU with partial pivoting.

    Example:
        >>> lu(np.array([[1.0, 2.0], [3.0, 4.0]]))[1]
        array([1, 1], dtype=int32)
    """
    x, batch = _batch(a)
    m, n = x.shape[1:]
    pivots = np.empty((x.shape[0], min(m, n)), np.int32)
    perm = np.empty((x.shape[0], m), np.int32)
    _call(LU, x, pivots, perm)
    return x.reshape(a.shape), pivots.reshape(*batch, min(m, n)), perm.reshape(*batch, m)


def triangular_solve(a, b, *, left_side, lower, transpose_a, unit_diagonal,
                     conjugate_a=False) -> np.ndarray:
    """``x`` with ``op(a) @ x = b`` (left side) or ``x @ op(a) = b``, ``op(a) = a.T`` if
    ``transpose_a``, conjugated if ``conjugate_a`` (complex ``a``); only ``a``'s ``lower``
    (or upper) triangle is read.

    Every case becomes a substitution with ``op(a)`` itself on the left: a right-side solve
    is transposed (``x op(a) = b`` is ``op(a)^T x^T = b^T``).

    Example:
        >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]),
        ...                  left_side=True, lower=True, transpose_a=False, unit_diagonal=False)
        array([[1.],
               [2.]])
    """
    # The matrix on the left: a, a^T (transpose_a) or, for a right-side solve, op(a)^T;
    # it is lower-triangular iff lower, flipped by each transposition.
    transposed = transpose_a != (not left_side)
    mat = np.swapaxes(a, -1, -2) if transposed else a
    if conjugate_a and mat.dtype.kind == "c":
        mat = np.conj(mat)
    rhs = b if left_side else np.swapaxes(b, -1, -2)
    shape = np.broadcast_shapes(mat.shape[:-2], rhs.shape[:-2])
    mat, _ = _batch(np.broadcast_to(mat, (*shape, *mat.shape[-2:])))
    x, _ = _batch(np.broadcast_to(rhs, (*shape, *rhs.shape[-2:])))
    _call(TRSM, mat, x, unit=int(unit_diagonal) | (int(lower == transposed) << 1))
    x = x.reshape(*shape, *rhs.shape[-2:])
    return x if left_side else np.ascontiguousarray(np.swapaxes(x, -1, -2))


def qr(a: np.ndarray, full_matrices: bool) -> tuple:
    """``(q, r)`` of each ``m x n`` matrix (real or complex) by Householder reflections;
    ``q`` has ``m`` columns if ``full_matrices`` else ``min(m, n)``, ``r`` as many rows.

    Example:
        >>> q, r = qr(np.array([[3.0], [4.0]]), False)
        >>> r
        array([[-5.]])
    """
    x, batch = _batch(a, transpose=True)
    nb, n, m = x.shape
    k = min(m, n)
    qc = m if full_matrices else k
    tau = np.empty((nb, k), x.dtype)
    _call(QR, x, tau)
    r = np.swapaxes(x, -1, -2)[:, :qc, :].copy()
    rows, cols = np.indices((qc, n))
    r[:, rows > cols] = 0
    q = np.empty((nb, qc, m), x.dtype)
    _call(QR_Q, x, tau, q, k=qc)
    q = np.ascontiguousarray(np.swapaxes(q, -1, -2))
    return q.reshape(*batch, m, qc), r.reshape(*batch, qc, n)


def qr_raw(a: np.ndarray) -> tuple:
    """``(h, tau)`` of each ``m x n`` matrix: LAPACK geqrf's Householder form, laid out as
    NumPy's ``qr(mode="raw")`` (``h`` is ``n x m``: row ``j`` holds ``r``'s column ``j`` on and
    above the diagonal and reflector ``j``'s tail below it, its leading 1 implied;
    ``H_j = I - tau_j v_j v_j^H``, ``r``'s diagonal real also for complex matrices).

    Example:
        >>> h, tau = qr_raw(np.array([[3.0], [4.0]]))
        >>> h, tau
        (array([[-5. ,  0.5]]), array([1.6]))
    """
    x, batch = _batch(a, transpose=True)
    nb, n, m = x.shape
    tau = np.empty((nb, min(m, n)), x.dtype)
    _call(QR, x, tau)
    return x.reshape(*batch, n, m), tau.reshape(*batch, min(m, n))


def eigh(a: np.ndarray, lower: bool, *, symmetrize_input: bool = False) -> tuple:
    """``(v, w)``: eigenvectors (columns) and ascending eigenvalues of each symmetric (complex:
    Hermitian) matrix, whose ``lower`` (or upper) triangle is read (tridiagonalisation, then
    QL), or of ``(a + a^H) / 2`` if ``symmetrize_input`` (formed by the kernel); ``w`` is
    real (float32 for complex64), a complex eigenvector's last component real.

    Example:
        >>> eigh(np.array([[2.0, 1.0], [1.0, 2.0]]), True)[1]
        array([1., 3.])
    """
    if not lower and a.dtype.kind == "c":  # the upper triangle of a is that of a^H, lower
        a = np.conjugate(a)
    x, batch = _batch(a, transpose=not lower)
    n = x.shape[-1]
    vt = np.empty_like(x)
    w = np.empty(x.shape[:2], np.finfo(x.dtype).dtype)
    _call(EIGH, x, vt, w, unit=symmetrize_input)
    v = np.ascontiguousarray(np.swapaxes(vt, -1, -2))
    return v.reshape(*batch, n, n), w.reshape(*batch, n)


def svd(a: np.ndarray, full_matrices: bool, compute_uv: bool) -> tuple:
    """``(s, u, vt)`` of each ``m x n`` matrix by one-sided Jacobi (on ``R`` of a QR of the
    matrix, or of its transpose, when it is not square; a complex matrix, or its
    transpose, directly); ``u``, ``vt`` are ``None`` unless ``compute_uv``; ``s`` real,
    descending.

    Example:
        >>> svd(np.array([[3.0, 0.0], [0.0, -4.0]]), False, False)[0]
        array([4., 3.])
    """
    m, n = a.shape[-2:]
    wide = m < n  # factorise a.T (n x m, tall) and swap the roles of u and v
    x, batch = _batch(a, transpose=not wide)
    nb, cols, rows = x.shape
    k = min(m, n)
    uc = (rows if full_matrices else cols) if compute_uv else 0
    s = np.empty((nb, cols), np.finfo(x.dtype).dtype)
    vt = np.empty((nb, cols, cols), x.dtype)
    u = np.empty((nb, uc, rows), x.dtype)
    _call(SVD, x, s, vt, u, k=uc)
    if x.dtype.kind == "c":  # the kernel's rows are V's columns: V^H conjugates them
        np.conjugate(vt, out=vt)
    s = s.reshape(*batch, k)
    if not compute_uv:
        return s, None, None
    u_cols = np.ascontiguousarray(np.swapaxes(u, -1, -2)).reshape(*batch, rows, uc)
    vt = vt.reshape(*batch, cols, cols)
    if wide:
        return s, np.ascontiguousarray(np.swapaxes(vt, -1, -2)), u.reshape(*batch, uc, rows)
    return s, u_cols, vt


def eig(a: np.ndarray, compute_right_eigenvectors: bool) -> list:
    """``[w]`` or ``[w, v]``: eigenvalues and right eigenvectors of general real matrices, by
    NumPy's LAPACK ``geev`` (one call per matrix; its order is LAPACK's, not ours), complex.

    Example:
        >>> eig(np.array([[2.0, 0.0], [0.0, 3.0]]), False)[0]
        array([2.+0.j, 3.+0.j])
    """
    dtype = np.result_type(a.dtype, np.complex64)
    # vendor BLAS allowed: eig and eigvals are LAPACK's geev, the one float exception to N6
    # (docs/numerics.md, "No vendor BLAS or LAPACK"); their bits rest on the LAPACK build
    w, v = np.linalg.eig(a)
    w = np.asarray(w, dtype)
    return [w, np.asarray(v, dtype)] if compute_right_eigenvectors else [w]

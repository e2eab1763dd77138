"""``invarax.scipy.linalg``: JAX's ``jax.scipy.linalg`` (SciPy's names and conventions).

The factorisations are the ``lax.linalg`` primitives (invarax's own kernels, one matrix at
a time in a fixed order); the rest is jnp. ``sqrtm`` (which needs a Schur decomposition)
is not provided yet.
"""

from __future__ import annotations

import numpy as np

from ..numpy import _ufuncs as ufuncs
from ..numpy._contractions import matmul
from ..numpy._creation import eye, zeros
from ..numpy._indexing import take_along_axis
from ..numpy._joining import atleast_2d, concatenate
from ..numpy._linalg_decomp import (
    det as _det,
)
from ..numpy._linalg_decomp import (
    inexact,
    matrices,
    permuted_lu_solve,
)
from ..numpy._linalg_decomp import (
    inv as _inv,
)
from ..numpy._linalg_decomp import (
    solve as _solve,
)
from ..numpy._linalg_norms import norm
from ..numpy._promote import promote_dtypes
from ..numpy._shape import expand_dims, swapaxes
from ..numpy._sorting import argsort
from ..ops import linalg as lax_linalg
from ..ops import shape as sh


def _trans_flag(trans) -> bool:
    """Whether SciPy's ``trans`` transposes: 0/'N' (a), 1/'T' or 2/'C' (a^T, a^H)."""
    if trans in (0, "N"):
        return False
    if trans in (1, 2, "T", "C"):
        return True
    raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")


def _conj_flag(trans) -> bool:
    """Whether SciPy's ``trans`` conjugates too: 2/'C' (``a^H``; a no-op for real a)."""
    return trans in (2, "C")


def _solve_rhs(a, b, name):
    """``(b as (..., m, k), was_vector)``, checked against the square ``a``."""
    b = inexact(b, f"scipy.linalg.{name}")
    vector = b.ndim == a.ndim - 1
    if vector:
        b = expand_dims(b, -1)
    if b.ndim != a.ndim or b.shape[-2] != a.shape[-1] or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(
            f"jax.scipy.linalg.{name}: a of shape {a.shape} and b of shape "
            f"{b.shape[:-1] if vector else b.shape} do not match: b must be (..., {a.shape[-1]})"
            f" or (..., {a.shape[-1]}, k) with a's batch shape"
        )
    return b, vector


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``a x = b`` (or ``a^T x = b``) for triangular ``a``.

    Arguments:
        a: a (..., m, m) array; only its ``lower`` (else upper) triangle is read.
        b: a (..., m) or (..., m, k) array.
        trans: 0/'N' solves ``a x = b``, 1/'T' ``a^T x = b``, 2/'C' ``a^H x = b``.
        unit_diagonal: take ``a``'s diagonal as ones.

    Returns:
        ``x``, of ``b``'s shape.

    Example:
        >>> invarax.scipy.linalg.solve_triangular(jnp.array([[2.0, 0.0], [1.0, 1.0]]),
        ...                                      jnp.array([2.0, 3.0]), lower=True)
        Array([1., 2.], dtype=float32)
    """
    a = matrices(a, "solve_triangular", square=True)
    b, vector = _solve_rhs(a, b, "solve_triangular")
    a, b = promote_dtypes(a, b)
    x = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                    transpose_a=_trans_flag(trans), conjugate_a=_conj_flag(trans),
                                    unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor: upper ``U`` (``a = U^T U``) by default, lower ``L`` if ``lower``.

    Only the triangle named by ``lower`` is read. A matrix that is not positive definite
    gives NaNs, as JAX.

    Example:
        >>> invarax.scipy.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 2.0]]))
        Array([[2., 1.],
               [0., 1.]], dtype=float32)
    """
    a = matrices(a, "cholesky", square=True)
    factor = lax_linalg.cholesky(a if lower else swapaxes(a, -1, -2), symmetrize_input=False)
    return factor if lower else swapaxes(factor, -1, -2)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)``: the Cholesky factor of ``a`` (as ``cholesky``) and the flag, for
    ``cho_solve``.

    Example:
        >>> c, lower = invarax.scipy.linalg.cho_factor(jnp.array([[4.0, 2.0], [2.0, 2.0]]))
        >>> lower
        False
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` given ``cho_factor(a)``.

    Example:
        >>> cf = invarax.scipy.linalg.cho_factor(jnp.array([[4.0, 2.0], [2.0, 2.0]]))
        >>> invarax.scipy.linalg.cho_solve(cf, jnp.array([6.0, 4.0]))
        Array([1., 1.], dtype=float32)
    """
    c, lower = c_and_lower
    c = matrices(c, "cho_solve", square=True)
    b, vector = _solve_rhs(c, b, "cho_solve")
    b = b.astype(c.dtype)
    # a = L L^H (lower) or U^H U: the transposed solve conjugates too (a no-op if real).
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return x[..., 0] if vector else x


def _permutation_matrix(perm, dtype):
    """``P`` with ``P[perm[i], i] = 1`` (so ``a = P @ L @ U`` when ``a[perm] = L @ U``)."""
    m = perm.shape[-1]
    shape = (*perm.shape, m)
    rows = sh.broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = sh.broadcast_in_dim(perm, shape, (*range(perm.ndim - 1), perm.ndim))
    return ufuncs.equal(rows, cols).astype(dtype)


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """LU decomposition with partial pivoting: ``a = p @ l @ u``.

    Returns:
        ``(p, l, u)``, or ``(p @ l, u)`` if ``permute_l``; ``l`` (..., m, k) unit lower,
        ``u`` (..., k, n) upper, ``k = min(m, n)``.

    Example:
        >>> p, l, u = invarax.scipy.linalg.lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> u
        Array([[3.       , 4.       ],
               [0.       , 0.6666666]], dtype=float32)
    """
    a = matrices(a, "lu")
    packed, _, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    lower = lax_linalg.triangle(packed[..., :, :k], lower=True, k=-1)
    lower = ufuncs.add(lower, eye(m, k, dtype=a.dtype))
    upper = lax_linalg.triangle(packed[..., :k, :], lower=False)
    p = _permutation_matrix(perm, np.finfo(a.dtype).dtype)  # real, as JAX's for complex a
    if permute_l:
        return matmul(p, lower), upper
    return p, lower, upper


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)``: the packed LU factors and the pivot indices (row ``i`` was swapped
    with row ``piv[i]``), for ``lu_solve``.

    Example:
        >>> invarax.scipy.linalg.lu_factor(jnp.array([[1.0, 2.0], [3.0, 4.0]]))[1]
        Array([1, 1], dtype=int32)
    """
    a = matrices(a, "lu_factor")
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


def _pivots_to_permutation(pivots, m):
    """The row permutation that the row swaps ``pivots`` apply to ``arange(m)``."""
    perm = sh.broadcasted_iota(np.int32, (*pivots.shape[:-1], m), pivots.ndim - 1)
    for i in range(pivots.shape[-1]):
        j = pivots[..., i:i + 1]
        at_i, at_j = perm[..., i:i + 1], take_along_axis(perm, j, axis=-1)
        columns = sh.broadcasted_iota(np.int32, perm.shape, perm.ndim - 1)
        perm = ufuncs.where(ufuncs.equal(columns, j), at_i, perm)
        perm = ufuncs.where(ufuncs.equal(columns, i), at_j, perm)
    return perm


def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` (or ``a^T x = b``, ``a^H x = b``: ``trans`` 1, 2) given ``lu_factor(a)``.

    Example:
        >>> f = invarax.scipy.linalg.lu_factor(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> invarax.scipy.linalg.lu_solve(f, jnp.array([5.0, 11.0]))
        Array([1., 2.], dtype=float32)
    """
    packed, pivots = lu_and_piv
    packed = matrices(packed, "lu_solve", square=True)
    b, vector = _solve_rhs(packed, b, "lu_solve")
    b = b.astype(packed.dtype)
    perm = _pivots_to_permutation(pivots, packed.shape[-1])
    if not _trans_flag(trans):
        x = permuted_lu_solve(packed, perm, b)
    else:  # a^T x = U^T L^T P x = b
        conj = _conj_flag(trans)  # a^H x = U^H L^H P x = b
        y = lax_linalg.triangular_solve(packed, b, left_side=True, lower=False,
                                        transpose_a=True, conjugate_a=conj)
        z = lax_linalg.triangular_solve(packed, y, left_side=True, lower=True,
                                        transpose_a=True, conjugate_a=conj, unit_diagonal=True)
        x = take_along_axis(z, expand_dims(argsort(perm, axis=-1), -1), axis=-2)
    return x[..., 0] if vector else x


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR decomposition (SciPy's modes): ``'full'`` (q (m, m)), ``'economic'`` (q (m, k))
    or ``'r'`` (returns ``(r,)``).

    Example:
        >>> q, r = invarax.scipy.linalg.qr(jnp.array([[3.0], [4.0]]))
        >>> q.shape, r.shape
        ((2, 2), (2, 1))
    """
    if pivoting:
        raise NotImplementedError("jax.scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"jax.scipy.linalg.qr: mode must be 'full', 'economic' or 'r', got "
                         f"{mode!r}")
    a = matrices(a, "qr")
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """Singular value decomposition: ``(u, s, vh)``, or ``s`` if not ``compute_uv``.

    Example:
        >>> invarax.scipy.linalg.svd(jnp.array([[0.0, 2.0], [1.0, 0.0]]), compute_uv=False)
        Array([2., 1.], dtype=float32)
    """
    a = matrices(a, "svd")
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True):
    """Eigenvalues (ascending, real) and eigenvectors of symmetric (complex: Hermitian) ``a``:
    ``(w, v)``, or ``w`` if ``eigvals_only``. As JAX's, of ``(a + a^H) / 2`` (``a`` itself,
    bitwise, when it is symmetric).

    Example:
        >>> invarax.scipy.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
        Array([1., 3.], dtype=float32)
    """
    if b is not None or eigvals is not None or type != 1:
        raise NotImplementedError("jax.scipy.linalg.eigh: the generalized problem (b), eigvals "
                                  "and type are not supported")
    a = matrices(a, "eigh", square=True)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=True)
    return w if eigvals_only else (w, v)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of each square matrix (``jnp.linalg.inv``).

    Example:
        >>> invarax.scipy.linalg.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))[1, 1]
        Array(0.25, dtype=float32)
    """
    return _inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant of each square matrix (``jnp.linalg.det``).

    Example:
        >>> invarax.scipy.linalg.det(jnp.array([[0.0, 2.0], [3.0, 1.0]]))
        Array(-6., dtype=float32)
    """
    return _det(a)


def block_diag(*arrs):
    """The block-diagonal matrix of ``arrs`` (0-d and 1-d arrays are 1 x 1 and 1 x n blocks).

    Example:
        >>> invarax.scipy.linalg.block_diag(jnp.ones((1, 2)), 2 * jnp.ones((2, 1))).shape
        (3, 3)
    """
    if not arrs:
        return zeros((1, 0))
    blocks = [atleast_2d(x) for x in arrs]
    if any(b.ndim != 2 for b in blocks):
        raise ValueError("jax.scipy.linalg.block_diag takes arrays of at most 2 dimensions, got "
                         f"shapes {[tuple(np.shape(b)) for b in arrs]}")
    width = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        cols = b.shape[1]
        left = zeros((b.shape[0], start), b.dtype)
        right = zeros((b.shape[0], width - start - cols), b.dtype)
        rows.append(concatenate([left, b, right], axis=1))
        start += cols
    return concatenate(rows, axis=0)


# expm: scaling and squaring with a Pade approximant (Higham 2005, as JAX): degree 7 for
# float32, 13 for float64, the same degree for every matrix (no data-dependent branch).
_PADE = {
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_MAXNORM = {7: 3.925724783138660, 13: 5.371920351148152}


def _pade(a, degree):
    b = _PADE[degree]
    ident = eye(a.shape[-1], dtype=a.dtype)
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    if degree == 7:
        u = matmul(a, b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
        return u, v
    u = matmul(a, matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
               + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2
    return u, v + b[0] * ident


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):  # noqa: N803
    """The matrix exponential of each square matrix.

    Arguments:
        A: a (..., n, n) array.
        upper_triangular: accepted for JAX compatibility.
        max_squarings: the most squarings (a matrix of larger norm gives an inexact result).

    Returns:
        ``exp(A)``, of ``A``'s shape.

    Example:
        >>> invarax.scipy.linalg.expm(jnp.zeros((2, 2)))
        Array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    a = matrices(A, "expm", square=True)
    degree = 13 if a.dtype == np.float64 else 7
    l1 = norm(a, 1, axis=(-2, -1), keepdims=True)
    squarings = ufuncs.maximum(0, ufuncs.floor(ufuncs.log2(l1 / _MAXNORM[degree])))
    squarings = ufuncs.where(ufuncs.isfinite(squarings), squarings, 0).astype(a.dtype)
    u, v = _pade(a / ufuncs.power(2.0, squarings).astype(a.dtype), degree)
    r = _solve(v - u, u + v)
    for i in range(max_squarings):
        r = ufuncs.where(ufuncs.less(i, squarings), matmul(r, r), r)
    return r


def toeplitz(c, r=None):
    """The Toeplitz matrix of first column ``c`` and first row ``r``, as JAX's.

    ``out[i, j] = c[i - j]`` below the diagonal and ``r[j - i]`` above (``r[0]`` is ignored:
    the diagonal is ``c[0]``); ``r`` defaults to ``conj(c)``. Leading axes batch.

    Example:
        >>> toeplitz(jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, 4.0]))
        Array([[1., 4.],
               [2., 1.],
               [3., 2.]], dtype=float32)
    """
    from ..numpy import asarray, atleast_1d, broadcast_to, conjugate

    c = atleast_1d(asarray(c))
    r = atleast_1d(conjugate(c) if r is None else asarray(r))
    c, r = promote_dtypes(c, r)
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return zeros((*batch, m, n), c.dtype)
    c, r = broadcast_to(c, (*batch, m)), broadcast_to(r, (*batch, n))
    elems = concatenate([c[..., ::-1], r[..., 1:]], axis=-1)  # c reversed, then r's tail
    return elems[..., (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]]

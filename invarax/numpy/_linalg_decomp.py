"""``jnp.linalg`` decompositions and the solves built on them (JAX's names and results).

Every function takes stacks of matrices (leading axes are batch axes) and lowers to the
``lax.linalg`` primitives, whose kernels factorise each matrix on its own in a fixed
order, so a matrix's result has the same bits alone, in a batch or under ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.array import Array
from ..ops import linalg as lax_linalg
from ..ops import shape as sh
from ..ops.linalg_eig import eig as lax_eig
from ..ops.linalg_qr_raw import qr_raw
from ..transforms._custom_derivatives import custom_jvp
from . import _ufuncs as ufuncs
from ._contractions import matmul
from ._creation import eye
from ._indexing import take_along_axis
from ._joining import concatenate
from ._promote import asarray_arg, promote_dtypes
from ._reductions import any as _any
from ._reductions import prod as _prod
from ._reductions import sum as _sum
from ._shape import broadcast_to, expand_dims, swapaxes


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def inexact(x, name: str):
    """``x`` as an array of a float dtype (integers promote), checked to be a stack of matrices."""
    (x,) = promote_dtypes(asarray_arg(x, name), to_inexact=True)
    return x


def matrices(x, name: str, square: bool = False):
    """``x`` as a float stack of (square) matrices, or a ValueError naming its shape."""
    x = inexact(x, f"linalg.{name}")
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        kind = "a square matrix (..., n, n)" if square else "a matrix (..., m, n)"
        raise ValueError(
            f"jnp.linalg.{name} needs {kind}, got an array of shape {x.shape}"
            + ("; for a vector use jnp.linalg.vector_norm or reshape it" if x.ndim < 2 else "")
        )
    return x


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """The Cholesky factor of each symmetric positive definite matrix.

    Arguments:
        a: a (..., n, n) array (complex: Hermitian, ``a = L L^H``).
        upper: return ``U = L^T`` (``a = U^T U``; ``L^H`` if complex) instead of ``L``
            (``a = L L^T``).
        symmetrize_input: factorise ``(a + a^T) / 2`` (JAX's default); else read the lower
            triangle only.

    Returns:
        The triangular factor; all NaN for a matrix that is not positive definite (as JAX).

    Example:
        >>> jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 2.0]]))
        Array([[2., 0.],
               [1., 1.]], dtype=float32)
    """
    a = matrices(a, "cholesky", square=True)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    if not upper:
        return L
    return ufuncs.conj(swapaxes(L, -1, -2)) if L.dtype.kind == "c" else swapaxes(L, -1, -2)


def qr(a, mode: str = "reduced"):
    """QR decomposition of each matrix, by Householder reflections.

    Arguments:
        a: a (..., m, n) array, real or complex (``R``'s diagonal is real, as LAPACK's).
        mode: ``"reduced"`` (``Q`` (..., m, k), ``R`` (..., k, n), ``k = min(m, n)``),
            ``"complete"`` (``Q`` (..., m, m), ``R`` (..., m, n)), ``"r"`` (``R`` only) or
            ``"raw"`` (LAPACK's Householder form, as NumPy's and JAX's: not
            differentiable).

    Returns:
        ``QRResult(Q, R)``, ``R`` for ``mode="r"``, or ``(h, tau)`` for ``mode="raw"``:
        ``h`` (..., n, m) holds ``R`` (row ``j``: its column ``j``) and the reflectors' tails,
        ``tau`` (..., k) their scales (``H_j = I - tau_j v_j v_j^H``).

    Example:
        >>> jnp.linalg.qr(jnp.array([[3.0], [4.0]]), mode="r")
        Array([[-5.]], dtype=float32)
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(
            f"jnp.linalg.qr: mode must be 'reduced', 'complete', 'r' or 'raw', got {mode!r}")
    a = matrices(a, "qr")
    if mode == "raw":
        return QRResult(*qr_raw(a))  # as JAX: the pair in a QRResult
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` of each matrix.

    Arguments:
        a: a (..., m, n) array.
        full_matrices: ``U`` (..., m, m) and ``Vh`` (..., n, n); else (..., m, k) and
            (..., k, n), ``k = min(m, n)``.
        compute_uv: return ``SVDResult(U, S, Vh)``; else ``S`` only.
        hermitian: accepted for JAX compatibility (the general algorithm is used).
        subset_by_index: not supported (None only).

    Returns:
        ``SVDResult(U, S, Vh)`` or ``S``; ``S`` (..., k) descending.

    Example:
        >>> jnp.linalg.svd(jnp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Array([4., 3.], dtype=float32)
    """
    a = matrices(a, "svd")
    if not compute_uv:
        return lax_linalg.svd(a, compute_uv=False, subset_by_index=subset_by_index)
    u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, subset_by_index=subset_by_index)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values of each matrix, descending (``svd(x, compute_uv=False)``).

    Example:
        >>> jnp.linalg.svdvals(jnp.array([[0.0, 2.0], [1.0, 0.0]]))
        Array([2., 1.], dtype=float32)
    """
    return svd(x, compute_uv=False)


def _uplo_lower(UPLO) -> bool:
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"jnp.linalg: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO != "U"


def eigh(a, UPLO=None, symmetrize_input: bool = True):  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of each symmetric (complex: Hermitian) matrix.

    Arguments:
        a: a (..., n, n) array.
        UPLO: ``"L"`` (default) or ``"U"``: the triangle read when not ``symmetrize_input``.
        symmetrize_input: factorise ``(a + a^H) / 2`` (JAX's default).

    Returns:
        ``EighResult(eigenvalues, eigenvectors)``; ``eigenvectors[..., :, i]`` belongs to
        ``eigenvalues[..., i]``; the eigenvalues are real (float32 for complex64), a complex
        eigenvector is unique up to a phase (its last component is real here). Their
        derivative is inf/NaN at repeated eigenvalues (JAX's).

    Example:
        >>> jnp.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
        Array([1., 3.], dtype=float32)
    """
    a = matrices(a, "eigh", square=True)
    v, w = lax_linalg.eigh(a, lower=_uplo_lower(UPLO), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):  # noqa: N803
    """The eigenvalues (ascending, real) of each symmetric (complex: Hermitian) matrix.

    Example:
        >>> jnp.linalg.eigvalsh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
        Array([1., 3.], dtype=float32)
    """
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (forward only).

    Arguments:
        a: a (..., n, n) real array.

    Returns:
        ``(w, v)``, complex (complex64 for float32 input), LAPACK's order and normalisation
        (unit eigenvectors, largest component real). Not differentiable.

    Example:
        >>> jnp.linalg.eig(jnp.array([[2.0, 0.0], [0.0, 3.0]]))[0]
        Array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    a = matrices(a, "eig", square=True)
    w, v = lax_eig(a)
    return w, v


def eigvals(a):
    """The eigenvalues of general square matrices, complex (forward only).

    Example:
        >>> jnp.linalg.eigvals(jnp.array([[0.0, 1.0], [-1.0, 0.0]]))
        Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    a = matrices(a, "eigvals", square=True)
    return lax_eig(a, compute_right_eigenvectors=False)[0]


# ---------------------------------------------------------------------------------------
# LU-based: solve, inv, det, slogdet.


def _lu_factor(a):
    """``(lu, permutation, parity)``: parity 1 for an odd number of row swaps."""
    lu, pivots, perm = lax_linalg.lu(a)
    swaps = _sum(ufuncs.not_equal(pivots, sh.broadcasted_iota(np.int32, pivots.shape,
                                                                pivots.ndim - 1)), axis=-1)
    return lu, perm, ufuncs.remainder(swaps, 2)


def permuted_lu_solve(lu, perm, b):
    """``x`` with ``A x = b`` for ``A[perm] = L U`` (b (..., m, k), batch shapes equal)."""
    pb = take_along_axis(b, expand_dims(perm, -1), axis=-2, mode="promise_in_bounds")
    y = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def solve(a, b):
    """Solve ``a @ x = b`` for each matrix of ``a`` (LU with partial pivoting).

    Arguments:
        a: a (..., m, m) array.
        b: a vector (m,) or a stack of right-hand sides (..., m, k); batch axes broadcast.

    Returns:
        ``x`` of ``b``'s shape (broadcast). A singular ``a`` gives inf/NaN, as JAX.

    Example:
        >>> jnp.linalg.solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.array([2.0, 2.0]))
        Array([1. , 0.5], dtype=float32)
    """
    a = matrices(a, "solve", square=True)
    b = inexact(b, "linalg.solve")
    a, b = promote_dtypes(a, b)
    vector = b.ndim == 1
    if vector:
        b = expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(
            f"jnp.linalg.solve: a of shape {a.shape} and b of shape "
            f"{b.shape[:-1] if vector else b.shape} do not match: b must be a vector of "
            f"{a.shape[-1]} elements or a stack of ({a.shape[-1]}, k) matrices"
        )
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"jnp.linalg.solve: the batch shapes of a {a.shape} and b {b.shape} "
                         "do not broadcast") from None
    a = broadcast_to(a, (*batch, *a.shape[-2:]))
    b = broadcast_to(b, (*batch, *b.shape[-2:]))
    x = _solve(a, b)
    return x[..., 0] if vector else x


@custom_jvp
def _solve(a, b):
    lu, perm, _ = _lu_factor(a)
    return permuted_lu_solve(lu, perm, b)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    # As JAX's custom_linear_solve: dx = a^-1 (db - da x), with a's LU factored once, so
    # the derivative costs two triangular solves per right-hand side, not an LU's JVP.
    (a, b), (da, db) = primals, tangents
    lu, perm, _ = _lu_factor(a)
    x = permuted_lu_solve(lu, perm, b)
    return x, permuted_lu_solve(lu, perm, db - matmul(da, x))


def inv(a):
    """The inverse of each square matrix (``solve(a, I)``).

    Example:
        >>> jnp.linalg.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))
        Array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    a = matrices(a, "inv", square=True)
    n = a.shape[-1]
    return solve(a, broadcast_to(eye(n, dtype=a.dtype), a.shape))


def slogdet(a, *, method=None):
    """The sign and the log of the absolute determinant of each square matrix (by LU).

    Returns:
        ``SlogdetResult(sign, logabsdet)``; a singular matrix gives sign 0 and ``-inf``.

    Example:
        >>> jnp.linalg.slogdet(jnp.array([[0.0, 2.0], [3.0, 0.0]])).sign
        Array(-1., dtype=float32)
    """
    if method not in (None, "lu"):
        raise ValueError(f"jnp.linalg.slogdet: method must be None or 'lu', got {method!r}")
    a = matrices(a, "slogdet", square=True)
    lu, _, parity = _lu_factor(a)
    diag = lax_linalg.matrix_diagonal(lu)
    sign = ufuncs.multiply(_signed(parity, a.dtype), _prod(ufuncs.sign(diag), axis=-1))
    return SlogdetResult(sign, _sum(ufuncs.log(ufuncs.abs(diag)), axis=-1))


def det(a):
    """The determinant of each square matrix: the product of ``U``'s diagonal, signed.

    Its derivative is JAX's (Jacobi's formula through the adjugate, computed from the LU
    factors so that it stays finite for singular matrices).

    Example:
        >>> jnp.linalg.det(jnp.array([[0.0, 2.0], [3.0, 1.0]]))
        Array(-6., dtype=float32)
    """
    return _det(matrices(a, "det", square=True))


def _signed(parity, dtype):
    """+1 for an even number of row swaps, -1 for an odd one."""
    return ufuncs.subtract(1, ufuncs.multiply(2, parity)).astype(dtype)


@custom_jvp
def _det(a):
    lu, _, parity = _lu_factor(a)
    return ufuncs.multiply(_signed(parity, a.dtype), _prod(lax_linalg.matrix_diagonal(lu), axis=-1))


@_det.defjvp
def _det_jvp(primals, tangents):
    (a,), (g,) = primals, tangents
    z = _cofactor_solve(a, g)
    return _det(a), _sum(lax_linalg.matrix_diagonal(z), axis=-1)


def _cofactor_solve(a, b):
    """``adjugate(a) @ b`` (``det(a) * solve(a, b)`` where ``a`` is invertible), finite for
    singular ``a``: JAX's construction. With ``a[perm] = L U``, ``U``'s last diagonal entry
    is replaced by ``1 / (sign * u_00 ... u_n-2,n-2)``; matrices of rank below ``n - 1``
    (whose adjugate is zero) are detected by a solve that overflows, and give zeros."""
    n = a.shape[-1]
    if n == 1:
        return b
    lu, perm, parity = _lu_factor(a)
    diag = lax_linalg.matrix_diagonal(lu)
    partial = ufuncs.multiply(_signed(parity, a.dtype), _prod(diag[..., :-1], axis=-1))
    full = ufuncs.multiply(partial, diag[..., -1])
    rows = sh.broadcasted_iota(np.int32, lu.shape, lu.ndim - 2)
    cols = sh.broadcasted_iota(np.int32, lu.shape, lu.ndim - 1)
    corner = ufuncs.logical_and(ufuncs.equal(rows, n - 1), ufuncs.equal(cols, n - 1))
    lu = ufuncs.where(corner, expand_dims(ufuncs.divide(1, partial), (-2, -1)), lu)
    ones = broadcast_to(np.ones((1, n), a.dtype), (*lu.shape[:-2], 1, n))
    d = lax_linalg.triangular_solve(lu, ones, left_side=False, lower=False)
    bad = _any(ufuncs.logical_not(ufuncs.isfinite(d)), axis=(-2, -1), keepdims=True)
    x = ufuncs.where(bad, 0, b)
    x = take_along_axis(x, expand_dims(perm, -1), axis=-2, mode="promise_in_bounds")
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    scaled = ufuncs.multiply(x[..., :-1, :], expand_dims(full, (-2, -1)))
    x = concatenate([scaled, x[..., -1:, :]], axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    return ufuncs.where(bad, 0, x)

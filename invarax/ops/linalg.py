"""The factorisation primitives of ``lax.linalg``: cholesky, triangular_solve, lu, qr, eigh, svd.

Operands are ``(..., m, n)`` float32/float64 or complex64/complex128 arrays (the cholesky
primitive is real: ``cholesky`` composes complex factors) whose leading axes are a batch;
the impls call
``invarax.kernels.linalg``, which factorises each matrix on its own in a fixed order
(docs/numerics.md), so batching (leading axes or ``vmap``: the batch axis is moved
to the front) never changes a matrix's bits (N1, N2), and ``jit`` calls the same impl (N3).

Derivatives are JAX's rules, written with lax ops: Cholesky (Murray, arXiv:1602.07527),
LU, QR (Townsend's note), eigh and SVD. At repeated eigenvalues (singular values) the
eigenvector (singular vector) derivatives divide by zero and are inf/NaN, as in JAX; the
eigenvalue (singular value) derivatives stay finite. Only ``triangular_solve`` is linear
(in ``b``) and has a transpose rule.
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import UndefinedPrimal, Zero, defjvp, jvp_rules, transpose_rules
from ..kernels import linalg as klinalg
from . import elementwise as el
from . import shape as sh
from .linalg_common import (
    _H,
    _T,
    _check_matrix,
    _cols,
    _eye,
    _full,
    _leading_batch_rule,
    _mm,
    _operand,
    _rows,
    _symmetrize,
    matrix_diagonal,
    triangle,
)
from .linalg_complex import cholesky_complex

# ---------------------------------------------------------------------------------------
# cholesky: x (..., n, n) symmetric positive definite (lower triangle read) -> L lower;
# symmetrize_input: factorise (x + x^T) / 2 instead (the kernel forms it, bitwise the same
# as _symmetrize, in one cache-friendly pass).


def _cholesky_abstract_eval(x, *, symmetrize_input=False):
    _check_matrix("cholesky", x, square=True)
    return ShapedArray(x.shape, x.dtype)


cholesky_p = Primitive("cholesky")
cholesky_p.def_impl(klinalg.cholesky)
cholesky_p.def_abstract_eval(_cholesky_abstract_eval)
register_lowering(cholesky_p)


def _cholesky_jvp(primals, tangents, *, symmetrize_input=False):
    (x,), (t,) = primals, tangents
    L = cholesky_p.bind(x, symmetrize_input=symmetrize_input)
    if isinstance(t, Zero):
        return L, t
    if symmetrize_input:
        t = _symmetrize(t)
    # L_dot = L phi(L^-1 t L^-T), phi: the lower triangle with the diagonal halved.
    tmp = triangular_solve(L, t, left_side=False, lower=True, transpose_a=True)
    inner = triangular_solve(L, tmp, left_side=True, lower=True)
    half = el.sub(_full(1, x.shape, x.dtype), el.mul(_eye(x.shape, x.dtype),
                                                     _full(0.5, x.shape, x.dtype)))
    return L, _mm(L, el.mul(triangle(inner, lower=True), half))


jvp_rules[cholesky_p] = _cholesky_jvp
_leading_batch_rule(cholesky_p)


# ---------------------------------------------------------------------------------------
# triangular_solve: x with op(a) x = b (left_side) or x op(a) = b; linear in b.


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    return klinalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                    transpose_a=transpose_a, unit_diagonal=unit_diagonal,
                                    conjugate_a=conjugate_a)


def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
    _check_matrix("triangular_solve", a, square=True, kinds="fc")
    _check_matrix("triangular_solve", b, kinds="fc")
    side = b.shape[-2] if left_side else b.shape[-1]
    if a.dtype != b.dtype or a.shape[:-2] != b.shape[:-2] or side != a.shape[-1]:
        what = "rows" if left_side else "columns"
        raise TypeError(
            f"lax.linalg.triangular_solve: a of shape {a.shape} ({a.dtype.name}) and b of shape "
            f"{b.shape} ({b.dtype.name}) must share dtype and batch dimensions, and b's {what} "
            f"must number a's size {a.shape[-1]} (left_side={left_side})"
        )
    return ShapedArray(b.shape, b.dtype)


triangular_solve_p = Primitive("triangular_solve")
triangular_solve_p.def_impl(_triangular_solve_impl)
triangular_solve_p.def_abstract_eval(_triangular_solve_abstract_eval)
register_lowering(triangular_solve_p)


def _triangular_solve_jvp_a(g_a, ans, a, b, **params):
    k = 1 if params["unit_diagonal"] else 0
    g_a = el.neg(triangle(g_a, params["lower"], -k if params["lower"] else k))
    g_a = _T(g_a) if params["transpose_a"] else g_a
    g_a = el.conj(g_a) if params["conjugate_a"] and g_a.dtype.kind == "c" else g_a
    m, n = b.shape[-2:]
    if params["left_side"]:
        if m > n:
            return triangular_solve_p.bind(a, _mm(g_a, ans), **params)
        return _mm(triangular_solve_p.bind(a, g_a, **params), ans)
    if m < n:
        return triangular_solve_p.bind(a, _mm(ans, g_a), **params)
    return _mm(ans, triangular_solve_p.bind(a, g_a, **params))


defjvp(triangular_solve_p, _triangular_solve_jvp_a,
       lambda g_b, ans, a, b, **params: triangular_solve_p.bind(a, g_b, **params))


def _triangular_solve_transpose(ct, a, b, **params):
    if isinstance(a, UndefinedPrimal):
        raise ValueError("triangular_solve is linear in b only")
    if isinstance(ct, Zero):
        return [None, None]
    params = {**params, "transpose_a": not params["transpose_a"]}
    return [None, triangular_solve_p.bind(a, ct, **params)]


transpose_rules[triangular_solve_p] = _triangular_solve_transpose
_leading_batch_rule(triangular_solve_p)


# ---------------------------------------------------------------------------------------
# lu: a (..., m, n) -> (lu, pivots int32 (..., min(m, n)), permutation int32 (..., m)).


def _lu_abstract_eval(a):
    _check_matrix("lu", a, kinds="fc")
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, min(m, n)), np.dtype(np.int32)),
            ShapedArray((*batch, m), np.dtype(np.int32))]


lu_p = Primitive("lu", multiple_results=True)
lu_p.def_impl(klinalg.lu)
lu_p.def_abstract_eval(_lu_abstract_eval)
register_lowering(lu_p)


def _lu_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    zeros = [Zero(pivots.aval), Zero(perm.aval)]
    if isinstance(a_dot, Zero):
        return [lu, pivots, perm], [Zero(lu.aval), *zeros]
    *batch, m, n = a.shape
    k = min(m, n)
    dtype = a.dtype
    # x = P a_dot, P the permutation matrix (one 1 per row, so the product is exact).
    onehot = el.eq(sh.broadcasted_iota(np.int32, (*batch, m, m), a.ndim - 1),
                   sh.broadcast_in_dim(perm, (*batch, m, m), tuple(range(a.ndim - 1))))
    x = _mm(el.convert_element_type(onehot, dtype), a_dot)
    zero = ArrayImpl(np.zeros((), dtype))
    nobatch = [(0, 0, 0)] * len(batch)
    lcols = sh.slice(lu, (0,) * a.ndim, (*batch, m, k))
    l_mat = sh.pad(triangle(lcols, lower=True, k=-1), zero, [*nobatch, (0, 0, 0), (0, m - k, 0)])
    l_mat = el.add(l_mat, _eye(l_mat.shape, dtype))
    urows = sh.slice(lu, (0,) * a.ndim, (*batch, k, n))
    u_mat = sh.pad(triangle(urows, lower=False), zero, [*nobatch, (0, n - k, 0), (0, 0, 0)])
    if n > k:
        u_eye = sh.pad(_eye((n - k, n - k), dtype), zero, [(k, 0, 0), (k, 0, 0)])
        u_mat = el.add(u_mat, sh.broadcast_in_dim(u_eye, u_mat.shape, (a.ndim - 2, a.ndim - 1)))
    la = triangular_solve(l_mat, x, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u_mat, la, left_side=False, lower=False)
    l_dot = _mm(l_mat, triangle(lau, lower=True, k=-1))
    u_dot = _mm(triangle(lau, lower=False), u_mat)
    return [lu, pivots, perm], [el.add(l_dot, u_dot), *zeros]


jvp_rules[lu_p] = _lu_jvp
_leading_batch_rule(lu_p)


# ---------------------------------------------------------------------------------------
# qr: a (..., m, n) -> (q, r); q (m, m) and r (m, n) if full_matrices, else (m, k), (k, n).


def _qr_abstract_eval(a, *, full_matrices):
    _check_matrix("qr", a, kinds="fc")
    *batch, m, n = a.shape
    cols = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, cols), a.dtype), ShapedArray((*batch, cols, n), a.dtype)]


qr_p = Primitive("qr", multiple_results=True)
qr_p.def_impl(lambda a, *, full_matrices: list(klinalg.qr(a, full_matrices)))
qr_p.def_abstract_eval(_qr_abstract_eval)
register_lowering(qr_p)


def _thin_qr_jvp(q, r, dx):
    """``(dq, dr)`` of ``x = q r`` with ``m >= n`` and ``r`` square: Townsend's rule,
    ``dx_rinv = dx r^-1``, ``do`` the skew-Hermitian part of ``tril(q^H dx_rinv, -1)``
    plus (complex) ``i im(diag(q^H dx_rinv))``, as JAX's."""
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    lower = triangle(qt_dx_rinv, lower=True, k=-1)
    do = el.sub(lower, _H(lower))
    if dx.dtype.kind == "c":
        imag = el.sub(qt_dx_rinv, el.convert_element_type(el.real(qt_dx_rinv), dx.dtype))
        do = el.add(do, el.mul(_eye(do.shape, dx.dtype), imag))
    dq = el.add(_mm(q, el.sub(do, qt_dx_rinv)), dx_rinv)
    return dq, _mm(el.sub(qt_dx_rinv, do), r)


def _qr_jvp(primals, tangents, *, full_matrices):
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    if isinstance(da, Zero):
        return [q, r], [Zero(q.aval), Zero(r.aval)]
    m, n = a.shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(
            f"the derivative of qr with full_matrices=True is defined here for m <= n; got a "
            f"matrix of shape {a.shape}: pass full_matrices=False (mode='reduced')"
        )
    if m >= n:
        return [q, r], list(_thin_qr_jvp(q, r, da))
    # A wide matrix [x1 x2] (x1 m x m) = q [r1 r2]: x1 = q r1 is a square QR, and
    # r2 = q^H x2 gives dr2 = dq^H x2 + q^H dx2 (JAX's rule).
    cut = lambda x, lo, hi: sh.slice_in_dim(x, lo, hi, axis=x.ndim - 1)  # noqa: E731
    dq, dr1 = _thin_qr_jvp(q, cut(r, 0, m), cut(da, 0, m))
    dr2 = el.add(_mm(_H(dq), cut(a, m, n)), _mm(_H(q), cut(da, m, n)))
    return [q, r], [dq, sh.concatenate([dr1, dr2], a.ndim - 1)]


jvp_rules[qr_p] = _qr_jvp
_leading_batch_rule(qr_p)


# ---------------------------------------------------------------------------------------
# eigh: a (..., n, n) symmetric or Hermitian (its lower or upper triangle read) -> (v, w),
# w real, ascending; symmetrize_input: of (a + a^H) / 2 instead (formed by the kernel).


def _eigh_abstract_eval(a, *, lower, symmetrize_input=False):
    _check_matrix("eigh", a, square=True, kinds="fc")
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], np.finfo(a.dtype).dtype)]


eigh_p = Primitive("eigh", multiple_results=True)
eigh_p.def_impl(lambda a, *, lower, symmetrize_input=False:
                list(klinalg.eigh(a, lower, symmetrize_input=symmetrize_input)))
eigh_p.def_abstract_eval(_eigh_abstract_eval)
register_lowering(eigh_p)


def _eigh_jvp(primals, tangents, *, lower, symmetrize_input=False):
    (a,), (a_dot,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower, symmetrize_input=symmetrize_input)
    if isinstance(a_dot, Zero):
        return [v, w], [Zero(v.aval), Zero(w.aval)]
    if symmetrize_input:
        a_dot = _symmetrize(a_dot)
    n = a.shape[-1]
    # F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (inf where w_i == w_j, i != j).
    eye = _eye(a.shape, w.dtype)
    diffs = el.sub(_rows(w, n), _cols(w, n))
    fmat = el.sub(el.div(_full(1, a.shape, w.dtype), el.add(eye, diffs)), eye)
    vh_adot_v = _mm(_mm(_H(v), a_dot), v)
    dv = _mm(v, el.mul(el.convert_element_type(fmat, a.dtype), vh_adot_v))
    dw = matrix_diagonal(vh_adot_v)
    return [v, w], [dv, el.real(dw) if a.dtype.kind == "c" else dw]


jvp_rules[eigh_p] = _eigh_jvp
_leading_batch_rule(eigh_p)


# ---------------------------------------------------------------------------------------
# svd: a (..., m, n) -> [s] or [s, u, vt]; s descending.


def _svd_abstract_eval(a, *, full_matrices, compute_uv):
    _check_matrix("svd", a, kinds="fc")
    *batch, m, n = a.shape
    k = min(m, n)
    s = ShapedArray((*batch, k), np.finfo(a.dtype).dtype)
    if not compute_uv:
        return [s]
    uc, vr = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, uc), a.dtype), ShapedArray((*batch, vr, n), a.dtype)]


def _svd_impl(a, *, full_matrices, compute_uv):
    s, u, vt = klinalg.svd(a, full_matrices, compute_uv)
    return [s, u, vt] if compute_uv else [s]


svd_p = Primitive("svd", multiple_results=True)
svd_p.def_impl(_svd_impl)
svd_p.def_abstract_eval(_svd_abstract_eval)
register_lowering(svd_p)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if isinstance(da, Zero):
        return outs, [Zero(o.aval) for o in outs]
    if compute_uv and full_matrices:
        raise NotImplementedError(
            "the derivative of svd with full_matrices=True is not defined (as in JAX): pass "
            "full_matrices=False"
        )
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    *batch, m, n = a.shape
    k = min(m, n)
    cplx = a.dtype.kind == "c"
    c = (lambda x: el.convert_element_type(x, a.dtype)) if cplx else (lambda x: x)  # in a's dtype

    v = _H(vt)
    ds_mat = _mm(_mm(_H(u), da), v)
    ds = el.real(matrix_diagonal(ds_mat)) if cplx else matrix_diagonal(ds_mat)
    if not compute_uv:
        return outs, [ds]
    kk = (*batch, k, k)
    s_row, s_col = _rows(s, k), _cols(s, k)
    eye = _eye(kk, s.dtype)
    one = _full(1, kk, s.dtype)
    s_diffs = el.mul(el.add(s_row, s_col), el.sub(s_row, s_col))
    fmat = c(el.sub(el.div(one, el.add(s_diffs, eye)), eye))
    dss = el.mul(c(s_row), ds_mat)
    sds = el.mul(c(s_col), ds_mat)
    zero_s = el.convert_element_type(el.eq(s, _full(0, s.shape, s.dtype)), s.dtype)
    s_inv = el.sub(el.div(_full(1, s.shape, s.dtype), el.add(s, zero_s)), zero_s)
    s_inv_mat = c(el.mul(eye, _rows(s_inv, k)))
    half = _full(0.5, kk, a.dtype)
    dudv_diag = el.mul(el.mul(half, el.sub(ds_mat, _H(ds_mat))), s_inv_mat)
    du = _mm(u, el.add(el.mul(fmat, el.add(dss, _H(dss))), dudv_diag))
    dv = _mm(v, el.mul(fmat, el.add(sds, _H(sds))))
    if m > n:
        dav = _mm(da, v)
        resid = el.sub(dav, _mm(u, _mm(_H(u), dav)))
        du = el.add(du, el.div(resid, c(_rows(s, m))))
    if n > m:
        dahu = _mm(_H(da), u)
        resid = el.sub(dahu, _mm(v, _mm(vt, dahu)))
        dv = el.add(dv, el.div(resid, c(_rows(s, n))))
    return [s, u, vt], [ds, du, _H(dv)]


jvp_rules[svd_p] = _svd_jvp
_leading_batch_rule(svd_p)


# ---------------------------------------------------------------------------------------
# lax.linalg wrappers.


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor ``L`` of each symmetric positive definite matrix (``x = L L^T``).

    Arguments:
        x: a float array of shape (..., n, n); only its lower triangle is read unless
            ``symmetrize_input``, which factorises ``(x + x^T) / 2`` (JAX's default). A
            complex Hermitian ``x`` (``x = L L^H``, ``(x + x^H) / 2``) is factorised by a
            composition of canonical ops, column by column (meant for small matrices).
        symmetrize_input: symmetrise first (so derivatives are symmetric too).

    Returns:
        ``L``, lower-triangular, of ``x``'s shape; all NaN for a matrix that is not
        positive definite (as JAX).

    Example:
        >>> lax.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 2.0]]))
        Array([[2., 0.],
               [1., 1.]], dtype=float32)
    """
    x = _operand(x, "cholesky")
    _check_matrix("cholesky", x.aval, square=True, kinds="fc")
    if x.dtype.kind == "c":
        return cholesky_complex(x, bool(symmetrize_input))
    return cholesky_p.bind(x, symmetrize_input=bool(symmetrize_input))


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve a triangular system: ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b``.

    Arguments:
        a: (..., m, m) float or complex; only its ``lower`` (else upper) triangle is read,
            and its diagonal is taken as ones if ``unit_diagonal``.
        b: (..., m, n) if ``left_side`` else (..., n, m), of ``a``'s dtype and batch shape.
        transpose_a: ``op(a) = a^T`` (else ``a``); ``conjugate_a`` conjugates ``op(a)``
            (a no-op for real ``a``).

    Returns:
        ``x``, of ``b``'s shape. A zero on ``a``'s diagonal gives inf/NaN, as JAX.

    Example:
        >>> lax.linalg.triangular_solve(jnp.array([[2.0, 0.0], [1.0, 1.0]]),
        ...                             jnp.array([[2.0], [3.0]]), left_side=True, lower=True)
        Array([[1.],
               [2.]], dtype=float32)
    """
    a, b = _operand(a, "triangular_solve"), _operand(b, "triangular_solve")
    return triangular_solve_p.bind(
        a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit_diagonal))


def lu(x):
    """LU decomposition with partial pivoting: ``x[..., perm, :] = L @ U``.

    Arguments:
        x: a float or complex array of shape (..., m, n) (a complex pivot is the entry of
            largest ``|re| + |im|``, as LAPACK's and JAX's).

    Returns:
        ``(lu, pivots, permutation)``: ``L`` (unit diagonal, below it) and ``U`` (on and
        above it) packed in one (..., m, n) array; ``pivots`` (..., min(m, n)) int32, the row
        swapped with row ``i`` at step ``i``; ``permutation`` (..., m) int32.

    Example:
        >>> lu_, pivots, perm = lax.linalg.lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> perm
        Array([1, 0], dtype=int32)
    """
    return tuple(lu_p.bind(_operand(x, "lu")))


def qr(x, *, full_matrices: bool = True):
    """QR decomposition by Householder reflections (LAPACK's sign convention: ``r``'s
    diagonal is ``-sign(re(pivot column's top)) * norm``, real also for complex ``x``).

    Arguments:
        x: a float or complex array of shape (..., m, n).
        full_matrices: ``q`` (..., m, m) and ``r`` (..., m, n); else (..., m, k) and
            (..., k, n) with ``k = min(m, n)``.

    Returns:
        ``(q, r)``, ``q`` with orthonormal (unitary) columns and ``r`` upper-triangular.

    Example:
        >>> q, r = lax.linalg.qr(jnp.array([[3.0], [4.0]]), full_matrices=False)
        >>> r
        Array([[-5.]], dtype=float32)
    """
    return tuple(qr_p.bind(_operand(x, "qr"), full_matrices=bool(full_matrices)))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None):
    """Eigenvectors and eigenvalues of symmetric or Hermitian matrices (Householder
    tridiagonalisation, QL).

    Arguments:
        x: a float or complex array of shape (..., n, n).
        lower: read the lower (else upper) triangle when not ``symmetrize_input``.
        symmetrize_input: factorise ``(x + x^H) / 2`` (JAX's default).
        sort_eigenvalues: accepted for JAX compatibility: eigenvalues are always ascending.
        subset_by_index: not supported (None only).

    Returns:
        ``(v, w)``: ``v[..., :, i]`` the unit eigenvector of eigenvalue ``w[..., i]``; ``w``
        real (float32 for complex64). A complex eigenvector is unique up to a phase (as
        JAX's): its last component is real here.

    Example:
        >>> v, w = lax.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w
        Array([1., 3.], dtype=float32)
    """
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.eigh: subset_by_index is not supported; "
                                  "slice the eigenvalues instead")
    x = _operand(x, "eigh")
    _check_matrix("eigh", x.aval, square=True, kinds="fc")
    return tuple(eigh_p.bind(x, lower=bool(lower), symmetrize_input=bool(symmetrize_input)))


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None):
    """Singular value decomposition ``x = u @ diag(s) @ vh`` (QR, then one-sided Jacobi).

    Arguments:
        x: a float or complex array of shape (..., m, n) (complex: one-sided Jacobi on
            the matrix itself, meant for small matrices).
        full_matrices: ``u`` (..., m, m) and ``vh`` (..., n, n); else (..., m, k) and
            (..., k, n), ``k = min(m, n)``.
        compute_uv: return ``(u, s, vh)``; else only ``s``.
        subset_by_index: not supported (None only).

    Returns:
        ``(u, s, vh)`` or ``s``; ``s`` (..., k) real, descending.

    Example:
        >>> lax.linalg.svd(jnp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Array([4., 3.], dtype=float32)
    """
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.svd: subset_by_index is not supported")
    outs = svd_p.bind(_operand(x, "svd"), full_matrices=bool(full_matrices),
                      compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt

"""Complex LU with partial pivoting, the complex triangular solve and the complex SVD
(csrc/linalg_complex.h), and what is built on them (solve, inv, det, slogdet, lu_factor/
lu_solve, solve_triangular, pinv, lstsq, norm):
accuracy against complex128 references with explicit bounds, JAX's pivots and values
(differential, skipped without JAX), JAX's derivatives, and the numerics contract bitwise:
alone or in a batch (N1, also under vmap and jit), any thread count (N5), every
instruction-set level (N6)."""

import numpy as np
import pytest
from helpers import assert_bitwise, assert_same_at_every_isa
from test_ad_elementwise import jax_x64  # noqa: F401 (a fixture: JAX with x64, restored)

import invarax
import invarax.numpy as jnp
import invarax.scipy.linalg as jsl
from invarax import lax
from invarax.kernels import linalg as kernels

CDTYPES = [np.complex64, np.complex128]


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _eps(dtype):
    return np.finfo(dtype).eps


def _lu_parts(lu):
    m, n = lu.shape
    k = min(m, n)
    lower = np.tril(lu[:, :k].astype(np.complex128), -1) + np.eye(m, k)
    return lower, np.triu(lu[:k].astype(np.complex128))


@pytest.fixture
def x64():
    with invarax.config.flag("jax_enable_x64", True):
        yield


# ---------------------------------------------------------------------------------------
# Accuracy and the pivot rule.


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (9, 9), (30, 12), (12, 30), (64, 64), (65, 65),
                                   (130, 130), (130, 40), (40, 130), (200, 150)])
def test_lu_backward_error_and_pivots(shape, dtype, rng):
    a = _complex(rng, shape, dtype)
    lu, pivots, perm = kernels.lu(a)
    assert lu.dtype == dtype
    lower, upper = _lu_parts(lu)
    err = np.abs(lower @ upper - a[perm]).max() / np.abs(a).max()
    assert err <= 4 * max(shape) * _eps(dtype), err
    # The pivot has the largest |re| + |im| of its column, and |z| <= |re| + |im| <= sqrt(2) |z|,
    # so every multiplier has modulus at most sqrt(2).
    assert np.abs(lower).max() <= np.sqrt(2) * (1 + 4 * _eps(dtype))
    order = np.arange(shape[0])
    for k, p in enumerate(pivots):
        order[[k, p]] = order[[p, k]]
    np.testing.assert_array_equal(order, perm)


def test_pivot_is_largest_re_plus_im_and_passes_over_nans():
    # |2.1| > |1.45 + 1.45j| = 2.05, but 1.45 + 1.45 = 2.9 > 2.1: LAPACK's cabs1 picks row 2.
    a = np.array([[0.1, 1, 0], [2.1, 0, 1], [1.45 + 1.45j, 1, 2]], np.complex128)
    assert list(kernels.lu(a)[1]) == [2, 1, 2]
    a[2, 0] = complex(np.nan, 0)
    assert kernels.lu(a)[1][0] == 1


def test_blocked_pivot_rule_in_a_later_panel(rng):
    a = _complex(rng, (130, 130), np.complex128)
    k = 127  # in the last panel's steps
    a[k:, :k] = 0
    a[k:, k] = [complex(np.nan, 0), 2.1, 1.45 + 1.45j]
    a[np.arange(k), np.arange(k)] = 10.0
    assert kernels.lu(a)[1][k] == k + 2


def test_singular_matrix(rng):
    a = _complex(rng, (5, 5), np.complex64)
    a[:, 2] = 0  # a zero pivot at step 2: skipped, as LAPACK; the solve is not finite
    lu, _, _ = kernels.lu(a)
    assert lu[2, 2] == 0 and np.isfinite(lu).all()
    assert not np.isfinite(np.asarray(jnp.linalg.solve(a, np.ones(5, np.complex64)))).all()
    assert complex(jnp.linalg.det(a)) == 0
    sign, logdet = jnp.linalg.slogdet(a)
    assert complex(sign) == 0 and float(logdet) == -np.inf


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("conjugate_a", [True, False])
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_residual(left_side, conjugate_a, transpose_a, lower, dtype, rng, x64):
    n = 40
    a = _complex(rng, (n, n), dtype) + np.eye(n, dtype=dtype) * 8  # well conditioned
    b = _complex(rng, (n, 3) if left_side else (3, n), dtype)
    x = np.asarray(lax.linalg.triangular_solve(
        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
        conjugate_a=conjugate_a), np.complex128)
    t = np.tril(a) if lower else np.triu(a)
    t = t.astype(np.complex128)
    t = t.T if transpose_a else t
    t = t.conj() if conjugate_a else t
    resid = t @ x - b if left_side else x @ t - b
    assert np.abs(resid).max() <= 4 * n * _eps(dtype) * np.abs(t).max() * np.abs(x).max()


@pytest.mark.parametrize("dtype", CDTYPES)
def test_solve_inv_det_slogdet_accuracy(dtype, rng, x64):
    n = 50
    a = _complex(rng, (n, n), dtype)
    b = _complex(rng, (n, 2), dtype)
    ref = a.astype(np.complex128)
    eps = _eps(dtype)
    x = np.asarray(jnp.linalg.solve(a, b), np.complex128)
    assert np.abs(ref @ x - b).max() <= 4 * n * eps * np.abs(ref).max() * np.abs(x).max()
    inv = np.asarray(jnp.linalg.inv(a), np.complex128)
    bound = 4 * n * eps * np.abs(ref).max() * np.abs(inv).max()
    assert np.abs(ref @ inv - np.eye(n)).max() <= bound
    sign, logdet = jnp.linalg.slogdet(a)
    ref_sign, ref_logdet = np.linalg.slogdet(ref)
    assert sign.dtype == dtype and logdet.dtype == np.finfo(dtype).dtype
    assert abs(complex(sign) - ref_sign) <= 8 * n * eps
    assert abs(float(logdet) - ref_logdet) <= 8 * n * eps * abs(ref_logdet)
    small = a[:8, :8]
    det = complex(jnp.linalg.det(small))
    ref_det = np.linalg.det(small.astype(np.complex128))
    assert abs(det - ref_det) <= 64 * eps * abs(ref_det)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (9, 9), (30, 30), (20, 8), (8, 20)])
def test_svd_backward_error_and_unitarity(shape, full, dtype, rng, x64):
    a = _complex(rng, shape, dtype)
    u, s, vh = (np.asarray(x) for x in lax.linalg.svd(a, full_matrices=full))
    assert s.dtype == np.finfo(dtype).dtype and u.dtype == vh.dtype == dtype
    k = min(shape)
    assert u.shape == (shape[0], shape[0] if full else k)
    assert vh.shape == (shape[1] if full else k, shape[1])
    u, s, vh = u.astype(np.complex128), s.astype(np.float64), vh.astype(np.complex128)
    bound = 4 * max(shape) * _eps(dtype)
    assert np.abs((u[:, :k] * s) @ vh[:k] - a).max() <= bound * np.abs(a).max()
    assert np.abs(u.conj().T @ u - np.eye(u.shape[1])).max() <= bound
    assert np.abs(vh @ vh.conj().T - np.eye(vh.shape[0])).max() <= bound
    ref = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    assert np.abs(s - ref).max() <= bound * ref[0]


def test_svd_of_zero_and_nan(x64):
    u, s, vh = lax.linalg.svd(np.zeros((3, 3), np.complex128))
    np.testing.assert_array_equal(s, 0)
    np.testing.assert_array_equal(np.abs(u), np.eye(3))
    np.testing.assert_array_equal(np.abs(vh), np.eye(3))
    a = np.ones((4, 3), np.complex64)
    a[1, 2] = complex(np.nan, 0)
    for part in lax.linalg.svd(a):
        assert np.isnan(part).all()


def test_complex_eig_says_what_is_supported():
    match = "cholesky, lu, triangular_solve, qr, eigh and svd take complex"
    with pytest.raises(TypeError, match=match):
        lax.linalg.eig(np.eye(3, dtype=np.complex64))


# ---------------------------------------------------------------------------------------
# Differential against JAX: pivots, values and derivatives.


@pytest.mark.parametrize("dtype", CDTYPES)
def test_against_jax(dtype, rng, x64, jax_x64):  # noqa: F811
    jax = jax_x64
    import jax.numpy as jjnp
    import jax.scipy.linalg as jjsl

    n = 12
    a = _complex(rng, (n, n), dtype)
    b = _complex(rng, (n, 2), dtype)
    tol = 50 * n * _eps(dtype)

    def close(got, want):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.abs(got - want).max() <= tol * max(np.abs(want).max(), 1), (got, want)

    lu, pivots, perm = lax.linalg.lu(a)
    jlu, jpivots, jperm = jax.lax.linalg.lu(a)
    np.testing.assert_array_equal(pivots, jpivots)
    np.testing.assert_array_equal(perm, jperm)
    close(lu, jlu)
    close(jnp.linalg.solve(a, b), jjnp.linalg.solve(a, b))
    close(jnp.linalg.inv(a), jjnp.linalg.inv(a))
    close(jnp.linalg.det(a), jjnp.linalg.det(a))
    for got, want in zip(jnp.linalg.slogdet(a), jjnp.linalg.slogdet(a), strict=True):
        close(got, want)
    factors = jsl.lu_factor(a)
    np.testing.assert_array_equal(factors[1], jjsl.lu_factor(a)[1])
    for trans in (0, 1, 2):
        close(jsl.lu_solve(factors, b, trans=trans), jjsl.lu_solve(jjsl.lu_factor(a), b,
                                                                  trans=trans))
        close(jsl.solve_triangular(a, b, trans=trans, lower=True),
              jjsl.solve_triangular(a + 0, b, trans=trans, lower=True))
    for got, want in zip(jsl.lu(a), jjsl.lu(a), strict=True):
        close(got, want)
    hermitian = a @ a.conj().T + n * np.eye(n, dtype=dtype)
    for lower in (True, False):  # a = L L^H or U^H U: the transposed solve conjugates
        close(jsl.cho_solve(jsl.cho_factor(hermitian, lower=lower), b),
              jjsl.cho_solve(jjsl.cho_factor(hermitian, lower=lower), b))
    for f in (lambda np_: np_.linalg.svd(a, compute_uv=False), lambda np_: np_.linalg.pinv(a),
              lambda np_: np_.linalg.lstsq(a[:, :7], b)[0], lambda np_: np_.linalg.norm(a, 2),
              lambda np_: np_.linalg.norm(a, "nuc")):
        close(f(jnp), f(jjnp))


def _svd_loss(np_, a, w):
    """A function of ``svd(a)`` that the phases of its singular vectors do not change."""
    u, s, vh = np_.linalg.svd(a, full_matrices=False)
    m, n = a.shape
    return (np_.sum(np_.abs(u) ** 2 * w[:m, :1]) + np_.sum(np_.abs(vh) ** 2 * w[:1, :1])
            + np_.sum(np_.abs((u * s) @ vh) ** 2 * w[:m, 1:2]))


@pytest.mark.parametrize("dtype", [np.complex128])  # complex64 runs the same rules
def test_gradients_against_jax(dtype, rng, x64, jax_x64):  # noqa: F811
    jax = jax_x64
    import jax.numpy as jjnp

    n = 6
    a = _complex(rng, (n, n), dtype)
    b = _complex(rng, (n, 2), dtype)
    w = _complex(rng, (n, 2), dtype)
    tol = 200 * n * _eps(dtype)

    def losses(np_, lax_):
        return [
            lambda a, b: np_.real(np_.sum(w * np_.linalg.solve(a, b))),
            lambda a, b: np_.imag(np_.linalg.det(a)) + np_.real(np_.sum(b)),
            lambda a, b: np_.linalg.slogdet(a)[1] + np_.real(np_.sum(b)),
            lambda a, b: np_.real(np_.sum(w[:, :1] * lax_.linalg.lu(a)[0])) + np_.real(np_.sum(b)),
            lambda a, b: np_.real(np_.sum(w * lax_.linalg.triangular_solve(
                a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True))),
            # SVD: losses that do not depend on the singular vectors' phases
            lambda a, b: np_.sum(w[:, 0].real * np_.linalg.svd(a, compute_uv=False)),
            lambda a, b: _svd_loss(np_, a[:, :4], w.real) + np_.real(np_.sum(b)),
            lambda a, b: _svd_loss(np_, a[:4], w.real) + np_.real(np_.sum(b)),
            lambda a, b: np_.sum(np_.abs(np_.linalg.pinv(a[:, :4]) * w[:, :1].T) ** 2),
        ]

    for ours, theirs in zip(losses(jnp, lax), losses(jjnp, jax.lax), strict=True):
        got = invarax.grad(ours, argnums=(0, 1))(a, b)
        want = jax.jit(jax.grad(theirs, argnums=(0, 1)))(a, b)
        for g, r in zip(got, want, strict=True):
            g, r = np.asarray(g), np.asarray(r)
            assert g.dtype == r.dtype
            assert np.abs(g - r).max() <= tol * max(np.abs(r).max(), 1), (g, r)


# ---------------------------------------------------------------------------------------
# The numerics contract, bitwise.


def _everything(a, b):
    """The complex factors and solves of the stacks a (..., n, n) and b (..., n, 2)."""
    lu, pivots, perm = kernels.lu(a)
    return [lu, pivots, perm, jnp.linalg.solve(a, b), jnp.linalg.slogdet(a)[0],
            lax.linalg.triangular_solve(a, b, left_side=True, lower=False, conjugate_a=True),
            *jnp.linalg.svd(a[..., :-1]), *jnp.linalg.svd(a[..., :-1, :], full_matrices=False)]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("n", [1, 9, 33])
def test_n1_alone_equals_row_of_batch_vmap_and_jit(n, dtype, rng, x64):
    a = _complex(rng, (5, n, n), dtype)
    b = _complex(rng, (5, n, 2), dtype)
    whole = _everything(a, b)
    for size in (1, 2):
        for got, ref in zip(_everything(a[:size], b[:size]), whole, strict=True):
            assert_bitwise(got, ref[:size])
    for got, ref in zip(_everything(a[3], b[3]), whole, strict=True):
        assert_bitwise(got, ref[3])
    assert_bitwise(invarax.vmap(jnp.linalg.solve)(a, b)[2], whole[3][2])
    assert_bitwise(invarax.jit(jnp.linalg.solve)(a, b), whole[3])
    assert_bitwise(invarax.jit(lambda m: lax.linalg.lu(m)[0])(a), whole[0])


def test_n5_thread_count(rng, monkeypatch, x64):
    """A single 520 x 520 matrix: the blocked LU's gemm products split between threads."""
    a = _complex(rng, (4, 40, 40), np.complex64)
    b = _complex(rng, (4, 40, 2), np.complex64)
    single = _complex(rng, (520, 520), np.complex128)
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append(_everything(a, b) + _everything(a.astype(np.complex128),
                                                       b.astype(np.complex128))
                       + list(kernels.lu(single)))
    for other in results[1:]:
        for got, ref in zip(other, results[0], strict=True):
            assert_bitwise(got, ref)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_n6_every_isa_level(dtype, rng, x64):
    a = _complex(rng, (2, 70, 70), dtype)
    b = _complex(rng, (2, 70, 2), dtype)
    assert_same_at_every_isa(lambda: _everything(a, b))

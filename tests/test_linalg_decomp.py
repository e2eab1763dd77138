"""lax.linalg and jnp.linalg decompositions: accuracy against float64 references with explicit
bounds, derivatives (check_grads), the numerics contract bitwise (N1, N2, N3, N5), JAX's
behaviour on singular and non-PD input, JAX differential tests, and shape errors."""

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import lax

EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}
DTYPES = [np.float32, np.float64]


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request):
    """Each dtype, with x64 switched on for float64 (else JAX's rules make it float32)."""
    invarax.config.update("jax_enable_x64", request.param == np.float64)
    return request.param


def _mat(rng, shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def _spd(rng, n, dtype=np.float64, batch=()):
    a = rng.standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _sym(rng, n, dtype=np.float64, batch=()):
    a = rng.standard_normal((*batch, n, n))
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _rel(residual, *scales):
    """max |residual| / (product of the max-abs scales)."""
    return np.abs(residual).max() / np.prod([np.abs(s).max() for s in scales])


def _orth_error(q):
    q = _f64(q)
    k = q.shape[-1]
    return np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(k)).max(initial=0)


# ---------------------------------------------------------------------------------------
# Accuracy: backward errors and orthogonality within c * n * eps.


@pytest.mark.parametrize("n", [1, 5, 40])
def test_cholesky_backward_error(dtype, n, rng):
    a = _spd(rng, n, dtype, (2,))
    L = _f64(eager_and_jit(jnp.linalg.cholesky, a))
    assert np.array_equal(L, np.tril(L))
    assert _rel(L @ np.swapaxes(L, -1, -2) - a, a) <= 4 * n * EPS[dtype]
    U = jnp.linalg.cholesky(a, upper=True)
    assert_bitwise(U, np.swapaxes(np.asarray(jnp.linalg.cholesky(a)), -1, -2))


@pytest.mark.parametrize("shape", [(6, 6), (7, 4), (4, 7), (30, 30)])
def test_lu_backward_error(dtype, shape, rng):
    a = _mat(rng, (3, *shape), dtype)
    lu, pivots, perm = eager_and_jit(lax.linalg.lu, a)
    m, n = shape
    k = min(m, n)
    lu = _f64(lu)
    L = np.tril(lu, -1)[..., :k] + np.eye(m, k)
    U = np.triu(lu)[..., :k, :]
    pa = np.take_along_axis(_f64(a), np.asarray(perm)[..., None].astype(np.int64), -2)
    assert _rel(L @ U - pa, a) <= 4 * k * EPS[dtype]
    assert np.abs(L).max() <= 1  # partial pivoting
    ref = np.arange(m)[None].repeat(3, 0)
    for i, p in enumerate(np.asarray(pivots).T):
        ref[np.arange(3), i], ref[np.arange(3), p] = ref[np.arange(3), p], ref[np.arange(3), i]
    np.testing.assert_array_equal(perm, ref)


@pytest.mark.parametrize("n", [3, 64])
def test_solve_and_inv_backward_error(dtype, n, rng):
    a, b = _mat(rng, (2, n, n), dtype), _mat(rng, (2, n, 3), dtype)
    x = _f64(eager_and_jit(jnp.linalg.solve, a, b))
    # the normwise backward error ||A x - b|| / (||A|| ||x||), as LAPACK's getrs attains.
    assert _rel(_f64(a) @ x - b, a, x) <= 4 * n * EPS[dtype]
    inv = _f64(eager_and_jit(jnp.linalg.inv, a))
    assert _rel(_f64(a) @ inv - np.eye(n), a, inv) <= 4 * n * EPS[dtype]
    vec = jnp.linalg.solve(a[0], b[0, :, 0])
    assert vec.shape == (n,)
    assert _rel(_f64(a[0]) @ _f64(vec) - b[0, :, 0], a[0], vec) <= 4 * n * EPS[dtype]


@pytest.mark.parametrize("lower, transpose_a, left_side", [
    (lo, t, left) for lo in (True, False) for t in (True, False) for left in (True, False)])
def test_triangular_solve_all_cases(dtype, lower, transpose_a, left_side, rng):
    a = _mat(rng, (2, 5, 5), dtype) + 5 * np.eye(5, dtype=dtype)
    b = _mat(rng, (2, 5, 3) if left_side else (2, 3, 5), dtype)
    for unit in (False, True):
        x = eager_and_jit(lambda a, b, u=unit: lax.linalg.triangular_solve(
            a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
            unit_diagonal=u), a, b)
        t = np.tril(_f64(a)) if lower else np.triu(_f64(a))
        if unit:
            t = t * (1 - np.eye(5)) + np.eye(5)
        t = np.swapaxes(t, -1, -2) if transpose_a else t
        residual = t @ _f64(x) - b if left_side else _f64(x) @ t - b
        assert _rel(residual, t, x) <= 20 * EPS[dtype]


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (40, 25)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_backward_error_and_orthogonality(dtype, shape, mode, rng):
    a = _mat(rng, (2, *shape), dtype)
    q, r = eager_and_jit(lambda x: tuple(jnp.linalg.qr(x, mode)), a)
    m, n = shape
    k = m if mode == "complete" else min(m, n)
    assert q.shape == (2, m, k) and r.shape == (2, k, n)
    assert np.array_equal(_f64(r), np.triu(_f64(r)))
    assert _rel(_f64(q) @ _f64(r) - a, a) <= 8 * max(m, n) * EPS[dtype]
    assert _orth_error(q) <= 8 * m * EPS[dtype]
    assert_bitwise(jnp.linalg.qr(a, "r"), r if mode == "reduced" else r[:, :min(m, n)])


@pytest.mark.parametrize("n", [1, 4, 30])
def test_eigh_backward_error_and_orthogonality(dtype, n, rng):
    a = _sym(rng, n, dtype, (2,))
    w, v = eager_and_jit(lambda x: tuple(jnp.linalg.eigh(x)), a)
    w, v = _f64(w), _f64(v)
    assert np.all(np.diff(w, axis=-1) >= 0)
    recon = v @ (w[..., :, None] * np.swapaxes(v, -1, -2))
    assert _rel(recon - a, a) <= 8 * n * EPS[dtype]
    assert _orth_error(v) <= 8 * n * EPS[dtype]
    ref = np.linalg.eigvalsh(_f64(a))
    assert np.abs(w - ref).max() <= 8 * n * EPS[dtype] * np.abs(ref).max()
    assert_bitwise(jnp.linalg.eigvalsh(a), w.astype(dtype))


# (40, 30), (30, 40): full_matrices completes U (V) from unit vectors, and most of them
# leave a remainder too short to take; the completion once left columns uninitialised there
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (30, 12), (40, 30), (30, 40)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_backward_error_and_orthogonality(dtype, shape, full_matrices, rng):
    a = _mat(rng, (2, *shape), dtype)
    u, s, vh = eager_and_jit(lambda x: tuple(jnp.linalg.svd(x, full_matrices)), a)
    m, n = shape
    k = min(m, n)
    assert u.shape == (2, m, m if full_matrices else k)
    assert vh.shape == (2, n if full_matrices else k, n)
    u, s, vh = _f64(u), _f64(s), _f64(vh)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)
    recon = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
    assert _rel(recon - a, a) <= 8 * max(m, n) * EPS[dtype]
    assert _orth_error(u) <= 8 * m * EPS[dtype]
    assert _orth_error(np.swapaxes(vh, -1, -2)) <= 8 * n * EPS[dtype]
    ref = np.linalg.svd(_f64(a), compute_uv=False)
    assert np.abs(s - ref).max() <= 8 * max(m, n) * EPS[dtype] * ref.max()
    assert_bitwise(jnp.linalg.svdvals(a), s.astype(dtype))


def test_rank_deficient_svd_completes_u(rng, x64):
    a = np.zeros((5, 3))
    a[:, 0] = rng.standard_normal(5)
    u, s, vh = jnp.linalg.svd(a)
    assert np.all(_f64(s)[1:] == 0)
    assert _orth_error(u) <= 1e-14
    assert _rel((_f64(u)[:, :3] * _f64(s)) @ _f64(vh) - a, a) <= 1e-14


def test_det_slogdet_against_numpy(dtype, rng):
    a = _mat(rng, (4, 6, 6), dtype)
    ref_sign, ref_log = np.linalg.slogdet(_f64(a))
    sign, logdet = eager_and_jit(lambda x: tuple(jnp.linalg.slogdet(x)), a)
    np.testing.assert_array_equal(sign, ref_sign)
    np.testing.assert_allclose(logdet, ref_log, atol=50 * EPS[dtype])
    np.testing.assert_allclose(jnp.linalg.det(a), np.linalg.det(_f64(a)), rtol=50 * EPS[dtype])


# ---------------------------------------------------------------------------------------
# Singular, non-PD and ill-conditioned input, as JAX.


def test_cholesky_of_non_pd_is_nan():
    got = np.asarray(jnp.linalg.cholesky(jnp.array([[1.0, 2.0], [2.0, 1.0]])))
    assert np.isnan(got).all()
    batch = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])
    got = np.asarray(jnp.linalg.cholesky(batch))
    assert_bitwise(got[0], np.eye(2, dtype=np.float32)) and np.isnan(got[1]).all()


def test_singular_solve_inv_det():
    a = jnp.array([[1.0, 2.0], [2.0, 4.0]])
    x = np.asarray(jnp.linalg.solve(a, jnp.array([1.0, 1.0])))
    assert not np.isfinite(x).all()
    assert not np.isfinite(np.asarray(jnp.linalg.inv(a))).all()
    assert float(jnp.linalg.det(a)) == 0
    sign, logdet = jnp.linalg.slogdet(a)
    assert float(sign) == 0 and float(logdet) == -np.inf
    assert int(jnp.linalg.matrix_rank(a)) == 1


def test_ill_conditioned_solve_has_small_backward_error(x64):
    n = 12
    hilbert = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)
    b = np.ones(n)
    x = _f64(jnp.linalg.solve(hilbert, b))
    assert _rel(hilbert @ x - b, hilbert, x) <= 4 * n * EPS[np.float64]
    assert float(jnp.linalg.cond(hilbert)) > 1e15


# ---------------------------------------------------------------------------------------
# Derivatives: check_grads (forward and reverse mode) on every differentiable routine.

def _signed(result):
    """``(w, v)`` with each eigenvector's first component made positive."""
    w, v = result
    return w, v * jnp.sign(v[..., :1, :])


GRAD_CASES = {
    "cholesky": (lambda a: jnp.linalg.cholesky(a), lambda r: (_spd(r, 4),)),
    "triangular_solve_left": (
        lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
        lambda r: (_mat(r, (4, 4)) + 4 * np.eye(4), _mat(r, (4, 2)))),
    "triangular_solve_right_t_unit": (
        lambda a, b: lax.linalg.triangular_solve(a, b, transpose_a=True, unit_diagonal=True),
        lambda r: (_mat(r, (4, 4)), _mat(r, (3, 4)))),
    "lu_square": (lambda a: lax.linalg.lu(a)[0], lambda r: (_mat(r, (4, 4)),)),
    "lu_wide": (lambda a: lax.linalg.lu(a)[0], lambda r: (_mat(r, (3, 5)),)),
    "lu_tall": (lambda a: lax.linalg.lu(a)[0], lambda r: (_mat(r, (5, 3)),)),
    "qr": (lambda a: tuple(jnp.linalg.qr(a)), lambda r: (_mat(r, (5, 3)),)),
    "qr_square_complete": (lambda a: tuple(jnp.linalg.qr(a, "complete")),
                           lambda r: (_mat(r, (3, 3)),)),
    # eigenvectors' signs are arbitrary (and may flip between nearby inputs): fix them.
    "eigh": (lambda a: _signed(jnp.linalg.eigh(a)), lambda r: (_mat(r, (4, 4)),)),
    "eigvalsh": (jnp.linalg.eigvalsh, lambda r: (_mat(r, (4, 4)),)),
    "svd_tall": (lambda a: tuple(jnp.linalg.svd(a, False)), lambda r: (_mat(r, (5, 3)),)),
    "svd_wide": (lambda a: tuple(jnp.linalg.svd(a, False)), lambda r: (_mat(r, (3, 5)),)),
    "svdvals": (jnp.linalg.svdvals, lambda r: (_mat(r, (3, 5)),)),
    "solve": (jnp.linalg.solve, lambda r: (_mat(r, (4, 4)), _mat(r, (4, 2)))),
    "solve_batched_vector": (jnp.linalg.solve, lambda r: (_mat(r, (2, 3, 3)), _mat(r, (3,)))),
    "inv": (jnp.linalg.inv, lambda r: (_mat(r, (2, 3, 3)),)),
    "det": (jnp.linalg.det, lambda r: (_mat(r, (3, 3)),)),
    "slogdet": (lambda a: jnp.linalg.slogdet(a).logabsdet, lambda r: (_mat(r, (3, 3)),)),
    "pinv_tall": (jnp.linalg.pinv, lambda r: (_mat(r, (4, 3)),)),
    "pinv_wide": (jnp.linalg.pinv, lambda r: (_mat(r, (2, 4)),)),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], lambda r: (_mat(r, (5, 3)), _mat(r, (5,)))),
    "norm_2": (lambda a: jnp.linalg.norm(a, 2), lambda r: (_mat(r, (3, 4)),)),
    "norm_nuc": (lambda a: jnp.linalg.norm(a, "nuc"), lambda r: (_mat(r, (3, 4)),)),
    "cond": (jnp.linalg.cond, lambda r: (_mat(r, (3, 3)),)),
    "matrix_power": (lambda a: jnp.linalg.matrix_power(a, -3), lambda r: (_mat(r, (3, 3)),)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_check_grads(name, x64):
    f, make = GRAD_CASES[name]
    args = make(np.random.default_rng(1))
    check_grads(f, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["cholesky", "eigh", "svd_tall", "solve", "det"])
def test_second_order_grads(name, x64):
    f, make = GRAD_CASES[name]
    check_grads(f, make(np.random.default_rng(2)), order=2, modes=("fwd", "rev"))


def test_eigh_derivative_at_repeated_eigenvalues_is_jaxs_convention(x64):
    # Eigenvalue derivatives stay finite; eigenvector derivatives divide by w_j - w_i = 0.
    a = np.diag([1.0, 1.0, 2.0])
    g = invarax.grad(lambda x: jnp.sum(jnp.linalg.eigvalsh(x) * jnp.arange(3.0)))(a)
    assert np.isfinite(np.asarray(g)).all()
    gv = invarax.grad(lambda x: jnp.sum(jnp.linalg.eigh(x).eigenvectors[:, 0]))(a)
    assert not np.isfinite(np.asarray(gv)).all()


def test_pinv_derivative_is_finite_at_repeated_singular_values(x64):
    g = invarax.jacfwd(jnp.linalg.pinv)(np.eye(3))
    assert np.isfinite(np.asarray(g)).all()


# ---------------------------------------------------------------------------------------
# The numerics contract, bitwise.

CONTRACT_CASES = {
    "cholesky": (jnp.linalg.cholesky, lambda r, b: (_spd(r, 5, np.float32, (b,)),)),
    "solve": (jnp.linalg.solve, lambda r, b: (_mat(r, (b, 5, 5), np.float32),
                                              _mat(r, (b, 5, 2), np.float32))),
    "inv": (jnp.linalg.inv, lambda r, b: (_mat(r, (b, 5, 5), np.float32),)),
    "qr": (lambda a: tuple(jnp.linalg.qr(a)), lambda r, b: (_mat(r, (b, 6, 4), np.float32),)),
    "eigh": (lambda a: tuple(jnp.linalg.eigh(a)), lambda r, b: (_sym(r, 5, np.float32, (b,)),)),
    "svd": (lambda a: tuple(jnp.linalg.svd(a, False)),
            lambda r, b: (_mat(r, (b, 4, 6), np.float32),)),
    "slogdet": (lambda a: tuple(jnp.linalg.slogdet(a)),
                lambda r, b: (_mat(r, (b, 5, 5), np.float32),)),
    "pinv": (jnp.linalg.pinv, lambda r, b: (_mat(r, (b, 4, 6), np.float32),)),
}


def _leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_n1_vmap_rows_are_unbatched_results(name):
    f, make = CONTRACT_CASES[name]
    for batch in (1, 3, 8):
        args = make(np.random.default_rng(7), batch)
        batched = _leaves(invarax.vmap(f)(*args))
        for i in range(batch):
            alone = _leaves(f(*[a[i] for a in args]))
            for got, want in zip(batched, alone, strict=True):
                assert_bitwise(np.asarray(got)[i], want)


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_n2_leading_rows_do_not_depend_on_the_batch(name):
    f, make = CONTRACT_CASES[name]
    args = make(np.random.default_rng(8), 9)
    full = _leaves(f(*args))
    for k in (1, 4):
        part = _leaves(f(*[a[:k] for a in args]))
        for got, want in zip(part, full, strict=True):
            assert_bitwise(got, np.asarray(want)[:k])


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_n3_jit_is_eager_for_values_and_grads(name):
    f, make = CONTRACT_CASES[name]
    args = make(np.random.default_rng(9), 2)
    eager_and_jit(f, *args)

    def loss(*xs):
        return sum(jnp.sum(jnp.sin(o)) for o in _leaves(f(*xs)))

    eager_and_jit(invarax.grad(loss), *args)


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_n5_thread_count_does_not_change_bits(name, monkeypatch):
    f, make = CONTRACT_CASES[name]
    args = make(np.random.default_rng(10), 7)
    results = []
    for threads in ("1", "2", "5"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append(_leaves(f(*args)))
    for other in results[1:]:
        for got, want in zip(other, results[0], strict=True):
            assert_bitwise(got, want)


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_n6_every_dispatch_level_gives_the_same_bits(name):
    from invarax.kernels import _native

    f, make = CONTRACT_CASES[name]
    args = make(np.random.default_rng(12), 3)
    if name == "cholesky":  # large enough for several column tiles
        args = (_spd(np.random.default_rng(12), 150, np.float32, (2,)),)
    results = []
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            results.append(_leaves(f(*args)))
        finally:
            _native.set_isa(previous)
    for other in results[1:]:
        for got, want in zip(other, results[0], strict=True):
            assert_bitwise(got, want)


def test_n1_of_grad_under_vmap():
    rng = np.random.default_rng(11)
    a = _mat(rng, (4, 5, 5), np.float32)
    g = invarax.grad(lambda x: jnp.sum(jnp.linalg.inv(x)))
    batched = invarax.vmap(g)(a)
    for i in range(4):
        assert_bitwise(np.asarray(batched)[i], g(a[i]))


# ---------------------------------------------------------------------------------------
# Errors.


def test_shape_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"a of shape \(3, 3\) and b of shape \(4,\)"):
        jnp.linalg.solve(jnp.eye(3), jnp.ones(4))
    with pytest.raises(ValueError, match=r"square matrix .* got an array of shape \(2, 3\)"):
        jnp.linalg.inv(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape \(3,\); for a vector"):
        jnp.linalg.cholesky(jnp.ones(3))
    with pytest.raises(TypeError, match=r"a of shape \(3, 3\).* b of shape \(4, 2\)"):
        lax.linalg.triangular_solve(jnp.eye(3), jnp.ones((4, 2)), left_side=True)
    with pytest.raises(ValueError, match=r"batch shapes of a \(2, 3, 3\) and b \(4, 3, 1\)"):
        jnp.linalg.solve(jnp.ones((2, 3, 3)), jnp.ones((4, 3, 1)))
    with pytest.raises(ValueError, match="mode must be 'reduced', 'complete', 'r' or 'raw'"):
        jnp.linalg.qr(jnp.eye(2), "full")
    with pytest.raises(TypeError, match="float32 or float64 matrices, got complex64"):
        jnp.linalg.eig(jnp.eye(2) * (1 + 1j))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        invarax.jvp(lambda a: jnp.linalg.svd(a)[0], (jnp.eye(3),), (jnp.eye(3),))


# ---------------------------------------------------------------------------------------
# Differential tests against JAX.


def test_names_port_from_jax():
    jax = pytest.importorskip("jax")
    missing = [n for n in jnp.linalg.__all__ if not hasattr(jax.numpy.linalg, n)]
    assert not missing, missing
    for n in ("cholesky", "triangular_solve", "lu", "qr", "eigh", "svd"):
        assert hasattr(jax.lax.linalg, n) and hasattr(lax.linalg, n)


JAX_CASES = [
    ("solve", lambda m: m.linalg.solve, lambda r: (_mat(r, (3, 4, 4)), _mat(r, (3, 4, 2)))),
    ("inv", lambda m: m.linalg.inv, lambda r: (_mat(r, (2, 4, 4)),)),
    ("cholesky", lambda m: m.linalg.cholesky, lambda r: (_spd(r, 4, batch=(2,)),)),
    ("det", lambda m: m.linalg.det, lambda r: (_mat(r, (2, 4, 4)),)),
    ("slogdet", lambda m: lambda a: tuple(m.linalg.slogdet(a)), lambda r: (_mat(r, (4, 4)),)),
    ("eigvalsh", lambda m: m.linalg.eigvalsh, lambda r: (_sym(r, 5),)),
    ("svdvals", lambda m: lambda a: m.linalg.svd(a, compute_uv=False),
     lambda r: (_mat(r, (2, 5, 3)),)),
    ("qr_r_abs", lambda m: lambda a: m.abs(m.linalg.qr(a, mode="r")), lambda r: (_mat(r, (5, 3)),)),
    ("pinv", lambda m: m.linalg.pinv, lambda r: (_mat(r, (3, 5)),)),
    ("lstsq", lambda m: lambda a, b: m.linalg.lstsq(a, b)[0], lambda r: (_mat(r, (5, 3)),
                                                                          _mat(r, (5, 2)))),
    ("matrix_rank", lambda m: m.linalg.matrix_rank, lambda r: (_mat(r, (4, 2)) @ _mat(r, (2, 4)),)),
    ("cond", lambda m: m.linalg.cond, lambda r: (_mat(r, (4, 4)),)),
    ("norm_2", lambda m: lambda a: m.linalg.norm(a, 2, axis=(0, 2)),
     lambda r: (_mat(r, (3, 2, 4)),)),
    ("matrix_power", lambda m: lambda a: m.linalg.matrix_power(a, 5), lambda r: (_mat(r, (3, 3)),)),
    ("multi_dot", lambda m: lambda a, b: m.linalg.multi_dot([a, b, a]),
     lambda r: (_mat(r, (3, 3)), _mat(r, (3, 3)))),
    ("tensorinv", lambda m: lambda a: m.linalg.tensorinv(a, ind=1),
     lambda r: (_mat(r, (4, 2, 2)),)),
    ("tensorsolve", lambda m: m.linalg.tensorsolve,
     lambda r: (_mat(r, (2, 2, 4)), _mat(r, (2, 2)))),
    ("cross", lambda m: m.linalg.cross, lambda r: (_mat(r, (2, 3)), _mat(r, (2, 3)))),
    ("outer", lambda m: m.linalg.outer, lambda r: (_mat(r, (3,)), _mat(r, (2,)))),
    ("trace", lambda m: lambda a: m.linalg.trace(a, offset=1), lambda r: (_mat(r, (2, 3, 4)),)),
    ("diagonal", lambda m: lambda a: m.linalg.diagonal(a, offset=-1),
     lambda r: (_mat(r, (2, 3, 4)),)),
    ("vecdot", lambda m: m.linalg.vecdot, lambda r: (_mat(r, (2, 3)), _mat(r, (3,)))),
    ("eigh_grad", lambda m: lambda a: m.linalg.eigvalsh(a) @ m.arange(4.0),
     lambda r: (_sym(r, 4),)),
]


@pytest.mark.parametrize("name, fn, make", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_against_jax(name, fn, make):
    jax = pytest.importorskip("jax")
    args = [a.astype(np.float32) for a in make(np.random.default_rng(3))]
    # JAX's compiled as one program (eagerly it compiles each operation apart)
    ours, theirs = fn(jnp)(*args), jax.jit(fn(jax.numpy))(*args)
    for o, t in zip(_leaves(ours), _leaves(theirs), strict=True):
        assert np.shape(o) == np.shape(t) and np.asarray(o).dtype == np.asarray(t).dtype, name
        np.testing.assert_allclose(o, t, rtol=2e-4, atol=2e-5)


def test_gradients_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    a, s = _mat(rng, (4, 4), np.float32), _spd(rng, 4, np.float32)
    cases = [
        (lambda m: lambda x: m.sum(m.linalg.inv(x) ** 2), a),
        (lambda m: lambda x: m.sum(m.linalg.cholesky(x) * m.arange(16.0).reshape(4, 4)), s),
        (lambda m: lambda x: m.linalg.slogdet(x)[1], a),
        (lambda m: lambda x: m.sum(m.linalg.svd(x, compute_uv=False) ** 3), a),
        (lambda m: lambda x: m.sum(m.abs(m.linalg.eigh(x)[1]) * m.arange(4.0)), s),
    ]
    for fn, x in cases:
        ours = invarax.grad(fn(jnp))(x)
        theirs = jax.jit(jax.grad(fn(jax.numpy)))(x)  # one program, not one per operation
        np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (0, 2, 2)])
def test_empty_matrices(shape):
    x = np.zeros(shape, np.float32)
    square = shape[-1] == shape[-2]
    if square:
        assert jnp.linalg.inv(x).shape == shape
        assert jnp.linalg.cholesky(x).shape == shape
        assert jnp.linalg.eigh(x).eigenvectors.shape == shape
        np.testing.assert_array_equal(jnp.linalg.det(x), np.ones(shape[:-2], np.float32))
    u, s, vh = jnp.linalg.svd(x)
    assert s.shape == (*shape[:-2], min(shape[-2:]))
    assert _orth_error(u) == 0 and _orth_error(np.swapaxes(vh, -1, -2)) == 0
    q, r = jnp.linalg.qr(x, "complete")
    assert q.shape == (*shape[:-1], shape[-2]) and r.shape == shape


@pytest.mark.parametrize("f", [
    jnp.linalg.cholesky, jnp.linalg.inv, jnp.linalg.eigvalsh, jnp.linalg.svdvals,
    lambda a: jnp.linalg.qr(a).R[..., 0, :], lambda a: jnp.linalg.eigh(a).eigenvectors,
], ids=["cholesky", "inv", "eigvalsh", "svdvals", "qr", "eigh"])
def test_nan_input_gives_nan(f):
    got = np.asarray(f(np.full((2, 3, 3), np.nan, np.float32)))
    assert np.isnan(got).all()


@pytest.mark.parametrize("a, adjugate_t", [
    ([[1.0, 2.0], [2.0, 4.0]], [[4.0, -2.0], [-2.0, 1.0]]),  # rank n - 1
    (np.diag([1.0, 2.0, 0.0]), np.diag([0.0, 0.0, 2.0])),  # rank n - 1, zero pivot last
    (np.ones((3, 3)), np.zeros((3, 3))),  # rank 1 < n - 1: the adjugate is zero
    ([[2.0]], [[1.0]]),
])
def test_det_gradient_is_the_adjugate_even_when_singular(a, adjugate_t):
    a = np.asarray(a, np.float32)
    g = eager_and_jit(invarax.grad(jnp.linalg.det), a)
    np.testing.assert_allclose(g, adjugate_t, atol=1e-6)
    assert_bitwise(invarax.vmap(invarax.grad(jnp.linalg.det))(a[None])[0], g)

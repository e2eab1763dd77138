"""invarax.scipy.linalg against SciPy (float64) with explicit bounds, its derivatives, vmap
bitwise (N1), jit bitwise (N3), JAX differential tests and errors."""

import numpy as np
import pytest
import scipy.linalg as sl
from ad_check import check_grads
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax.scipy import linalg as L

EPS64 = np.finfo(np.float64).eps


def _mat(rng, shape):
    return rng.standard_normal(shape)


def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.mark.parametrize("trans", [0, 1, "T", 2])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_solve_triangular(trans, lower, unit_diagonal, rng, x64):
    a, b = _mat(rng, (6, 6)) + 6 * np.eye(6), _mat(rng, (6, 2))
    got = eager_and_jit(lambda a, b: L.solve_triangular(a, b, trans, lower, unit_diagonal), a, b)
    ref = sl.solve_triangular(a, b, trans, lower, unit_diagonal)
    np.testing.assert_allclose(got, ref, rtol=100 * EPS64, atol=100 * EPS64)
    vec = L.solve_triangular(a, b[:, 0], trans, lower, unit_diagonal)
    np.testing.assert_allclose(vec, ref[:, 0], rtol=100 * EPS64, atol=100 * EPS64)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_cho_factor_cho_solve(lower, rng, x64):
    a, b = _spd(rng, 7), _mat(rng, (7, 3))
    c, flag = L.cho_factor(a, lower=lower)
    ref_c = sl.cholesky(a, lower=lower)
    assert flag == lower
    np.testing.assert_allclose(c, ref_c, rtol=50 * EPS64, atol=50 * EPS64)
    assert_bitwise(L.cholesky(a, lower=lower), c)
    x = eager_and_jit(lambda c, b: L.cho_solve((c, lower), b), c, b)
    assert np.abs(a @ np.asarray(x) - b).max() <= 50 * EPS64 * np.abs(a).max() * np.abs(x).max()
    np.testing.assert_allclose(L.cho_solve((c, lower), b[:, 0]), x[:, 0], rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (4, 6)])
def test_lu_matches_scipy(shape, rng, x64):
    a = _mat(rng, shape)
    p, l_, u = eager_and_jit(L.lu, a)
    ref_p, ref_l, ref_u = sl.lu(a)
    np.testing.assert_array_equal(p, ref_p)  # same pivoting rule as LAPACK's getrf
    np.testing.assert_allclose(l_, ref_l, rtol=100 * EPS64, atol=100 * EPS64)
    np.testing.assert_allclose(u, ref_u, rtol=100 * EPS64, atol=100 * EPS64)
    pl, u2 = L.lu(a, permute_l=True)
    np.testing.assert_allclose(pl, ref_p @ ref_l, rtol=100 * EPS64, atol=100 * EPS64)
    assert_bitwise(u2, u)


@pytest.mark.parametrize("trans", [0, 1])
def test_lu_factor_lu_solve(trans, rng, x64):
    a, b = _mat(rng, (6, 6)), _mat(rng, (6, 2))
    lu, piv = L.lu_factor(a)
    ref_lu, ref_piv = sl.lu_factor(a)
    np.testing.assert_array_equal(piv, ref_piv)
    np.testing.assert_allclose(lu, ref_lu, rtol=100 * EPS64, atol=100 * EPS64)
    x = eager_and_jit(lambda lu, piv, b: L.lu_solve((lu, piv), b, trans), lu, piv, b)
    np.testing.assert_allclose(x, sl.lu_solve((ref_lu, ref_piv), b, trans), rtol=1e-12)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_modes(mode, rng, x64):
    a = _mat(rng, (6, 4))
    got = L.qr(a, mode=mode)
    ref = sl.qr(a, mode=mode)
    assert [np.shape(g) for g in got] == [np.shape(r) for r in ref]
    r = np.asarray(got[-1])
    np.testing.assert_allclose(np.abs(r), np.abs(ref[-1]), rtol=1e-12, atol=1e-12)


def test_svd_and_eigh(rng, x64):
    a = _mat(rng, (5, 3))
    np.testing.assert_allclose(L.svd(a, compute_uv=False), sl.svd(a, compute_uv=False),
                               rtol=1e-13)
    u, s, vh = L.svd(a)
    assert u.shape == (5, 5) and vh.shape == (3, 3)
    sym = _spd(rng, 5)
    w, v = L.eigh(sym)
    np.testing.assert_allclose(w, sl.eigh(sym, eigvals_only=True), rtol=1e-13)
    recon = np.asarray(v) @ np.diag(np.asarray(w)) @ np.asarray(v).T
    np.testing.assert_allclose(recon, sym, atol=1e-12 * np.abs(sym).max())
    assert_bitwise(L.eigh(sym, lower=False, eigvals_only=True), w)  # symmetric: either half


def test_eigh_symmetrises_its_input_as_jax(rng):
    jl = pytest.importorskip("jax.scipy.linalg")
    a = _mat(rng, (4, 4)).astype(np.float32)  # not symmetric: (a + a^T) / 2's eigenvalues
    for lower in (True, False):
        np.testing.assert_allclose(L.eigh(a, lower=lower, eigvals_only=True),
                                   jl.eigh(a, lower=lower, eigvals_only=True), rtol=2e-6,
                                   atol=2e-6)


def test_inv_det_block_diag(rng, x64):
    a = _mat(rng, (4, 4))
    np.testing.assert_allclose(L.inv(a), sl.inv(a), rtol=1e-12)
    np.testing.assert_allclose(L.det(a), sl.det(a), rtol=1e-12)
    blocks = (np.ones((1, 2)), 2 * np.ones((2, 1)), 3.0, np.arange(2.0))
    np.testing.assert_array_equal(L.block_diag(*blocks), sl.block_diag(*blocks))


@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 30.0])
def test_expm_against_scipy(scale, rng, x64):
    a = scale * _mat(rng, (5, 5))
    got = eager_and_jit(L.expm, a)
    ref = sl.expm(a)
    assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())
    f32 = L.expm(a.astype(np.float32))
    assert f32.dtype == np.float32
    assert np.abs(f32 - ref).max() <= 2e-5 * max(1.0, np.abs(ref).max())


GRAD_CASES = {
    "solve_triangular": (lambda a, b: L.solve_triangular(a, b, trans=1, lower=True),
                         lambda r: (_mat(r, (4, 4)) + 4 * np.eye(4), _mat(r, (4, 2)))),
    # cho_factor reads one triangle: its derivative (as JAX's) is for symmetric tangents.
    "cho_solve": (lambda a, b: L.cho_solve(L.cho_factor(a + a.T), b),
                  lambda r: (_spd(r, 4), _mat(r, (4,)))),
    "lu_solve": (lambda a, b: L.lu_solve(L.lu_factor(a), b, trans=1),
                 lambda r: (_mat(r, (4, 4)), _mat(r, (4, 2)))),
    "lu": (lambda a: L.lu(a)[1:], lambda r: (_mat(r, (4, 3)),)),
    "expm": (L.expm, lambda r: (0.5 * _mat(r, (3, 3)),)),
    "expm_squared": (L.expm, lambda r: (4 * _mat(r, (3, 3)),)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_check_grads(name, x64):
    f, make = GRAD_CASES[name]
    check_grads(f, make(np.random.default_rng(5)), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("f", [
    lambda a, b: L.cho_solve(L.cho_factor(a @ a.T + 4 * jnp.eye(4)), b),
    lambda a, b: L.lu_solve(L.lu_factor(a), b),
    lambda a, b: L.expm(a) @ b,
], ids=["cho_solve", "lu_solve", "expm"])
def test_vmap_rows_are_unbatched_results(f, rng):
    a, b = _mat(rng, (6, 4, 4)).astype(np.float32), _mat(rng, (6, 4, 2)).astype(np.float32)
    batched = np.asarray(invarax.vmap(f)(a, b))
    for i in range(6):
        assert_bitwise(batched[i], f(a[i], b[i]))


def test_errors():
    with pytest.raises(ValueError, match=r"a of shape \(3, 3\) and b of shape \(4,\)"):
        L.solve_triangular(jnp.eye(3), jnp.ones(4))
    with pytest.raises(ValueError, match="trans must be 0, 1, 2"):
        L.solve_triangular(jnp.eye(3), jnp.ones(3), trans=3)
    with pytest.raises(ValueError, match="mode must be 'full', 'economic' or 'r'"):
        L.qr(jnp.eye(2), mode="reduced")
    with pytest.raises(NotImplementedError, match="generalized"):
        L.eigh(jnp.eye(2), jnp.eye(2))


JAX_CASES = [
    ("solve_triangular", lambda m: lambda a, b: m.solve_triangular(a, b, lower=True),
     lambda r: (_mat(r, (4, 4)) + 4 * np.eye(4), _mat(r, (4, 2)))),
    ("cho_solve", lambda m: lambda a, b: m.cho_solve(m.cho_factor(a), b),
     lambda r: (_spd(r, 4), _mat(r, (4,)))),
    ("lu", lambda m: m.lu, lambda r: (_mat(r, (4, 3)),)),
    ("lu_factor", lambda m: m.lu_factor, lambda r: (_mat(r, (4, 4)),)),
    ("lu_solve", lambda m: lambda a, b: m.lu_solve(m.lu_factor(a), b),
     lambda r: (_mat(r, (4, 4)), _mat(r, (4, 2)))),
    ("expm", lambda m: m.expm, lambda r: (_mat(r, (4, 4)),)),
    ("block_diag", lambda m: lambda a, b: m.block_diag(a, b),
     lambda r: (_mat(r, (2, 3)), _mat(r, (1, 2)))),
    ("det", lambda m: m.det, lambda r: (_mat(r, (3, 3)),)),
    ("inv", lambda m: m.inv, lambda r: (_mat(r, (3, 3)),)),
    ("eigh_w", lambda m: lambda a: m.eigh(a, eigvals_only=True), lambda r: (_spd(r, 4),)),
]


@pytest.mark.parametrize("name, fn, make", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_against_jax(name, fn, make):
    jax = pytest.importorskip("jax")
    args = [a.astype(np.float32) for a in make(np.random.default_rng(6))]
    ours, theirs = fn(L)(*args), fn(jax.scipy.linalg)(*args)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, t in zip(ours, theirs, strict=True):
        assert np.shape(o) == np.shape(t) and np.asarray(o).dtype == np.asarray(t).dtype, name
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5)

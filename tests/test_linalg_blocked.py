"""The blocked factorisations (csrc/linalg_blocked.h, panels of 64 columns and the canonical
gemm for the trailing updates) at sizes on both sides of the panel boundaries: accuracy
against float64 references with explicit bounds, and the numerics contract bitwise: a
matrix alone or in a batch of any size (N1, also under vmap), any thread count (N5; the
gemm splits a single large matrix between threads), every instruction-set level (N6)."""

import numpy as np
import pytest
from helpers import assert_bitwise, assert_same_at_every_isa

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import linalg as kernels

SIZES = [1, 63, 64, 65, 130]
EPS32 = np.finfo(np.float32).eps
EPS64 = np.finfo(np.float64).eps


def _spd(rng, n, batch=(), dtype=np.float32):
    g = rng.standard_normal((*batch, n, n))
    return (g @ np.swapaxes(g, -1, -2) / n + np.eye(n)).astype(dtype)


def _general(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _lu_parts(lu, perm):
    m, n = lu.shape
    k = min(m, n)
    lower = np.tril(lu[:, :k].astype(np.float64), -1) + np.eye(m, k)
    upper = np.triu(lu[:k].astype(np.float64))
    return lower, upper, perm


# ---------------------------------------------------------------------------------------
# Accuracy: backward errors within c * n * eps.


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [*SIZES, 200])
def test_cholesky_backward_error(n, dtype, rng):
    a = _spd(rng, n, dtype=dtype)
    low = kernels.cholesky(a).astype(np.float64)
    assert np.array_equal(low, np.tril(low))
    eps = np.finfo(dtype).eps
    err = np.abs(low @ low.T - a).max() / np.abs(a).max()
    assert err <= 2 * n * eps, err


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(n, n) for n in SIZES] + [(130, 65), (65, 130), (200, 200)])
def test_lu_backward_error_and_pivots(shape, dtype, rng):
    a = _general(rng, shape, dtype)
    lu, pivots, perm = kernels.lu(a)
    lower, upper, perm = _lu_parts(lu, perm)
    eps = np.finfo(dtype).eps
    err = np.abs(lower @ upper - a[perm]).max() / np.abs(a).max()
    assert err <= 4 * max(shape) * eps, err
    assert np.abs(lower).max() <= 1  # partial pivoting: every multiplier at most 1
    # The pivots are the permutation's record of swaps.
    order = np.arange(shape[0])
    for k, p in enumerate(pivots):
        order[[k, p]] = order[[p, k]]
    np.testing.assert_array_equal(order, perm)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [9, 65, 130])
def test_eigh_and_svd_backward_error(n, dtype, rng):
    g = rng.standard_normal((n, n))
    sym = (g + g.T).astype(dtype)
    eps = np.finfo(dtype).eps
    v, w = (x.astype(np.float64) for x in kernels.eigh(sym, True))
    assert np.abs((v * w) @ v.T - sym).max() / np.abs(sym).max() <= 4 * n * eps
    assert np.abs(v.T @ v - np.eye(n)).max() <= 4 * n * eps
    tall = rng.standard_normal((2 * n, n)).astype(dtype)
    s, u, vt = (x.astype(np.float64) for x in kernels.svd(tall, False, True))
    assert np.abs((u * s) @ vt - tall).max() / np.abs(tall).max() <= 4 * n * eps
    assert np.abs(u.T @ u - np.eye(n)).max() <= 4 * n * eps
    np.testing.assert_allclose(s, np.linalg.svd(tall.astype(np.float64))[1], rtol=0,
                               atol=4 * n * eps * s[0])


@pytest.mark.parametrize(("dtype", "scale"), [
    (np.float32, 1e-30), (np.float32, 1e30), (np.float64, 1e-300), (np.float64, 1e300)])
def test_eigh_far_from_one(dtype, scale, rng):
    """The QL rotations fall back to pythag where f^2 + g^2 would under- or overflow."""
    g = rng.standard_normal((40, 40))
    sym = ((g + g.T) * scale).astype(dtype)
    v, w = (x.astype(np.float64) for x in kernels.eigh(sym, True))
    ref = np.linalg.eigvalsh(sym.astype(np.float64))
    eps = np.finfo(dtype).eps
    assert np.abs(w - ref).max() <= 40 * eps * np.abs(ref).max()
    assert np.abs(v.T @ v - np.eye(40)).max() <= 40 * eps


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("shape", [(20, 20), (30, 20), (20, 30)])
def test_svd_preconditioned_of_nan_or_inf_is_nan(bad, shape, rng):
    a = _general(rng, shape)
    a[3, 4] = bad
    for part in kernels.svd(a, False, True):
        assert np.isnan(part).all()


def test_svd_preconditioned_of_rank_one(rng):
    a = np.outer(np.arange(1, 41), rng.standard_normal(20)).astype(np.float32)
    s, u, vt = kernels.svd(a, False, True)
    ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    assert np.abs(s - ref).max() <= 40 * EPS32 * ref[0]
    assert np.abs(u.T.astype(np.float64) @ u - np.eye(20)).max() <= 40 * EPS32
    assert np.abs((u * s) @ vt - a).max() <= 40 * EPS32 * np.abs(a).max()


def test_solve_backward_error_512(rng):
    a = _general(rng, (512, 512))
    b = _general(rng, (512,))
    x = np.asarray(jnp.linalg.solve(a, b), np.float64)
    err = np.abs(a.astype(np.float64) @ x - b).max() / (np.abs(a).max() * np.abs(x).max())
    assert err <= 512 * EPS32, err  # LAPACK (scipy, float32): 1e-5 to 2e-5 here


@pytest.mark.parametrize("n", [3, 130])
def test_lu_pivot_passes_over_nans(n, rng):
    """Both LU paths (one panel in place, blocked) prefer a number to a NaN as pivot."""
    a = _general(rng, (n, n))
    k = n - 3 if n > 64 else 0  # the column where the last panel starts its step
    a[k:, :k] = 0
    a[k:, k] = [np.nan, 1.0, 2.0]
    a[np.arange(k), np.arange(k)] = 10.0
    _, pivots, _ = kernels.lu(a)
    assert pivots[k] == k + 2


def test_singular_and_not_pd_across_panels(rng):
    a = _spd(rng, 130)
    a[100, 100] = -1e3  # fails in the second panel
    assert np.isnan(kernels.cholesky(a)).all()
    s = _general(rng, (130, 130))
    s[:, 70] = 0  # a zero column: a zero pivot in the second panel
    lu, _, _ = kernels.lu(s)
    assert lu[70, 70] == 0
    x = np.asarray(jnp.linalg.solve(s, np.ones(130, np.float32)))
    assert not np.isfinite(x).all()


# ---------------------------------------------------------------------------------------
# The numerics contract, bitwise.


def _factorisations(x):
    """Every factor of the blocked kernels for the batch x (..., n, n)."""
    lu, pivots, perm = kernels.lu(x)
    return [kernels.cholesky(x), lu, pivots, perm]


def _spectral(x):
    """Every factor of the dot-based kernels (eigh, SVD of a tall matrix via QR, QR)."""
    tall = np.concatenate([x, x[..., :1, :] * 0.5], axis=-2)
    return [*kernels.eigh(x, True), *kernels.svd(tall, False, True), *kernels.qr(tall, False)]


@pytest.mark.parametrize("n", SIZES)
def test_n1_alone_equals_row_of_batch(n, rng):
    batch = _spd(rng, n, (5,))
    whole = _factorisations(batch)
    for size in (1, 2, 5):
        part = _factorisations(batch[:size])
        for got, ref in zip(part, whole, strict=True):
            assert_bitwise(got, ref[:size])
    for i in (0, 3):
        alone = _factorisations(batch[i])
        for got, ref in zip(alone, whole, strict=True):
            assert_bitwise(got, ref[i])


@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 32, 33, 65])
def test_n1_spectral_alone_equals_row_of_batch(n, rng):
    batch = _spd(rng, n, (4,)) - np.float32(0.5)
    whole = _spectral(batch)
    for size in (1, 3):
        for got, ref in zip(_spectral(batch[:size]), whole, strict=True):
            assert_bitwise(got, ref[:size])
    for got, ref in zip(_spectral(batch[2]), whole, strict=True):
        assert_bitwise(got, ref[2])


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve_one_column_equals_column_of_many(lower, unit, rng):
    """A one-column right-hand side has its own loop: the same operations as a column of many
    (so vmap over right-hand sides folded into columns keeps the bits)."""
    t = _spd(rng, 70)
    b = _general(rng, (70, 5))
    many = kernels.triangular_solve(t, b, left_side=True, lower=lower, transpose_a=False,
                                    unit_diagonal=unit)
    for j in range(5):
        one = kernels.triangular_solve(t, b[:, j:j + 1], left_side=True, lower=lower,
                                       transpose_a=False, unit_diagonal=unit)
        assert_bitwise(one, many[:, j:j + 1])


@pytest.mark.parametrize("n", [1, 33, 65])
def test_symmetrize_in_the_kernel_equals_numpy(n, rng):
    """The kernels (cholesky, eigh) form (x + x^T) / 2 themselves: the bits of NumPy's, so
    the same factors."""
    x = _spd(rng, n, (2,)) + np.triu(_general(rng, (n, n)), 1) * np.float32(0.01)
    sym = (x + np.swapaxes(x, -1, -2)) / np.float32(2)
    expected = lax.linalg.cholesky(sym, symmetrize_input=False)
    assert_bitwise(lax.linalg.cholesky(x), expected)
    assert_bitwise(invarax.jit(jnp.linalg.cholesky)(x), expected)
    assert_bitwise(invarax.vmap(lax.linalg.cholesky)(x), expected)
    for lower in (True, False):  # eigh too, whichever triangle it would read
        expected = lax.linalg.eigh(sym, lower=lower, symmetrize_input=False)
        for got in (lax.linalg.eigh(x, lower=lower),
                    invarax.jit(lambda m, lo=lower: lax.linalg.eigh(m, lower=lo))(x)):
            for g, e in zip(got, expected, strict=True):
                assert_bitwise(g, e)


def test_n1_vmap_of_public_functions(rng):
    a = _spd(rng, 65, (3,))
    b = _general(rng, (3, 65))
    for f in (jnp.linalg.cholesky, lambda m: lax.linalg.lu(m)[0]):
        assert_bitwise(invarax.vmap(f)(a)[1], f(a[1]))
    solve = invarax.vmap(jnp.linalg.solve)(a, b)
    assert_bitwise(solve[2], jnp.linalg.solve(a[2], b[2]))


@pytest.mark.parametrize("n", [130, 520])
def test_n5_thread_count(n, rng, monkeypatch):
    """520: the trailing updates are large enough for gemm to split them between threads (and
    so are the SVD's products for its preconditioner at 300)."""
    single = _spd(rng, n)
    batch = _spd(rng, n, (3,))
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append(_factorisations(single) + _factorisations(batch)
                       + _spectral(batch[:, :40, :40])
                       + list(kernels.svd(single[:300, :300] - 0.1, False, True)))
    for other in results[1:]:
        for got, ref in zip(other, results[0], strict=True):
            assert_bitwise(got, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_n6_every_isa_level(dtype, rng):
    mats = [_spd(rng, n, dtype=dtype) for n in (*SIZES, 200)]
    small = [_spd(rng, n, dtype=dtype) - dtype(0.5) for n in (7, 8, 9, 33)]
    assert_same_at_every_isa(
        lambda: [f for m in mats for f in _factorisations(m)]
        + [f for m in small + mats[2:4] for f in _spectral(m)])

"""Complex Householder QR and the complex Hermitian eigh (csrc/linalg_complex_qr.h), and what
is built on them (jnp.linalg.qr in every mode, eigh, eigvalsh, lax.linalg.ormqr):
accuracy against complex128 references with explicit bounds, LAPACK's Householder form
(NumPy's qr(mode="raw")), JAX's values and derivatives (differential, skipped without JAX),
and the numerics contract bitwise: alone or in a batch (N1, also under vmap and jit), any
thread count (N5), every instruction-set level (N6)."""

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


def _complex(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _hermitian(rng, shape, dtype=np.complex128):
    a = _complex(rng, shape, np.complex128)
    return ((a + np.swapaxes(a, -1, -2).conj()) / 2).astype(dtype)


def _eps(dtype):
    return np.finfo(dtype).eps


@pytest.fixture
def x64():
    with invarax.config.flag("jax_enable_x64", True):
        yield


# ---------------------------------------------------------------------------------------
# Accuracy.


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (4, 1), (7, 7), (30, 12), (12, 30), (65, 40)])
def test_qr_backward_error_and_form(shape, dtype, rng):
    a = _complex(rng, shape, dtype)
    m, n = shape
    bound = 4 * max(shape) * _eps(dtype)
    for full in (False, True):
        q, r = kernels.qr(a, full)
        assert q.dtype == r.dtype == dtype
        assert q.shape == (m, m if full else min(m, n)) and r.shape == (q.shape[1], n)
        q128, r128 = q.astype(np.complex128), r.astype(np.complex128)
        assert np.abs(q128 @ r128 - a).max() <= bound * np.abs(a).max()
        assert np.abs(q128.conj().T @ q128 - np.eye(q.shape[1])).max() <= bound
        assert_bitwise(r, np.triu(r))  # upper triangular, exactly
        np.testing.assert_array_equal(np.diagonal(r).imag, 0)  # LAPACK: R's diagonal real


@pytest.mark.parametrize("shape", [(1, 1), (6, 6), (9, 4), (4, 9), (40, 33)])
def test_qr_raw_is_lapacks_householder_form(shape, rng):
    """h and tau as NumPy's qr(mode="raw") (LAPACK zgeqrf): the same reflectors."""
    a = _complex(rng, shape)
    a[:, 0] = a[:, 0].real  # a real pivot (im alpha == 0) as well as complex ones
    h, tau = kernels.qr_raw(a)
    ref_h, ref_tau = np.linalg.qr(a, mode="raw")
    bound = 8 * max(shape) * _eps(np.float64)
    assert np.abs(h - ref_h).max() <= bound * np.abs(a).max()
    assert np.abs(tau - ref_tau).max() <= bound
    h, tau = jnp.linalg.qr(a.astype(np.complex64), mode="raw")
    assert h.dtype == tau.dtype == np.complex64
    assert np.abs(np.asarray(tau) - ref_tau).max() <= 8 * max(shape) * _eps(np.float32)


def test_qr_of_zero_and_real_columns():
    """A zero column below a real pivot leaves H = I (tau = 0); a complex pivot above zeros
    still gets a reflector making R's diagonal real."""
    a = np.zeros((3, 2), np.complex128)
    a[0, 0], a[0, 1], a[1, 1] = 2.0, 1j, 3 - 4j
    h, tau = kernels.qr_raw(a)
    assert tau[0] == 0 and h[0, 0] == 2.0
    q, r = kernels.qr(a, False)
    np.testing.assert_array_equal(np.diagonal(r).imag, 0)
    assert abs(abs(r[1, 1]) - 5) <= 1e-15 * 5
    np.testing.assert_allclose(q @ r, a, atol=1e-15 * 5)


def _reference_hermitian(a, lower, symmetrize):
    a = a.astype(np.complex128)
    if symmetrize:
        return (a + a.conj().T) / 2
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    return part + part.conj().T + np.diag(np.diag(a).real)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("n", [1, 2, 5, 17, 48])
def test_eigh_residual_orthogonality_and_eigenvalues(n, dtype, rng):
    a = _complex(rng, (n, n), dtype)  # not Hermitian: the triangle read decides
    for lower in (True, False):
        for symmetrize in (False, True):
            v, w = kernels.eigh(a, lower, symmetrize_input=symmetrize)
            assert v.dtype == dtype and w.dtype == np.finfo(dtype).dtype
            h = _reference_hermitian(a, lower, symmetrize)
            ref = np.linalg.eigvalsh(h)
            scale = np.abs(ref).max()
            bound = 8 * n * _eps(dtype)
            v128 = v.astype(np.complex128)
            assert np.abs(h @ v128 - v128 * w).max() <= bound * scale
            assert np.abs(v128.conj().T @ v128 - np.eye(n)).max() <= bound
            assert np.abs(w - ref).max() <= bound * scale
            assert np.all(np.diff(w) >= 0)
            np.testing.assert_array_equal(v[-1].imag, 0)  # the phase: last component real


def test_eigh_of_real_valued_and_nonfinite_matrices():
    """A real symmetric matrix as complex: real eigenvectors; NaN input: all NaN."""
    a = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    v, w = kernels.eigh(a.astype(np.complex128), True)
    np.testing.assert_array_equal(v.imag, 0)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-14)
    bad = a.astype(np.complex64)
    bad[1, 0] = np.nan
    v, w = kernels.eigh(bad, True)
    assert np.isnan(w).all() and np.isnan(v).all()


def test_ormqr_with_complex_reflectors(rng, x64):
    a = _complex(rng, (6, 4))
    c = _complex(rng, (6, 3))
    h, tau = jnp.linalg.qr(a, mode="raw")
    q = np.asarray(jnp.linalg.qr(a, mode="complete")[0])
    for left, cc in ((True, c), (False, c.T.copy())):
        for transpose in (False, True):
            qq = q.conj().T if transpose else q
            want = qq @ cc if left else cc @ qq
            got = lax.linalg.ormqr(h.mT, tau, cc, left=left, transpose=transpose)
            assert np.abs(np.asarray(got) - want).max() <= 1e-14 * np.abs(want).max()


# ---------------------------------------------------------------------------------------
# The numerics contract, bitwise.


def _everything(a):
    """The complex QR and eigh factors of the stack a (..., n, n)."""
    h, tau = kernels.qr_raw(a[..., :-1])
    return [*kernels.qr(a, True), *kernels.qr(a[..., :-1, :], False), h, tau,
            *kernels.eigh(a, True), *kernels.eigh(a, False, symmetrize_input=True)]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("n", [1, 9, 33])
def test_n1_alone_equals_row_of_batch_vmap_and_jit(n, dtype, rng, x64):
    a = _complex(rng, (4, n, n), dtype)
    whole = _everything(a)
    for got, ref in zip(_everything(a[:2]), whole, strict=True):
        assert_bitwise(got, ref[:2])
    for got, ref in zip(_everything(a[3]), whole, strict=True):
        assert_bitwise(got, ref[3])
    eigh = lambda m: tuple(jnp.linalg.eigh(m))  # noqa: E731
    qr = lambda m: tuple(jnp.linalg.qr(m, "complete"))  # noqa: E731
    for f, ref in ((eigh, (whole[-1], whole[-2])), (qr, whole[:2])):
        for got in (f(a), invarax.vmap(f)(a), invarax.jit(f)(a)):
            for g, r in zip(got, ref, strict=True):
                assert_bitwise(g, r)
    assert_bitwise(invarax.jit(lambda m: jnp.linalg.qr(m, mode="raw")[1])(a[..., :-1]), whole[5])


def test_n5_thread_count(rng, monkeypatch):
    a = _complex(rng, (5, 24, 24), np.complex64)
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append(_everything(a) + _everything(a.astype(np.complex128)))
    for other in results[1:]:
        for got, ref in zip(other, results[0], strict=True):
            assert_bitwise(got, ref)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_n6_every_isa_level(dtype, rng):
    a = _complex(rng, (2, 21, 21), dtype)
    assert_same_at_every_isa(lambda: _everything(a))


# ---------------------------------------------------------------------------------------
# Errors.


def test_errors_name_the_shape_and_dtype():
    with pytest.raises(ValueError, match=r"square matrices.*\(2, 3\)"):
        lax.linalg.eigh(np.zeros((2, 3), np.complex64))
    with pytest.raises(ValueError, match=r"square matrix.*\(2, 3\)"):
        jnp.linalg.eigh(np.zeros((2, 3), np.complex64))
    with pytest.raises(TypeError, match="complex64 or complex128 matrices, got int32"):
        lax.linalg.qr(np.zeros((2, 2), np.int32))
    with pytest.raises(TypeError, match="got int32"):
        lax.linalg.eigh(np.zeros((2, 2), np.int32))
    with pytest.raises(TypeError, match="eig real ones only"):
        jnp.linalg.eig(np.eye(2, dtype=np.complex64))


# ---------------------------------------------------------------------------------------
# Differential against JAX: values and derivatives.


def _close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    assert np.abs(got - want).max() <= tol * max(np.abs(want).max(), 1), (got, want)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_values_against_jax(dtype, rng, x64, jax_x64):  # noqa: F811
    jax = jax_x64
    jax_sl = pytest.importorskip("jax.scipy.linalg")
    tol = 200 * _eps(dtype)
    for shape in ((6, 4), (4, 6), (5, 5)):
        a = _complex(rng, shape, dtype)
        for mode in ("reduced", "complete", "r", "raw"):
            got, want = jnp.linalg.qr(a, mode), jax.numpy.linalg.qr(a, mode)
            for g, w in zip(*((got, want) if mode != "r" else ((got,), (want,))), strict=True):
                _close(g, w, tol)
        for full in (False, True):
            for g, w in zip(lax.linalg.qr(a, full_matrices=full),
                            jax.lax.linalg.qr(a, full_matrices=full), strict=True):
                _close(g, w, tol)
    a = _complex(rng, (7, 7), dtype)
    for uplo in ("L", "U"):
        for sym in (False, True):
            w, v = jnp.linalg.eigh(a, uplo, sym)
            jw, jv = jax.numpy.linalg.eigh(a, uplo, sym)
            _close(w, jw, tol)
            overlap = np.abs(np.asarray(v).conj().T @ np.asarray(jv))  # phase-invariant
            _close(overlap.astype(np.finfo(dtype).dtype), np.eye(7, dtype=w.dtype), 10 * tol)
    _close(jnp.linalg.eigvalsh(a), jax.numpy.linalg.eigvalsh(a), tol)
    _close(lax.linalg.eigh(a)[1], jax.lax.linalg.eigh(a)[1], tol)
    h = _hermitian(rng, (7, 7), dtype)  # JAX's scipy eigh symmetrises, SciPy's does not
    _close(jsl.eigh(h, lower=False, eigvals_only=True),
           jax_sl.eigh(h, lower=False, eigvals_only=True), tol)
    for g, w in zip(jsl.qr(a[:, :5], mode="economic"), jax_sl.qr(a[:, :5], mode="economic"),
                    strict=True):
        _close(g, w, tol)


def test_wide_qr_derivative_real_against_jax(rng, x64, jax_x64):  # noqa: F811
    jax = jax_x64
    a, da = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    f = lambda lib: lambda x: tuple(lib.numpy.linalg.qr(x))  # noqa: E731
    got = invarax.jvp(f(invarax), (jnp.asarray(a),), (jnp.asarray(da),))[1]
    for g, w in zip(got, jax.jvp(f(jax), (a,), (da,))[1], strict=True):
        _close(g, w, 1e-13)
    with pytest.raises(NotImplementedError, match=r"shape \(5, 3\).*full_matrices=False"):
        invarax.jvp(lambda x: jnp.linalg.qr(x, "complete")[0], (jnp.asarray(a.T),),
                    (jnp.asarray(da.T),))


def _qr_loss(lib, weights):
    def loss(x):
        q, r = lib.numpy.linalg.qr(x)
        return (lib.numpy.sum(lib.numpy.abs(r) ** 2 * weights[: r.shape[0], : r.shape[1]])
                + lib.numpy.sum((q * weights[: q.shape[0], : q.shape[1]]).real))
    return loss


def _eigh_loss(lib, weights):
    def loss(x):
        w, v = lib.numpy.linalg.eigh(x)
        return (lib.numpy.sum(w * weights[0]) + lib.numpy.sum(lib.numpy.abs(v) ** 2 * weights)
                + lib.numpy.sum(lib.numpy.linalg.eigvalsh(x) ** 2))
    return loss


@pytest.mark.parametrize("dtype", CDTYPES)
def test_derivatives_against_jax(dtype, rng, x64, jax_x64):  # noqa: F811
    jax = jax_x64
    tol = 2000 * _eps(dtype)
    weights = rng.standard_normal((6, 6)).astype(np.finfo(dtype).dtype)
    for shape in ((6, 4), (5, 5), (4, 6)):  # wide: JAX's rule through the square block
        a, da = _complex(rng, shape, dtype), _complex(rng, shape, dtype)
        for mode in ("reduced", "complete") if shape[0] <= shape[1] else ("reduced",):
            f = lambda lib, mode=mode: lambda x: tuple(lib.numpy.linalg.qr(x, mode))  # noqa: E731
            got = invarax.jvp(f(invarax), (jnp.asarray(a),), (jnp.asarray(da),))[1]
            for g, w in zip(got, jax.jvp(f(jax), (a,), (da,))[1], strict=True):
                _close(g, w, tol)
        _close(invarax.grad(_qr_loss(invarax, weights))(jnp.asarray(a)),
               jax.grad(_qr_loss(jax, weights))(a), tol)
    n = 5
    a, da = _hermitian(rng, (n, n), dtype), _hermitian(rng, (n, n), dtype)
    f = lambda lib: lambda x: (lib.numpy.linalg.eigvalsh(x),  # noqa: E731
                               lib.numpy.abs(lib.numpy.linalg.eigh(x)[1]) ** 2)
    got = invarax.jvp(f(invarax), (jnp.asarray(a),), (jnp.asarray(da),))[1]
    for g, w in zip(got, jax.jvp(f(jax), (a,), (da,))[1], strict=True):
        _close(g, w, tol)
    _close(invarax.grad(_eigh_loss(invarax, weights[:n, :n]))(jnp.asarray(a)),
           jax.grad(_eigh_loss(jax, weights[:n, :n]))(a), tol)

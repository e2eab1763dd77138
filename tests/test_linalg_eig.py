"""jnp.linalg.eig/eigvals (forward only, on NumPy's LAPACK geev): residuals, the measured
batch invariance behind N1/N2, jit bitwise, no derivative, and JAX."""

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp


@pytest.mark.parametrize("n", [1, 4, 20])
def test_eig_residual(n, rng):
    a = rng.standard_normal((3, n, n)).astype(np.float32)
    w, v = eager_and_jit(jnp.linalg.eig, a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    w, v = np.asarray(w, np.complex128), np.asarray(v, np.complex128)
    residual = a.astype(np.float64) @ v - v * w[..., None, :]
    assert np.abs(residual).max() <= 50 * n * np.finfo(np.float32).eps * np.abs(a).max()
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=1e-5)
    assert_bitwise(jnp.linalg.eigvals(a), np.asarray(jnp.linalg.eig(a)[0]))


def test_eig_is_batch_invariant(rng):
    a = rng.standard_normal((9, 6, 6)).astype(np.float32)
    w, v = jnp.linalg.eig(a)
    bw, bv = invarax.vmap(jnp.linalg.eig)(a)
    for i in range(9):
        wi, vi = jnp.linalg.eig(a[i])
        assert_bitwise(np.asarray(w)[i], wi)
        assert_bitwise(np.asarray(bv)[i], vi)
        assert_bitwise(np.asarray(v)[i], vi)
    assert_bitwise(jnp.linalg.eig(a[:3])[1], np.asarray(v)[:3])


def test_eig_has_no_derivative():
    with pytest.raises(NotImplementedError, match="differentiation rule for .eig."):
        invarax.grad(lambda a: jnp.real(jnp.linalg.eigvals(a)).sum())(jnp.eye(2))


def test_against_jax(rng):
    jax = pytest.importorskip("jax")
    a = rng.standard_normal((5, 5)).astype(np.float32)
    ours = np.sort_complex(np.asarray(jnp.linalg.eigvals(a)))
    theirs = np.sort_complex(np.asarray(jax.numpy.linalg.eigvals(a)))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)

"""scipy.stats.multivariate_normal against JAX; vmap rows and jit bitwise; errors."""

import numpy as np
import pytest
from helpers import assert_bitwise, jax_jit_call

import invarax
import invarax.numpy as jnp
from invarax.scipy.stats import multivariate_normal as mvn

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 3)).astype(np.float32)
COV = (A @ A.T + np.eye(3, dtype=np.float32)).astype(np.float32)
MEAN = RNG.standard_normal(3).astype(np.float32)
X = RNG.standard_normal((7, 3)).astype(np.float32)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jst = pytest.importorskip("jax.scipy.stats")
    for args in [(X, MEAN, COV), (X[0], MEAN, COV), (1.5, 0.5, 2.0),
                 (X, MEAN, np.stack([COV] * 7))]:
        np.testing.assert_allclose(mvn.logpdf(*args),
                                   jax_jit_call(jax, jst.multivariate_normal.logpdf, args),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(mvn.pdf(*args),
                                   jax_jit_call(jax, jst.multivariate_normal.pdf, args),
                                   rtol=1e-5, atol=1e-7)
    ours = invarax.grad(lambda m: mvn.logpdf(X, m, COV).sum())(MEAN)
    theirs = jax.jit(jax.grad(lambda m, x, cov: jst.multivariate_normal.logpdf(x, m, cov).sum()))(
        MEAN, X, COV)  # one compiled program; eagerly JAX compiles each operation apart
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_rows_and_jit_are_bitwise():
    batched = mvn.logpdf(X, MEAN, COV)
    for i in range(len(X)):
        assert_bitwise(invarax.vmap(lambda x: mvn.logpdf(x, MEAN, COV))(X)[i],
                       mvn.logpdf(X[i], MEAN, COV))
    assert_bitwise(invarax.jit(mvn.logpdf)(X, MEAN, COV), batched)


def test_bad_input():
    with pytest.raises(ValueError, match=r"cov must have shape \(\.\.\., 3, 3\)"):
        mvn.logpdf(X, MEAN, np.eye(2))
    with pytest.raises(ValueError, match="x must end in an axis of 3"):
        mvn.logpdf(jnp.ones((2, 4)), MEAN, COV)
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mvn.logpdf(X, MEAN, COV, allow_singular=True)

"""jnp.linalg norms against NumPy (float64) and JAX, eager and jit bitwise, and their errors."""

import numpy as np
import pytest
from helpers import eager_and_jit
from test_contractions import TOL, random_data

import invarax.numpy as jnp

VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("shape, axis", [((7,), None), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1)])
def test_vector_norms(shape, axis, ord, keepdims, rng):
    x = random_data(rng, shape, "float32")
    got = eager_and_jit(lambda a: jnp.linalg.norm(a, ord, axis, keepdims), x)
    ref = np.linalg.norm(x.astype(np.float64), ord, axis, keepdims)
    assert got.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, **TOL)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize(
    "shape, axis", [((3, 4), None), ((2, 3, 4), (2, 0)), ((2, 3, 4), (-1, -2))]
)
def test_matrix_norms(shape, axis, ord, keepdims, rng):
    x = random_data(rng, shape, "float32")
    got = eager_and_jit(lambda a: jnp.linalg.norm(a, ord, axis, keepdims), x)
    ref = np.linalg.norm(x.astype(np.float64), ord, axis, keepdims)
    assert got.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, **TOL)


def test_default_norm_of_any_rank_and_ints():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    got = jnp.linalg.norm(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.norm(x), **TOL)
    assert jnp.linalg.norm(x, keepdims=True).shape == (1, 1, 1)


def test_complex_frobenius(rng):
    x = random_data(rng, (3, 4), "complex64")
    got = jnp.linalg.norm(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.norm(x.astype(np.complex128)), **TOL)


def test_vector_and_matrix_norm(rng):
    x = random_data(rng, (2, 3, 4), "float32")
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(jnp.linalg.vector_norm(x), np.linalg.norm(x64.ravel()), **TOL)
    np.testing.assert_allclose(
        jnp.linalg.vector_norm(x, axis=1, ord=1), np.linalg.norm(x64, 1, axis=1), **TOL
    )
    got = jnp.linalg.matrix_norm(x, ord=np.inf, keepdims=True)
    np.testing.assert_allclose(got, np.linalg.norm(x64, np.inf, (-2, -1), True), **TOL)


@pytest.mark.parametrize("ord, axis", [(None, 0), (3, 1), ("fro", None), (1, None), (np.inf, 0)])
def test_against_jax(ord, axis, rng):
    jax = pytest.importorskip("jax")
    x = random_data(rng, (3, 4), "float32")
    ours, theirs = jnp.linalg.norm(x, ord, axis), jax.numpy.linalg.norm(x, ord, axis)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    np.testing.assert_allclose(ours, theirs, **TOL)


def test_errors():
    m = jnp.ones((3, 3))
    with pytest.raises(ValueError, match="invalid order 'fro' for a vector norm"):
        jnp.linalg.norm(jnp.ones(3), "fro")
    with pytest.raises(ValueError, match="invalid order 3 for a matrix norm"):
        jnp.linalg.norm(m, 3)
    with pytest.raises(ValueError, match="one axis for a vector norm or two different axes"):
        jnp.linalg.norm(jnp.ones((2, 3, 4)), 1)
    with pytest.raises(ValueError, match="two different axes"):
        jnp.linalg.norm(m, None, (0, 0))

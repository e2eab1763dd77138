"""jnp.roots and jnp.polyfit against NumPy and JAX; jit == eager bitwise; bad input."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp

X = np.linspace(-1.0, 2.0, 25).astype(np.float32)
Y = (3 * X**3 - X + 0.5 + 0.01 * np.sin(40 * X)).astype(np.float32)


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [0.0, 1.0, -6.0, 11.0, -6.0, 0.0, 0.0],
                               [2.0, 0.0, 1.0], [5.0], [0.0, 0.0]])
def test_roots_against_numpy(p):
    got = np.sort_complex(np.asarray(jnp.roots(np.asarray(p, np.float32))))
    want = np.sort_complex(np.roots(p).astype(np.complex64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_roots_without_stripping_is_traceable():
    f = invarax.jit(lambda p: jnp.roots(p, strip_zeros=False))
    p = jnp.asarray([1.0, -3.0, 2.0])
    assert_bitwise(f(p), jnp.roots(p, strip_zeros=False))


@pytest.mark.parametrize("kwargs", [{}, {"w": np.linspace(0.5, 1.5, 25)}, {"full": True},
                                    {"cov": True}, {"cov": "unscaled"}])
def test_polyfit_against_jax(kwargs):
    jax = pytest.importorskip("jax")
    for y in (Y, np.stack([Y, 2 * Y], axis=1)):
        ours = jnp.polyfit(X, y, 3, **kwargs)
        theirs = jax.numpy.polyfit(X, y, 3, **kwargs)
        for a, b in zip(invarax.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                        strict=True):
            scale = max(1.0, float(np.max(np.abs(np.asarray(b)))))
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                       atol=2e-4 * scale)


def test_polyfit_jit_is_eager_and_accurate():
    f = lambda x, y: jnp.polyfit(x, y, 3)
    assert_bitwise(invarax.jit(f)(X, Y), f(X, Y))
    want = np.polyfit(X.astype(np.float64), Y.astype(np.float64), 3)
    np.testing.assert_allclose(np.asarray(f(X, Y), np.float64), want, atol=1e-4)


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="1-d coefficients"):
        jnp.roots(jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="len\\(x\\) = 25 rows"):
        jnp.polyfit(X, Y[:3], 2)
    with pytest.raises(ValueError, match="deg must be >= 0"):
        jnp.polyfit(X, Y, -1)
    with pytest.raises(ValueError, match="w must have shape"):
        jnp.polyfit(X, Y, 2, w=np.ones(3))

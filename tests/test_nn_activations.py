"""``invarax.nn`` activations: float64 references, jax.nn's values and gradients, N1/N3."""

import math

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, data, eager_and_jit

import invarax
import invarax.nn as nn
import invarax.numpy as jnp
from invarax.scipy.special import logsumexp

X = data((5, 7)) * 3


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _erf(x):
    from math import erf
    return np.vectorize(erf)(x)


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x * _sigmoid(x),
    "sigmoid": _sigmoid,
    "softplus": lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0),
    "softmax": _softmax,
    "log_softmax": lambda x: np.log(_softmax(x)),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values_against_float64_reference_and_jit(name):
    f = getattr(nn, name)
    got = eager_and_jit(f, jnp.asarray(X))
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), REFERENCES[name](X.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


def test_exact_gelu_against_erf():
    got = nn.gelu(jnp.asarray(X), approximate=False)
    x = X.astype(np.float64)
    np.testing.assert_allclose(np.asarray(got), 0.5 * x * (1 + _erf(x / np.sqrt(2))),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_vmap_rows_are_bitwise_single_rows(name):
    f = getattr(nn, name)
    batched = invarax.vmap(f)(jnp.asarray(X))
    for i in range(X.shape[0]):
        assert_bitwise(batched[i], f(jnp.asarray(X[i])))
    assert_bitwise(f(jnp.asarray(X[:2])), f(jnp.asarray(X))[:2])


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradients(x64, name):
    f = getattr(nn, name)
    x = X.astype(np.float64) + 0.01  # away from relu's kink at 0
    check_grads(f, (x,), order=2)


def test_gradients_with_axis_and_where(x64):
    x = X.astype(np.float64)
    where = data((5, 7), np.bool_, seed=1) | np.eye(5, 7, dtype=bool)
    check_grads(lambda a: nn.softmax(a, axis=0), (x,), order=2)
    check_grads(lambda a: nn.log_softmax(a, axis=(0, 1)), (x,), order=1)
    check_grads(lambda a: nn.softmax(a, where=where), (x,), order=1)
    check_grads(lambda a: jnp.where(where, nn.log_softmax(a, where=where), 0.0), (x,))
    check_grads(lambda a: nn.gelu(a, approximate=False), (x,), order=2)


def test_relu_derivative_at_zero_is_zero_as_jax():
    assert float(invarax.grad(nn.relu)(0.0)) == 0.0
    assert float(invarax.grad(nn.relu)(1e-30)) == 1.0
    assert float(invarax.grad(nn.relu)(-1e-30)) == 0.0
    assert np.isnan(float(nn.relu(jnp.float32(np.nan))))


def test_softplus_and_sigmoid_are_stable_for_large_inputs():
    x = jnp.asarray(np.array([-1000.0, -80.0, 0.0, 80.0, 1000.0], np.float32))
    assert_bitwise(np.asarray(nn.softplus(x))[[0, 4]], np.float32([0.0, 1000.0]))
    grads = invarax.vmap(invarax.grad(nn.softplus))(x)
    np.testing.assert_allclose(np.asarray(grads), np.asarray(nn.sigmoid(x)), rtol=1e-6)
    assert np.all(np.isfinite(invarax.vmap(invarax.grad(nn.sigmoid))(x)))
    big = jnp.asarray(np.array([1000.0, 0.0, -1000.0], np.float32))
    np.testing.assert_allclose(np.asarray(nn.softmax(big)), [1.0, 0.0, 0.0])
    assert np.all(np.isfinite(np.asarray(nn.log_softmax(big)[:2])))


def test_softmax_options():
    got = nn.softmax(jnp.asarray(X), axis=0)
    np.testing.assert_allclose(np.asarray(got), _softmax(X.astype(np.float64), 0), rtol=1e-5)
    where = np.array([True, False, True, True, False, True, True])
    masked = nn.softmax(jnp.asarray(X), where=where)
    assert np.all(np.asarray(masked)[:, ~where] == 0)
    np.testing.assert_allclose(np.asarray(masked)[:, where],
                               _softmax(X[:, where].astype(np.float64)), rtol=1e-5)
    log_masked = nn.log_softmax(jnp.asarray(X), where=where)
    assert np.all(np.asarray(log_masked)[:, ~where] == -np.inf)
    assert nn.softmax(jnp.arange(3)).dtype == np.float32


def test_one_hot():
    labels = jnp.array([0, 2, 3, -1])
    got = nn.one_hot(labels, 3)
    assert_bitwise(got, np.float32([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]))
    assert_bitwise(nn.one_hot(labels, 3, axis=0), np.asarray(got).T)
    assert nn.one_hot(jnp.array([[1]]), 2, dtype=jnp.int32, axis=1).shape == (1, 2, 1)
    assert nn.one_hot(jnp.array([[1]]), 2, dtype=jnp.int32).dtype == np.int32
    assert_bitwise(invarax.jit(lambda i: nn.one_hot(i, 4))(labels), nn.one_hot(labels, 4))
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        nn.one_hot(labels, 3, axis=3)


def test_logsumexp_is_the_scipy_one():
    assert nn.logsumexp is logsumexp


def test_match_jax_nn():
    jax = pytest.importorskip("jax")
    weights = np.arange(7, dtype=np.float32)

    def value_and_grad_jax(f):  # one compiled program; eagerly JAX compiles each operation
        return jax.jit(lambda x: (f(x), jax.grad(lambda x: (f(x) * weights).sum())(x)))

    for name in sorted(REFERENCES):
        ours, theirs = getattr(nn, name), getattr(jax.nn, name)
        value_theirs, g_theirs = value_and_grad_jax(theirs)(X)
        np.testing.assert_allclose(np.asarray(ours(jnp.asarray(X))), np.asarray(value_theirs),
                                   rtol=2e-6, atol=1e-6, err_msg=name)
        g_ours = invarax.grad(lambda x, f=ours: jnp.sum(f(x) * weights))(jnp.asarray(X))
        np.testing.assert_allclose(np.asarray(g_ours), np.asarray(g_theirs), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    for x in (0.0, 1000.0, -1000.0):
        for name in ("relu", "softplus", "sigmoid", "silu", "gelu"):
            assert (float(invarax.grad(getattr(nn, name))(x))
                    == pytest.approx(float(jax.grad(getattr(jax.nn, name))(x)))), (name, x)
    labels = np.array([[0, 4], [2, 1]])
    for axis in (-1, 0, 1):
        assert_bitwise(nn.one_hot(labels, 5, axis=axis), jax.nn.one_hot(labels, 5, axis=axis))
    np.testing.assert_allclose(np.asarray(nn.gelu(jnp.asarray(X), approximate=False)),
                               np.asarray(jax.nn.gelu(X, approximate=False)), rtol=2e-6,
                               atol=1e-6)


def test_exact_gelu_keeps_the_negative_tail():
    x = np.array([-6.0, -8.0, -10.0], np.float32)
    got = np.asarray(nn.gelu(jnp.asarray(x), approximate=False))
    exact = [0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)]
    assert np.all(got < 0)
    # x / sqrt(2) rounds to float32; erfc's relative sensitivity there is about x**2
    np.testing.assert_allclose(got, exact, rtol=100 * 2.0**-24)

"""``invarax.scipy.special.logsumexp``: values, special values, options, and JAX's results."""

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax.scipy.special import logsumexp


def reference(x, axis=None, b=None, keepdims=False):
    """``log(sum(b * exp(x)))`` in float64 (fine for moderate values)."""
    x = np.asarray(x, np.float64)
    weights = 1.0 if b is None else np.asarray(b, np.float64)
    return np.log(np.sum(weights * np.exp(x), axis=axis, keepdims=keepdims))


X = np.random.default_rng(0).standard_normal((4, 7)).astype(np.float32) * 3


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)], ids=str)
def test_values(axis, keepdims):
    got = eager_and_jit(lambda a: logsumexp(a, axis=axis, keepdims=keepdims), jnp.asarray(X))
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        np.asarray(got), reference(X, axis, keepdims=keepdims), rtol=1e-6, atol=1e-6
    )


def test_no_overflow_and_integers_promote():
    big = jnp.asarray(np.array([1000.0, 1000.0, -1000.0], np.float32))
    assert_bitwise(eager_and_jit(logsumexp, big), np.float32(1000.0) + np.float32(np.log(2.0)))
    out = logsumexp(np.array([1, 2], np.int32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), reference([1, 2]), rtol=1e-6)


def test_infinities_and_nan():
    x = np.array(
        [[-np.inf, -np.inf], [-np.inf, 0.0], [np.inf, 1.0], [np.nan, 1.0], [np.inf, -np.inf]],
        np.float32,
    )
    got = eager_and_jit(lambda a: logsumexp(a, axis=1), jnp.asarray(x))
    assert_bitwise(got, np.float32([-np.inf, 0.0, np.inf, np.nan, np.inf]))


def test_scale_factors_and_sign():
    b = np.array([[1.0, -2.0, 0.5, 0.0, 1.0, 1.0, -1.0]] * 4, np.float32)
    got = eager_and_jit(lambda a, w: logsumexp(a, axis=1, b=w), jnp.asarray(X), jnp.asarray(b))
    s = np.sum(b * np.exp(X.astype(np.float64)), axis=1)
    np.testing.assert_allclose(
        np.asarray(got), np.where(s < 0, np.nan, np.log(np.abs(s))), rtol=1e-5
    )
    out, sign = eager_and_jit(
        lambda a, w: logsumexp(a, axis=1, b=w, return_sign=True), jnp.asarray(X), jnp.asarray(b)
    )
    np.testing.assert_allclose(np.asarray(out), np.log(np.abs(s)), rtol=1e-5)
    assert_bitwise(sign, np.sign(s).astype(np.float32))
    # b == 0 removes an element, even an infinite one.
    x = jnp.asarray(np.array([np.inf, 0.0], np.float32))
    assert_bitwise(logsumexp(x, b=np.array([0.0, 1.0], np.float32)), np.float32(0.0))


def test_where():
    mask = X > 0
    got = eager_and_jit(lambda a: logsumexp(a, axis=1, where=mask), jnp.asarray(X))
    expected = np.log(np.sum(np.exp(X.astype(np.float64)), axis=1, where=mask))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_the_shift_is_a_stop_gradient():
    text = str(invarax.make_jaxpr(lambda a: logsumexp(a, axis=0))(jnp.asarray(X)))
    assert "stop_gradient" in text
    assert "reduce_max[axes=(0,)]" in text and "reduce_sum[axes=(0,)]" in text


CASES = {
    "plain": ({}, None),
    "axis": ({"axis": 1}, None),
    "keepdims": ({"axis": 0, "keepdims": True}, None),
    "b": ({"axis": 1}, "b"),
    "sign": ({"axis": 1, "return_sign": True}, "b"),
    "where": ({"axis": 1, "where": X > -1}, None),
}


@pytest.mark.parametrize("case", CASES)
def test_matches_jax(case):
    pytest.importorskip("jax")
    from jax.scipy.special import logsumexp as jax_logsumexp

    x = X.copy()
    x[0, 1], x[1, :], x[2, 2] = -np.inf, -np.inf, np.inf
    kwargs, with_b = CASES[case]
    if with_b:
        kwargs = {**kwargs, "b": np.linspace(-1, 2, x.size, dtype=np.float32).reshape(x.shape)}
    ours, theirs = logsumexp(x, **kwargs), jax_logsumexp(x, **kwargs)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, t in zip(ours, theirs, strict=True):
        assert o.dtype == t.dtype and o.weak_type == t.weak_type
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6, atol=1e-6)

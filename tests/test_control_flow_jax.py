"""Differential tests against JAX: the same control-flow programs, their gradients and
vmaps, give the same values within float tolerance (skipped if JAX is absent)."""

import numpy as np
import pytest
from helpers import data

import invarax
import invarax.numpy as inp
from invarax import lax as ilax

jax = pytest.importorskip("jax")
jnp_ = pytest.importorskip("jax.numpy")
jlax = jax.lax

RTOL, ATOL = 2e-5, 1e-6


def programs(np_, lax):
    """The same programs written against a (numpy, lax) pair."""

    def rnn(W, h0, xs):
        def step(h, x):
            h = np_.tanh(W @ h + x)
            return h, np_.sum(h * h)
        return lax.scan(step, h0, xs)

    def rnn_rev(W, h0, xs):
        return lax.scan(lambda h, x: (np_.sin(W @ h) * x, h[0]), h0, xs, reverse=True)

    def piecewise(x):
        return lax.cond(np_.sum(x) > 0, lambda v: np_.sin(v) * 2.0, lambda v: np_.cos(v) - v, x)

    def switch3(i, x):
        return lax.switch(i, [np_.sin, lambda v: v * v, lambda v: np_.exp(-v)], x)

    def fori(x):
        return lax.fori_loop(0, 4, lambda i, c: c * 0.9 + np_.sin(c) * i, x)

    def newton(a):
        return lax.while_loop(lambda c: np_.abs(c * c - a) > 1e-5 * a,
                              lambda c: (c + a / c) * 0.5, a)

    def mapped(x):
        return lax.map(lambda v: np_.tanh(v) * v, x)

    return dict(rnn=rnn, rnn_rev=rnn_rev, piecewise=piecewise, switch3=switch3, fori=fori,
                newton=newton, mapped=mapped)


INV, JAX = programs(inp, ilax), programs(jnp_, jlax)


def close(a, b):
    for x, y in zip(invarax.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=RTOL, atol=ATOL)


def rnn_args():
    return (data((4, 4), seed=1) * 0.4, data((4,), seed=2), data((6, 4), seed=3))


@pytest.mark.parametrize("name", ["rnn", "rnn_rev"])
def test_scan_values_grads_vmap(name):
    W, h0, xs = rnn_args()
    close(INV[name](W, h0, xs), JAX[name](W, h0, xs))

    def loss(P):
        return lambda W, h0, xs: sum(P[name](W, h0, xs)[i].sum() for i in (0, 1))

    close(invarax.grad(loss(INV), argnums=(0, 1, 2))(W, h0, xs),
          jax.grad(loss(JAX), argnums=(0, 1, 2))(W, h0, xs))
    H = data((5, 4), seed=4)
    close(invarax.vmap(INV[name], in_axes=(None, 0, None))(W, H, xs),
          jax.vmap(JAX[name], in_axes=(None, 0, None))(W, H, xs))


@pytest.mark.parametrize("name", ["piecewise", "fori", "mapped"])
def test_cond_fori_map(name):
    X = data((6, 3), seed=5)
    close(invarax.vmap(INV[name])(X), jax.vmap(JAX[name])(X))
    gi = invarax.vmap(invarax.grad(lambda x: INV[name](x).sum()))(X)
    gj = jax.vmap(jax.grad(lambda x: JAX[name](x).sum()))(X)
    close(gi, gj)
    close(invarax.jit(INV[name])(X[0]), jax.jit(JAX[name])(X[0]))


def test_switch_and_while():
    X = data((7, 3), seed=6)
    idx = (np.arange(7) % 5 - 1).astype(np.int32)
    close(invarax.vmap(INV["switch3"])(idx, X), jax.vmap(JAX["switch3"])(idx, X))
    a = np.random.default_rng(0).uniform(0.5, 100, 9).astype(np.float32)
    close(invarax.vmap(INV["newton"])(a), jax.vmap(JAX["newton"])(a))
    close(invarax.jvp(INV["newton"], (a[0],), (np.float32(1.0),)),
          jax.jvp(JAX["newton"], (a[0],), (np.float32(1.0),)))

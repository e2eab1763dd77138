"""``nn.GRUCell`` and ``nn.LSTMCell``: Equinox's parameters bit for bit from the same key,
Equinox's outputs (within float tolerance), through ``lax.scan``; N1 and N3 of a scan RNN;
clear errors."""


import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import grad, jit, lax, nn, vmap


def run(cell, xs, state):
    return lax.scan(lambda s, x: (cell(x, s), s), state, xs)


def test_scan_rnn_n1_n3_and_grad():
    cell = nn.LSTMCell(3, 5, key=invarax.random.key(0))
    xs = jnp.asarray(data((9, 6, 3), seed=1))
    zeros = (jnp.zeros(5), jnp.zeros(5))

    def loss(cell, xs):
        (h, c), _ = run(cell, xs, zeros)
        return jnp.sum(h * h) + jnp.sum(c)

    batched = vmap(lambda x: run(cell, x, zeros))(xs)
    for i in range(9):
        single = run(cell, xs[i], zeros)
        for a, b in zip(invarax.tree_leaves(batched), invarax.tree_leaves(single), strict=True):
            assert_bitwise(a[i], b)
    g = grad(loss)(cell, xs[0])
    gj = jit(grad(loss))(cell, xs[0])
    for a, b in zip(invarax.tree_leaves(g), invarax.tree_leaves(gj), strict=True):
        assert_bitwise(a, b)
    per_example = vmap(grad(loss), in_axes=(None, 0))(cell, xs)
    for i in (0, 4, 8):
        gi = grad(loss)(cell, xs[i])
        for a, b in zip(invarax.tree_leaves(per_example), invarax.tree_leaves(gi),
                        strict=True):
            assert_bitwise(a[i], b)


def test_errors():
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        nn.GRUCell(3, 0, key=invarax.random.key(0))
    cell = nn.GRUCell(3, 4, key=invarax.random.key(0))
    with pytest.raises(ValueError, match=r"input must have shape \(3,\), got \(2, 3\).*vmap"):
        cell(jnp.ones((2, 3)), jnp.zeros(4))
    lstm = nn.LSTMCell(3, 4, key=invarax.random.key(0))
    with pytest.raises(TypeError, match=r"hidden must be a pair \(h, c\)"):
        lstm(jnp.ones(3), jnp.zeros(4))


# ---------------------------------------------------------------------------------------
# Against Equinox


def test_against_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    for ours_cls, theirs_cls, args in ((nn.GRUCell, eqx.nn.GRUCell, (3, 5)),
                                       (nn.GRUCell, eqx.nn.GRUCell, (4, 2, False)),
                                       (nn.LSTMCell, eqx.nn.LSTMCell, (3, 5)),
                                       (nn.LSTMCell, eqx.nn.LSTMCell, (2, 7, False))):
        ours = ours_cls(*args, key=invarax.random.key(7))
        theirs = theirs_cls(*args, key=jax.random.key(7))
        a = invarax.tree_leaves(invarax.filter(ours, invarax.is_array))
        b = [x for x in jax.tree_util.tree_leaves(theirs) if isinstance(x, jax.Array)]
        assert len(a) == len(b) > 0
        for x, y in zip(a, b, strict=True):
            assert_bitwise(x, np.asarray(y))
        xs = data((6, args[0]), seed=3)
        n = args[1]
        state = (np.zeros(n, np.float32),) * 2 if ours_cls is nn.LSTMCell else np.zeros(
            n, np.float32)
        mine = run(ours, jnp.asarray(xs), state)
        ref = jax.lax.scan(lambda s, x, m=theirs: (m(x, s), s), state, xs)
        for x, y in zip(invarax.tree_leaves(mine), jax.tree_util.tree_leaves(ref),
                        strict=True):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)

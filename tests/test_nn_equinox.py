"""``invarax.nn`` against Equinox: the same key gives the same initial parameters (bit for bit,
through JAX's threefry streams), the same weights give the same outputs, and Dropout draws
the same masks. Skipped when Equinox is not installed."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.nn as nn
import invarax.numpy as jnp

eqx = pytest.importorskip("equinox")
jax = pytest.importorskip("jax")


def keys(seed):
    return invarax.random.key(seed), jax.random.key(seed)


def assert_same_leaves(ours, theirs):
    """Every array of ``ours`` is bitwise the corresponding array of the Equinox module."""
    a = invarax.tree_util.tree_leaves(invarax.filter(ours, invarax.is_array))
    b = [x for x in jax.tree_util.tree_leaves(theirs) if isinstance(x, jax.Array)]
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        assert_bitwise(x, np.asarray(y))


def close(ours, theirs, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


@pytest.mark.parametrize("args", [(3, 2), (7, 5, False), ("scalar", 4), (4, "scalar"),
                                  ("scalar", "scalar")], ids=str)
def test_linear(args):
    ours, theirs = (m(*args, key=k) for m, k in zip((nn.Linear, eqx.nn.Linear), keys(1),
                                                    strict=True))
    assert_same_leaves(ours, theirs)
    x = data(() if args[0] == "scalar" else (args[0],))
    close(ours(x), theirs(x))


def test_linear_float64(x64):
    jax.config.update("jax_enable_x64", True)
    try:
        ours = nn.Linear(6, 3, key=invarax.random.key(2))
        theirs = eqx.nn.Linear(6, 3, key=jax.random.key(2))
        assert ours.weight.dtype == np.float64 == theirs.weight.dtype
        assert_same_leaves(ours, theirs)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_mlp(depth):
    ours = nn.MLP(3, 2, 16, depth, activation=nn.gelu, key=invarax.random.key(3))
    theirs = eqx.nn.MLP(3, 2, 16, depth, activation=jax.nn.gelu, key=jax.random.key(3))
    for a, b in zip(ours.layers, theirs.layers, strict=True):
        assert_same_leaves(a, b)
    x = data((5, 3))
    close(ours(x), jax.vmap(theirs)(x))


@pytest.mark.parametrize("case", [
    (nn.Conv1d, eqx.nn.Conv1d, (3, 4, 3), {"stride": 2, "padding": 1}, (3, 16)),
    (nn.Conv2d, eqx.nn.Conv2d, (4, 6, (3, 2)), {"padding": "SAME", "dilation": (1, 2),
                                                "groups": 2}, (4, 9, 10)),
    (nn.Conv2d, eqx.nn.Conv2d, (2, 2, 3), {"padding": ((1, 0), (2, 1)), "stride": (2, 1),
                                           "use_bias": False}, (2, 8, 8)),
    (nn.Conv2d, eqx.nn.Conv2d, (2, 3, 3), {"padding": 2, "padding_mode": "REFLECT"},
     (2, 7, 6)),
    (nn.Conv3d, eqx.nn.Conv3d, (2, 3, 2), {"padding": "SAME_LOWER", "stride": 2},
     (2, 5, 4, 5)),
], ids=["1d", "2d-groups", "2d-pairs", "2d-reflect", "3d"])
def test_conv(case):
    ours_cls, theirs_cls, args, options, shape = case
    ours = ours_cls(*args, **options, key=invarax.random.key(4))
    theirs = theirs_cls(*args, **options, key=jax.random.key(4))
    assert_same_leaves(ours, theirs)
    x = data(shape)
    got = ours(x)
    assert got.shape == theirs(x).shape
    close(got, theirs(x), atol=1e-5)


def test_norms_with_the_same_weights():
    x = data((3, 4)) * 4 + 1
    weight, bias = data((3, 4), seed=1), data((3, 4), seed=2)
    for ours_cls, theirs_cls in ((nn.LayerNorm, eqx.nn.LayerNorm),
                                 (nn.RMSNorm, eqx.nn.RMSNorm)):
        ours = invarax.tree_at(lambda m: (m.weight, m.bias), ours_cls((3, 4), eps=1e-4),
                               (jnp.asarray(weight), jnp.asarray(bias)))
        theirs = eqx.tree_at(lambda m: (m.weight, m.bias), theirs_cls((3, 4), eps=1e-4),
                             (weight, bias))
        close(ours(x), theirs(x), atol=1e-5)


def test_dropout_masks_are_equinox_masks():
    x = data((40, 30))
    for p in (0.1, 0.5, 0.9):
        ours, theirs = keys(5)
        assert_bitwise(nn.Dropout(p)(x, key=ours), np.asarray(eqx.nn.Dropout(p)(x, key=theirs)))


def test_embedding():
    ours = nn.Embedding(20, 8, key=invarax.random.key(6))
    theirs = eqx.nn.Embedding(20, 8, key=jax.random.key(6))
    # invarax.random.normal is within 3 ulp of JAX's (docs/random.md): XLA contracts to FMA.
    a, b = np.asarray(ours.weight), np.asarray(theirs.weight)
    assert np.max(np.abs(a - b) / np.spacing(np.abs(b))) <= 3
    assert_bitwise(ours(7), ours.weight[7])


def test_sequential_splits_the_key_as_equinox():
    x = data((50,))
    ours = nn.Sequential([nn.Dropout(0.5), nn.Lambda(nn.relu), nn.Dropout(0.3)])
    theirs = eqx.nn.Sequential([eqx.nn.Dropout(0.5), eqx.nn.Lambda(jax.nn.relu),
                                eqx.nn.Dropout(0.3)])
    k_ours, k_theirs = keys(7)
    a, b = np.asarray(ours(x, key=k_ours)), np.asarray(theirs(x, key=k_theirs))
    assert_bitwise(a == 0, b == 0)  # the same masks
    # Not bitwise: here XLA compiles JAX's x / 0.7 as x * (1 / 0.7), one rounding more.
    np.testing.assert_allclose(a, b, rtol=2e-7)


@pytest.mark.parametrize("mask_kind", [None, "2d", "3d"])
def test_multihead_attention(mask_kind):
    options = dict(key_size=6, value_size=5, output_size=7, qk_size=3, vo_size=4,
                   use_query_bias=True, use_value_bias=True, dropout_p=0.3)
    ours = nn.MultiheadAttention(2, 8, **options, key=invarax.random.key(8))
    theirs = eqx.nn.MultiheadAttention(2, 8, **options, key=jax.random.key(8))
    assert_same_leaves(ours, theirs)
    q, k, v = data((4, 8)), data((6, 6), seed=1), data((6, 5), seed=2)
    rng = np.random.default_rng(0)
    mask = {None: None, "2d": rng.random((4, 6)) < 0.6, "3d": rng.random((2, 4, 6)) < 0.6}[
        mask_kind]
    close(ours(q, k, v, mask, inference=True), theirs(q, k, v, mask, inference=True))
    k_ours, k_theirs = keys(9)  # per-head dropout keys: the same masks
    close(ours(q, k, v, mask, key=k_ours), theirs(q, k, v, mask, key=k_theirs))


@pytest.mark.parametrize("depth", [0, 1, 2, 4])
def test_mlp_scan_as_equinox(depth):
    """``scan=True``: Equinox's stacked hidden layer from the same key, bit for bit."""
    ours = nn.MLP(3, 2, 8, depth, activation=nn.gelu, scan=True, key=invarax.random.key(5))
    theirs = eqx.nn.MLP(3, 2, 8, depth, activation=jax.nn.gelu, scan=True,
                        key=jax.random.key(5))
    assert len(ours.layers) == len(theirs.layers) == (1 if depth == 0 else 3)
    for a, b in zip(ours.layers, theirs.layers, strict=True):
        assert_same_leaves(a, b)
    x = data((5, 3))
    close(ours(jnp.asarray(x)), jax.vmap(theirs)(x))
    close(ours(jnp.asarray(x[1])), theirs(x[1]))


@pytest.mark.parametrize("depth", [1, 3])
def test_mlp_scan_is_bitwise_the_unrolled_mlp(depth):
    """N1/N3: the scanned MLP gives bitwise the unscanned one's outputs and gradients,
    eagerly, under jit and row by row under vmap."""
    plain = nn.MLP("scalar", 3, 6, depth, key=invarax.random.key(7))
    scanned = nn.MLP("scalar", 3, 6, depth, scan=True, key=invarax.random.key(7))
    x = jnp.asarray(data((6,)))
    assert_bitwise(scanned(x), plain(x))
    assert_bitwise(invarax.jit(scanned)(x), scanned(x))
    for n in (1, 4, 6):
        batched = invarax.vmap(scanned)(x[:n])
        for i in range(n):
            assert_bitwise(batched[i], scanned(x[i]))

    def loss(model):
        return jnp.sum(model(x) ** 2)

    grads = invarax.filter_grad(loss)(scanned)
    assert_bitwise(invarax.filter_jit(invarax.filter_grad(loss))(scanned).layers[1].weight,
                   grads.layers[1].weight)
    plain_grads = invarax.filter_grad(loss)(plain)
    for i in range(1, depth):
        assert_bitwise(grads.layers[1].weight[i - 1], plain_grads.layers[i].weight)

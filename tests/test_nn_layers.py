"""``invarax.nn`` layers: float64 NumPy references, gradients, and the numerics contract.

N1: ``vmap(layer)(xs)[i]`` is bitwise ``layer(xs[i])``; N2: ``layer(x[:m])[:k]`` is bitwise
``layer(x)[:k]`` for natively batched input; N3: ``filter_jit(layer)(x)`` is bitwise eager;
N4: ``Linear(x)`` is bitwise ``x @ W.T + b`` however it is written.
"""

import itertools

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, data

import invarax
import invarax.nn as nn
import invarax.numpy as jnp

KEY = invarax.random.key(0)


def f64(x):
    return np.asarray(x, np.float64)


def check_vmap_and_jit(layer, xs, **kwargs):
    """N1 and N3: each row of ``vmap(layer)(xs)`` and ``filter_jit(layer)`` are bitwise eager."""
    batched = invarax.filter_vmap(lambda x: layer(x, **kwargs))(xs)
    jitted = invarax.filter_jit(lambda m, x: m(x, **kwargs))
    for i in range(xs.shape[0]):
        single = layer(xs[i], **kwargs)
        assert_bitwise(batched[i], single)
        assert_bitwise(jitted(layer, xs[i]), single)


# --- Linear -----------------------------------------------------------------------------

def linear_reference(layer, x):
    y = f64(x) @ f64(layer.weight).T
    return y + f64(layer.bias) if layer.bias is not None else y


@pytest.mark.parametrize("use_bias", [True, False])
@pytest.mark.parametrize("sizes", [(3, 2), (1, 5), (17, 9), (300, 4)], ids=str)
def test_linear_against_reference(sizes, use_bias):
    layer = nn.Linear(*sizes, use_bias=use_bias, key=KEY)
    assert layer.weight.shape == sizes[::-1] and layer.weight.dtype == np.float32
    assert (layer.bias is None) == (not use_bias)
    lim = 1 / np.sqrt(sizes[0])
    assert np.all(np.abs(np.asarray(layer.weight)) <= lim)
    x = data((6, sizes[0]))
    np.testing.assert_allclose(np.asarray(layer(x)), linear_reference(layer, x), rtol=1e-5,
                               atol=1e-6)
    check_vmap_and_jit(layer, x)


def test_linear_n4_every_formulation_is_bitwise_the_same():
    layer = nn.Linear(37, 11, key=KEY)
    w, b = layer.weight, layer.bias
    x = jnp.asarray(data((8, 37)))
    y = layer(x)
    assert_bitwise(y, x @ w.T + b)
    assert_bitwise(y, jnp.einsum("nk,mk->nm", x, w) + b)
    assert_bitwise(y, jnp.dot(x, w.T) + b)
    assert_bitwise(y, jnp.matmul(x, jnp.asarray(np.ascontiguousarray(np.asarray(w).T))) + b)
    assert_bitwise(y, jnp.tensordot(x, w, axes=((1,), (1,))) + b)
    assert_bitwise(y, (w @ x.T).T + b)
    for i in range(8):
        assert_bitwise(layer(x[i]), w @ x[i] + b)  # Equinox's formulation of one example
        assert_bitwise(layer(x[i]), y[i])


def test_linear_native_batches_rows_and_vmap_agree():
    layer = nn.Linear(5, 3, key=KEY)
    x = jnp.asarray(data((4, 6, 5)))
    y = layer(x)
    assert y.shape == (4, 6, 3)
    assert_bitwise(y, invarax.vmap(invarax.vmap(layer))(x))
    assert_bitwise(y.reshape(24, 3), layer(x.reshape(24, 5)))
    flat = x.reshape(24, 5)
    for m, k in [(1, 1), (7, 3), (16, 16), (23, 5)]:
        assert_bitwise(layer(flat[:m])[:k], layer(flat)[:k])  # N2


def test_linear_scalar_features():
    layer = nn.Linear("scalar", "scalar", key=KEY)
    assert layer.weight.shape == (1, 1) and layer.bias.shape == (1,)
    assert layer(jnp.array(2.0)).shape == ()
    np.testing.assert_allclose(float(layer(2.0)),
                               2 * float(layer.weight[0, 0]) + float(layer.bias[0]), rtol=1e-6)
    xs = jnp.asarray(data((5,)))
    assert_bitwise(layer(xs), invarax.vmap(layer)(xs))  # a vector is a batch of scalars
    to_vec = nn.Linear("scalar", 3, key=KEY)
    assert to_vec(1.0).shape == (3,) and to_vec(xs).shape == (5, 3)
    assert nn.Linear(3, "scalar", key=KEY)(jnp.ones(3)).shape == ()
    zero = nn.Linear(0, 2, key=KEY)
    assert_bitwise(zero(jnp.ones((4, 0))), jnp.broadcast_to(zero.bias, (4, 2)))


def test_dtypes(x64):
    assert nn.Linear(2, 3, key=KEY).weight.dtype == np.float64
    assert nn.Linear(2, 3, dtype=jnp.float32, key=KEY).weight.dtype == np.float32
    assert nn.Conv1d(2, 3, 2, key=KEY).weight.dtype == np.float64
    assert nn.LayerNorm(3).weight.dtype == np.float64


def test_linear_and_mlp_gradients(x64):
    layer = nn.Linear(4, 3, key=KEY)
    x = f64(data((5, 4)))
    check_grads(lambda w, b, x: nn.Linear.__call__(
        invarax.tree_at(lambda m: (m.weight, m.bias), layer, (w, b)), x),
        (layer.weight, layer.bias, x), order=2)
    mlp = nn.MLP(4, 2, 6, 2, activation=nn.silu, key=KEY)
    params, static = invarax.partition(mlp, invarax.is_array)
    check_grads(lambda p, x: invarax.combine(p, static)(x), (params, x), order=1)


# --- MLP --------------------------------------------------------------------------------

def mlp_reference(mlp, x, activation, final=lambda v: v):
    y = f64(x)
    for i, layer in enumerate(mlp.layers):
        y = linear_reference(layer, y)
        y = activation(y) if i < len(mlp.layers) - 1 else final(y)
    return y


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_mlp_against_reference(depth):
    mlp = nn.MLP(3, 2, width_size=8, depth=depth, key=KEY)
    assert len(mlp.layers) == depth + 1 and mlp.activation is nn.relu
    x = data((10, 3))
    ref = mlp_reference(mlp, x, lambda v: np.maximum(v, 0))
    np.testing.assert_allclose(np.asarray(mlp(x)), ref, rtol=1e-5, atol=1e-6)
    check_vmap_and_jit(mlp, x)
    xj = jnp.asarray(x)
    for m, k in [(1, 1), (4, 2), (9, 9)]:
        assert_bitwise(mlp(xj[:m])[:k], mlp(xj)[:k])  # N2


def test_mlp_options():
    mlp = nn.MLP("scalar", "scalar", 4, 2, activation=nn.sigmoid, final_activation=jnp.tanh,
                 use_bias=False, use_final_bias=False, key=KEY)
    assert all(layer.bias is None for layer in mlp.layers)
    xs = data((6,))
    got = mlp(xs)
    assert got.shape == (6,)
    ref = mlp_reference(mlp, xs[:, None], lambda v: 1 / (1 + np.exp(-v)), np.tanh)[:, 0]
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)
    check_vmap_and_jit(mlp, xs)
    keys = invarax.random.split(KEY, 2)
    assert_bitwise(nn.MLP(2, 2, 3, 1, key=keys[0]).layers[0].weight,
                   nn.Linear(2, 3, key=invarax.random.split(keys[0], 2)[0]).weight)


def test_mlp_trains_under_filter_jit_and_filter_grad():
    mlp = nn.MLP(1, 1, 16, 2, activation=jnp.tanh, key=KEY)
    x = jnp.linspace(-1, 1, 32).reshape(32, 1)
    y = jnp.sin(3 * x)

    @invarax.filter_jit
    def step(model):
        loss, grads = invarax.filter_value_and_grad(
            lambda m: jnp.mean((m(x) - y) ** 2))(model)
        return loss, invarax.tree_util.tree_map(
            lambda p, g: p - 0.1 * g if invarax.is_array(p) else p, model, grads,
            is_leaf=lambda v: v is None)

    first, _ = step(mlp)
    for _ in range(200):
        loss, mlp = step(mlp)
    assert float(loss) < float(first) / 5


def test_ensemble_built_by_filter_vmap_over_keys():
    keys = invarax.random.split(KEY, 3)
    ensemble = invarax.filter_vmap(lambda k: nn.MLP(2, 1, 8, 2, key=k))(keys)
    assert ensemble.layers[0].weight.shape == (3, 8, 2)
    x = jnp.asarray(data((5, 2)))
    out = invarax.filter_vmap(lambda m, v: m(v), in_axes=(invarax.if_array(0), None))(
        ensemble, x)
    for i in range(3):
        member = nn.MLP(2, 1, 8, 2, key=keys[i])
        assert_bitwise(ensemble.layers[1].weight[i], member.layers[1].weight)
        assert_bitwise(out[i], member(x))


# --- Conv -------------------------------------------------------------------------------

def conv_reference(conv, x):
    """Direct float64 convolution: a loop over every output position and group."""
    x = f64(x)
    n = conv.num_spatial_dims
    w, kernel = f64(conv.weight), conv.kernel_size
    spatial = x.shape[1:]
    if isinstance(conv.padding, str):
        pads = []
        for size, k, s, d in zip(spatial, kernel, conv.stride, conv.dilation, strict=True):
            window = d * (k - 1) + 1
            out = -(-size // s) if conv.padding != "VALID" else (size - window) // s + 1
            total = max((out - 1) * s + window - size, 0)
            lo = total // 2 if conv.padding == "SAME" else total - total // 2
            pads.append((lo, total - lo) if conv.padding != "VALID" else (0, 0))
    else:
        pads = conv.padding
    mode = {"ZEROS": "constant", "REFLECT": "reflect", "REPLICATE": "edge",
            "CIRCULAR": "wrap"}[conv.padding_mode]
    x = np.pad(x, [(0, 0), *pads], mode=mode)
    out_shape = [(p - d * (k - 1) - 1) // s + 1 for p, k, s, d in
                 zip(x.shape[1:], kernel, conv.stride, conv.dilation, strict=True)]
    y = np.zeros((conv.out_channels, *out_shape))
    cg, og = conv.in_channels // conv.groups, conv.out_channels // conv.groups
    for o in range(conv.out_channels):
        g = o // og
        for pos in itertools.product(*map(range, out_shape)):
            window = tuple(slice(p * s, p * s + d * (k - 1) + 1, d) for p, s, d, k in
                           zip(pos, conv.stride, conv.dilation, kernel, strict=True))
            y[(o, *pos)] = np.sum(x[(slice(g * cg, (g + 1) * cg), *window)] * w[o])
    if conv.bias is not None:
        y = y + f64(conv.bias)
    assert len(out_shape) == n
    return y


CONV2D_OPTIONS = [
    {},
    {"stride": 2},
    {"padding": 1},
    {"padding": "SAME"},
    {"padding": "same", "stride": 2, "dilation": 2},
    {"padding": "SAME_LOWER", "stride": (2, 1)},
    {"padding": "VALID", "stride": 3},
    {"padding": ((1, 2), (0, 3)), "dilation": (2, 1)},
    {"padding": (2, 1), "use_bias": False},
    {"groups": 2},
    {"groups": 4, "stride": (1, 2), "dilation": (2, 1), "padding": 1},
    {"padding": 2, "padding_mode": "REFLECT"},
    {"padding": 1, "padding_mode": "circular"},
    {"padding": (1, 2), "padding_mode": "REPLICATE"},
]


@pytest.mark.parametrize("options", CONV2D_OPTIONS, ids=str)
def test_conv2d_against_reference(options):
    conv = nn.Conv2d(4, 8, (3, 2), key=KEY, **options)
    assert conv.weight.shape == (8, 4 // conv.groups, 3, 2)
    x = data((4, 9, 8), seed=1)
    got = conv(x)
    np.testing.assert_allclose(np.asarray(got), conv_reference(conv, x), rtol=1e-5, atol=1e-5)
    xs = jnp.asarray(data((3, 4, 9, 8), seed=2))
    check_vmap_and_jit(conv, xs)
    native = conv(xs)  # beyond Equinox: leading batch dimensions
    assert_bitwise(native, invarax.vmap(conv)(xs))
    assert_bitwise(conv(xs[:2])[:1], native[:1])  # N2


@pytest.mark.parametrize("options", [
    {}, {"stride": 3, "padding": 2}, {"dilation": 3, "padding": "SAME"}, {"groups": 3},
    {"kernel_size": 1}, {"padding": 3, "padding_mode": "REFLECT", "stride": 2},
], ids=str)
def test_conv1d_and_conv3d_against_reference(options):
    kernel = options.pop("kernel_size", 4)
    conv = nn.Conv1d(3, 6, kernel, key=KEY, **options)
    x = data((3, 17), seed=3)
    np.testing.assert_allclose(np.asarray(conv(x)), conv_reference(conv, x), rtol=1e-5,
                               atol=1e-5)
    check_vmap_and_jit(conv, jnp.asarray(data((4, 3, 17), seed=4)))
    conv3 = nn.Conv3d(3, 3, 2, key=KEY, **options)
    x3 = data((3, 5, 6, 7), seed=5)
    np.testing.assert_allclose(np.asarray(conv3(x3)), conv_reference(conv3, x3), rtol=1e-5,
                               atol=1e-5)


def test_general_conv_and_batch_dims():
    conv = nn.Conv(2, 2, 3, kernel_size=2, stride=(1, 2), key=KEY)
    x = jnp.asarray(data((2, 3, 2, 5, 6)))
    y = conv(x)
    assert y.shape == (2, 3, 3, 4, 3)
    assert_bitwise(y, invarax.vmap(invarax.vmap(conv))(x))
    assert_bitwise(y[1, 2], conv(x[1, 2]))


@pytest.mark.parametrize("options", [{}, {"stride": 2, "padding": 1, "dilation": 2},
                                     {"groups": 2, "padding": "SAME"}], ids=str)
def test_conv_gradients(x64, options):
    conv = nn.Conv2d(2, 4, 3, key=KEY, **options)
    x = f64(data((2, 6, 5)))

    def f(w, b, x):
        return invarax.tree_at(lambda c: (c.weight, c.bias), conv, (w, b))(x)

    check_grads(f, (conv.weight, conv.bias, x), order=2)
    batched = nn.Conv1d(2, 2, 2, stride=2, use_bias=False, key=KEY)
    check_grads(lambda w, x: invarax.tree_at(lambda c: c.weight, batched, w)(x),
                (batched.weight, f64(data((3, 2, 7)))))


# --- normalisation ----------------------------------------------------------------------

def test_layer_norm_against_reference():
    norm = nn.LayerNorm((3, 4), eps=1e-3)
    weight, bias = data((3, 4), seed=1), data((3, 4), seed=2)
    norm = invarax.tree_at(lambda m: (m.weight, m.bias), norm, (jnp.asarray(weight),
                                                               jnp.asarray(bias)))
    x = data((3, 4)) * 5 + 2
    xr = f64(x)
    ref = (xr - xr.mean()) / np.sqrt(xr.var() + 1e-3) * weight + bias
    np.testing.assert_allclose(np.asarray(norm(x)), ref, rtol=1e-5, atol=1e-5)
    check_vmap_and_jit(norm, jnp.asarray(data((5, 3, 4))))
    plain = nn.LayerNorm(4, use_weight=False, use_bias=False)
    assert plain.weight is None and plain.bias is None
    row = f64(x[0])
    np.testing.assert_allclose(np.asarray(plain(x[0])),
                               (row - row.mean()) / np.sqrt(row.var() + 1e-5), rtol=1e-5)
    assert nn.LayerNorm(2)(jnp.ones(2, jnp.float16)).dtype == np.float16


def test_rms_norm_against_reference():
    norm = nn.RMSNorm(6, use_bias=False)
    assert norm.bias is None and norm.weight.shape == (6,)
    x = data((6,)) * 3
    xr = f64(x)
    np.testing.assert_allclose(np.asarray(norm(x)), xr / np.sqrt(np.mean(xr ** 2) + 1e-5),
                               rtol=1e-5)
    check_vmap_and_jit(nn.RMSNorm((2, 3)), jnp.asarray(data((4, 2, 3))))


def test_norm_gradients(x64):
    x = f64(data((5,)))
    check_grads(nn.LayerNorm(5), (x,), order=2)
    check_grads(nn.RMSNorm(5), (x,), order=2)
    norm = nn.LayerNorm(5)
    check_grads(lambda w, b: invarax.tree_at(lambda m: (m.weight, m.bias), norm, (w, b))(x),
                (f64(data((5,), seed=1)), f64(data((5,), seed=2))))


# --- Dropout ----------------------------------------------------------------------------

def test_dropout():
    x = jnp.asarray(data((200, 50)))
    dropout = nn.Dropout(0.25)
    key = invarax.random.key(7)
    y = dropout(x, key=key)
    mask = invarax.random.bernoulli(key, 0.75, x.shape)
    assert_bitwise(y, jnp.where(mask, x / 0.75, 0))
    assert abs(float(jnp.mean(mask)) - 0.75) < 0.01
    assert dropout(x, inference=True) is x
    assert nn.Dropout(0.5, inference=True)(x) is x
    assert_bitwise(nn.Dropout(0.5, inference=True)(x, key=key, inference=False),
                   nn.Dropout(0.5)(x, key=key))
    assert nn.Dropout(0.0)(x) is x
    assert_bitwise(nn.Dropout(1.0)(x, key=key), jnp.zeros_like(x))
    keys = invarax.random.split(key, 4)  # N1: per-example keys
    batched = invarax.vmap(lambda v, k: dropout(v, key=k))(x[:4], keys)
    for i in range(4):
        assert_bitwise(batched[i], dropout(x[i], key=keys[i]))
    assert_bitwise(invarax.filter_jit(lambda d, v, k: d(v, key=k))(dropout, x, key), y)
    grad = invarax.grad(lambda v: jnp.sum(dropout(v, key=key)))(x)
    assert_bitwise(grad, jnp.where(mask, jnp.float32(1 / 0.75), 0))


# --- Embedding, Sequential, Lambda, Identity ----------------------------------------------

def test_embedding():
    embedding = nn.Embedding(10, 4, key=KEY)
    assert embedding.weight.shape == (10, 4)
    assert_bitwise(embedding.weight, invarax.random.normal(KEY, (10, 4)))
    assert_bitwise(embedding(3), embedding.weight[3])
    indices = jnp.array([[1, 2], [9, 0]])
    assert_bitwise(embedding(indices), np.asarray(embedding.weight)[np.asarray(indices)])
    assert_bitwise(invarax.vmap(embedding)(indices[0]), embedding(indices[0]))
    assert_bitwise(invarax.filter_jit(lambda e, i: e(i))(embedding, 5), embedding(5))
    given = nn.Embedding(weight=jnp.eye(3))
    assert (given.num_embeddings, given.embedding_size) == (3, 3)
    grad = invarax.grad(lambda w: jnp.sum(nn.Embedding(weight=w)(jnp.array([0, 0, 2]))))(
        jnp.zeros((3, 2)))
    assert_bitwise(grad, np.float32([[2, 2], [0, 0], [1, 1]]))


def test_sequential_lambda_identity():
    layers = [nn.Linear(3, 4, key=KEY), nn.Lambda(nn.relu), nn.Identity(), nn.Dropout(0.5),
              nn.Linear(4, 2, key=invarax.random.key(1))]
    model = nn.Sequential(layers)
    x = jnp.asarray(data((3,)))
    assert_bitwise(model(x, key=invarax.random.key(2)),
                   _manual(layers, x, invarax.random.split(invarax.random.key(2), 5)))
    assert_bitwise(model(x, key=KEY), model(x, key=KEY))
    assert len(model) == 5 and model[0] is layers[0] and list(model) == layers
    assert isinstance(model[1:3], nn.Sequential) and len(model[1:3]) == 2
    inference = nn.Sequential(layers[:3])
    check_vmap_and_jit(inference, jnp.asarray(data((4, 3))))
    assert nn.Identity(1, a=2)(x) is x


def _manual(layers, x, keys):
    for layer, key in zip(layers, keys, strict=True):
        x = layer(x, key=key)
    return x


# --- MultiheadAttention -------------------------------------------------------------------

def attention_reference(mha, q, k, v, mask=None):
    h = mha.num_heads
    qh = linear_reference(mha.query_proj, q).reshape(len(q), h, -1)
    kh = linear_reference(mha.key_proj, k).reshape(len(k), h, -1)
    vh = linear_reference(mha.value_proj, v).reshape(len(v), h, -1)
    outs = []
    for i in range(h):
        logits = qh[:, i] @ kh[:, i].T / np.sqrt(qh.shape[-1])
        if mask is not None:
            m = mask[i] if mask.ndim == 3 else mask
            logits = np.where(m, logits, -np.inf)
        w = np.exp(logits - logits.max(-1, keepdims=True))
        outs.append((w / w.sum(-1, keepdims=True)) @ vh[:, i])
    return linear_reference(mha.output_proj, np.concatenate(outs, axis=1))


@pytest.mark.parametrize("mask_kind", [None, "2d", "3d"])
def test_attention_against_reference(mask_kind):
    mha = nn.MultiheadAttention(2, 8, key_size=6, value_size=5, output_size=7, qk_size=3,
                                vo_size=4, use_query_bias=True, use_output_bias=True, key=KEY)
    q, k, v = data((4, 8)), data((6, 6), seed=1), data((6, 5), seed=2)
    rng = np.random.default_rng(3)
    mask = {None: None, "2d": rng.random((4, 6)) < 0.6,
            "3d": rng.random((2, 4, 6)) < 0.6}[mask_kind]
    if mask is not None:
        mask[..., 0] = True  # every query sees a key
    got = mha(q, k, v, mask)
    assert got.shape == (4, 7)
    np.testing.assert_allclose(np.asarray(got), attention_reference(mha, q, k, v, mask),
                               rtol=1e-5, atol=1e-5)
    qs, ks, vs = (jnp.asarray(data((3, *a.shape), seed=s)) for s, a in enumerate((q, k, v)))
    batched = invarax.vmap(lambda a, b, c: mha(a, b, c, mask))(qs, ks, vs)
    jitted = invarax.filter_jit(lambda m, a, b, c: m(a, b, c, mask))
    for i in range(3):
        assert_bitwise(batched[i], mha(qs[i], ks[i], vs[i], mask))
        assert_bitwise(jitted(mha, qs[i], ks[i], vs[i]), batched[i])


def test_attention_dropout_and_process_heads():
    mha = nn.MultiheadAttention(2, 4, dropout_p=0.5, key=KEY)
    x = jnp.asarray(data((3, 4)))
    key = invarax.random.key(3)
    a, b = mha(x, x, x, key=key), mha(x, x, x, key=invarax.random.key(4))
    assert not np.array_equal(a, b)
    assert_bitwise(a, mha(x, x, x, key=key))
    assert_bitwise(mha(x, x, x, inference=True), nn.MultiheadAttention(2, 4, key=KEY)(x, x, x))
    doubled = mha(x, x, x, inference=True, process_heads=lambda q, k, v: (q, k, 2 * v))
    plain = mha(x, x, x, inference=True)
    np.testing.assert_allclose(np.asarray(doubled), 2 * np.asarray(plain), rtol=1e-6,
                               atol=1e-7)


def test_attention_gradients(x64):
    mha = nn.MultiheadAttention(2, 4, use_query_bias=True, key=KEY)
    x, y = f64(data((3, 4))), f64(data((5, 4), seed=1))
    check_grads(lambda a, b: mha(a, b, b), (x, y))
    params, static = invarax.partition(mha, invarax.is_array)
    check_grads(lambda p: invarax.combine(p, static)(x, y, y), (params,))


# --- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: nn.Linear(3, 2), lambda: nn.MLP(2, 2, 3, 1), lambda: nn.Conv2d(1, 1, 3),
    lambda: nn.Embedding(3, 2), lambda: nn.MultiheadAttention(2, 4),
], ids=["Linear", "MLP", "Conv2d", "Embedding", "MultiheadAttention"])
def test_missing_key_shows_the_fix(make):
    with pytest.raises(TypeError, match=r"needs a PRNG key .*key=invarax\.random\.key\(0\)"):
        make()


def test_bad_input_errors():
    linear = nn.Linear(3, 2, key=KEY)
    with pytest.raises(ValueError, match=r"shape \(in_features,\) = \(3,\).*got shape \(4,\)"):
        linear(jnp.ones(4))
    with pytest.raises(ValueError, match=r"got shape \(5, 2\)"):
        linear(jnp.ones((5, 2)))
    with pytest.raises(ValueError, match=r"got shape \(\)"):
        linear(jnp.array(1.0))
    with pytest.raises(TypeError, match=r"key must be a PRNG key .*got float32\[3\]"):
        nn.Linear(3, 2, key=jnp.ones(3))
    with pytest.raises(RuntimeError, match=r"needs a PRNG key.*key=.*inference=True"):
        nn.Dropout(0.5)(jnp.ones(3))
    with pytest.raises(ValueError, match=r"p is a probability"):
        nn.Dropout(1.5)
    conv = nn.Conv2d(3, 4, 3, key=KEY)
    with pytest.raises(ValueError, match=r"in_channels = 3.*got shape \(4, 8, 8\)"):
        conv(jnp.ones((4, 8, 8)))
    with pytest.raises(ValueError, match=r"rank 3 or more.*got shape \(8, 8\)"):
        conv(jnp.ones((8, 8)))
    with pytest.raises(ValueError, match=r"smaller than the dilated kernel"):
        conv(jnp.ones((3, 2, 8)))
    with pytest.raises(ValueError, match=r"divisible by groups \(2\)"):
        nn.Conv1d(3, 4, 3, groups=2, key=KEY)
    with pytest.raises(ValueError, match=r"'SAME', 'SAME_LOWER' or 'VALID', got 'full'"):
        nn.Conv1d(1, 1, 3, padding="full", key=KEY)
    with pytest.raises(ValueError, match=r"padding must be"):
        nn.Conv2d(1, 1, 3, padding=(1, 2, 3), key=KEY)
    with pytest.raises(ValueError, match=r"kernel_size must be an int >= 1 or 2 such ints"):
        nn.Conv2d(1, 1, (3, 3, 3), key=KEY)
    with pytest.raises(ValueError, match=r"padding_mode must be one of"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror", key=KEY)
    with pytest.raises(ValueError, match=r"x.shape == shape = \(4,\).*invarax.vmap\(layernorm\)"):
        nn.LayerNorm(4)(jnp.ones((2, 4)))
    with pytest.raises(ValueError, match=r"x.shape == shape = \(4,\)"):
        nn.RMSNorm(4)(jnp.ones(3))
    with pytest.raises(TypeError, match=r"integer indices, got float32\[\].*astype"):
        nn.Embedding(3, 2, key=KEY)(1.0)
    with pytest.raises(ValueError, match=r"weight must have shape .* = \(4, 2\)"):
        nn.Embedding(4, 2, weight=jnp.ones((3, 2)))
    with pytest.raises(TypeError, match=r"layer 1 \(relu\) does not take .*key=.*"
                       r"wrap it as nn.Lambda\(relu\)"):
        nn.Sequential([nn.Linear(2, 2, key=KEY), nn.relu])
    mha = nn.MultiheadAttention(2, 4, key=KEY)
    with pytest.raises(ValueError, match=r"mask must have shape .* got \(3, 3\)"):
        mha(jnp.ones((2, 4)), jnp.ones((3, 4)), jnp.ones((3, 4)), jnp.ones((3, 3), bool))
    with pytest.raises(ValueError, match=r"query must have shape \(seq_length, 4\)"):
        mha(jnp.ones((2, 3)), jnp.ones((3, 4)), jnp.ones((3, 4)))
    with pytest.raises(ValueError, match=r"same length"):
        mha(jnp.ones((2, 4)), jnp.ones((3, 4)), jnp.ones((2, 4)))
    with pytest.raises(ValueError, match=r"depth must be a non-negative int"):
        nn.MLP(2, 2, 3, -1, key=KEY)


def test_frozen_layer_error_shows_tree_at():
    import dataclasses
    linear = nn.Linear(2, 2, key=KEY)
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"tree_at"):
        linear.weight = jnp.zeros((2, 2))

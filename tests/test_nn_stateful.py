"""Stateful layers and the layers Equinox added beyond the basics, against Equinox: the
same key gives the same parameters (bitwise where Equinox draws them), the same inputs give
the same outputs (float tolerance); and bitwise for invarax's invariances (jit == eager,
a vmapped row == the unbatched call)."""

import dataclasses
import functools

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.nn as nn
import invarax.numpy as jnp

eqx = pytest.importorskip("equinox")
jax = pytest.importorskip("jax")


def close(ours, theirs, rtol=1e-5, atol=1e-6):
    a = invarax.tree_leaves(ours)
    b = jax.tree_util.tree_leaves(theirs)
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def bitwise(a, b):
    for x, y in zip(invarax.tree_leaves(a), invarax.tree_leaves(b), strict=True):
        assert_bitwise(x, y)


def _vmap_bn(lib, layer, **kw):
    return lib.vmap(lambda x, s: layer(x, s, **kw), in_axes=(0, None), out_axes=(0, None),
                    axis_name="batch")


@pytest.mark.parametrize("mode", ["ema", "batch"])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)], ids=str)
def test_batch_norm_as_equinox(mode, shape):
    ours, state = nn.make_with_state(nn.BatchNorm)(3, "batch", mode=mode, momentum=0.9)
    theirs, estate = eqx.nn.make_with_state(eqx.nn.BatchNorm)(3, "batch", mode=mode,
                                                               momentum=0.9)
    assert list(state._state) == list(estate._state)  # the same keys: Equinox's paths
    step = _vmap_bn(invarax, ours)
    # Equinox's step compiled once (eagerly JAX compiles each operation), the layer an argument
    estep = functools.partial(eqx.filter_jit(lambda layer, x, s: _vmap_bn(jax, layer)(x, s)),
                              theirs)
    for i in range(3):
        x = data(shape, seed=i) * (i + 1) + i
        y, state = step(jnp.asarray(x), state)
        ey, estate = estep(x, estate)
        close(y, ey, rtol=1e-5, atol=2e-6)
        close([v for v in invarax.tree_leaves(state) if v.dtype != np.bool_],
              [v for v in jax.tree_util.tree_leaves(estate) if v.dtype != np.bool_])
    x = data(shape, seed=9)
    y, _ = _vmap_bn(invarax, ours, inference=True)(jnp.asarray(x), state)
    ey, _ = _vmap_bn(jax, theirs, inference=True)(x, estate)
    close(y, ey, atol=2e-6)
    inf_model = nn.inference_mode(ours)
    assert inf_model.inference is True
    y2, _ = _vmap_bn(invarax, inf_model)(jnp.asarray(x), state)
    bitwise(y, y2)


def test_batch_norm_under_jit_is_bitwise_eager():
    bn, state = nn.make_with_state(nn.BatchNorm)(3, "batch", mode="batch")
    step = _vmap_bn(invarax, bn)
    x = jnp.asarray(data((5, 3, 4)))
    eager = step(x, state)
    jitted = invarax.filter_jit(step)(x, state)
    bitwise(eager, jitted)


def test_batch_norm_default_mode_warns_as_equinox():
    with pytest.warns(UserWarning, match="defaults to 'ema'"):
        bn = nn.BatchNorm(2, "batch")
    assert bn.mode == "ema"
    with pytest.raises(ValueError, match="mode must be"):
        nn.BatchNorm(2, "batch", mode="other")


def test_batch_norm_without_its_vmap_axis_says_so():
    bn, state = nn.make_with_state(nn.BatchNorm)(2, "batch", mode="batch")
    with pytest.raises(Exception, match="batch"):
        bn(jnp.ones(2), state)
    with pytest.raises(ValueError, match=r"needs one example of shape \(input_size, ...\)"):
        _vmap_bn(invarax, bn)(jnp.ones((4, 3)), state)


def test_state_semantics():
    bn, state = nn.make_with_state(nn.BatchNorm)(2, "batch", mode="batch")
    new = state.set(bn.batch_counter, jnp.array(5))
    with pytest.raises(ValueError, match="already used"):
        state.get(bn.batch_counter)
    assert int(new.get(bn.batch_counter)) == 5
    with pytest.raises(ValueError, match="structure, shapes and dtypes"):
        new.set(bn.batch_counter, jnp.zeros(2))
    sub = new.substate(bn.batch_counter)
    sub = sub.set(bn.batch_counter, jnp.array(7))
    new = new.update(sub)
    assert int(new.get(bn.batch_counter)) == 7
    leaves, treedef = invarax.tree_flatten(new)
    assert len(leaves) == 3
    clone = invarax.tree_unflatten(treedef, leaves)
    assert int(clone.get(bn.batch_counter)) == 7
    with pytest.raises(ValueError, match="initial states were deleted"):
        nn.State(bn)
    with pytest.raises(ValueError, match="not a function"):
        nn.StateIndex(lambda: jnp.zeros(2))


def test_sequential_threads_the_state_as_equinox():
    keys = invarax.random.key(0), jax.random.key(0)

    def build(lib_nn, key, relu):
        return lib_nn.Sequential([lib_nn.Linear(3, 4, key=key),
                                  lib_nn.BatchNorm(4, "batch", mode="batch"),
                                  lib_nn.LayerNorm(4), lib_nn.Lambda(relu)])

    ours, state = nn.make_with_state(build)(nn, keys[0], nn.relu)
    theirs, estate = eqx.nn.make_with_state(build)(eqx.nn, keys[1], jax.nn.relu)
    assert ours.is_stateful()
    x = data((5, 3))
    y, state = invarax.vmap(ours, in_axes=(0, None), out_axes=(0, None),
                            axis_name="batch")(jnp.asarray(x), state)
    ey, estate = jax.vmap(theirs, in_axes=(0, None), out_axes=(0, None),
                          axis_name="batch")(x, estate)
    close(y, ey, atol=2e-6)
    close(state, estate)


@pytest.mark.parametrize("args", [(2, 4, 1e-5, True), (1, 3, 1e-3, True), (3, None, 1e-5, False),
                                  (4, 4, 1e-5, True)], ids=str)
@pytest.mark.parametrize("shape", [(), (5,), (3, 2)], ids=str)
def test_group_norm_as_equinox(args, shape):
    groups, channels, eps, affine = args
    c = channels or 6
    ours = nn.GroupNorm(groups, channels, eps, affine)
    theirs = eqx.nn.GroupNorm(groups, channels, eps, affine)
    x = data((c, *shape)) * 3 + 1
    close(ours(jnp.asarray(x)), eqx.filter_jit(theirs)(x))  # one program, not one per op
    xs = jnp.asarray(data((4, c, *shape), seed=1))
    batched = invarax.vmap(ours)(xs)
    for i in range(4):
        assert_bitwise(batched[i], ours(xs[i]))
    state = object()
    out, same = ours(jnp.asarray(x), state)
    assert same is state


def test_group_norm_errors():
    with pytest.raises(ValueError, match="must divide"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="pass channels="):
        nn.GroupNorm(2)
    with pytest.raises(ValueError, match="groups divide"):
        nn.GroupNorm(2, 4)(jnp.ones((3, 2)))


@pytest.mark.parametrize("alpha", [0.25, 0.1, np.array([0.1, 0.2, 0.3], np.float32)], ids=str)
def test_prelu_as_equinox(alpha):
    x = data((4, 3))
    close(nn.PReLU(alpha)(jnp.asarray(x)), eqx.nn.PReLU(alpha)(x))
    ours = invarax.grad(lambda m: m(jnp.asarray(x)).sum())(nn.PReLU(alpha))
    theirs = jax.grad(lambda m: m(x).sum())(eqx.nn.PReLU(alpha))
    close(ours.negative_slope, theirs.negative_slope)


@pytest.mark.parametrize("size, seq, theta", [(4, 3, 10_000.0), (8, 7, 500.0), (2, 1, 10.0)])
def test_rotary_positional_embedding_as_equinox(size, seq, theta):
    eqx.nn._embedding.internal_rope_embedding_cache.clear()
    x = data((seq, size))
    ours = nn.RotaryPositionalEmbedding(size, theta)(jnp.asarray(x))
    theirs = eqx.nn.RotaryPositionalEmbedding(size, theta)(x)
    close(ours, theirs, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="must be even"):
        nn.RotaryPositionalEmbedding(3)
    with pytest.raises(ValueError, match=rf"needs x of shape \(seq_length, {size}\)"):
        nn.RotaryPositionalEmbedding(size)(jnp.ones((seq, size + 2)))


def test_rotary_embedding_in_attention_rows_are_bitwise_under_vmap():
    rope = nn.RotaryPositionalEmbedding(4)
    xs = jnp.asarray(data((3, 5, 4)))
    batched = invarax.vmap(rope)(xs)
    for i in range(3):
        assert_bitwise(batched[i], rope(xs[i]))


@pytest.mark.parametrize("axis", [0, 1, None])
def test_weight_norm_as_equinox(axis):
    ours = nn.WeightNorm(nn.Linear(3, 4, key=invarax.random.key(0)), axis=axis)
    theirs = eqx.nn.WeightNorm(eqx.nn.Linear(3, 4, key=jax.random.key(0)), axis=axis)
    assert_bitwise(ours.layer.weight, np.asarray(theirs.layer.weight))
    close(ours.g, theirs.g)
    x = data(3)
    close(ours(jnp.asarray(x)), theirs(x))
    ours_g = invarax.filter_grad(lambda m: m(jnp.asarray(x)).sum())(ours)
    theirs_g = eqx.filter_grad(lambda m: m(x).sum())(theirs)
    close(ours_g.g, theirs_g.g, atol=1e-5)
    close(ours_g.layer.weight, theirs_g.layer.weight, atol=1e-5)


def test_spectral_norm_as_equinox():
    lin, elin = nn.Linear(5, 4, key=invarax.random.key(0)), eqx.nn.Linear(5, 4,
                                                                        key=jax.random.key(0))
    ours, state = nn.make_with_state(nn.SpectralNorm)(lin, "weight", key=invarax.random.key(1))
    theirs, estate = eqx.nn.make_with_state(eqx.nn.SpectralNorm)(elin, "weight",
                                                                 key=jax.random.key(1))
    close(state, estate, atol=1e-5)
    for i in range(3):
        x = data(5, seed=i)
        y, state = ours(jnp.asarray(x), state)
        ey, estate = theirs(x, estate)
        close(y, ey, atol=1e-5)
    y_inf, same = ours(jnp.asarray(x), state, inference=True)
    ey_inf, _ = theirs(x, estate, inference=True)
    close(y_inf, ey_inf, atol=1e-5)
    with pytest.raises(ValueError, match="at least 2-d"):
        nn.SpectralNorm(lin, "bias", key=invarax.random.key(0))


def test_spectral_norm_jit_and_vmap_bitwise():
    lin = nn.Linear(5, 4, key=invarax.random.key(0))
    sn, state = nn.make_with_state(nn.SpectralNorm)(lin, "weight", key=invarax.random.key(1))
    xs = jnp.asarray(data((3, 5)))
    f = invarax.vmap(lambda x, s: sn(x, s, inference=True), in_axes=(0, None),
                     out_axes=(0, None))
    ys, _ = f(xs, state)
    for i in range(3):
        assert_bitwise(ys[i], sn(xs[i], state, inference=True)[0])
    bitwise(invarax.filter_jit(sn)(xs[0], state), sn(xs[0], state))


def test_shared_ties_weights_and_sums_their_gradients():
    a = nn.Linear(3, 3, key=invarax.random.key(0))
    b = nn.Linear(3, 3, key=invarax.random.key(1))
    shared = nn.Shared((a, b), lambda p: p[1].weight, lambda p: p[0].weight)
    assert isinstance(shared.pytree[1].weight, nn.SharedNode)
    x = jnp.asarray(data(3))

    def loss(s):
        first, second = s()
        return second(first(x)).sum()

    grads = invarax.filter_grad(loss)(shared)
    plain = invarax.grad(lambda w: tie(w, b)(tie(w, a)(x)).sum())(a.weight)
    np.testing.assert_allclose(np.asarray(grads.pytree[0].weight), np.asarray(plain),
                               rtol=1e-6)
    # Equinox's words begin the message (its tests match them)
    with pytest.raises(ValueError, match="Every node being shared together must have the "
                                         "same pytree structure"):
        nn.Shared((a, b), lambda p: p[1].weight, lambda p: p[0].bias)


def tie(w, layer):
    return invarax.tree_at(lambda m: m.weight, layer, w)


def test_shared_as_equinox():
    emb = nn.Embedding(4, 3, key=invarax.random.key(0))
    lin = nn.Linear(3, 4, key=invarax.random.key(1))
    shared = nn.Shared((emb, lin), lambda p: p[1].weight, lambda p: p[0].weight)
    eemb = eqx.nn.Embedding(4, 3, key=jax.random.key(0))
    elin = eqx.nn.Linear(3, 4, key=jax.random.key(1))
    eshared = eqx.nn.Shared((eemb, elin), lambda p: p[1].weight, lambda p: p[0].weight)
    e, lyr = shared()
    ee, el = eshared()
    close(lyr(e(jnp.asarray(2))), el(ee(2)))


def test_inference_mode_sets_every_flag():
    model = nn.Sequential([nn.Dropout(0.5),
                           nn.MultiheadAttention(1, 2, dropout_p=0.1, key=invarax.random.key(0))])
    flags = lambda m: [m.layers[0].inference, m.layers[1].dropout.inference]  # noqa: E731
    assert flags(model) == [False, False]
    assert flags(nn.inference_mode(model)) == [True, True]
    assert flags(nn.inference_mode(nn.inference_mode(model), value=False)) == [False, False]


def test_deterministic_is_equinox_s_deprecated_inference():
    with pytest.warns(UserWarning, match="deprecated"):
        layer = nn.Dropout(0.5, deterministic=True)
    assert layer.inference is True
    x = jnp.ones(4)
    with pytest.warns(UserWarning, match="deprecated"):
        assert_bitwise(nn.Dropout(0.5)(x, deterministic=True), x)
    mha = nn.MultiheadAttention(1, 2, dropout_p=0.5, key=invarax.random.key(0))
    q = jnp.asarray(data((2, 2)))
    with pytest.warns(UserWarning, match="deprecated"):
        out = mha(q, q, q, deterministic=True)
    assert_bitwise(out, mha(q, q, q, inference=True))


def test_dot_product_attention_as_equinox():
    from equinox.nn import _attention as eatt

    q, k, v = data((3, 4)), data((5, 4), seed=1), data((5, 2), seed=2)
    mask = data((3, 5), seed=3) > 0
    for m in (None, mask):
        ours = nn.dot_product_attention(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v),
                                        None if m is None else jnp.asarray(m))
        close(ours, eatt.dot_product_attention(q, k, v, m))
        close(nn.dot_product_attention_weights(jnp.asarray(q), jnp.asarray(k)),
              eatt.dot_product_attention_weights(q, k))
    drop = nn.dot_product_attention(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v),
                                    dropout=nn.Dropout(0.5), key=invarax.random.key(0))
    edrop = eatt.dot_product_attention(q, k, v, dropout=eqx.nn.Dropout(0.5),
                                       key=jax.random.key(0))
    close(drop, edrop)
    with pytest.raises(ValueError, match="mask must have shape"):
        nn.dot_product_attention_weights(jnp.asarray(q), jnp.asarray(k), jnp.ones((5, 3)))


def test_new_layers_have_equinox_fields():
    for name in ("BatchNorm", "GroupNorm", "PReLU", "RotaryPositionalEmbedding",
                 "WeightNorm", "SpectralNorm", "Shared", "StateIndex"):
        ours = {f.name for f in dataclasses.fields(getattr(nn, name))}
        theirs = {f.name for f in dataclasses.fields(getattr(eqx.nn, name))} - {"_norm"}
        assert ours == theirs, name


def test_the_coverage_table_in_docs_is_true():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "nn.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| (yes|no) \|", text, re.M)
    assert len(rows) == 102
    here = sum(h == "yes" for _, h in rows)
    assert f"{here} of the {len(rows)} names are here" in " ".join(text.split())

    def lookup(module, name):
        for part in name.split("."):
            module = getattr(module, part, None)
        return module

    for name, here in rows:
        assert lookup(eqx, name) is not None, f"{name} is not Equinox's"
        if here == "yes":
            assert lookup(invarax, name) is not None, f"{name} is listed as covered"
        else:
            assert lookup(invarax, name) is None, f"{name} is here: mark it yes"


def test_batch_norm_over_two_named_axes_as_equinox():
    x = data((2, 3, 4))
    ours, state = nn.make_with_state(nn.BatchNorm)(4, ("a", "b"), mode="batch")
    theirs, estate = eqx.nn.make_with_state(eqx.nn.BatchNorm)(4, ("a", "b"), mode="batch")

    def nest(lib, layer):
        inner = lib.vmap(layer, in_axes=(0, None), out_axes=(0, None), axis_name="b")
        return lib.vmap(inner, in_axes=(0, None), out_axes=(0, None), axis_name="a")

    y, state = nest(invarax, ours)(jnp.asarray(x), state)
    ey, estate = nest(jax, theirs)(x, estate)
    close(y, ey, atol=2e-6)
    close(state, estate)


@pytest.mark.parametrize("options", [{"use_bias": False}, {"use_final_bias": False},
                                     {"use_bias": False, "use_final_bias": False}, {}],
                         ids=str)
def test_mlp_signature_as_equinox(options):
    ours = nn.MLP(3, 2, 5, 2, final_activation=nn.sigmoid, key=invarax.random.key(0),
                  **options)
    theirs = eqx.nn.MLP(3, 2, 5, 2, final_activation=jax.nn.sigmoid,
                        key=jax.random.key(0), **options)
    a = invarax.tree_leaves(invarax.filter(ours, invarax.is_array))
    b = [x for x in jax.tree_util.tree_leaves(theirs) if isinstance(x, jax.Array)]
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert_bitwise(x, np.asarray(y))
    x = data(3)
    close(ours(jnp.asarray(x)), theirs(x))


def test_rotary_embedding_in_multihead_attention_as_equinox():
    """Equinox's documented recipe: RoPE applied to the heads through process_heads."""
    def run(lib, lib_nn, key):
        mha = lib_nn.MultiheadAttention(2, 8, key=key)
        rope = lib_nn.RotaryPositionalEmbedding(4)

        def process_heads(q, k, v):
            q = lib.vmap(rope, in_axes=1, out_axes=1)(q)
            k = lib.vmap(rope, in_axes=1, out_axes=1)(k)
            return q, k, v

        x = lib.numpy.asarray(data((5, 8)))
        return mha(x, x, x, process_heads=process_heads)

    eqx.nn._embedding.internal_rope_embedding_cache.clear()
    close(run(invarax, nn, invarax.random.key(0)), run(jax, eqx.nn, jax.random.key(0)),
          atol=1e-5)


def _layers():
    key = invarax.random.key(3)
    return {
        "PReLU": (nn.PReLU(np.array([0.1, 0.2, 0.3], np.float32)), (3,)),
        "GroupNorm": (nn.GroupNorm(2, 4), (4, 5)),
        "WeightNorm": (nn.WeightNorm(nn.Linear(3, 4, key=key)), (3,)),
        "RotaryPositionalEmbedding": (nn.RotaryPositionalEmbedding(6), (5, 6)),
        "SpectralNorm": (nn.make_with_state(nn.SpectralNorm)(nn.Linear(3, 4, key=key),
                                                              "weight", key=key), (3,)),
    }


@pytest.mark.parametrize("name", list(_layers()))
@pytest.mark.parametrize("batch", [1, 3, 8])
def test_new_layers_vmap_rows_and_jit_are_bitwise(name, batch):
    layer, shape = _layers()[name]
    if isinstance(layer, tuple):  # a stateful layer and its state, in inference mode
        model, state = layer
        layer = lambda x: model(x, state, inference=True)[0]  # noqa: E731
    xs = jnp.asarray(data((batch, *shape), seed=batch))
    batched = invarax.vmap(layer)(xs)
    jitted = invarax.filter_jit(invarax.vmap(layer))(xs)
    assert_bitwise(jitted, batched)
    for i in range(batch):
        assert_bitwise(batched[i], layer(xs[i]))
    if name != "SpectralNorm":  # the gradient w.r.t. the layer's parameters, jit == eager
        grad = invarax.filter_grad(lambda m, x: m(x).sum())
        for a, b in zip(invarax.tree_leaves(grad(layer, xs[0])),
                        invarax.tree_leaves(invarax.filter_jit(grad)(layer, xs[0])),
                        strict=True):
            assert_bitwise(a, b)

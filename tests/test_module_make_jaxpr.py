"""filter_make_jaxpr, filter_eval_shape and filter_closure_convert, against Equinox; the
converted function is bitwise the original (eager, jit, vmap)."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.nn as nn
import invarax.numpy as jnp


def _f(p, x, mod):
    return {"y": mod.tanh(p["w"] @ x) * p["n"], "name": p["name"], "i": mod.arange(3)}


def _p(mod):
    return {"w": mod.asarray(data((2, 3))), "n": 2, "name": "layer"}


def _shapes(tree, lib):
    leaves = lib.tree_util.tree_leaves(tree)
    return [(tuple(x.shape), np.dtype(x.dtype).name) if hasattr(x, "shape") else x
            for x in leaves]


def test_filter_eval_shape_and_make_jaxpr_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    x = data(3)
    ours = invarax.filter_eval_shape(lambda p, x: _f(p, x, jnp), _p(jnp), jnp.asarray(x))
    theirs = eqx.filter_eval_shape(lambda p, x: _f(p, x, jax.numpy), _p(jax.numpy), x)
    assert _shapes(ours, invarax) == _shapes(theirs, jax)
    assert ours["name"] == "layer"
    jaxpr, struct, static = invarax.filter_make_jaxpr(lambda p, x: _f(p, x, jnp))(
        _p(jnp), jnp.asarray(x))
    ejaxpr, estruct, estatic = eqx.filter_make_jaxpr(lambda p, x: _f(p, x, jax.numpy))(
        _p(jax.numpy), x)
    assert [(a.shape, np.dtype(a.dtype)) for a in jaxpr.in_avals] == \
        [(a.shape, np.dtype(a.dtype)) for a in ejaxpr.in_avals]
    assert _shapes(struct, invarax) == _shapes(estruct, jax)
    assert static == estatic
    out = invarax.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *invarax.tree_leaves(
        invarax.filter((_p(jnp), jnp.asarray(x)), invarax.is_array)))
    out = invarax.tree_unflatten(invarax.tree_structure(struct), out)
    assert_bitwise(out["y"], _f(_p(jnp), jnp.asarray(x), jnp)["y"])


def test_filter_eval_shape_of_a_model_and_of_stand_ins():
    model = invarax.filter_eval_shape(nn.Linear, 3, 4, key=invarax.random.key(0))
    assert model.weight.shape == (4, 3) and model.in_features == 3
    struct = invarax.filter_eval_shape(lambda x: x.sum(axis=0), invarax.core.aval.ShapedArray(
        (5, 2), np.dtype(np.float32)))
    assert struct.shape == (2,) and struct.dtype == np.float32


def test_filter_closure_convert_is_bitwise_the_function():
    w = jnp.asarray(data((2, 3)))
    x = jnp.asarray(data(3, seed=1))

    def fn(x, name):
        return jnp.tanh(w @ x), name

    converted = invarax.filter_closure_convert(fn, x, "s")
    assert len(converted.consts) == 1 and converted.consts[0] is w
    for f in (converted, invarax.filter_jit(converted)):
        y, name = f(x, "s")
        assert name == "s"
        assert_bitwise(y, fn(x, "s")[0])
    xs = jnp.asarray(data((4, 3), seed=2))
    ys = invarax.vmap(lambda x: converted(x, "s")[0])(xs)
    for i in range(4):
        assert_bitwise(ys[i], fn(xs[i], "s")[0])
    with pytest.raises(ValueError, match="other structure, shapes or dtypes"):
        converted(jnp.ones(4), "s")
    with pytest.raises(ValueError, match="other non-array arguments"):
        converted(x, "t")


def _closure_converted_vjp(lib, mod, w, x):
    """Equinox's pattern: a custom_vjp over a closure-converted function sees its consts."""
    @mod.filter_custom_vjp
    def apply(fn, x):
        return fn(x)

    @apply.def_fwd
    def apply_fwd(perturbed, fn, x):
        return fn(x), None

    @apply.def_bwd
    def apply_bwd(residuals, g, perturbed, fn, x):
        _, vjp_fn = mod.filter_vjp(lambda f: f(x), fn)
        return vjp_fn(g)[0]

    def loss(w):
        fn = mod.filter_closure_convert(lambda x: lib.sin(w * x), x)
        return apply(fn, x).sum()

    return mod.filter_grad(loss)(w)


def test_filter_closure_convert_in_custom_vjp_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    w, x = data(3), data(3, seed=1)
    ours = _closure_converted_vjp(jnp, invarax, jnp.asarray(w), jnp.asarray(x))
    theirs = _closure_converted_vjp(jax.numpy, eqx, w, x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)
    plain = invarax.grad(lambda w: jnp.sin(w * jnp.asarray(x)).sum())(jnp.asarray(w))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(plain), rtol=1e-6)

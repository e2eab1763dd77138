"""``filter_pure_callback``, ``filter_vmap`` as a decorator factory and the
``ShapeDtypeStruct``s of ``filter_eval_shape``/``filter_make_jaxpr``, against Equinox where
installed; jit == eager and vmap rows bitwise."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp


def _callback(d, tag, scale):
    return {"y": np.tanh(d["a"] * scale).astype(np.float32), "tag": tag, "n": d["n"]}


def _call(mod, struct, x, tag="t"):
    out = {"y": struct((3,), np.float32), "tag": "t", "n": 4}
    return mod.filter_pure_callback(_callback, {"a": x, "n": 4}, tag, scale=2.0,
                                    result_shape_dtypes=out)


def test_filter_pure_callback_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    x = data(3)
    ours = _call(invarax, invarax.ShapeDtypeStruct, jnp.asarray(x))
    theirs = _call(eqx, jax.ShapeDtypeStruct, x)
    assert ours["tag"] == theirs["tag"] == "t" and ours["n"] == theirs["n"] == 4
    assert isinstance(ours["y"], invarax.Array)
    assert_bitwise(ours["y"], np.asarray(theirs["y"]))


def test_filter_pure_callback_jit_and_vmap_rows_bitwise():
    xs = jnp.asarray(data((5, 3)))

    def f(x):
        return _call(invarax, invarax.ShapeDtypeStruct, x)["y"]

    eager = [f(xs[i]) for i in range(5)]
    assert_bitwise(invarax.filter_jit(f)(xs[1]), eager[1])
    for method in (None, "expand_dims"):
        def g(x, method=method):
            out = {"y": invarax.ShapeDtypeStruct((3,), np.float32), "tag": "t", "n": 4}
            return invarax.filter_pure_callback(
                lambda d, tag, scale: _callback(d, tag, scale), {"a": x, "n": 4}, "t",
                scale=2.0, result_shape_dtypes=out, vmap_method=method)["y"]

        for n in (1, 5):
            batched = invarax.filter_vmap(g)(xs[:n])
            for i in range(n):
                assert_bitwise(batched[i], eager[i])


def test_filter_pure_callback_errors():
    x = jnp.asarray(data(3))
    with pytest.raises(ValueError, match="other non-array values"):
        _call(invarax, invarax.ShapeDtypeStruct, x, tag="u")
    with pytest.raises(TypeError, match="callable"):
        invarax.filter_pure_callback(3, x, result_shape_dtypes=None)
    with pytest.raises(ValueError, match="not both"):
        invarax.filter_pure_callback(lambda x: x, x, vectorized=True,
                                     vmap_method="sequential", result_shape_dtypes=x)


def test_filter_vmap_as_a_decorator_factory():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    w, xs = data(3), data((4, 3), seed=1)

    def body(w, x, name):
        return jnp.sin(w * x), name

    ours = invarax.filter_vmap(in_axes=(None, 0, None))(body)
    theirs = eqx.filter_vmap(in_axes=(None, 0, None))(
        lambda w, x, name: (jax.numpy.sin(w * x), name))
    y, name = ours(jnp.asarray(w), jnp.asarray(xs), "s")
    ey, ename = theirs(w, xs, "s")
    assert name == ename == "s"
    np.testing.assert_allclose(np.asarray(y), np.asarray(ey), rtol=1e-6)
    for i in range(4):
        assert_bitwise(y[i], body(jnp.asarray(w), jnp.asarray(xs[i]), "s")[0])

    @invarax.filter_vmap(out_axes=1, axis_size=2)
    def stacked():
        return jnp.arange(3.0)

    assert stacked().shape == (3, 2)
    with pytest.raises(TypeError, match="decorator"):
        invarax.filter_vmap(0)


def test_filter_eval_shape_gives_shape_dtype_structs_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    x = data((4, 3))

    def f(mod, x):
        return {"s": x.sum(axis=0), "i": mod.arange(2), "w": mod.asarray(2.0) * 1, "k": "n"}

    ours = invarax.filter_eval_shape(lambda x: f(jnp, x), jnp.asarray(x))
    theirs = eqx.filter_eval_shape(lambda x: f(jax.numpy, x), x)
    for key in ("s", "i", "w"):
        assert isinstance(ours[key], invarax.ShapeDtypeStruct)
        assert ours[key].shape == theirs[key].shape
        assert ours[key].dtype == theirs[key].dtype
        assert ours[key].weak_type == theirs[key].weak_type
    assert ours["k"] == theirs["k"] == "n"
    _, struct, _ = invarax.filter_make_jaxpr(lambda x: f(jnp, x))(jnp.asarray(x))
    assert isinstance(struct["s"], invarax.ShapeDtypeStruct)
    # A ShapeDtypeStruct from one call stands in for an array in the next.
    again = invarax.filter_eval_shape(lambda s: s * 2, ours["s"])
    assert again.shape == (3,) and again.dtype == np.float32

"""JAX's AOT surface: ``jit(f).trace(...)``, ``.lower(...)``, ``.compile()``,
``jit(f).eval_shape(...)``, against JAX where it is installed."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp


def _f(np_):
    def f(x, y, *, scale):
        return {"prod": x * y * scale, "total": np_.sum(x)}

    return f


X = np.arange(3, dtype=np.float32)


def test_stages_and_their_views():
    jitted = invarax.jit(_f(jnp), static_argnames="scale")
    traced = jitted.trace(X, 2.0, scale=3)
    assert "reduce_sum" in str(traced.jaxpr) and traced.fun_name == "f"
    lowered = traced.lower()
    assert lowered.as_text() == jitted.lower(X, 2.0, scale=3).as_text()
    assert lowered.as_text() == str(invarax.make_jaxpr(_f(jnp), static_argnames="scale",
                                                       optimize=True)(X, 2.0, scale=3))
    compiled = lowered.compile()
    out = compiled(jnp.asarray(X + 1), 5.0)  # the static argument was fixed by lower
    eager = _f(jnp)(jnp.asarray(X + 1), 5.0, scale=3)
    assert all(np.array_equal(out[k], eager[k]) for k in out)  # N3, through the stages
    assert jitted.eval_shape(X, 2.0, scale=3) == traced.out_info


def test_compiled_rejects_another_signature():
    compiled = invarax.jit(_f(jnp), static_argnames="scale").lower(X, 2.0, scale=3).compile()
    with pytest.raises(TypeError, match=r"argument leaf 0 of f is f32\[4\], compiled for "
                                        r"f32\[3\]"):
        compiled(np.ones(4, np.float32), 2.0)
    with pytest.raises(TypeError, match="static ones are fixed"):
        compiled(X, 2.0, scale=3)
    with pytest.raises(TypeError, match="structure"):
        compiled(X, (2.0,))
    # under a transformation it runs as the jitted function (static value kept)
    grads = invarax.grad(lambda x: compiled(x, 2.0)["total"])(jnp.asarray(X))
    assert np.array_equal(grads, np.ones(3, np.float32))


def test_matches_jax():
    jax = pytest.importorskip("jax")
    ours = invarax.jit(_f(jnp), static_argnames="scale").trace(X, 2.0, scale=3)
    theirs = jax.jit(_f(jax.numpy), static_argnames="scale").trace(X, 2.0, scale=3)
    assert {k: (v.shape, v.dtype) for k, v in ours.out_info.items()} == {
        k: (v.shape, v.dtype) for k, v in theirs.out_info.items()}
    got = ours.lower().compile()(X, 2.0)
    want = theirs.lower().compile()(X, 2.0)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
    with pytest.raises(TypeError):
        theirs.lower().compile()(np.ones(4, np.float32), 2.0)

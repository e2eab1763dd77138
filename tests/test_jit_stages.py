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


# XLA's debug options (as jaxlib exposes them) and the build options, which JAX accepts, and
# names it rejects (invarax accepts any name starting with xla_).
_OPTIONS = [({"xla_cpu_enable_fast_math": True}, True), ({"xla_dump_to": "/dev/null"}, True),
            ({"xla_backend_optimization_level": 0}, True),
            ({"exec_time_optimization_effort": 0.5}, True), ({"optimization_level": 0}, True),
            ({"not_an_option": 1}, False), ({"fast_math": True}, False),
            ({"xla_cpu_enable_fast_math": True, "bogus": 1}, False)]


@pytest.mark.parametrize("options, accepted", _OPTIONS)
def test_compiler_options_as_jax(options, accepted):
    jax = pytest.importorskip("jax")
    for mod, error in ((invarax, invarax.errors.JaxRuntimeError),
                       (jax, jax.errors.JaxRuntimeError)):
        lowered = mod.jit(lambda x: x * 2).lower(X)
        if accepted:
            assert np.array_equal(lowered.compile(compiler_options=options)(X), X * 2)
            assert np.array_equal(mod.jit(lambda x: x * 2, compiler_options=options)(X), X * 2)
        else:
            bad = next(name for name in options if not name.startswith("xla_"))
            with pytest.raises(error, match=f"No such compile option: '{bad}'"):
                lowered.compile(compiler_options=options)
            with pytest.raises(error, match=f"No such compile option: '{bad}'"):
                mod.jit(lambda x: x * 2, compiler_options=options)(X)


def test_compiler_options_of_filtered_transforms():
    lowered = invarax.filter_jit(lambda x, n: x * n).lower(jnp.ones(2), 3)
    assert lowered.compile(compiler_options={"xla_cpu_enable_fast_math": False})(
        jnp.ones(2), 3).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="invarax accepts XLA's options"):
        lowered.compile(compiler_options={"nope": 1})
    pmapped = invarax.filter_pmap(lambda x: x + 1).lower(jnp.ones(1))
    with pytest.raises(ValueError, match="No such compile option: 'nope'"):
        pmapped.compile(compiler_options={"nope": 1})
    with pytest.raises(TypeError, match="must be a dict"):
        pmapped.compile(compiler_options=[("xla_dump_to", "x")])

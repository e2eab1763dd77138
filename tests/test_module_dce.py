"""Equinox's ``debug.store_dce``/``debug.inspect_dce`` and ``internal.assert_dce``: whether
the compiler eliminated a value as dead code, against Equinox where installed."""

import contextlib
import io

import numpy as np
import pytest

import invarax
import invarax.module.internal as ixi
import invarax.numpy as jnp


def _cases(jax, jnp, eqx):
    """``name -> (function to call, its argument)``, each storing under its own name."""
    store = eqx.debug.store_dce

    def tuple_with_static(x):
        a, _, _ = store((x**2, x + 1, "foobar"), name="tuple")
        return a

    def nested(x):
        d = store({"a": x, "b": [x * 3, 7, jnp.sum(x)]}, name="nested")
        return d["a"] + d["b"][2]

    def all_dead(x):
        store((x * 2, x - 1), name="dead")
        return x

    def batched(x):
        a, _ = store((x * 2, jnp.sin(x)), name="batched")
        return a

    def in_cond(x):
        def yes():
            a, _ = store((x + 1, x * 5), name="cond")
            return a
        return jax.lax.cond(x > 0, yes, lambda: x)

    def constant(x):
        c, _ = store((jnp.arange(3), jnp.ones(2)), name="constant")
        return x + c

    return {
        "tuple": (jax.jit(tuple_with_static), 1),
        "nested": (jax.jit(nested), jnp.zeros((2, 3), jnp.int32)),
        "dead": (jax.jit(all_dead), 1.0),
        "batched": (jax.jit(jax.vmap(batched)), jnp.ones((4, 2))),
        "cond": (jax.jit(in_cond), 2.0),
        "constant": (jax.jit(constant), jnp.int32(1)),
    }


def _reports(jax, jnp, eqx):
    out = {}
    for name, (f, x) in _cases(jax, jnp, eqx).items():
        f(x)
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            eqx.debug.inspect_dce(name)
        out[name] = text.getvalue()
    return out


def test_inspect_dce_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    ours = _reports(invarax, jnp, invarax)
    assert ours == _reports(jax, jax.numpy, eqx)
    assert ours["tuple"] == ("Found 1 call to `equinox.debug.store_dce`.\nEntry 0:\n"
                             "(i32[], <DCE'd>, 'foobar')\n")
    assert "(f32[4,2], <DCE'd>)" in ours["batched"]


def test_store_dce_is_the_identity():
    def f(x, store):
        a, b = store((jnp.sin(x), x * 3.0))
        return a * b

    x = jnp.linspace(-2.0, 2.0, 7)
    plain = f(x, lambda t: t)
    probed = invarax.jit(lambda x: f(x, invarax.debug.store_dce))(x)
    assert np.array_equal(np.asarray(probed).view(np.uint32), np.asarray(plain).view(np.uint32))
    # beyond Equinox (whose pure_callback has no JVP): differentiable, the tangent unchanged
    g = invarax.jit(invarax.grad(lambda x: jnp.sum(f(x, invarax.debug.store_dce))))(x)
    assert np.array_equal(g, invarax.grad(lambda x: jnp.sum(f(x, lambda t: t)))(x))


def test_each_trace_is_an_entry():
    @invarax.jit
    def f(x):
        a, _ = invarax.debug.store_dce((x, x + 1), name="entries")
        return a

    f(1.0)
    f(jnp.ones(3))
    f(jnp.ones(3))  # cached: no new entry
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        invarax.debug.inspect_dce("entries")
    assert text.getvalue() == ("Found 2 calls to `equinox.debug.store_dce`.\n"
                               "Entry 0:\n(f32[], <DCE'd>)\nEntry 1:\n(f32[3], <DCE'd>)\n")


def test_misuse_raises_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    for mod, jit, lib in ((invarax, invarax.jit, jnp), (eqx, jax.jit, jax.numpy)):
        with pytest.raises(RuntimeError, match="should be used inside of JIT"):
            mod.debug.store_dce(lib.ones(2))
        with pytest.raises(RuntimeError, match="should be used outside of JIT"):
            jit(mod.debug.inspect_dce)()


def test_assert_dce():
    @invarax.jit
    def dead(x):
        ixi.assert_dce(x + 1, "x + 1 is used")
        return x * 2

    @invarax.jit
    def live(x):
        return ixi.assert_dce((x + 1, "static"), "x + 1 is used")[0]

    assert dead(1.0) == 2.0
    with pytest.raises(invarax.EquinoxRuntimeError, match="x \\+ 1 is used"):
        live(1.0)
    with pytest.raises(invarax.EquinoxRuntimeError):
        invarax.jit(invarax.vmap(lambda x: ixi.assert_dce(x, "m")))(jnp.ones(2))
    nan = invarax.jit(lambda x: ixi.assert_dce(x, "m", on_error="nan"))(jnp.ones(2))
    assert np.isnan(nan).all()
    assert invarax.jit(lambda x: ixi.assert_dce(x, "m", on_error="off"))(1.0) == 1.0
    # eagerly nothing is eliminated, so nothing is checked
    x = jnp.ones(2)
    assert ixi.assert_dce(x, "m") is x


def test_assert_dce_as_equinox():
    pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    import equinox.internal as eqxi

    for jit, assert_dce, lib in ((invarax.jit, ixi.assert_dce, jnp),
                                 (jax.jit, eqxi.assert_dce, jax.numpy)):
        dead = jit(lambda x, a=assert_dce: (a(x + 1, "unused"), x * 2)[1])
        assert float(dead(lib.ones(()))) == 2.0
        assert float(assert_dce(lib.ones(()), "eager")) == 1.0
        with pytest.raises(Exception, match="still used"):
            jit(lambda x, a=assert_dce: a(x + 1, "still used"))(lib.ones(()))

"""``debug.print``/``debug.callback``/``debug.breakpoint`` and ``pure_callback``: inside
jit, vmap and grad, in program order, never removed, merged or folded by the compiler;
outputs compared with JAX's where it is installed."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import debug


def _f(np_, dbg):
    def f(x):
        dbg.print("x = {}", x)
        y = np_.cos(x) * 2.0
        dbg.print("y = {y}, total {t}", y=y, t=np_.sum(y))
        return y + 1.0

    return f


X = np.array([0.0, 0.5], np.float32)


def _run(transform, capsys):
    f = transform(_f(jnp, debug))
    f(jnp.asarray(X))
    return capsys.readouterr().out


TRANSFORMS = {
    "eager": lambda f: f,
    "jit": invarax.jit,
    "vmap": invarax.vmap,
    "jit_vmap": lambda f: invarax.jit(invarax.vmap(f)),
    "grad": lambda f: invarax.grad(lambda x: jnp.sum(f(x))),
    "jit_grad": lambda f: invarax.jit(invarax.grad(lambda x: jnp.sum(f(x)))),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_print_matches_jax(name, capsys):
    ours = _run(TRANSFORMS[name], capsys)
    jax = pytest.importorskip("jax")
    theirs_transforms = {
        "eager": lambda f: f, "jit": jax.jit, "vmap": jax.vmap,
        "jit_vmap": lambda f: jax.jit(jax.vmap(f)),
        "grad": lambda f: jax.grad(lambda x: jax.numpy.sum(f(x))),
        "jit_grad": lambda f: jax.jit(jax.grad(lambda x: jax.numpy.sum(f(x)))),
    }
    theirs_transforms[name](_f(jax.numpy, jax.debug))(X)
    jax.effects_barrier()
    theirs = capsys.readouterr().out
    assert ours == theirs
    assert ours.count("x = ") == (2 if "vmap" in name else 1)


def test_jit_runs_prints_each_call_in_program_order(capsys):
    @invarax.jit
    def f(x):
        debug.print("first {}", x)
        debug.print("first {}", x)  # identical: not merged
        debug.print("const {}", 7)  # constant: not folded away at compile time
        y = x * 3
        debug.print("last {}", y)
        return x  # y feeds only the print: kept

    assert capsys.readouterr().out == ""
    for _ in range(2):
        f(jnp.asarray(2))
    assert capsys.readouterr().out == "first 2\nfirst 2\nconst 7\nlast 6\n" * 2
    invarax.make_jaxpr(f)(jnp.asarray(2))  # tracing prints nothing
    assert capsys.readouterr().out == ""


def test_a_print_inside_an_unused_call_still_runs(capsys):
    inner = invarax.jit(lambda x: debug.print("inner {}", x) or x * 2)
    invarax.jit(lambda x: (inner(x), x)[1])(jnp.asarray(1.5))
    assert capsys.readouterr().out == "inner 1.5\n"


def test_callback_gets_arrays_and_static_leaves():
    seen = []

    @invarax.jit
    def f(x):
        debug.callback(lambda a, tag, k: seen.append((a, tag, k)), x, "tag", k={"v": x + 1})
        return x

    f(jnp.arange(3))
    (a, tag, k), = seen
    assert isinstance(a, invarax.Array) and tag == "tag"
    assert np.array_equal(a, [0, 1, 2]) and np.array_equal(k["v"], [1, 2, 3])


def test_print_needs_a_format_string():
    with pytest.raises(TypeError, match="format string"):
        debug.print(jnp.ones(2))


OUT = invarax.ShapeDtypeStruct((2,), jnp.float32)


def test_pure_callback_jit_vmap_and_bits():
    calls = []

    def host(a):
        calls.append(a.shape)
        return np.sin(a)

    def f(x):
        return invarax.pure_callback(host, OUT, x) * 2.0

    x = jnp.asarray(np.array([0.25, 1.5], np.float32))
    assert np.array_equal(invarax.jit(f)(x), f(x))
    xs = jnp.asarray(np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32))
    calls.clear()
    out = invarax.vmap(f)(xs)
    assert calls == [(2,)] * 3  # sequential: one call per example
    for i in range(3):
        assert np.array_equal(out[i], f(xs[i]))
    calls.clear()
    g = lambda x: invarax.pure_callback(host, OUT, x, vmap_method="expand_dims")  # noqa: E731
    assert np.array_equal(invarax.vmap(g)(xs), np.sin(np.asarray(xs)))
    assert calls == [(3, 2)]


def test_pure_callback_is_pure_to_the_compiler():
    calls = []

    def host(a):
        calls.append(1)
        return a

    f = invarax.jit(lambda x: (invarax.pure_callback(host, OUT, x), x)[1])
    f(jnp.ones(2))
    assert calls == []  # unused: removed
    g = invarax.jit(lambda x: invarax.pure_callback(host, OUT, jnp.ones(2)) + x)
    assert calls == [] and np.array_equal(g(jnp.ones(2)), [2.0, 2.0]) and calls == [1]


def test_pure_callback_matches_jax():
    jax = pytest.importorskip("jax")
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    for method in ("sequential", "expand_dims", "broadcast_all"):
        def host(a, b):
            return a * b[..., :1]

        ours = invarax.vmap(lambda a, m=method: invarax.pure_callback(
            host, OUT, a, jnp.ones(2), vmap_method=m))(jnp.asarray(xs))
        theirs = jax.vmap(lambda a, m=method: jax.pure_callback(
            host, jax.ShapeDtypeStruct((2,), np.float32), a, jax.numpy.ones(2),
            vmap_method=m))(xs)
        assert np.array_equal(ours, theirs), method


def test_pure_callback_errors():
    with pytest.raises(ValueError, match="declares f32\\[2\\]"):
        invarax.pure_callback(lambda a: np.ones(3, np.float32), OUT, jnp.ones(2))
    with pytest.raises(ValueError, match="custom_jvp"):
        invarax.grad(lambda x: jnp.sum(invarax.pure_callback(np.sin, OUT, x)))(jnp.ones(2))
    with pytest.raises(ValueError, match="vmap_method"):
        invarax.pure_callback(np.sin, OUT, jnp.ones(2), vmap_method="loop")
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):
        invarax.pure_callback(np.sin, (2,), jnp.ones(2))
    # a callback of a value that does not depend on the differentiated input is fine
    g = invarax.grad(lambda x: jnp.sum(invarax.pure_callback(np.sin, OUT, jnp.ones(2)) * x))
    assert np.array_equal(g(jnp.ones(2)), np.sin(np.ones(2, np.float32)))

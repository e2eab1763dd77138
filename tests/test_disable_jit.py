"""``disable_jit``: jitted functions, filter_jit and control flow run as written, op by op,
as JAX's (JAX is the oracle: each scenario runs on both and their logs must agree), and the
values are bitwise those of ``jit`` (N3)."""

import numpy as np
import pytest

import invarax
import invarax.numpy as inp
from invarax import lax as ilax


@pytest.fixture(autouse=True)
def _jit_enabled_after():
    yield
    invarax.config.update("jax_disable_jit", False)


def _libraries():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    return [(invarax, inp, ilax), (jax, jnp, lax)]


def _same_on_both(scenario):
    """``scenario(jax, jnp, lax, log)`` run with invarax and with JAX: the logs agree."""
    logs = []
    for lib in _libraries():
        log = []
        scenario(*lib, log)
        logs.append(log)
    assert logs[0] == logs[1]
    return logs[0]


def _seen(x):
    """What a body saw: a Python value as is, a concrete array's value, or 'traced'."""
    if isinstance(x, (bool, int, float)):
        return type(x).__name__, x
    try:
        return "array", np.asarray(x).tolist()
    except Exception:  # a tracer: no value
        return ("traced",)


def test_jitted_function_runs_every_call_on_the_values_given():
    def scenario(jax, jnp, lax, log):
        @jax.jit
        def f(x, n):
            log.append(("f", _seen(x), _seen(n)))
            return x * n

        g = jax.jit(f, static_argnums=1)
        with jax.disable_jit():
            assert jax.config.jax_disable_jit
            log.append(_seen(f(1.5, 2)))
            log.append(_seen(g(jnp.arange(3.0), 3)))
            log.append(_seen(jax.jit(lambda x: f(x, 2) + 1)(2.0)))  # nested
        log.append(jax.config.jax_disable_jit)
        f(4.0, 1)
        f(5.0, 1)  # compiled again: traced once, the tracer logged once
        jax.config.update("jax_disable_jit", True)
        f(6.0, 1)
        jax.config.update("jax_disable_jit", False)

    log = _same_on_both(scenario)
    assert log[:2] == [("f", ("float", 1.5), ("int", 2)), ("float", 3.0)]
    assert log.count(("f", ("traced",), ("traced",))) == 1
    assert ("f", ("float", 6.0), ("int", 1)) in log


def test_jitted_bits_equal_disabled_bits():
    w = inp.asarray(np.random.default_rng(0).standard_normal((17, 9)).astype(np.float32))
    x = inp.linspace(-2.0, 2.0, 9 * 5).reshape(5, 9)

    def f(x):
        return inp.sum(inp.tanh(x @ w.T) ** 2, axis=1) + inp.exp(x).mean()

    jitted = invarax.jit(f)(x)
    with invarax.disable_jit():
        disabled = invarax.jit(f)(x)
        grads = invarax.grad(lambda x: invarax.jit(f)(x).sum())(x)
    assert np.array_equal(np.asarray(jitted).view(np.uint32),
                          np.asarray(disabled).view(np.uint32))
    assert np.array_equal(np.asarray(grads).view(np.uint32),
                          np.asarray(invarax.jit(invarax.grad(lambda x: f(x).sum()))(x))
                          .view(np.uint32))


def test_scan_map_and_fori_loop_are_python_loops():
    def scenario(jax, jnp, lax, log):
        def body(c, x):
            log.append(("scan", _seen(c), _seen(x)))
            return c + x, {"y": c * 2}

        with jax.disable_jit():
            c, ys = lax.scan(body, 0.0, jnp.arange(3.0))
            log.append((_seen(c), _seen(ys["y"]), str(ys["y"].dtype)))
            c, ys = lax.scan(body, 1, jnp.arange(4), reverse=True)
            log.append((_seen(c), _seen(ys["y"])))
            c, ys = lax.scan(lambda c, _: (c * 3, c), 1.0, None, length=2)
            log.append((_seen(c), _seen(ys)))
            log.append(_seen(lax.map(lambda x: (log.append(_seen(x)), x + 1)[1],
                                     jnp.arange(2))))
            out = lax.fori_loop(0, 3, lambda i, v: (log.append(("fori", _seen(i))), v + i)[1],
                                0.5)
            log.append(_seen(out))
            init = {"a": 1}
            log.append(lax.fori_loop(2, 2, lambda i, v: v, init) is init)
            with pytest.raises(ValueError, match="zero-length scan"):
                lax.scan(body, 0.0, jnp.zeros((0,)))

    log = _same_on_both(scenario)
    assert log[0] == ("scan", ("float", 0.0), ("array", 0.0))
    assert ("fori", ("int", 2)) in log and log[-1] is True


def test_while_loop_runs_in_python_and_falls_back_under_vmap():
    def scenario(jax, jnp, lax, log):
        def cond(v):
            log.append(("cond", _seen(v)))
            return v < 10

        with jax.disable_jit():
            log.append(_seen(lax.while_loop(cond, lambda v: v * 3, 1)))
            batched = jax.vmap(lambda x: lax.while_loop(lambda v: v < 10, lambda v: v * 3, x))
            log.append(_seen(batched(jnp.asarray([1, 4, 20]))))
            log.append(_seen(lax.fori_loop(0, jnp.asarray(3), lambda i, v: v + i, 0)))

    log = _same_on_both(scenario)
    assert log[:2] == [("cond", ("array", 1)), ("cond", ("array", 3))]


def test_cond_and_switch_call_only_the_chosen_branch():
    def scenario(jax, jnp, lax, log):
        def branch(name):
            return lambda x: (log.append((name, _seen(x))), x + len(name))[1]

        with jax.disable_jit():
            log.append(_seen(lax.cond(True, branch("yes"), branch("no"), 1.0)))
            log.append(_seen(lax.cond(jnp.asarray(0), branch("yes"), branch("no"), 1.0)))
            log.append(_seen(lax.switch(7, [branch("a"), branch("bb")], 2)))
            # a batched predicate is not concrete: both branches are traced
            pick = jax.vmap(lambda p, x: lax.cond(p, branch("t"), branch("ff"), x))
            start = len(log)
            out = pick(jnp.asarray([True, False]), jnp.asarray([1.0, 2.0]))
            log[start:] = sorted(log[start:])
            log.append(_seen(out))

    log = _same_on_both(scenario)
    assert log[:2] == [("yes", ("float", 1.0)), ("float", 4.0)]


def test_make_jaxpr_inlines_jitted_functions():
    jax = pytest.importorskip("jax")

    def names(lib, jnp):
        inner = lib.jit(lambda x: jnp.sin(x) * 2)
        with lib.disable_jit():
            jaxpr = lib.make_jaxpr(lambda x: inner(x) + 1)(1.0)
        return [str(e.primitive) for e in jaxpr.jaxpr.eqns]

    assert names(invarax, inp) == names(jax, jax.numpy) == ["sin", "mul", "add"]


def test_filter_jit_module_runs_eagerly_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")

    def scenario(lib, jnp):
        log = []

        class Scale(lib.Module):
            w: object

            def __call__(self, x):
                log.append(_seen(x))
                return self.w * x

        model = Scale(jnp.asarray([1.0, 2.0]))
        call = lib.filter_jit(lambda m, x: m(x))
        with lib.disable_jit():
            log.append(_seen(call(model, jnp.asarray(3.0))))
            log.append(_seen(call(model, jnp.asarray(4.0))))
        return log

    ours = scenario(invarax, inp)
    theirs = scenario(type("eqx_jax", (), {"Module": eqx.Module, "filter_jit": eqx.filter_jit,
                                           "disable_jit": jax.disable_jit}), jax.numpy)
    assert ours == theirs == [("array", 3.0), ("array", [3.0, 6.0]), ("array", 4.0),
                              ("array", [4.0, 8.0])]


def test_disable_jit_false_inside_restores_jit():
    calls = []

    @invarax.jit
    def f(x):
        calls.append(_seen(x))
        return x

    with invarax.disable_jit():
        with invarax.disable_jit(False):
            f(1.0)
            f(2.0)
        f(3.0)
    assert calls == [("traced",), ("float", 3.0)]

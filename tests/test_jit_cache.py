"""jit's cache follows the wrapped function (issue 20.4): ``jit(f)`` written again, and
``filter_jit(filter_grad(f))`` re-created per call, find the program traced before.

Trace counts are compared with JAX's and Equinox's where they are installed."""

import gc

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax.compiler import jit as jit_module


def counted(np_):
    calls = []

    def f(x):
        calls.append(1)
        return np_.sum(x ** 2)

    return f, calls


def trace_counts(lib, np_):
    """How many times each wrapping, re-created for each of three calls, traces ``f``."""
    eqx = lib
    x = np_.ones(3)
    counts = {}
    for name, wrap in [
        ("jit", lambda f: lib.jit(f)),
        ("jit static", lambda f: lib.jit(lambda x, n: f(x) * n, static_argnums=1)),
        ("jit(grad)", lambda f: lib.jit(lib.grad(f))),
        ("filter_jit", lambda f: eqx.filter_jit(f)),
        ("filter_jit(filter_grad)", lambda f: eqx.filter_jit(eqx.filter_grad(f))),
        ("filter_jit(filter_value_and_grad)",
         lambda f: eqx.filter_jit(eqx.filter_value_and_grad(f))),
        ("filter_jit(filter_vmap)", lambda f: eqx.filter_jit(eqx.filter_vmap(f))),
    ]:
        f, calls = counted(np_)
        arg = np_.ones((2, 3)) if "vmap" in name else x
        for _ in range(3):
            out = wrap(f)(arg, 2) if name == "jit static" else wrap(f)(arg)
        counts[name] = len(calls)
        del out
    return counts


def test_rewrapping_traces_once():
    counts = trace_counts(invarax, jnp)
    assert counts == {"jit": 1, "jit static": 3, "jit(grad)": 3, "filter_jit": 1,
                      "filter_jit(filter_grad)": 1, "filter_jit(filter_value_and_grad)": 1,
                      "filter_jit(filter_vmap)": 1}


def test_trace_counts_match_jax_and_equinox():
    jax = pytest.importorskip("jax")
    equinox = pytest.importorskip("equinox")

    class Both:  # JAX's transforms and Equinox's filtered ones under one name
        def __getattr__(self, name):
            return getattr(equinox if name.startswith("filter") else jax, name)

    assert trace_counts(invarax, jnp) == trace_counts(Both(), jax.numpy)


def test_shared_cache_gives_the_same_bits_and_respects_options():
    f, calls = counted(jnp)
    x = jnp.asarray(np.linspace(-1, 1, 5, dtype=np.float32))
    first = invarax.jit(f)(x)
    assert_bitwise(invarax.jit(f)(x), first)
    assert_bitwise(invarax.jit(f)(x), f(x))
    assert len(calls) == 2  # one trace, one eager call
    with pytest.warns(UserWarning, match="donated buffers were not usable"):  # as JAX
        invarax.jit(f, donate_argnums=0)(jnp.ones(5))  # other options: its own cache
    assert len(calls) == 3
    g = lambda x: f(x)  # noqa: E731  another function: its own cache
    invarax.jit(g)(x)
    assert len(calls) == 4


def test_cache_is_dropped_with_the_function():
    def make():
        def f(x):
            return x + 1

        return f

    before = len(jit_module._shared)
    f = make()
    invarax.jit(f)(jnp.ones(2))
    invarax.filter_jit(invarax.filter_grad(lambda x: (x ** 2).sum()))(jnp.ones(2))
    assert len(jit_module._shared) >= before + 1
    del f
    gc.collect()
    invarax.filter_jit(lambda x: x)(jnp.ones(2))
    gc.collect()
    assert len(jit_module._shared) <= before + 1


def test_filter_jit_of_module_methods_shares_across_instances():
    class Scale(invarax.Module):
        w: object

        def __call__(self, x):
            calls.append(1)
            return self.w * x

    calls = []
    for w in (1.0, 2.0, 3.0):
        m = Scale(jnp.asarray(w))
        out = invarax.filter_jit(m.__call__)(jnp.ones(2))
        assert np.asarray(out).tolist() == [w, w]
    assert len(calls) == 1  # the arrays are traced, the method is the cache's owner


def test_transform_wrappers_compare_by_function_and_options():
    f = lambda x: (x ** 2).sum()  # noqa: E731
    assert invarax.filter_grad(f) == invarax.filter_grad(f)
    assert hash(invarax.filter_grad(f)) == hash(invarax.filter_grad(f))
    assert invarax.filter_grad(f) != invarax.filter_grad(f, has_aux=True)
    assert invarax.filter_grad(f) != invarax.filter_value_and_grad(f)
    assert invarax.filter_vmap(f) == invarax.filter_vmap(f)
    assert invarax.filter_vmap(f, in_axes=1) != invarax.filter_vmap(f)
    assert invarax.filter_grad(f).__wrapped__ is f

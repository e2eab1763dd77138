"""Equinox's ``debug.assert_max_traces``/``get_num_traces``, ``module_update_wrapper`` and
``clear_caches``, against Equinox where installed."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp


def _trace_counts(mod, lib_jnp):
    @mod.filter_jit
    @mod.debug.assert_max_traces(max_traces=None)
    def f(x, n):
        return x * n

    counts = []
    for x, n in [(lib_jnp.ones(2), 2), (lib_jnp.zeros(2), 2), (lib_jnp.ones(3), 2),
                 (lib_jnp.ones(2), 3), (lib_jnp.ones(2, dtype=lib_jnp.int32), 2)]:
        f(x, n)
        counts.append(mod.debug.get_num_traces(f))
    return counts


def test_trace_counts_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    ours = _trace_counts(invarax, jnp)
    assert ours == _trace_counts(eqx, jax.numpy) == [1, 1, 2, 3, 4]


def test_assert_max_traces_names_the_argument():
    @invarax.filter_jit
    @invarax.debug.assert_max_traces(max_traces=2)
    def f(x, y):
        return x + y

    f(jnp.ones(2), jnp.ones(2))
    f(jnp.ones(3), jnp.ones(1))
    with pytest.raises(RuntimeError, match="traced 3 times. The argument 'y'"):
        f(jnp.ones(2), jnp.ones(()))
    with pytest.raises(ValueError, match="max_traces must be"):
        invarax.debug.assert_max_traces(lambda x: x, max_traces=-1)
    with pytest.raises(ValueError, match="not wrapped"):
        invarax.debug.get_num_traces(invarax.filter_jit(lambda x: x))


def test_assert_max_traces_under_vmap_and_grad_counts_traces():
    g = invarax.debug.assert_max_traces(lambda x: jnp.sin(x).sum(), max_traces=3)
    x = jnp.asarray(data(3))
    invarax.grad(g)(x)
    invarax.vmap(g)(jnp.stack([x, x]))
    assert invarax.debug.get_num_traces(g) == 2
    assert_bitwise(invarax.filter_jit(g)(x), jnp.sin(x).sum())


class _Wrapper(invarax.Module):
    fn: object

    def __call__(self, *args):
        return self.fn(*args)

    @property
    def __wrapped__(self):
        return self.fn


def _documented(x):
    """The documented function."""
    return x + 1


def test_module_update_wrapper_as_equinox():
    eqx = pytest.importorskip("equinox")

    class Theirs(eqx.Module):
        fn: object

        def __call__(self, *args):
            return self.fn(*args)

        @property
        def __wrapped__(self):
            return self.fn

    plain = _Wrapper(_documented)
    ours = invarax.module_update_wrapper(plain)
    theirs = eqx.module_update_wrapper(Theirs(_documented))
    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        assert getattr(ours, name) == getattr(theirs, name) == getattr(_documented, name)
    assert ours is not plain and "__name__" not in vars(plain)
    assert ours(1) == 2
    # the copied names are part of its structure (so they survive flatten/unflatten), so it
    # differs from the plain wrapper, as Equinox's
    assert (ours == plain) is (theirs == Theirs(_documented)) is False
    assert invarax.tree_util.tree_unflatten(*reversed(invarax.tree_util.tree_flatten(ours))
                                            ).__name__ == "_documented"
    other = invarax.module_update_wrapper(plain, wrapped=np.sum)
    assert other.__name__ == "sum"


def test_module_update_wrapper_errors():
    class NoProperty(invarax.Module):
        fn: object

    with pytest.raises(ValueError, match="__wrapped__ as a property"):
        invarax.module_update_wrapper(NoProperty(_documented))
    with pytest.raises(TypeError, match="Module instance"):
        invarax.module_update_wrapper(_documented)


def test_clear_caches_retraces_with_the_same_bits():
    eqx = pytest.importorskip("equinox")
    assert callable(eqx.clear_caches)
    traces = []

    def f(x):
        traces.append(1)
        return jnp.tanh(x) @ x

    x = jnp.asarray(data((3, 3)))
    jitted, filtered = invarax.jit(f), invarax.filter_jit(f)
    first = jitted(x), filtered(x)
    jitted(x), filtered(x)
    assert len(traces) == 2
    invarax.clear_caches()
    again = jitted(x), filtered(x)
    assert len(traces) == 4
    for a, b in zip(first, again, strict=True):
        assert_bitwise(a, b)
    assert_bitwise(again[0], f(x))

"""``tree_equal`` against ``equinox.tree_equal`` (issue 20.5, issue 19)."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import tree_equal


def cases(np_):
    """Pairs of pytrees built with an array module ``np_`` (invarax.numpy or jax.numpy)."""
    a = np_.array([1.0, 2.0, np.inf])
    return [
        ((1, "a", None), (1, "a", None)),
        ((1, "a"), (1, "b")),
        ((1,), [1]),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"a": 1}, {"a": 1, "b": 2}),
        ((a,), (np_.array([1.0, 2.0, np.inf]),)),
        ((a,), (np_.array([1.0, 2.0, 3.0]),)),
        ((a,), (np_.array([1.0, 2.0]),)),
        ((a,), (a.astype(np_.int32),)),
        ((np_.array([np.nan]),), (np_.array([np.nan]),)),
        ((np.ones(2),), (np.ones(2),)),
        ((np.ones(2),), (np_.ones(2),)),
        ((np.ones(2),), (1.0,)),
        ((np.float32(1.0),), (1.0,)),
        ((1.0,), (1,)),
    ]


def test_cases_match_equinox():
    eqx = pytest.importorskip("equinox")
    import jax.numpy

    for (x, y), (jx, jy) in zip(cases(jnp), cases(jax.numpy), strict=True):
        for kwargs in ({}, {"typematch": True}):
            ours, theirs = tree_equal(x, y, **kwargs), eqx.tree_equal(jx, jy, **kwargs)
            assert bool(ours) == bool(theirs), (x, y, kwargs)
            assert isinstance(ours, bool) == isinstance(theirs, bool), (x, y, kwargs)


def test_tolerances_match_equinox():
    eqx = pytest.importorskip("equinox")
    import jax.numpy

    x = [1.0, 2.0, np.inf, -np.inf, 0.0]
    for y in ([1.0, 2.0 + 1e-6, np.inf, -np.inf, 1e-9], [1.0, 2.0, np.inf, np.inf, 0.0],
              [1.0, 2.1, np.inf, -np.inf, 0.0], [1.0, np.nan, np.inf, -np.inf, 0.0]):
        for rtol, atol in ((1e-5, 0.0), (0.0, 1e-8), (1e-5, 1e-8), (0.1, 0.0)):
            ours = tree_equal(jnp.array(x), jnp.array(y), rtol=rtol, atol=atol)
            theirs = eqx.tree_equal(jax.numpy.array(x), jax.numpy.array(y), rtol=rtol,
                                    atol=atol)
            assert bool(ours) == bool(theirs), (y, rtol, atol)
            assert bool(tree_equal(np.array(x), np.array(y), rtol=rtol, atol=atol)) == bool(
                eqx.tree_equal(np.array(x), np.array(y), rtol=rtol, atol=atol))


def test_several_trees_and_integer_arrays_with_tolerance():
    x = {"w": jnp.ones(2), "i": jnp.arange(3)}
    assert bool(tree_equal(x, x, x))
    y = {"w": jnp.ones(2), "i": jnp.arange(3) + 1}
    assert not bool(tree_equal(x, x, y, rtol=10.0))  # integers compare exactly
    assert tree_equal(x, [1]) is False


def test_under_jit_gives_a_traced_bool():
    f = invarax.jit(lambda a, b: tree_equal((a, "s"), (b, "s")))
    assert bool(f(jnp.ones(2), jnp.ones(2))) and not bool(f(jnp.ones(2), jnp.zeros(2)))
    g = invarax.jit(lambda a: tree_equal((a, "s"), (a, "t")))
    assert not bool(g(jnp.ones(2)))

"""``invarax.tree``, ``tree_util.Partial``/``tree_transpose``, ``eval_shape``,
``ShapeDtypeStruct``, ``typeof``, ``default_backend``, ``typing`` and ``test_util``,
against JAX where it is installed."""

import functools

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
import invarax.test_util
from invarax import tree
from invarax.tree_util import Partial, tree_transpose

TREES = [
    {"b": [1.0, 2.0], "a": (3.0, None)},
    [1, (2, 3), {"x": 4}],
    (),
    5.0,
]


def test_tree_names_are_tree_util_functions():
    from invarax import tree_util as tu

    for short in tree.__all__:
        assert getattr(tree, short) is getattr(tu, f"tree_{short}")


@pytest.mark.parametrize("t", TREES, ids=range(len(TREES)))
def test_tree_namespace_matches_jax(t):
    jax = pytest.importorskip("jax")
    assert tree.leaves(t) == jax.tree.leaves(t)
    assert tree.map(lambda x: x * 2, t) == jax.tree.map(lambda x: x * 2, t)
    assert tree.reduce(lambda a, b: a + b, t, 0) == jax.tree.reduce(lambda a, b: a + b, t, 0)
    assert tree.all(t) == jax.tree.all(t)
    assert str(tree.structure(t)) == str(jax.tree.structure(t))
    leaves, treedef = tree.flatten(t)
    assert tree.unflatten(treedef, leaves) == t
    assert ([invarax.tree_util.keystr(p) for p, _ in tree.leaves_with_path(t)]
            == [jax.tree_util.keystr(p) for p, _ in jax.tree.leaves_with_path(t)])
    assert tree.map_with_path(lambda p, x: len(p), t) == jax.tree.map_with_path(
        lambda p, x: len(p), t)
    assert [v for _, v in tree.flatten_with_path(t)[0]] == leaves


def test_transpose_matches_jax():
    jax = pytest.importorskip("jax")
    t = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    ours = tree.transpose(tree.structure([0] * 3), tree.structure({"a": 0, "b": 0}), t)
    theirs = jax.tree.transpose(jax.tree.structure([0] * 3),
                                jax.tree.structure({"a": 0, "b": 0}), t)
    assert ours == theirs == {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tree.transpose(tree.structure([0] * 3), None, t) == theirs


def test_broadcast_and_reduce_associative_match_jax():
    jax = pytest.importorskip("jax")
    prefix, full = {"a": 1, "b": (2, 3)}, {"a": [0, (0, 0)], "b": ({"x": 0}, 0)}
    assert tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)
    for leaves in (["a"], ["a", "b", "c"], ["a", "b", "c", "d", "e"]):
        assert (tree.reduce_associative(lambda a, b: f"({a}{b})", leaves)
                == jax.tree.reduce_associative(lambda a, b: f"({a}{b})", leaves))
    assert tree.reduce_associative(max, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tree.reduce_associative(max, [])
    with pytest.raises(ValueError, match="not a prefix"):
        tree.broadcast([1, 2], [0])


def test_transpose_names_the_mismatch():
    with pytest.raises(ValueError, match="subtree 1 of the outer structure"):
        tree_transpose(tree.structure([0, 0]), tree.structure((0, 0)), [(1, 2), (3,)])
    with pytest.raises(ValueError, match="outer structure"):
        tree_transpose(tree.structure([0, 0]), None, [1, 2, 3])


def test_partial_is_a_pytree_through_transforms():
    p = Partial(jnp.multiply, jnp.asarray([1.0, 2.0]))
    assert tree.leaves(p)[0] is p.args[0]
    f = invarax.jit(lambda p, x: p(x))
    x = jnp.asarray([3.0, 4.0])
    assert np.array_equal(f(p, x), p(x))
    g = invarax.grad(lambda p: jnp.sum(p(x)))(p)
    assert isinstance(g, Partial) and np.array_equal(g.args[0], x)
    # A partial's own arguments stay with the (static) function, as in JAX.
    q = Partial(functools.partial(jnp.add, 1.0), 2.0)
    assert tree.leaves(q) == [2.0] and q() == 3.0


def test_partial_matches_jax_leaves():
    jax = pytest.importorskip("jax")
    q = jax.tree_util.Partial(functools.partial(np.add, 1.0), 2.0, b=3)
    ours = Partial(functools.partial(np.add, 1.0), 2.0, b=3)
    assert tree.leaves(ours) == jax.tree.leaves(q)


def _f(np_, x, y, *, scale):
    return {"s": np_.sum(x, axis=0) * scale, "m": x @ y, "n": 1.0 * y[0, 0]}


def test_eval_shape_and_shape_dtype_struct():
    f = functools.partial(_f, jnp)

    x = invarax.ShapeDtypeStruct((4, 3), jnp.float32)
    out = invarax.eval_shape(f, x, np.zeros((3, 2), np.float32), scale=2.0)
    assert out == {"s": invarax.ShapeDtypeStruct((3,), jnp.float32),
                   "m": invarax.ShapeDtypeStruct((4, 2), jnp.float32),
                   "n": invarax.ShapeDtypeStruct((), jnp.float32)}
    jax = pytest.importorskip("jax")
    theirs = jax.eval_shape(functools.partial(_f, jax.numpy),
                            jax.ShapeDtypeStruct((4, 3), np.float32),
                            np.zeros((3, 2), np.float32), scale=2.0)
    assert {k: (v.shape, v.dtype) for k, v in out.items()} == {
        k: (v.shape, v.dtype) for k, v in theirs.items()}
    assert repr(x) == repr(jax.ShapeDtypeStruct((4, 3), np.float32))
    assert x.ndim == 2 and x.size == 12 and len(x) == 4


def test_eval_shape_does_no_arithmetic_and_names_bad_leaves():
    calls = []
    out = invarax.eval_shape(lambda x: calls.append(type(x).__name__) or x + 1,
                             invarax.ShapeDtypeStruct((2,), np.int32))
    assert out == invarax.ShapeDtypeStruct((2,), np.int32) and calls == ["StagingTracer"]
    with pytest.raises(TypeError, match=r"argument at \[0\]\[1\]\['k'\] is a str"):
        invarax.eval_shape(lambda a, b: a, 1.0, {"k": "text"})
    with pytest.raises(ValueError, match="dtype must be given"):
        invarax.ShapeDtypeStruct((2,), None)


def test_typeof_and_default_backend_match_jax():
    jax = pytest.importorskip("jax")
    for x in [np.ones((2, 3), np.float32), 2.0, 3, np.zeros(2, np.int32), True]:
        assert repr(invarax.typeof(x)) == repr(jax.typeof(x))
        assert repr(invarax.typeof(jnp.asarray(x))) == repr(jax.typeof(jax.numpy.asarray(x)))
    assert invarax.default_backend() == jax.default_backend() == "cpu"
    seen = []
    invarax.jit(lambda x: seen.append(invarax.typeof(x)) or x)(jnp.ones(3))
    assert repr(seen[0]) == "ShapedArray(float32[3])"


def test_typing_names():
    from invarax.typing import ArrayLike, DTypeLike

    def f(x: ArrayLike, dtype: DTypeLike = None):
        return jnp.asarray(x, dtype)

    assert f(1.0, "float32").dtype == np.float32


def test_check_grads_passes_and_fails():
    invarax.test_util.check_grads(jnp.sin, (np.array([0.5, 1.0], np.float32),), order=2)
    assert not invarax.config.jax_enable_x64  # switched back

    @invarax.custom_jvp
    def wrong(x):
        return jnp.sin(x)

    wrong.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * t[0]))
    with pytest.raises(AssertionError):
        invarax.test_util.check_grads(wrong, (np.array([0.5]),), order=1, modes=["fwd"])

"""Filters, tree_at, and the filtered transforms over pytrees with non-array leaves."""

import numpy as np
import pytest

import invarax as eqx
import invarax.numpy as jnp
from invarax.tree_util import tree_leaves


class Linear(eqx.Module):
    weight: object
    bias: object
    activation: str = eqx.field(static=True, default="identity")

    def __call__(self, x):
        return self.weight @ x + self.bias


def test_array_predicates():
    assert eqx.is_array(jnp.ones(2)) and eqx.is_array(np.ones(2)) and eqx.is_array(np.float32(1))
    assert not eqx.is_array(1.0) and not eqx.is_array("a")
    assert eqx.is_inexact_array(jnp.ones(2)) and not eqx.is_inexact_array(jnp.arange(2))
    assert eqx.is_array_like(1) and eqx.is_array_like(jnp.ones(1)) and not eqx.is_array_like("a")
    assert eqx.if_array(1)(jnp.ones(2)) == 1 and eqx.if_array(1)(3) is None


def test_filter_partition_combine_roundtrip():
    tree = {"w": jnp.ones(2), "n": 3, "f": jnp.sin, "i": jnp.arange(2)}
    arrays, rest = eqx.partition(tree, eqx.is_array)
    assert arrays["n"] is None and rest["w"] is None and rest["n"] == 3
    assert eqx.combine(arrays, rest) == tree or tree_leaves(eqx.combine(arrays, rest)) == \
        tree_leaves(tree)
    kept = eqx.filter(tree, eqx.is_inexact_array)
    assert len(tree_leaves(kept)) == 1
    dropped = eqx.filter(tree, eqx.is_array, inverse=True, replace=0)
    assert dropped["w"] == 0 and dropped["n"] == 3


def test_filter_with_prefix_spec_of_bools_and_callables():
    tree = {"a": (1, jnp.ones(1)), "b": 2}
    out = eqx.filter(tree, {"a": eqx.is_array, "b": True})
    assert out["a"][0] is None and out["b"] == 2
    with pytest.raises(ValueError, match="bool or a callable"):
        eqx.filter(tree, {"a": 1, "b": True})


def test_tree_at_replaces_leaves_subtrees_and_none():
    model = Linear(jnp.ones((3, 2)), None)
    new = eqx.tree_at(lambda m: m.weight, model, jnp.zeros((3, 2)))
    assert np.all(np.asarray(new.weight) == 0) and np.all(np.asarray(model.weight) == 1)
    with_bias = eqx.tree_at(lambda m: m.bias, model, jnp.zeros(3), is_leaf=lambda x: x is None)
    assert with_bias.bias.shape == (3,)
    nested = {"layers": [model, model], "k": (1, 2)}
    out = eqx.tree_at(lambda t: (t["layers"][1], t["k"]), nested, ("x", (3,)))
    assert out["layers"][1] == "x" and out["k"] == (3,) and out["layers"][0] is model
    out = eqx.tree_at(lambda t: t["k"][0], nested, replace_fn=lambda x: x + 10)
    assert out["k"] == (11, 2)


def test_tree_at_errors():
    model = Linear(jnp.ones((3, 2)), None)
    with pytest.raises(ValueError, match="selected nothing"):
        eqx.tree_at(lambda m: m.activation, model, "relu")  # a static field
    assert eqx.tree_at(lambda m: m.bias, model, jnp.zeros(3)).bias.shape == (3,)  # as Equinox
    with pytest.raises(ValueError, match="selected nothing"):
        eqx.tree_at(lambda m: jnp.ones(2), model, 1)
    with pytest.raises(ValueError, match="exactly one of"):
        eqx.tree_at(lambda m: m.weight, model)
    with pytest.raises(ValueError, match="2 nodes but `replace` has 1"):
        eqx.tree_at(lambda m: (m.weight, m.weight), model, (1,))
    with pytest.raises(ValueError, match="same node twice"):
        eqx.tree_at(lambda m: (m, m.weight), model, (1, 2))


def _model():
    return Linear(jnp.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), jnp.asarray([0.5, -1.0, 2.0]))


def test_filter_jit_static_inputs_and_non_array_outputs():
    traces = []

    @eqx.filter_jit
    def f(model, x, name, n):
        traces.append(1)
        return eqx.tree_at(lambda m: m.bias, model, model(x) * n), name.upper(), n + 1

    model, x = _model(), jnp.ones(2)
    new, name, n = f(model, x, "relu", 2)
    assert isinstance(new, Linear) and name == "RELU" and n == 3 and new.activation == "identity"
    np.testing.assert_array_equal(new.bias, np.asarray(model(x)) * 2)
    f(model, x, "relu", 2)
    assert len(traces) == 1  # cached: static values hashed, arrays traced
    f(model, x, "tanh", 2)
    assert len(traces) == 2


def test_filter_jit_of_a_bound_method_is_bitwise_eager():
    model, x = _model(), jnp.asarray([0.1, 0.7])
    np.testing.assert_array_equal(eqx.filter_jit(model.__call__)(x), model(x))


def test_filter_grad_and_value_and_grad():
    def loss(model, x, scale):
        return (model(x) ** 2).sum() * scale

    model, x = _model(), jnp.asarray([0.1, 0.7])
    grads = eqx.filter_grad(loss)(model, x, 2)
    assert isinstance(grads, Linear) and grads.activation == "identity"
    ref = eqx.grad(lambda w, b: loss(Linear(w, b), x, 2), argnums=(0, 1))(model.weight, model.bias)
    np.testing.assert_array_equal(grads.weight, ref[0])
    np.testing.assert_array_equal(grads.bias, ref[1])
    tree = {"w": jnp.ones(2), "steps": jnp.arange(2), "name": "n"}
    value, g = eqx.filter_value_and_grad(lambda p: (p["w"] ** 2).sum())(tree)
    assert value == 2.0 and g["steps"] is None and g["name"] is None
    (g, aux) = eqx.filter_grad(lambda p: ((p["w"] ** 2).sum(), ("s", p["w"])), has_aux=True)(tree)
    assert aux[0] == "s" and aux[1].shape == (2,)
    np.testing.assert_array_equal(g["w"], [2.0, 2.0])


def test_filter_vmap_non_array_inputs_and_outputs():
    f = eqx.filter_vmap(lambda x, name: (x.sum(), name, 3), in_axes=(0, None))
    s, name, n = f(jnp.ones((3, 2)), "sum")
    assert s.shape == (3,) and name == "sum" and n == 3
    out = eqx.filter_vmap(lambda t: t["x"] * 2, in_axes=({"x": 1, "tag": None},))(
        {"x": jnp.ones((2, 5)), "tag": "a"})
    assert out.shape == (5, 2)
    with pytest.raises(ValueError, match="non-array leaf"):
        eqx.filter_vmap(lambda x, n: x, in_axes=0)(jnp.ones(3), "a")


def test_ensemble_built_and_called_with_filter_vmap_is_bitwise_per_member():
    weights = jnp.reshape(jnp.arange(24.0) / 7, (4, 3, 2))
    biases = jnp.reshape(jnp.arange(12.0) / 3, (4, 3))
    ensemble = eqx.filter_vmap(lambda w, b: Linear(w, b, "relu"))(weights, biases)
    assert isinstance(ensemble, Linear) and ensemble.activation == "relu"
    assert ensemble.weight.shape == (4, 3, 2)
    x = jnp.asarray([0.3, -1.1])
    out = eqx.filter_vmap(lambda m, x: m(x), in_axes=(eqx.if_array(0), None))(ensemble, x)
    for i in range(4):
        np.testing.assert_array_equal(out[i], Linear(weights[i], biases[i])(x))
    jitted = eqx.filter_jit(eqx.filter_vmap(lambda m, x: m(x), in_axes=(eqx.if_array(0), None)))
    np.testing.assert_array_equal(jitted(ensemble, x), out)


def test_filter_transforms_match_equinox():
    equinox = pytest.importorskip("equinox")
    import jax.numpy as jjnp

    w = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    grads = equinox.filter_grad(lambda p: (p[0] ** 2).sum())((jjnp.asarray(w), "a"))
    ours = eqx.filter_grad(lambda p: (p[0] ** 2).sum())((jnp.asarray(w), "a"))
    np.testing.assert_array_equal(grads[0], ours[0])
    assert grads[1] is None and ours[1] is None


TREE_AT_CASES = {  # issue 20.6: nodes of any contents, results as Equinox's
    "empty tuple": (lambda t: t[0], [()], {"replace": "hello"}, ["hello"]),
    "empty tuple replace_fn": (lambda t: t[0], [(), 5], {"replace_fn": lambda _: "X"},
                               ["X", 5]),
    "None": (lambda t: t[0], [None, 1], {"replace": 3}, [3, 1]),
    "None with is_leaf": (lambda t: t[0], [None, 1],
                          {"replace": 3, "is_leaf": lambda x: x is None}, [3, 1]),
    "empty list": (lambda t: t["a"], {"a": [], "b": 1}, {"replace": [1, 2]},
                   {"a": [1, 2], "b": 1}),
    "empty dict": (lambda t: t[1], (1, {}), {"replace": "d"}, (1, "d")),
    "two empty tuples": (lambda t: (t[0], t[1]), [(), ()], {"replace": ("a", "b")}, ["a", "b"]),
    "nested empty": (lambda t: t[0][0], [[()]], {"replace": 7}, [[7]]),
    "parent of an empty": (lambda t: t[0], [[(), 1], 2], {"replace": "P"}, ["P", 2]),
    "equal string leaves": (lambda t: t[1], ("a", "a"), {"replace": "b"}, ("a", "b")),
    "function leaf": (lambda t: t[0], [len, 1], {"replace": max}, [max, 1]),
    "empty and leaf": (lambda t: [t[0], t[1]], [(), 5], {"replace": ["A", "B"]}, ["A", "B"]),
    # `where` sees None as None, so a filter on `is not None` skips it (diffrax does this)
    "None skipped by where": (lambda t: [x for x in t if x is not None], [None, 1, None],
                              {"replace": [5]}, [None, 5, None]),
    "None field skipped": (lambda t: [x for x in (t["ts"], t["y"]) if x is not None],
                           {"ts": None, "y": 2.0}, {"replace_fn": lambda y: y * 2},
                           {"ts": None, "y": 4.0}),
}


@pytest.mark.parametrize("case", TREE_AT_CASES)
def test_tree_at_selects_any_node(case):
    where, tree, kwargs, want = TREE_AT_CASES[case]
    assert eqx.tree_at(where, tree, **kwargs) == want


@pytest.mark.parametrize("case", TREE_AT_CASES)
def test_tree_at_matches_equinox(case):
    equinox = pytest.importorskip("equinox")
    where, tree, kwargs, want = TREE_AT_CASES[case]
    assert equinox.tree_at(where, tree, **kwargs) == want


@pytest.mark.parametrize("lib", ["invarax", "equinox"])
def test_tree_at_an_ambiguous_none_is_an_error(lib):
    mod = eqx if lib == "invarax" else pytest.importorskip("equinox")
    with pytest.raises(ValueError, match="is_leaf=lambda x: x is None"):
        mod.tree_at(lambda t: t[0], [None, None, 1], True)
    assert mod.tree_at(lambda t: t[0], [None, None, 1], True,
                       is_leaf=lambda x: x is None) == [True, None, 1]


def test_tree_at_replaces_a_childless_module_and_a_none_field():
    class Holder(eqx.Module):
        inner: object
        extra: object

    h = Holder(eqx.nn.Identity(), None)
    out = eqx.tree_at(lambda m: (m.inner, m.extra), h, ("a", "b"))
    assert (out.inner, out.extra) == ("a", "b") and isinstance(h.inner, eqx.nn.Identity)


def _scaled(x, y, scale=1.0):
    return x * y * scale


VMAP_DICT_CASES = [  # (in_axes, args): a dict in_axes names parameters, as Equinox
    ({"y": None}, (np.ones(3, np.float32), np.float32(2.0))),
    ({"x": None, "y": 0}, (np.float32(3.0), np.arange(3, dtype=np.float32))),
    ({"x": 1}, (np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32))),
    ({"scale": None}, (np.ones(3, np.float32), np.ones(3, np.float32), np.float32(2.0))),
]


@pytest.mark.parametrize("in_axes, args", VMAP_DICT_CASES)
def test_filter_vmap_dict_in_axes(in_axes, args):
    # issue 20.8: a dict in_axes was rejected
    ours = eqx.filter_vmap(_scaled, in_axes=in_axes)(*args)
    equinox = pytest.importorskip("equinox")
    theirs = equinox.filter_vmap(_scaled, in_axes=in_axes)(*args)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_filter_vmap_dict_in_axes_names_keyword_arguments():
    x, s = jnp.arange(3.0), jnp.asarray([1.0, 2.0, 3.0])
    out = eqx.filter_vmap(_scaled, in_axes={"y": None, "scale": 0})(x, 2.0, scale=s)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2.0 * np.asarray(s))
    out = eqx.filter_vmap(_scaled, in_axes={"scale": None})(x, x, scale=jnp.asarray(2.0))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) ** 2 * 2)
    with pytest.raises(ValueError, match=r"did not correspond to any argument: \('z',\)"):
        eqx.filter_vmap(_scaled, in_axes={"z": None})(x, x)


def test_filter_vmap_out_axes_on_non_array_leaves():
    # issue 20.8: out_axes=0 on a non-array output leaf raised
    x = jnp.ones(3)
    out = eqx.filter_vmap(lambda x: (x, 2, 2.0, None, "s", len), out_axes=0)(x)
    assert out[3] is None and out[4] == "s" and out[5] is len
    assert np.asarray(out[1]).tolist() == [2, 2, 2] and out[1].weak_type
    assert np.asarray(out[2]).tolist() == [2.0, 2.0, 2.0]
    assert eqx.filter_vmap(lambda x: (x, 2))(x)[1] == 2  # if_array(0): unbatched
    equinox = pytest.importorskip("equinox")
    theirs = equinox.filter_vmap(lambda x: (x, 2, 2.0, None), out_axes=0)(np.ones(3, np.float32))
    for a, b in zip(out[:4], theirs, strict=True):
        assert (a is None and b is None) or (np.array_equal(a, b) and a.dtype == b.dtype)

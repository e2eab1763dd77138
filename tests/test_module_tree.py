"""Equinox's tree utilities, decorator factories, ``donate=``, and functions as static leaves,
each against Equinox where it is installed."""

import numpy as np
import pytest

import invarax
import invarax.nn as nn
import invarax.numpy as jnp
from invarax import optim


def _equinox():
    return pytest.importorskip("equinox"), pytest.importorskip("jax")


@pytest.mark.parametrize("x", [1.0, 1, True, 1j, "a", np.float32(1.0), np.ones(2, np.int32),
                               np.ones(2), None], ids=repr)
def test_is_inexact_array_like_as_equinox(x):
    eqx, _ = _equinox()
    assert invarax.is_inexact_array_like(x) == eqx.is_inexact_array_like(x)
    assert invarax.is_inexact_array_like(jnp.ones(2))
    assert not invarax.is_inexact_array_like(jnp.arange(2))


@pytest.mark.parametrize("tree", [{"a": 3, "b": (1, 2)}, 4, [1, [2, 3]], (), None,
                                  {"x": None, "y": [None]}], ids=repr)
def test_tree_flatten_one_level_as_equinox(tree):
    eqx, jax = _equinox()
    ours, ours_def = invarax.tree_flatten_one_level(tree)
    theirs, theirs_def = eqx.tree_flatten_one_level(tree)
    assert ours == theirs
    assert ours_def.num_leaves == theirs_def.num_leaves
    assert ours_def.unflatten(ours) == tree


def test_tree_flatten_one_level_of_a_module_and_a_cycle():
    linear = nn.Linear(2, 3, key=invarax.random.key(0))
    children, treedef = invarax.tree_flatten_one_level(linear)
    assert children[0] is linear.weight and children[1] is linear.bias
    assert treedef.unflatten(children).weight is linear.weight
    x = []
    x.append(x)
    with pytest.raises(ValueError, match="immediately self-referential"):
        invarax.tree_flatten_one_level(x)


def _cases():
    a, e = 1, [1]
    lin = nn.Linear(2, 2, key=invarax.random.key(0))
    cyc = []
    cyc.append([cyc])
    return {"repeated leaf": [a, a], "empty list": [[], []], "nones": [None, None],
            "repeated list": [e, e], "two lists": [[1], [1]], "repeated module": [lin, lin],
            "two modules": [lin, nn.Linear(2, 2, key=invarax.random.key(1))],
            "cycle": cyc}


@pytest.mark.parametrize("name", list(_cases()))
def test_tree_check_as_equinox(name):
    eqx, _ = _equinox()
    tree = _cases()[name]
    try:
        eqx.tree_check(tree if name not in ("repeated module", "two modules")
                       else [0, 0])  # Equinox cannot flatten invarax modules
        theirs = None
    except ValueError as e:
        theirs = str(e).split(";")[0].split(" appears")[0]
    expected = {"repeated list": "list", "repeated module": "Linear", "cycle": "list"}
    if name in ("repeated module", "two modules"):
        theirs = None if name == "two modules" else "x"
    try:
        invarax.tree_check(tree)
        ours = None
    except ValueError as e:
        ours = str(e)
        assert f"of type `{expected[name]}`" in ours
        assert ("self-referential" in ours) == (name == "cycle")
    assert (ours is None) == (theirs is None)


def test_tree_pformat():
    model = nn.MLP(2, 3, 4, 1, key=invarax.random.key(0))
    assert invarax.tree_pformat(model, width=88) == repr(model)
    assert invarax.tree_pformat({"a": jnp.ones((2, 3)), "b": [1, "x"]}) == \
        "{'a': f32[2,3], 'b': [1, 'x']}"
    assert invarax.tree_pformat(jnp.arange(3), short_arrays=False) == \
        "Array([0, 1, 2], dtype=int32)"
    wrapped = invarax.tree_pformat({"a": jnp.ones(2), "b": jnp.ones(3)}, width=10, indent=4)
    assert wrapped == "{\n    'a': f32[2],\n    'b': f32[3],\n}"
    assert invarax.tree_pformat([1, "s"], truncate_leaf=lambda x: isinstance(x, str)) == \
        "[1, str(...)]"


def test_tree_pformat_short_arrays_as_equinox():
    eqx, jax = _equinox()
    for ours, theirs in [(jnp.ones((2, 3)), jax.numpy.ones((2, 3))),
                         (jnp.arange(3), jax.numpy.arange(3)),
                         ({"w": jnp.ones(2), "n": 3}, {"w": jax.numpy.ones(2), "n": 3})]:
        assert invarax.tree_pformat(ours) == eqx.tree_pformat(theirs)


def test_filter_grad_and_value_and_grad_as_decorator_factories():
    @invarax.filter_grad(has_aux=True)
    def loss(p, x):
        return (p["w"] * x).sum(), "aux"

    grads, aux = loss({"w": jnp.ones(2), "name": "n"}, jnp.arange(2.0))
    assert aux == "aux" and grads["name"] is None
    np.testing.assert_array_equal(grads["w"], [0.0, 1.0])

    @invarax.filter_value_and_grad()
    def f(w):
        return (w ** 2).sum()

    value, g = f(jnp.ones(2))
    assert float(value) == 2.0 and np.array_equal(g, [2.0, 2.0])


@pytest.mark.parametrize("donate", ["all", "all-except-first", "warn", "warn-except-first",
                                    "none"])
def test_filter_jit_donate_gives_the_same_bits(donate):
    x = jnp.asarray(np.random.default_rng(0).standard_normal(5), dtype=jnp.float32)

    def f(x, y):
        return jnp.sin(x) * y + x

    want = f(x, 2.0)
    jitted = invarax.filter_jit(f, donate=donate)
    assert np.array_equal(jitted(x.copy(), 2.0), want)  # a donated x is consumed
    assert np.array_equal(invarax.filter_jit(donate=donate)(f)(x.copy(), 2.0), want)
    with pytest.raises(ValueError, match="donate must be one of"):
        invarax.filter_jit(f, donate="some")


def test_a_custom_jvp_activation_is_a_static_leaf_not_a_parameter():
    """The frozen-layer recipe: a filter spec built from the model, then the optimizer."""
    model = nn.MLP(2, 2, 4, 1, activation=nn.relu, key=invarax.random.key(0))
    spec = invarax.tree_map(lambda _: False, model)
    spec = invarax.tree_at(lambda m: (m.layers[-1].weight, m.layers[-1].bias), spec,
                           replace=(True, True))
    diff, static = invarax.partition(model, spec)
    assert diff.activation is None and static.activation is nn.relu
    assert diff.layers[0].weight is None and diff.layers[-1].weight is model.layers[-1].weight
    for opt in (optim.sgd(0.1), optim.adam(0.1)):
        state = opt.init(model)  # the whole model: its functions are static leaves
        filtered = opt.init(invarax.filter(model, invarax.is_inexact_array))
        assert invarax.tree_structure(state) == invarax.tree_structure(filtered)
    x = jnp.ones((3, 2))
    grads = invarax.filter_grad(lambda m: m(x).sum())(model)
    state = optim.adam(0.1).init(model)
    updates, _ = optim.adam(0.1).update(grads, state, model)
    new = optim.apply_updates(model, updates)
    assert new.activation is nn.relu and not np.array_equal(new.layers[0].weight,
                                                            model.layers[0].weight)


def test_tree_inference_and_tree_pprint(capsys):
    model = nn.Sequential([nn.Dropout(0.5),
                           nn.MultiheadAttention(1, 2, dropout_p=0.1, key=invarax.random.key(0))])
    flags = lambda m: [m.layers[0].inference, m.layers[1].dropout.inference]  # noqa: E731
    assert flags(invarax.tree_inference(model, True)) == [True, True]
    assert flags(invarax.tree_inference(invarax.tree_inference(model, True), False)) == \
        [False, False]
    assert flags(model) == [False, False]
    invarax.tree_pprint({"w": jnp.ones(2)})
    assert capsys.readouterr().out == "{'w': f32[2]}\n"


def test_tree_inference_as_equinox():
    eqx, jax = _equinox()
    ours = invarax.tree_inference([nn.Dropout(0.5), {"d": nn.Dropout(0.1)}], True)
    theirs = eqx.tree_inference([eqx.nn.Dropout(0.5), {"d": eqx.nn.Dropout(0.1)}], True)
    assert [ours[0].inference, ours[1]["d"].inference] == \
        [theirs[0].inference, theirs[1]["d"].inference]


def test_partial_as_equinox():
    eqx, jax = _equinox()

    def f(w, x, z=1.0):
        return w * x + z

    ours = invarax.Partial(f, jnp.array([1.0, 2.0]), z=3.0)
    theirs = eqx.Partial(f, jax.numpy.array([1.0, 2.0]), z=3.0)
    np.testing.assert_array_equal(ours(jnp.ones(2)), theirs(jax.numpy.ones(2)))
    assert [type(x).__name__ for x in invarax.tree_leaves(ours)][0] == "function"
    assert len(invarax.tree_leaves(ours)) == len(jax.tree_util.tree_leaves(theirs)) == 3
    grads = invarax.filter_grad(lambda p: p(jnp.ones(2)).sum())(ours)
    egrads = eqx.filter_grad(lambda p: p(jax.numpy.ones(2)).sum())(theirs)
    np.testing.assert_array_equal(grads.args[0], egrads.args[0])
    assert grads.func is None and grads.keywords == {"z": None} == egrads.keywords
    jitted = invarax.filter_jit(lambda p, x: p(x))(ours, jnp.ones(2))
    assert np.array_equal(jitted, ours(jnp.ones(2)))


def test_tree_pformat_struct_as_array():
    struct = invarax.filter_eval_shape(lambda x: (x.sum(axis=0), "s"), jnp.ones((4, 3)))
    assert invarax.tree_pformat(struct, struct_as_array=True) == "(f32[3], 's')"
    assert invarax.tree_pformat(struct) == "(ShapeDtypeStruct(shape=(3,), dtype=float32), 's')"

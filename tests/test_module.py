"""Module: a frozen dataclass pytree; static fields, converters, __check_init__, bound methods."""

import dataclasses

import numpy as np
import pytest

import invarax as eqx
import invarax.numpy as jnp
from invarax.tree_util import tree_flatten, tree_leaves, tree_map


class Linear(eqx.Module):
    weight: object
    bias: object
    activation: str = eqx.field(static=True, default="identity")

    def __call__(self, x):
        return self.weight @ x + self.bias

    def double(self, x):
        return 2 * self(x)


def _linear():
    return Linear(jnp.ones((3, 2)), jnp.zeros(3))


def test_fields_are_children_and_static_fields_are_structure():
    model = _linear()
    leaves, treedef = tree_flatten(model)
    assert len(leaves) == 2 and leaves[0] is model.weight
    rebuilt = treedef.unflatten(leaves)
    assert type(rebuilt) is Linear and rebuilt.activation == "identity"
    other = Linear(model.weight, model.bias, "relu")
    assert tree_flatten(other)[1] != treedef
    doubled = tree_map(lambda x: 2 * x, model)
    np.testing.assert_array_equal(doubled.weight, 2 * np.ones((3, 2)))


def test_frozen_after_init_and_error_shows_tree_at():
    model = _linear()
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"eqx\.tree_at\(lambda m: m\.weight, "
                       r"model, new_weight\)"):
        model.weight = jnp.zeros((3, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        del model.bias


def test_custom_init_sets_fields_then_freezes():
    class Scaled(eqx.Module):
        scale: object
        name: str = eqx.field(static=True)

        def __init__(self, n):
            self.scale = jnp.ones(n)
            self.name = f"scaled{n}"

    model = Scaled(4)
    assert model.name == "scaled4" and model.scale.shape == (4,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.name = "x"


def test_custom_init_must_set_every_field_and_only_fields():
    class Missing(eqx.Module):
        a: object
        b: object

        def __init__(self):
            self.a = 1

    with pytest.raises(TypeError, match=r"Field 'b' was not initialized"):  # as Equinox
        Missing()

    class Extra(eqx.Module):
        a: object

        def __init__(self):
            self.a = 1
            self.c = 2

    with pytest.raises(dataclasses.FrozenInstanceError, match="not a field"):
        Extra()


def test_converter_runs_after_init():
    class Conv(eqx.Module):
        x: object = eqx.field(converter=jnp.asarray)
        n: int = eqx.field(static=True, converter=int, default=2.0)

    m = Conv([1.0, 2.0])
    assert isinstance(m.x, eqx.Array) and m.n == 2 and type(m.n) is int


def test_check_init_runs_on_every_class_in_mro_after_freezing():
    calls = []

    class Base(eqx.Module):
        x: object

        def __check_init__(self):
            calls.append("base")
            if self.x < 0:
                raise ValueError("x must be non-negative")

    class Child(Base):
        y: object = 0

        def __check_init__(self):
            calls.append("child")

    Child(1)
    assert calls == ["child", "base"]  # Equinox's order: the class's own, then up its MRO
    with pytest.raises(ValueError, match="non-negative"):
        Child(-1)


def test_subclass_fields_and_registration():
    class Biased(Linear):
        extra: object = None

    m = Biased(jnp.ones((3, 2)), jnp.zeros(3), "relu", jnp.ones(1))
    assert len(tree_leaves(m)) == 3


def test_bound_methods_are_pytrees_of_the_module():
    model = _linear()
    call = model.__call__
    assert isinstance(call, eqx.BoundMethod)
    assert tree_leaves(call) == tree_leaves(model)
    zeroed = tree_map(jnp.zeros_like, model.double)
    np.testing.assert_array_equal(zeroed(jnp.ones(2)), np.zeros(3))
    np.testing.assert_array_equal(model(jnp.ones(2)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(model.double(jnp.ones(2)), [4.0, 4.0, 4.0])
    assert Linear.double(model, jnp.ones(2)).shape == (3,)


def test_repr_shows_array_shapes():
    assert repr(_linear()) == "Linear(weight=f32[3,2], bias=f32[3], activation='identity')"
    m = Linear(jnp.arange(3), None)
    assert repr(m) == "Linear(weight=i32[3], bias=None, activation='identity')"

    class Seq(eqx.Module):
        layers: tuple

    long = repr(Seq(tuple(_linear() for _ in range(3))))
    assert long.startswith("Seq(\n  layers=(\n    Linear(weight=f32[3,2]")


def test_equinox_frozen_and_static_behaviour_matches():
    eqx_ref = pytest.importorskip("equinox")

    class Ref(eqx_ref.Module):
        weight: object
        activation: str = eqx_ref.field(static=True, default="identity")

    import jax

    ref = Ref(jax.numpy.ones(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.weight = 1
    assert len(jax.tree_util.tree_leaves(ref)) == len(tree_leaves(Linear(jnp.ones(2), None)))


def test_paths_name_the_fields():
    from invarax.tree_util import keystr, tree_flatten_with_path

    class Inner(eqx.Module):
        weight: object
        name: str = eqx.field(static=True, default="inner")

    class Outer(eqx.Module):
        layers: list
        scale: object

    tree = Outer([Inner(jnp.ones(2))], jnp.zeros(()))
    paths = [keystr(p) for p, _ in tree_flatten_with_path(tree)[0]]
    assert paths == [".layers[0].weight", ".scale"]


def test_a_subclass_inherits_a_custom_init():
    class Base(eqx.Module):
        size: int = eqx.field(static=True)
        weight: object

        def __init__(self, size):
            self.size = size
            self.weight = jnp.zeros(size)

    class Child(Base):
        def double(self):
            return 2 * self.weight

    child = Child(3)
    assert child.size == 3 and child.double().shape == (3,)

    class Plain(eqx.Module):
        a: int

    class PlainChild(Plain):  # generated inits stay generated, with the new field
        b: int

    assert (PlainChild(1, 2).a, PlainChild(1, 2).b) == (1, 2)

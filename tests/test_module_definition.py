"""Module definitions as Equinox's (issue 20 items 5, 7, 9; issue 19's Module features).

Each behaviour is checked on invarax and, where Equinox is installed, on the same class
definitions built on ``equinox`` (the ``lib`` fixture runs a test once per library).
"""

import dataclasses
import inspect
import warnings
from typing import ClassVar

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import nn


def _libs():
    libs = [pytest.param((invarax, jnp), id="invarax")]
    try:
        import equinox
        import jax.numpy
    except ImportError:
        return libs
    return [*libs, pytest.param((equinox, jax.numpy), id="equinox")]


@pytest.fixture(params=_libs())
def lib(request):
    return request.param


# ---------------------------------------------------------------------------------------
# 5: equality and hashing are the pytree's


def test_identity_layers_are_equal():
    # issue 20.5: was identity, so False
    assert nn.Identity() == nn.Identity()
    assert hash(nn.Identity()) == hash(nn.Identity())


def test_module_equality_as_equinox(lib):
    eqx, np_ = lib

    class M(eqx.Module):
        w: object
        name: str = eqx.field(static=True, default="a")

    class N(eqx.Module):
        w: object
        name: str = eqx.field(static=True, default="a")

    assert M(1) == M(1) and M(1) != M(2) and M(1) != N(1) and M(1) != M(1, "b")
    assert bool(M(np_.ones(2)) == M(np_.ones(2)))
    assert not bool(M(np_.ones(2)) == M(np_.zeros(2)))
    assert not bool(M(np_.ones(2)) == M(np_.ones(3)))  # shape differs: False, no broadcast
    assert M(np_.ones(2)) != M(np_.ones(2, dtype=np_.int32))
    assert M(1) != 1 and hash(M(1)) == hash(M(1)) and hash(M(1)) != hash(M(2))
    assert len({M(1), M(1), M(2)}) == 2
    with pytest.raises(TypeError, match="unhashable"):
        hash(M(np_.ones(2)))


def test_equal_modules_share_a_jit_trace_as_static_arguments():
    traces = []

    def f(layer, x):
        traces.append(1)
        return layer(x)

    g = invarax.jit(f, static_argnums=0)
    x = jnp.ones(2)
    for _ in range(3):
        g(nn.Identity(), x)
    assert len(traces) == 1


# ---------------------------------------------------------------------------------------
# 7: defaults with a custom __init__


def test_custom_init_leaves_a_defaulted_field_to_its_default(lib):
    eqx, _ = lib

    class M(eqx.Module):
        b: int
        a: int = 3
        c: str = eqx.field(static=True, default="x")

        def __init__(self, b):
            self.b = b

    m = M(1)
    assert (m.a, m.b, m.c) == (3, 1, "x")
    assert m == M(1)

    class Factory(eqx.Module):
        a: list = dataclasses.field(default_factory=list)

        def __init__(self):
            pass

    with pytest.raises(TypeError, match="Field 'a' was not initialized"):
        Factory()  # a default_factory makes no class attribute: as Equinox


def test_defaulted_field_flattens_and_rebuilds():
    class M(invarax.Module):
        w: object
        scale: float = 2.0

        def __init__(self, w):
            self.w = w

    m = M(jnp.ones(2))
    # as Equinox: a default the instance never assigned stays the class's, not a leaf
    leaves = invarax.tree_util.tree_leaves(m)
    assert len(leaves) == 1
    doubled = invarax.tree_util.tree_map(lambda x: 2 * x, m)
    assert doubled.scale == 2.0 and "scale" not in doubled.__dict__
    assert repr(m) == "M(w=f32[2], scale=2.0)"


# ---------------------------------------------------------------------------------------
# 9 and issue 19: definition details


def test_check_init_order_through_inheritance(lib):
    eqx, _ = lib
    calls = []

    class A(eqx.Module):
        x: int

        def __check_init__(self):
            calls.append("A")

    class B(A):
        def __check_init__(self):
            calls.append("B")

    class C(B):
        y: int = 0

    class D(C):
        def __check_init__(self):
            calls.append("D")
            if self.x < 0:
                raise ValueError("x < 0")

    D(1)
    assert calls == ["D", "B", "A"]
    with pytest.raises(ValueError, match="x < 0"):
        D(-1)


def test_check_init_sees_converted_frozen_values(lib):
    eqx, _ = lib
    seen = []

    class M(eqx.Module):
        n: int = eqx.field(converter=int)

        def __check_init__(self):
            seen.append(type(self.n))
            with pytest.raises(dataclasses.FrozenInstanceError):
                self.n = 3

    M(2.0)
    assert seen == [int]


def _generated(eqx):
    def as_array(x: float):
        return x

    class M(eqx.Module):
        """A module."""

        x: int
        y: float = 1.0
        z: object = eqx.field(converter=as_array, default=0.0)
        s: str = eqx.field(static=True, default="s")

    return M


def test_generated_init_signature_doc_and_annotations(lib):
    eqx, _ = lib
    M = _generated(eqx)
    assert str(inspect.signature(M)) == (
        "(x: int, y: float = 1.0, z: float = 0.0, s: str = 's') -> None")
    assert list(inspect.signature(M.__init__).parameters) == ["self", "x", "y", "z", "s"]
    assert M.__init__.__doc__ == object.__init__.__doc__
    assert M.__doc__ == "A module."
    assert M.__init__.__annotations__["z"] is float


def test_generated_init_matches_equinox():
    equinox = pytest.importorskip("equinox")
    ours, theirs = _generated(invarax), _generated(equinox)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__init__.__doc__ == theirs.__init__.__doc__

    class Custom(invarax.Module):
        a: int

        def __init__(self, a, *, scale=2):
            """Custom."""
            self.a = a * scale

    assert str(inspect.signature(Custom)) == "(a, *, scale=2)"
    assert Custom.__init__.__doc__ == "Custom."


def test_fields_metadata(lib):
    eqx, _ = lib

    class M(eqx.Module):
        a: int
        b: int = eqx.field(static=True)
        c: int = eqx.field(converter=int)
        d: int = eqx.field(metadata={"note": 1})

    meta = {f.name: dict(f.metadata) for f in dataclasses.fields(M)}
    assert meta == {"a": {}, "b": {"static": True}, "c": {"converter": int}, "d": {"note": 1}}
    with pytest.raises(ValueError, match="static"):
        eqx.field(static=True, metadata={"static": True})


def test_converter_after_post_init_and_with_custom_init(lib):
    eqx, np_ = lib
    order = []

    class Post(eqx.Module):
        x: object = eqx.field(converter=lambda v: order.append("convert") or np_.asarray(v))

        def __post_init__(self):
            order.append("post_init")

    assert Post([1.0, 2.0]).x.shape == (2,)
    assert order == ["post_init", "convert"]

    class Custom(eqx.Module):
        x: object = eqx.field(converter=np_.asarray)
        n: int = eqx.field(static=True, converter=int, default=2.0)

        def __init__(self, x):
            self.x = x

    m = Custom([1.0])
    assert m.x.shape == (1,) and m.n == 2 and type(m.n) is int


def test_static_field_is_deprecated(lib):
    eqx, _ = lib
    with pytest.warns(UserWarning, match=r"`equinox.static_field` is deprecated in favour of "
                                         r"`equinox.field\(static=True\)`"):
        f = eqx.static_field(default=1)
    assert dict(f.metadata) == {"static": True} and f.default == 1


def test_post_init_with_custom_init_warns(lib):
    eqx, _ = lib
    with pytest.warns(UserWarning, match="`__post_init__`"):
        class M(eqx.Module):
            a: int

            def __init__(self):
                self.a = 1

            def __post_init__(self):
                pass


def test_array_in_a_static_field_warns(lib):
    eqx, np_ = lib

    class M(eqx.Module):
        a: object = eqx.field(static=True)

    with pytest.warns(UserWarning, match="A JAX array is being set as static"):
        M(np_.ones(2))


def test_init_false_float_array_warns(lib):
    eqx, np_ = lib

    class M(eqx.Module):
        a: object
        b: object = eqx.field(init=False)

        def __post_init__(self):
            self.b = 2 * self.a

    with pytest.warns(UserWarning, match=r"field\(init=False\)"):
        M(np_.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M(1)  # not an array: no warning


def test_assigning_a_method_as_a_field_is_an_error(lib):
    eqx, _ = lib

    class M(eqx.Module):
        f: object

        def __init__(self):
            self.f = self.g

        def g(self):
            return 1

    with pytest.raises(ValueError, match="Cannot assign methods in __init__"):
        M()


def test_setting_a_non_field_is_an_error(lib):
    eqx, _ = lib

    class M(eqx.Module):
        a: int

        def __init__(self):
            self.a = 1
            self.b = 2

    with pytest.raises(dataclasses.FrozenInstanceError):
        M()


def test_assigning_a_field_twice_in_init_keeps_the_last(lib):
    eqx, _ = lib

    class M(eqx.Module):
        a: int

        def __init__(self):
            self.a = 1
            self.a = 2

    assert M().a == 2


def test_a_transformed_module_as_a_field_warns(lib):
    eqx, np_ = lib
    jax = invarax if eqx is invarax else __import__("jax")
    linear = eqx.nn.Linear(2, 2, key=jax.random.PRNGKey(0))

    class M(eqx.Module):
        f: object

        def __init__(self, f):
            self.f = f

    for transform in (jax.vmap, jax.jit):
        with pytest.warns(UserWarning, match="Possibly assigning a JAX-transformed callable"):
            M(transform(linear))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M(jax.vmap(lambda x: x))  # nothing with arrays inside: no warning
        M(eqx.filter_vmap(linear))  # a pytree: no warning


# ---------------------------------------------------------------------------------------
# AbstractVar / AbstractClassVar


def test_abstract_var(lib):
    eqx, _ = lib

    class AbstractX(eqx.Module):
        a: int
        flag: eqx.AbstractVar[bool]

    with pytest.raises(TypeError, match=r"abstract attributes \{'flag'\}"):
        AbstractX(1)

    class Field(AbstractX):
        flag: bool

    class Prop(AbstractX):
        @property
        def flag(self):
            return True

    class Attr(AbstractX):
        flag = False

    assert Field(1, True).flag and Prop(1).flag and not Attr(1).flag
    assert [f.name for f in dataclasses.fields(AbstractX)] == ["a"]
    assert [f.name for f in dataclasses.fields(Field)] == ["a", "flag"]

    class StillAbstract(AbstractX):
        b: int

    with pytest.raises(TypeError, match="abstract"):
        StillAbstract(1, 2)


def test_abstract_class_var(lib):
    eqx, _ = lib

    class AbstractX(eqx.Module):
        size: eqx.AbstractClassVar[int]

    with pytest.raises(TypeError, match=r"abstract class attributes \{'size'\}"):
        AbstractX()

    class X(AbstractX):
        size: ClassVar[int] = 3

    assert X().size == 3 and X.size == 3 and dataclasses.fields(X) == ()


def test_abstract_definition_errors(lib):
    eqx, _ = lib
    with pytest.raises(TypeError, match="cannot have value"):
        class A(eqx.Module):
            x: eqx.AbstractVar[int] = 3
    with pytest.raises(TypeError, match="unsubscripted"):
        class B(eqx.Module):
            x: eqx.AbstractVar


def test_is_abstract_and_strict_class_keywords(lib):
    eqx, _ = lib

    class A(eqx.Module, is_abstract=True):
        x: int

    class B(A):
        pass

    assert B(1).x == 1
    with pytest.raises(TypeError, match="Cannot instantiate abstract `equinox.Module`"):
        A(1)

    class C(eqx.Module, strict=True):
        x: int

    assert C(2).x == 2


def test_abstract_method_still_blocks_instantiation(lib):
    import abc

    eqx, _ = lib

    class A(eqx.Module):
        @abc.abstractmethod
        def f(self):
            ...

    with pytest.raises(TypeError, match="abstract"):
        A()


# ---------------------------------------------------------------------------------------


def test_numpy_import_unused_guard():
    assert np.ndim(0) == 0

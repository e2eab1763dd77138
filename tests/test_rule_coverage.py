"""Every primitive has every rule that exists so far: an impl and an abstract-eval rule."""

import pytest

import invarax  # noqa: F401  (defines every primitive)
from invarax.core.trace import PRIMITIVES, Primitive


def test_primitives_are_registered():
    for name in ("sin", "add", "dot_general", "reduce_sum", "broadcast_in_dim", "jit",
                 "convert_element_type", "select_n", "gather", "scatter-add", "sort"):
        assert name in PRIMITIVES, name


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_has_impl_and_abstract_eval(name):
    prim = PRIMITIVES[name]
    assert callable(prim.impl), f"{name} has no impl rule"
    assert callable(prim.abstract_eval), f"{name} has no abstract-eval rule"


def test_primitive_names_are_unique():
    with pytest.raises(ValueError, match="exists already"):
        Primitive("sin")

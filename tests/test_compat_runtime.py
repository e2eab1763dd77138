"""What diffrax, optimistix and lineax need at run time, each checked against JAX/Equinox."""

import numpy as np
import pytest

from invarax.tree_util import tree_structure

COMPOSE_CASES = [
    ((1, 2), [1, None]),
    ({"a": 1, "b": (2, 3)}, {"a": 1, "b": (2,)}),
    (1, (1, 2)),
    ((1, [2, None]), 1),
    ([], (1, 2)),
    ((1, 2), ()),
]


@pytest.mark.parametrize("outer,inner", COMPOSE_CASES, ids=repr)
def test_treedef_compose_as_jax(outer, inner):
    composed = tree_structure(outer).compose(tree_structure(inner))
    n = composed.num_leaves
    assert n == tree_structure(outer).num_leaves * tree_structure(inner).num_leaves
    ours = composed.unflatten(range(n))
    jtu = pytest.importorskip("jax.tree_util")
    theirs_def = jtu.tree_structure(outer).compose(jtu.tree_structure(inner))
    assert theirs_def.num_leaves == n and theirs_def.num_nodes == composed.num_nodes
    assert ours == theirs_def.unflatten(range(n))
    assert composed == tree_structure(ours)


def test_treedef_compose_rejects_a_tree():
    with pytest.raises(TypeError, match="tree_structure"):
        tree_structure((1, 2)).compose((1, 2))

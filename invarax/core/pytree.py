"""Pytrees: nested containers of leaves, flattened to a list of leaves plus a structure.

JAX's semantics: tuples, lists, dicts (keys sorted), `None` (a node without children),
namedtuples, `collections.OrderedDict` (insertion order) and `collections.defaultdict`
are nodes; so is every registered type; everything else is a leaf.

This module gathers the public names of the pytree modules (``invarax.tree_util``
re-exports them): the node types, their children's keys and the registration functions
(`invarax.core.pytree_registry`); treedefs and flattening (`invarax.core.treedef`); maps,
reductions and restructuring (`invarax.core.tree_maps`); key paths
(`invarax.core.tree_paths`).
"""

from .pytree_registry import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    SequenceKey,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
)
from .tree_maps import (
    tree_all,
    tree_broadcast,
    tree_map,
    tree_reduce,
    tree_reduce_associative,
    tree_transpose,
)
from .tree_paths import tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path
from .treedef import (
    PyTreeDef,
    all_leaves,
    tree_flatten,
    tree_leaves,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_is_leaf",
]

"""Key paths: each leaf of a pytree with the keys that lead to it (`keystr` prints them)."""

from collections.abc import Callable
from typing import Any

from .tree_maps import _rest_leaves
from .treedef import _LEAF, PyTreeDef, tree_flatten


def _leaf_paths(treedef: PyTreeDef) -> list[tuple]:
    """The key path of each leaf of `treedef`, in order."""
    out = []
    _paths(treedef._node, (), out)
    return out


def _paths(node: tuple, path: tuple, out: list) -> None:
    if node is _LEAF:
        out.append(path)
        return
    kind, aux, children, _ = node
    for key, child in zip(kind.keys(aux, len(children)), children, strict=True):
        _paths(child, (*path, key), out)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """Flatten a pytree into `(key path, leaf)` pairs and its structure.

    Arguments:
        tree: a pytree.
        is_leaf: an optional predicate that stops the recursion, as in `tree_flatten`.

    Returns:
        `(pairs, treedef)`: each leaf with the tuple of keys (`SequenceKey`, `DictKey`,
        `GetAttrKey`, `FlattenedIndexKey`) that leads to it, in `tree_flatten`'s order.

    Example:
        >>> from invarax.tree_util import keystr
        >>> pairs, _ = tree_flatten_with_path({"a": [1, 2]})
        >>> [(keystr(path), leaf) for path, leaf in pairs]
        [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    return list(zip(_leaf_paths(treedef), leaves, strict=True)), treedef


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[tuple, Any]]:
    """The `(key path, leaf)` pairs of a pytree; see `tree_flatten_with_path`.

    Arguments:
        tree: a pytree.
        is_leaf: an optional predicate that stops the recursion, as in `tree_flatten`.

    Returns:
        The list of `(key path, leaf)` pairs.

    Example:
        >>> tree_leaves_with_path((1, None, 2))
        [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=2),), 2)]
    """
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply a function to the key paths and leaves of one or more pytrees.

    Arguments:
        f: a function of a key path and `1 + len(rest)` more arguments.
        tree: a pytree.
        *rest: pytrees with the structure of `tree`, or with it as a prefix, as in
            `tree_map`.
        is_leaf: an optional predicate that stops the recursion in `tree`.

    Returns:
        A pytree with the structure of `tree`, holding `f(path, x, *ys)` for its leaves.

    Example:
        >>> from invarax.tree_util import keystr
        >>> tree_map_with_path(lambda path, x: f"{keystr(path)}={x}", {"a": 1, "b": [2]})
        {'a': "['a']=1", 'b': ["['b'][0]=2"]}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    rest_leaves = _rest_leaves("tree_map_with_path", treedef, rest)
    return treedef.unflatten(map(f, _leaf_paths(treedef), leaves, *rest_leaves))

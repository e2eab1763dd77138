"""Maps and reductions over the leaves of pytrees, and restructuring: transpose, broadcast."""

import functools
from collections.abc import Callable
from typing import Any

from .treedef import PyTreeDef, tree_flatten, tree_leaves, tree_structure


def _rest_leaves(name: str, treedef: PyTreeDef, rest: tuple) -> list[list[Any]]:
    """The subtrees of each tree in `rest` at the leaves of `treedef`, for function `name`."""
    out = []
    for i, tree in enumerate(rest):
        try:
            out.append(treedef.flatten_up_to(tree))
        except ValueError as e:
            raise ValueError(
                f"{name}: rest[{i}] does not have the structure of the first tree (nor that "
                f"structure as a prefix): {e}"
            ) from None
    return out


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply a function to the leaves of one or more pytrees.

    Arguments:
        f: a function of `1 + len(rest)` arguments.
        tree: a pytree; its leaves are the first arguments of `f`.
        *rest: pytrees with the structure of `tree`, or with it as a prefix: `f` gets their
            subtrees at the positions of the leaves of `tree`.
        is_leaf: an optional predicate that stops the recursion in `tree`, as in
            `tree_flatten`.

    Returns:
        A pytree with the structure of `tree`, holding `f(x, *ys)` for its leaves.

    Raises:
        ValueError: if a tree of `rest` does not match; the message shows where and how.

    Example:
        >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, None)}, {"b": (20, None), "a": 10})
        {'a': 11, 'b': (22, None)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    return treedef.unflatten(map(f, leaves, *_rest_leaves("tree_map", treedef, rest)))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether all leaves of a pytree are truthy.

    Arguments:
        tree: a pytree.
        is_leaf: an optional predicate that stops the recursion, as in `tree_flatten`.

    Returns:
        `all(tree_leaves(tree))`; True for a tree without leaves.

    Example:
        >>> tree_all([True, {"a": 1}]), tree_all([True, 0])
        (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


_MISSING = object()


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduce the leaves of a pytree with a binary function, like `functools.reduce`.

    Arguments:
        function: a function of the running value and a leaf.
        tree: a pytree.
        initializer: an optional first running value.
        is_leaf: an optional predicate that stops the recursion, as in `tree_flatten`.

    Returns:
        The reduction of the leaves in order.

    Example:
        >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)], 10)
        16
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` inside out.

    Arguments:
        outer_treedef: the outer structure.
        inner_treedef: the structure of each subtree at a leaf of ``outer_treedef``; None
            takes that of the first one.
        pytree_to_transpose: the tree of trees.

    Returns:
        A tree of structure ``inner_treedef`` of trees of structure ``outer_treedef``.

    Raises:
        ValueError: if a subtree does not have the inner structure (the message says which).

    Example:
        >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
        ([1, 3], [2, 4])
    """
    try:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
    except ValueError as e:
        raise ValueError(f"tree_transpose: the tree does not have the outer structure "
                         f"{outer_treedef}: {e}") from None
    if inner_treedef is None:
        inner_treedef = tree_structure(subtrees[0]) if subtrees else tree_structure(None)
    inner_leaves = []
    for i, subtree in enumerate(subtrees):
        try:
            inner_leaves.append(inner_treedef.flatten_up_to(subtree))
        except ValueError as e:
            raise ValueError(f"tree_transpose: subtree {i} of the outer structure does not "
                             f"have the inner structure {inner_treedef}: {e}") from None
    columns = [outer_treedef.unflatten([leaves[j] for leaves in inner_leaves])
               for j in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten(columns)


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _MISSING,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Reduce the leaves with an associative ``operation``, as a balanced tree (JAX's order).

    Arguments:
        operation: an associative function of two values.
        tree: a pytree.
        identity: the result for a tree without leaves (required then).
        is_leaf: an optional predicate that stops the recursion, as in ``tree_flatten``.

    Returns:
        ``operation(reduce(first half), reduce(second half))``, recursively.

    Example:
        >>> tree_reduce_associative(lambda a, b: f"({a}{b})", ["a", ("b", "c"), "d"])
        '((ab)(cd))'
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(items):
        if len(items) == 1:
            return items[0]
        half = len(items) // 2
        return operation(reduce(items[:half]), reduce(items[half:]))

    return reduce(leaves)


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``full_tree``'s structure with each leaf of ``prefix_tree`` repeated over its subtree.

    Arguments:
        prefix_tree: a pytree whose structure is a prefix of ``full_tree``'s.
        full_tree: a pytree.
        is_leaf: an optional predicate that stops the recursion in ``prefix_tree``.

    Returns:
        A pytree with the structure of ``full_tree``.

    Raises:
        ValueError: if ``prefix_tree`` is not a prefix of ``full_tree`` (where, and how).

    Example:
        >>> tree_broadcast({"a": 1, "b": 2}, {"a": (0, 0), "b": [0]})
        {'a': (1, 1), 'b': [2]}
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = treedef.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(f"tree_broadcast: the first tree is not a prefix of the second: {e}"
                         ) from None
    full = []
    for leaf, subtree in zip(leaves, subtrees, strict=True):
        full += [leaf] * tree_structure(subtree).num_leaves
    return tree_structure(full_tree).unflatten(full)

"""Pytrees: nested containers of leaves, flattened to a list of leaves plus a structure.

JAX's semantics: tuples, lists, dicts (keys sorted), `None` (a node without children),
namedtuples, `collections.OrderedDict` (insertion order) and `collections.defaultdict`
are nodes; so is every registered type; everything else is a leaf.

A structure is a `PyTreeDef`, an immutable wrapper around a nested tuple
`(kind, aux_data, children, num_leaves)`; a leaf is the single tuple `_LEAF`. Equality and
hashing of treedefs are those of the nested tuples, so they run in C.

The node types, their children's keys and the registration functions are in
`invarax.core.pytree_registry`; this module re-exports its public names.
"""

import functools
from collections.abc import Callable, Iterable
from typing import Any

from .pytree_registry import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    SequenceKey,
    _kind_of,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_static,
)

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
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


# ---------------------------------------------------------------------------------------
# Treedefs.

_LEAF = (None, None, (), 1)


class PyTreeDef:
    """The structure of a pytree: its nodes, their aux data, and where its leaves go.

    Treedefs are immutable and compare structurally: node types, aux data (with `==`) and
    children. They are hashable (the hash is computed once, then cached).
    """

    __slots__ = ("_hash", "_node")

    def __init__(self, node: tuple):
        self._node = node
        self._hash = None

    @property
    def num_leaves(self) -> int:
        """The number of leaves."""
        return self._node[3]

    @property
    def num_nodes(self) -> int:
        """The number of nodes, leaves included."""
        return _num_nodes(self._node)

    def children(self) -> list["PyTreeDef"]:
        """The treedefs of the root's children; empty for a leaf.

        Returns:
            A list of treedefs.

        Example:
            >>> tree_structure((1, [2, 3])).children()
            [PyTreeDef(*), PyTreeDef([*, *])]
        """
        return [PyTreeDef(child) for child in self._node[2]]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build the pytree of this structure with the given leaves.

        Arguments:
            leaves: exactly `num_leaves` leaves, in order.

        Returns:
            The pytree; the same as `tree_unflatten(self, leaves)`.

        Example:
            >>> tree_structure({"b": 1, "a": None}).unflatten(["x"])
            {'a': None, 'b': 'x'}
        """
        leaves = list(leaves)
        if len(leaves) != self._node[3]:
            few_or_many = "few" if len(leaves) < self._node[3] else "many"
            raise ValueError(
                f"Too {few_or_many} leaves for {self}: expected {self._node[3]}, got {len(leaves)}."
            )
        if self._node is _LEAF:
            return leaves[0]
        return _unflatten(self._node, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten `tree` as far as this structure goes.

        Arguments:
            tree: a pytree that has this structure, or has it as a prefix: at each leaf of
                this structure, `tree` may hold any subtree.

        Returns:
            The subtrees of `tree` at the leaves of this structure, in order.

        Raises:
            ValueError: if `tree` does not match this structure; the message shows the
                key path of the first difference, what differs, and both structures.

        Example:
            >>> tree_structure((1, 2)).flatten_up_to(([3, 4], {"a": 5}))
            [[3, 4], {'a': 5}]
        """
        if self._node is _LEAF:
            return [tree]
        out = []
        try:
            _flatten_up_to(self._node, tree, out)
        except _Mismatch as e:
            where = keystr(reversed(e.path)) or "the root"
            raise ValueError(
                f"pytree structure mismatch at {where}: {e.reason}.\n"
                f"  expected structure: {self}\n"
                f"  got structure:      {tree_structure(tree)}"
            ) from None
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self._node == other._node

    def __hash__(self) -> int:
        if self._hash is None:
            try:
                self._hash = hash(self._node)
            except TypeError:  # unhashable aux data: hash the rest; == still compares it
                self._hash = hash(_without_aux(self._node))
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_repr(self._node)})"


def _num_nodes(node: tuple) -> int:
    return 1 + sum(map(_num_nodes, node[2]))


def _without_aux(node: tuple) -> tuple:
    return (node[0], tuple(map(_without_aux, node[2])))


def _node_repr(node: tuple) -> str:
    if node is _LEAF:
        return "*"
    kind, aux, children, _ = node
    return kind.show(aux, [_node_repr(child) for child in children])


def _unflatten(node: tuple, leaves: Iterable[Any]) -> Any:
    kind, aux, children, _ = node
    return kind.unflatten(
        aux, [next(leaves) if c is _LEAF else _unflatten(c, leaves) for c in children]
    )


class _Mismatch(Exception):
    """A subtree does not match a treedef; `path` collects the keys, innermost first."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
        self.path = []


def _flatten_up_to(node: tuple, x: Any, out: list) -> None:
    kind, aux, children, _ = node
    if type(x) is not kind.type:
        raise _Mismatch(f"different types: expected {kind.type.__name__}, got {type(x).__name__}")
    xs, x_aux = kind.flatten(x)
    if x_aux != aux:
        raise _Mismatch(
            f"different {kind.aux_label} of {kind.type.__name__} nodes: expected {aux!r}, "
            f"got {x_aux!r}"
        )
    if len(xs) != len(children):
        raise _Mismatch(
            f"different numbers of children: expected a {kind.type.__name__} with "
            f"{len(children)} children, got {len(xs)}"
        )
    for i, (child, value) in enumerate(zip(children, xs, strict=True)):
        if child is _LEAF:
            out.append(value)
            continue
        try:
            _flatten_up_to(child, value, out)
        except _Mismatch as e:
            e.path.append(kind.keys(aux, len(children))[i])
            raise


# ---------------------------------------------------------------------------------------
# Flattening.


def _flatten(x: Any, is_leaf: Callable[[Any], bool] | None, leaves: list) -> tuple:
    kind = None if is_leaf is not None and is_leaf(x) else _kind_of(x)
    if kind is None:
        leaves.append(x)
        return _LEAF
    start = len(leaves)
    children, aux = kind.flatten(x)
    nodes = tuple([_flatten(child, is_leaf, leaves) for child in children])
    return (kind, aux, nodes, len(leaves) - start)


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into its leaves and its structure.

    Arguments:
        tree: a pytree.
        is_leaf: an optional predicate; a subtree for which it returns True is a leaf
            (even `None` or a container), and is not looked into.

    Returns:
        `(leaves, treedef)`: the leaves in order (dicts by sorted key), and the structure.

    Example:
        >>> tree_flatten((1, {"b": [2, 3], "a": None}))
        ([1, 2, 3], PyTreeDef((*, {'a': None, 'b': [*, *]})))
    """
    leaves = []
    return leaves, PyTreeDef(_flatten(tree, is_leaf, leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Build a pytree from a structure and leaves; the inverse of `tree_flatten`.

    Arguments:
        treedef: the structure.
        leaves: exactly `treedef.num_leaves` leaves, in order.

    Returns:
        The pytree. Dicts come back with their keys in sorted order.

    Example:
        >>> leaves, treedef = tree_flatten({"b": 1, "a": [2, None]})
        >>> tree_unflatten(treedef, [x * 10 for x in leaves])
        {'a': [20, None], 'b': 10}
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of a pytree, in order.

    Arguments:
        tree: a pytree.
        is_leaf: an optional predicate that stops the recursion, as in `tree_flatten`.

    Returns:
        The list of leaves.

    Example:
        >>> tree_leaves([1, None, {"b": 2, "a": 3}])
        [1, 3, 2]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of a pytree.

    Arguments:
        tree: a pytree.
        is_leaf: an optional predicate that stops the recursion, as in `tree_flatten`.

    Returns:
        Its treedef.

    Example:
        >>> tree_structure([1, None, (2,)])
        PyTreeDef([*, None, (*,)])
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether a treedef is that of a single leaf.

    Arguments:
        treedef: a treedef.

    Returns:
        True if it is `PyTreeDef(*)`.

    Example:
        >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure(None))
        (True, False)
    """
    return treedef._node is _LEAF


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element of an iterable is a leaf.

    Arguments:
        iterable: the elements.
        is_leaf: an optional predicate that makes more things leaves, as in `tree_flatten`.

    Returns:
        True if no element is a pytree node (`None` is a node).

    Example:
        >>> all_leaves([1, "a"]), all_leaves([1, None]), all_leaves([(1,)])
        (True, False, False)
    """
    return all((is_leaf is not None and is_leaf(x)) or _kind_of(x) is None for x in iterable)


# ---------------------------------------------------------------------------------------
# Maps and reductions.


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


# ---------------------------------------------------------------------------------------
# Paths.


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
        >>> tree_map_with_path(lambda path, x: f"{keystr(path)}={x}", {"a": 1, "b": [2]})
        {'a': "['a']=1", 'b': ["['b'][0]=2"]}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    rest_leaves = _rest_leaves("tree_map_with_path", treedef, rest)
    return treedef.unflatten(map(f, _leaf_paths(treedef), leaves, *rest_leaves))


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

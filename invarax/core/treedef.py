"""Treedefs and flattening: a pytree as a list of leaves plus its structure, a `PyTreeDef`.

A `PyTreeDef` is an immutable wrapper around a nested tuple
`(kind, aux_data, children, num_leaves)`; a leaf is the single tuple `_LEAF`. Equality and
hashing of treedefs are those of the nested tuples, so they run in C.
"""

from collections.abc import Callable, Iterable
from typing import Any

from .pytree_registry import _kind_of, keystr

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

    def compose(self, inner: "PyTreeDef") -> "PyTreeDef":
        """The structure of this tree with a tree of structure `inner` at each leaf.

        Arguments:
            inner: the treedef put in place of every leaf.

        Returns:
            A treedef with `self.num_leaves * inner.num_leaves` leaves.

        Example:
            >>> tree_structure((1, 2)).compose(tree_structure([1, None]))
            PyTreeDef(([*, None], [*, None]))
        """
        if not isinstance(inner, PyTreeDef):
            raise TypeError(f"compose takes a PyTreeDef, got {type(inner).__name__}; "
                            "use tree_structure(tree) to get one")
        return PyTreeDef(_compose(self._node, inner._node))

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


def _compose(node: tuple, inner: tuple) -> tuple:
    if node is _LEAF:
        return inner
    kind, aux, children, num_leaves = node
    return (kind, aux, tuple(_compose(c, inner) for c in children), num_leaves * inner[3])


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

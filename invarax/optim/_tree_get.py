"""optax's ``tree_get``, ``tree_set`` and ``tree_get_all_with_path``: reading and replacing
values of an optimiser state by key (a dict key, a named tuple's field or class name)."""

from __future__ import annotations

import dataclasses

from ..core.pytree import tree_flatten, tree_leaves_with_path, tree_map, tree_unflatten
from ..core.pytree_registry import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey


@dataclasses.dataclass(frozen=True)
class NamedTupleKey:
    """A path entry for the field ``name`` of a named tuple of class ``tuple_name``, as
    optax's (so a filter can tell apart equal fields of different states).

    Example:
        >>> str(NamedTupleKey("ScaleByAdamState", "mu"))
        'ScaleByAdamState.mu'
    """

    tuple_name: str
    name: str

    def __str__(self):
        return f"{self.tuple_name}.{self.name}"


def _is_named_tuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _has_key(node, keys) -> bool:
    """Whether ``node`` (a named tuple or a dict) has one of ``keys`` (a named tuple's class
    name counts)."""
    if _is_named_tuple(node):
        return any(k in node._fields or k == type(node).__name__ for k in keys)
    return isinstance(node, dict) and any(k in node for k in keys)


def _children(path, node):
    """``(path, key, child)`` for each field of a named tuple or item of a dict."""
    if _is_named_tuple(node):
        name = type(node).__name__
        return [((*path, NamedTupleKey(name, f)), f, getattr(node, f)) for f in node._fields]
    if isinstance(node, dict):
        return [((*path, DictKey(k)), k, v) for k, v in node.items()]
    raise ValueError(f"Subtree must be a dict or a NamedTuple. Got {type(node)}")


def _leaves(tree, stop, path=()):
    """``(path, node)`` for the leaves of ``tree`` and the nodes ``stop`` selects, named
    tuples' fields keyed by ``NamedTupleKey``."""
    out = []
    for sub, node in tree_leaves_with_path(tree, is_leaf=lambda x: stop(x) or _is_named_tuple(x)):
        if stop(node) or not _is_named_tuple(node):
            out.append(((*path, *sub), node))
        else:
            for child_path, _, child in _children((*path, *sub), node):
                out += _leaves(child, stop, child_path)
    return out


def _found(path, node, key):
    """The value for ``key`` in ``node`` (a node with it) and its path."""
    if _is_named_tuple(node):
        if key == type(node).__name__:
            return path, node
        return (*path, NamedTupleKey(type(node).__name__, key)), getattr(node, key)
    return (*path, DictKey(key)), node[key]


def _all_with_path(tree, key, path=()):
    def stop(x):
        return _has_key(x, (key,))

    found = []
    for sub, node in _leaves(tree, stop, path):
        if stop(node):
            found.append(_found(sub, node, key))
            for child_path, _, child in _children(sub, node):
                found += _all_with_path(child, key, child_path)
    return found


def tree_get_all_with_path(tree, key, filtering=None) -> list:
    """Every value of ``tree`` under ``key`` (a dict key, a named tuple's field, or a named
    tuple's class name), with its path, as optax's.

    Arguments:
        tree: any pytree (an optimiser state, say).
        key: the key, field or class name to look for.
        filtering: optional ``(path, value) -> bool`` keeping some of the values.

    Returns:
        A list of ``(path, value)``; a path is a tuple of ``DictKey``, ``SequenceKey``, ...,
        and ``NamedTupleKey`` entries.

    Example:
        >>> from invarax import optim
        >>> state = optim.adam(1.0).init(jnp.zeros(2))
        >>> [(str(path[-1]), value) for path, value in tree_get_all_with_path(state, "count")]
        [('ScaleByAdamState.count', Array(0, dtype=int32))]
    """
    found = _all_with_path(tree, key)
    if filtering is not None:
        found = [(p, v) for p, v in found if filtering(p, v)]
    return found


def tree_get(tree, key, default=None, filtering=None):
    """The one value of ``tree`` under ``key``, as optax's ``tree_get``.

    Arguments:
        tree, key, filtering: as for ``tree_get_all_with_path``.
        default: returned when no value is found.

    Returns:
        The value; a ``KeyError`` if several are found (a ``filtering`` can choose).

    Example:
        >>> from invarax import optim
        >>> tree_get(optim.adam(1.0).init(jnp.zeros(2)), "count")
        Array(0, dtype=int32)
    """
    found = tree_get_all_with_path(tree, key, filtering)
    if len(found) > 1:
        raise KeyError(f"Found multiple values for '{key}' in {tree}: pass filtering= "
                       "(a function of the path and the value) to choose one")
    return found[0][1] if found else default


def _entry_key(entry):
    for kind, attr in ((DictKey, "key"), (FlattenedIndexKey, "key"), (GetAttrKey, "name"),
                       (SequenceKey, "idx"), (NamedTupleKey, "name")):
        if isinstance(entry, kind):
            return getattr(entry, attr)
    raise KeyError(f"Tree key '{entry}' of type '{type(entry)}' not valid.")


def tree_set(tree, filtering=None, /, **kwargs):
    """``tree`` with the values under each key of ``kwargs`` replaced, as optax's.

    Arguments:
        tree: any pytree.
        filtering: optional ``(path, value) -> bool`` choosing which matches to replace.
        **kwargs: the keys (dict keys, named tuple fields or class names) and new values.

    Returns:
        The new pytree; a ``KeyError`` if a key matches nothing.

    Example:
        >>> from invarax import optim
        >>> state = tree_set(optim.adam(1.0).init(jnp.zeros(2)), count=jnp.array(3))
        >>> tree_get(state, "count")
        Array(3, dtype=int32, weak_type=True)
    """
    for key in kwargs:
        if not tree_get_all_with_path(tree, key, filtering):
            given = " given the filtering operation" if filtering else ""
            raise KeyError(f"Found no values matching '{key}'{given} in {tree}")
    keys = tuple(kwargs)

    def chosen(path, value):
        return filtering is None or filtering(path, value)

    def replace(path, node):
        if not _has_key(node, keys):
            return node
        if _is_named_tuple(node) and type(node).__name__ in kwargs and chosen(path, node):
            return kwargs[type(node).__name__]
        new = {}
        for child_path, key, child in _children(path, node):
            if key in kwargs and chosen(child_path, child):
                new[key] = kwargs[key]
            elif isinstance(child, (dict, list, tuple)):
                new[key] = replace(child_path, child)
            else:
                new[key] = child
        return node._replace(**new) if _is_named_tuple(node) else new

    def stop(x):
        return _has_key(x, keys)

    _, treedef = tree_flatten(tree, is_leaf=stop)
    return tree_unflatten(treedef, [replace(p, n) for p, n in _leaves(tree, stop)])


def tree_unwrap_random_key_data(input_tree):
    """optax's: typed PRNG keys replaced by their data. invarax's keys are ``uint32``
    arrays already, so the tree comes back as it is (a copy of its structure).

    Example:
        >>> tree_unwrap_random_key_data({"key": invarax.random.PRNGKey(0)})
        {'key': Array([0, 0], dtype=uint32)}
    """
    return tree_map(lambda x: x, input_tree)

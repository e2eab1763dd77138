"""Equinox's tree utilities: ``tree_pformat``, ``tree_flatten_one_level``, ``tree_check``."""

from __future__ import annotations

from ..core.pytree import tree_flatten, tree_structure
from ._pretty import _fmt, _Style
from ._tree_at import tree_at


def tree_pformat(pytree, *, width: int = 80, indent: int = 2, short_arrays: bool = True,
                 struct_as_array: bool = False, truncate_leaf=None) -> str:
    """A pretty-printed string of ``pytree``: arrays as ``f32[3,2]``, Modules by field.

    Arguments:
        pytree: any pytree.
        width: the line width to wrap at.
        indent: the indent of each nesting level once wrapped.
        short_arrays: arrays as dtype and shape (``f32[3]``); False prints them in full.
        struct_as_array: print shape-and-dtype stand-ins (``ShapeDtypeStruct``, as
            ``filter_eval_shape`` returns) as arrays, ``f32[3]``.
        truncate_leaf: a predicate; the leaves it selects print as ``Type(...)``.

    Returns:
        The string; the layout is invarax's (as ``repr(module)``), not Equinox's exact one.

    Example:
        >>> print(tree_pformat({"w": jnp.ones((2, 3)), "act": "relu"}))
        {'w': f32[2,3], 'act': 'relu'}
    """
    if truncate_leaf is not None:
        from ..core.pytree import tree_map

        pytree = tree_map(lambda x: _Truncated(x) if truncate_leaf(x) else x, pytree)
    return _fmt(pytree, 0, _Style(width, indent, short_arrays, struct_as_array))


def tree_pprint(pytree, *, width: int = 80, indent: int = 2, short_arrays: bool = True,
                struct_as_array: bool = False, truncate_leaf=None) -> None:
    """Print ``tree_pformat(pytree, ...)``.

    Arguments:
        pytree, width, indent, short_arrays, struct_as_array, truncate_leaf: as for
            ``tree_pformat``.

    Returns:
        None.

    Example:
        >>> tree_pprint((jnp.ones(3), "relu"))
        (f32[3], 'relu')
    """
    print(tree_pformat(pytree, width=width, indent=indent, short_arrays=short_arrays,
                       struct_as_array=struct_as_array, truncate_leaf=truncate_leaf))


class _Truncated:
    __slots__ = ("name",)

    def __init__(self, x):
        self.name = type(x).__name__

    def __repr__(self):
        return f"{self.name}(...)"


def tree_flatten_one_level(pytree):
    """The immediate children of a pytree node (a leaf gives itself), as ``tree_flatten``.

    Arguments:
        pytree: any pytree node.

    Returns:
        ``(children, treedef)``: the children as a list, and the treedef that
        ``unflatten`` s them back into the node.

    Raises:
        ValueError: if the node contains itself as a child (``x = []; x.append(x)``).

    Example:
        >>> tree_flatten_one_level({"a": 3, "b": (1, 2)})
        ([3, (1, 2)], PyTreeDef({'a': *, 'b': *}))
    """
    seen = False

    def is_leaf(node):
        nonlocal seen
        if node is not pytree:
            return True
        if seen:
            raise ValueError(
                f"PyTree node of type `{type(pytree).__name__}` is immediately "
                "self-referential: it is its own child (as `x = []; x.append(x)`). Build the "
                "tree without the cycle."
            )
        seen = True
        return False

    return tree_flatten(pytree, is_leaf=is_leaf)


_LEAF = tree_structure(0)


def tree_check(pytree) -> None:
    """Check that ``pytree`` is well formed: no node appears twice, none contains itself.

    A node met twice would become two separate copies after flattening and unflattening
    (as at a ``jit`` boundary). Leaves and empty containers may repeat (``[4, 4]``,
    ``[None, None]``).

    Arguments:
        pytree: any pytree.

    Returns:
        None.

    Raises:
        ValueError: naming the type of the repeated or self-referential node.

    Example:
        >>> shared = [1.0]
        >>> tree_check([shared, shared])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: PyTree node of type `list` appears in the PyTree multiple times. ...
    """
    _check(pytree, {})


def _check(node, seen: dict) -> None:
    children, treedef = tree_flatten_one_level(node)
    if treedef == _LEAF or not children:
        return  # leaves and empty containers may repeat
    if id(node) in seen:
        inside, name = seen[id(node)]
        if inside:
            raise ValueError(
                f"PyTree node of type `{name}` is self-referential: it appears somewhere "
                "within its own PyTree structure. Build the tree without the cycle."
            )
        raise ValueError(
            f"PyTree node of type `{name}` appears in the PyTree multiple times. This is "
            "almost always an error, as these nodes will turn into two duplicate copies "
            "after flattening/unflattening, e.g. when crossing a JIT boundary. Copy it (or "
            "share it with nn.Shared)."
        )
    seen[id(node)] = (True, type(node).__name__)
    for child in children:
        _check(child, seen)
    seen[id(node)] = (False, type(node).__name__)


def _inference_flags(tree):
    """The ``inference`` flags of ``tree`` and of every node inside it."""
    def has(x):
        return hasattr(x, "inference") and x is not tree

    out = [tree.inference] if hasattr(tree, "inference") else []
    for x in tree_flatten(tree, is_leaf=has)[0]:
        if has(x):
            out.extend(_inference_flags(x))
    return out


def tree_inference(pytree, value: bool):
    """A copy of ``pytree`` with every ``inference`` attribute set to ``value``, as Equinox's.

    ``nn.inference_mode(model, value)`` is the same (Equinox's newer name).

    Arguments:
        pytree: any pytree of layers.
        value: the new flag.

    Returns:
        The changed copy.

    Example:
        >>> import invarax.nn as nn
        >>> tree_inference(nn.Dropout(0.5), True).inference
        True
    """
    return tree_at(_inference_flags, pytree, replace_fn=lambda _: value)

"""``tree_at``: a copy of a pytree with some of its nodes replaced."""

from __future__ import annotations

from ..core.pytree import tree_flatten, tree_structure, treedef_is_leaf

_NOTHING = object()


class _Marker:
    """A stand-in for one leaf, so that ``where`` reveals which leaves it selects."""

    __slots__ = ()


def _is_leaf(x, is_leaf) -> bool:
    return (is_leaf is not None and is_leaf(x)) or treedef_is_leaf(tree_structure(x))


def _children(x):
    return tree_flatten(x, is_leaf=lambda y: y is not x)


def _mark(x, path, is_leaf, paths, keep, nones):
    """A copy of ``x`` with fresh objects for leaves and subtrees; ``paths[id]`` locates each.

    None stays None (as in Equinox, `where` may test ``x is not None``); ``nones`` lists where.
    """
    if x is None and not (is_leaf is not None and is_leaf(None)):
        nones.append(path)
        return None
    if _is_leaf(x, is_leaf):
        new = _Marker()
    else:
        children, treedef = _children(x)
        new = treedef.unflatten(
            [_mark(c, (*path, i), is_leaf, paths, keep, nones) for i, c in enumerate(children)])
        if new is x or id(new) in paths:
            # a childless node rebuilt as a shared singleton (()): a marker stands in
            # for it, so that `where` selects this position and no other
            new = _Marker()
    keep.append(new)
    paths[id(new)] = path
    return new


def _rebuild(x, path, is_leaf, replacements):
    if path in replacements:
        return replacements[path](x)
    if _is_leaf(x, is_leaf) or not any(p[:len(path)] == path for p in replacements):
        return x  # untouched subtrees are kept, not copied
    children, treedef = _children(x)
    return treedef.unflatten(
        [_rebuild(c, (*path, i), is_leaf, replacements) for i, c in enumerate(children)])


def tree_at(where, pytree, replace=_NOTHING, replace_fn=_NOTHING, is_leaf=None):
    """A copy of ``pytree`` with the nodes that ``where`` selects replaced.

    Arguments:
        where: a function of the pytree returning one node of it (a leaf or a subtree) or
            a tuple/list of nodes, e.g. ``lambda m: m.weight`` or
            ``lambda m: (m.layers[0].weight, m.layers[0].bias)``.
        pytree: the pytree (a ``Module``, say) to copy.
        replace: the new value, or a sequence of them when ``where`` returns a sequence.
        replace_fn: instead of ``replace``, a function from each old node to its new one.
        is_leaf: as in ``tree_flatten``. Any node can be selected, whatever its contents:
            an empty tuple or list, None, a string or another non-array leaf.

    Returns:
        The new pytree; ``pytree`` itself is unchanged.

    Example:
        >>> tree_at(lambda t: t[1], (1, 2, 3), replace=20)
        (1, 20, 3)
    """
    if (replace is _NOTHING) == (replace_fn is _NOTHING):
        raise ValueError("tree_at takes exactly one of replace= and replace_fn=")
    paths, keep, nones = {}, [], []
    marked = _mark(pytree, (), is_leaf, paths, keep, nones)
    selected = where(marked)
    single = selected is None or id(selected) in paths
    nodes = [selected] if single else selected
    if isinstance(nodes, (list, tuple)) and any(n is None for n in nodes):
        if len(nones) != 1:
            raise ValueError(
                "tree_at: `where` selected a None, but the pytree holds "
                f"{len(nones)} Nones, so it does not say which one. Pass "
                "`is_leaf=lambda x: x is None` to make each None a distinct leaf.")
        paths[id(None)] = nones[0]
    if not isinstance(nodes, (list, tuple)) or any(id(n) not in paths for n in nodes):
        raise ValueError(
            f"tree_at: `where` must return nodes of the pytree (leaves or subtrees), got "
            f"{selected!r:.80}. It selected nothing of the tree: a static field, or a value "
            "built inside `where`."
        )
    if replace is not _NOTHING:
        values = [replace] if single else list(replace)
        if len(values) != len(nodes):
            raise ValueError(
                f"tree_at: `where` selected {len(nodes)} nodes but `replace` has "
                f"{len(values)} values"
            )
        fns = [lambda _, v=v: v for v in values]
    else:
        fns = [replace_fn] * len(nodes)
    replacements = {}
    for node, fn in zip(nodes, fns, strict=True):
        path = paths[id(node)]
        if any(p[:len(path)] == path or path[:len(p)] == p for p in replacements):
            raise ValueError("tree_at: `where` selected the same node twice, or a node "
                             "and a subtree of it")
        replacements[path] = fn
    return _rebuild(pytree, (), is_leaf, replacements)

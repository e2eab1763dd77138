"""``Shared``: one set of parameters used in several places of a model (tied weights)."""

from __future__ import annotations

from ..core.pytree import tree_flatten
from ..module import Module, tree_at


class SharedNode:
    """The placeholder ``Shared`` leaves where a shared node was (a pytree leaf)."""

    def __repr__(self):
        return "SharedNode"


def _describe(tree):
    leaves, treedef = tree_flatten(tree)
    return treedef, [(tuple(x.shape), str(x.dtype)) if hasattr(x, "shape") else x
                     for x in leaves]


class Shared(Module):
    """Tie nodes of a pytree together, as ``equinox.nn.Shared``.

    The nodes selected by ``where`` are replaced by placeholders; calling the ``Shared``
    puts ``get``'s nodes back in their place. So the parameters are stored once, and their
    gradient sums the contributions of every place they are used.

    Arguments:
        pytree: the pytree holding the nodes (say, a tuple of an embedding and a linear).
        where: a function of ``pytree`` returning the nodes to replace (as ``tree_at``'s).
        get: a function of ``pytree`` returning the nodes to put in their place; they must
            have the same structure, shapes and dtypes.

    Returns:
        The module; ``shared()`` returns the pytree with the nodes tied.

    Example:
        >>> a = nn.Linear(2, 2, key=invarax.random.key(0))
        >>> b = nn.Linear(2, 2, key=invarax.random.key(1))
        >>> shared = nn.Shared((a, b), lambda p: p[1].weight, lambda p: p[0].weight)
        >>> a2, b2 = shared()
        >>> bool(jnp.all(b2.weight == a.weight))
        True
    """

    pytree: object
    where: object
    get: object

    def __init__(self, pytree, where, get):
        source, dest = _describe(get(pytree)), _describe(where(pytree))
        if source != dest:
            raise ValueError(
                "Shared: Every node being shared together must have the same pytree "
                "structure, shape+dtype of arrays, etc., as each other (Equinox's words); the "
                f"nodes of `get` and `where` differ: got {source} and {dest}")
        self.pytree = tree_at(where, pytree, replace_fn=lambda _: SharedNode())
        self.where = where
        self.get = get

    def __call__(self):
        """The pytree with ``get``'s nodes in the places ``where`` selects."""
        return tree_at(self.where, self.pytree, self.get(self.pytree))

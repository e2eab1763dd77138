"""``tree_util.Partial``: a ``functools.partial`` that is a pytree, as JAX's."""

from __future__ import annotations

import functools

from .pytree_registry import register_pytree_node


class Partial(functools.partial):
    """A ``functools.partial`` whose bound arguments are pytree children.

    The function is static (aux data); the positional and keyword arguments are the
    children, so a ``Partial`` can be passed to and returned from ``jit``, ``vmap`` and
    ``grad``, its arrays traced like any other leaves.

    Arguments:
        func: the function (a partial's own bound arguments stay static).
        *args, **kwargs: the arguments to bind.

    Returns:
        A callable pytree.

    Example:
        >>> from invarax.tree_util import Partial, tree_leaves
        >>> add = Partial(jnp.add, 1.0)
        >>> add(2.0), tree_leaves(add)
        (Array(3., dtype=float32, weak_type=True), [1.0])
    """

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial):
            # functools.partial would merge func's arguments into this one's, making
            # them children; as JAX, they stay with func, which is static.
            func = _Opaque(func)
        return super().__new__(cls, func, *args, **kwargs)


class _Opaque:
    """A callable standing for a partial, hashing and comparing as it does."""

    __slots__ = ("partial",)

    def __init__(self, partial):
        self.partial = partial

    def __call__(self, *args, **kwargs):
        return self.partial(*args, **kwargs)

    def __hash__(self):
        return hash(self.partial)

    def __eq__(self, other):
        return isinstance(other, _Opaque) and self.partial == other.partial


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)

"""``Static``: a value carried in a pytree's structure, not its leaves.

The filtered transforms wrap the non-array part of their inputs and outputs in a
``Static``: ``jit`` then hashes it into its cache key and keeps it in the traced output
structure, and ``vmap``/``grad`` pass it through untouched, because it has no leaves.
"""

from __future__ import annotations

from ..core.pytree import tree_flatten
from ..core.pytree_registry import register_static


@register_static
class Static:
    """A pytree node with no children holding ``value`` (compared and hashed by its leaves)."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        leaves, treedef = tree_flatten(value)
        self.value = value
        self._key = (treedef, tuple(leaves))

    @classmethod
    def keyed(cls, value, key) -> Static:
        """A ``Static`` of ``value`` compared and hashed by ``key`` instead of by its leaves
        (for a value already flattened: ``key`` must tell such values apart as they do)."""
        static = cls.__new__(cls)
        static.value, static._key = value, key
        return static

    def __eq__(self, other):
        return type(other) is Static and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Static({self.value!r})"

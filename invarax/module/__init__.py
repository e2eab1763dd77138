"""Equinox's module layer: ``Module``, ``field``, filters, ``tree_at`` and filtered transforms."""

from ._filters import (
    combine,
    filter,
    if_array,
    is_array,
    is_array_like,
    is_inexact_array,
    partition,
)
from ._grad import filter_grad, filter_value_and_grad
from ._jit import filter_jit
from ._module import BoundMethod, Module, field
from ._pmap import filter_pmap, filter_shard
from ._tree_at import tree_at
from ._vmap import filter_vmap

__all__ = [
    "BoundMethod", "Module", "combine", "field", "filter", "filter_grad", "filter_jit",
    "filter_pmap", "filter_shard", "filter_value_and_grad", "filter_vmap", "if_array",
    "is_array", "is_array_like",
    "is_inexact_array", "partition", "tree_at",
]

"""Checkpoints: Equinox's ``tree_serialise_leaves`` format, safetensors, atomic writes.

See docs/serialisation.md.
"""

from ._files import CorruptFileError, atomic_write
from ._leaves import (
    LeafMismatchError,
    default_deserialise_filter_spec,
    default_serialise_filter_spec,
    tree_deserialise_leaves,
    tree_serialise_leaves,
)
from ._safetensors import load_safetensors, save_safetensors

__all__ = [
    "CorruptFileError", "LeafMismatchError", "atomic_write", "default_deserialise_filter_spec",
    "default_serialise_filter_spec", "load_safetensors", "save_safetensors",
    "tree_deserialise_leaves", "tree_serialise_leaves",
]

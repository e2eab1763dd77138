"""Abstract values: what a tracer knows about an array (shape, dtype, weak type)."""

from __future__ import annotations

import math

import numpy as np

from . import dtypes


class ShapedArray:
    """The abstract value of an array: its shape, dtype and whether it is weakly typed.

    Arguments:
        shape: a tuple of non-negative ints.
        dtype: a supported NumPy dtype.
        weak_type: True for values that came from Python scalars (see ``dtypes``).

    Example:
        >>> ShapedArray((3,), np.float32)
        ShapedArray(float32[3])
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __eq__(self, other):
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        return self._hash

    def strip_weak_type(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def str_short(self) -> str:
        """``f32[3,4]``, the jaxpr spelling."""
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"

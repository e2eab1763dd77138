"""Abstract values: what a tracer knows about an array (shape, dtype, weak type), and
``ShapeDtypeStruct``, the user-facing stand-in for an array."""

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


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array, as ``jax.ShapeDtypeStruct``.

    Arguments:
        shape: a tuple of ints.
        dtype: a dtype (canonicalised as arrays are: float64 is float32 unless x64 is on).
        sharding: accepted as JAX's and stored (invarax has one CPU device).
        weak_type: whether it stands for a weakly typed value (a Python scalar).

    Example:
        >>> ShapeDtypeStruct((2, 3), jnp.float32)
        ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be given, e.g. jnp.float32")
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtypes.canonicalize(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

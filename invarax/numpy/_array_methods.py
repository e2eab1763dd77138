"""Operators and methods of ``Array`` (concrete arrays and tracers), installed from a table."""

from __future__ import annotations

from ..core.array import Array
from ..core.dtypes import canonicalize
from ..ops.elementwise import convert_element_type
from ._index_update import IndexUpdateHelper
from ._indexing import getitem
from ._selection import compress
from ._shape import reshape, transpose


def _swap(f):
    def swapped(self, other):
        return f(other, self)

    return swapped


def _operators(jnp):
    matmul = jnp.matmul
    return {
        "__add__": jnp.add, "__radd__": _swap(jnp.add),
        "__sub__": jnp.subtract, "__rsub__": _swap(jnp.subtract),
        "__mul__": jnp.multiply, "__rmul__": _swap(jnp.multiply),
        "__truediv__": jnp.true_divide, "__rtruediv__": _swap(jnp.true_divide),
        "__floordiv__": jnp.floor_divide, "__rfloordiv__": _swap(jnp.floor_divide),
        "__mod__": jnp.remainder, "__rmod__": _swap(jnp.remainder),
        "__divmod__": jnp.divmod, "__rdivmod__": _swap(jnp.divmod),
        "__pow__": jnp.power, "__rpow__": _swap(jnp.power),
        "__matmul__": matmul, "__rmatmul__": _swap(matmul),
        "__and__": jnp.bitwise_and, "__rand__": _swap(jnp.bitwise_and),
        "__or__": jnp.bitwise_or, "__ror__": _swap(jnp.bitwise_or),
        "__xor__": jnp.bitwise_xor, "__rxor__": _swap(jnp.bitwise_xor),
        "__invert__": jnp.bitwise_not, "__neg__": jnp.negative, "__pos__": jnp.positive,
        "__abs__": jnp.abs,
        "__eq__": jnp.equal, "__ne__": jnp.not_equal, "__lt__": jnp.less,
        "__le__": jnp.less_equal, "__gt__": jnp.greater, "__ge__": jnp.greater_equal,
        "__getitem__": getitem,
    }


def _reshape(self, *shape, order="C"):
    """Reshape (``x.reshape(2, 3)`` or ``x.reshape((2, 3))``)."""
    return reshape(self, shape[0] if len(shape) == 1 else shape, order=order)


def _transpose(self, *axes):
    """Permute axes (``x.transpose(1, 0)`` or ``x.transpose((1, 0))``; none reverses)."""
    return transpose(self, axes[0] if len(axes) == 1 else (axes or None))


def _astype(self, dtype, copy=False):
    """Cast to ``dtype``."""
    return convert_element_type(self, canonicalize(dtype))


_METHODS = (
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "var", "std", "all", "any",
    "cumsum", "cumprod", "squeeze", "ravel", "swapaxes", "repeat", "take", "sort", "argsort",
    "clip", "round", "dot", "conj", "trace",
)
# JAX's other methods whose first argument is the array.
_METHODS += (
    "argpartition", "choose", "conjugate", "copy", "diagonal", "nonzero", "ptp", "searchsorted",
)


def _compress(self, condition, axis=None, *, size=None, fill_value=0):
    """``jnp.compress(condition, self, axis)`` (the array is the second argument there)."""
    return compress(condition, self, axis, size=size, fill_value=fill_value)


def install(jnp) -> None:
    """Install operators and methods on ``Array`` (called once by ``invarax.numpy``)."""
    for name, f in _operators(jnp).items():
        setattr(Array, name, f)
    for name in _METHODS:
        setattr(Array, name, getattr(jnp, name))
    Array.flatten = jnp.ravel
    Array.reshape = _reshape
    Array.transpose = _transpose
    Array.astype = _astype
    Array.T = property(lambda self: jnp.transpose(self))
    Array.mT = property(lambda self: jnp.swapaxes(self, -1, -2))
    Array.at = property(IndexUpdateHelper)
    Array.real = property(jnp.real)
    Array.imag = property(jnp.imag)
    Array.compress = _compress
    Array.itemsize = property(lambda self: self.dtype.itemsize)
    Array.nbytes = property(lambda self: self.size * self.dtype.itemsize)

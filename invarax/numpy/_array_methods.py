"""Operators and methods of ``Array`` (concrete arrays and tracers), installed from a table."""

from __future__ import annotations

import numpy as np

from ..core.array import Array
from ..core.dtypes import canonicalize
from ..ops.elementwise import convert_element_type
from ._index_update import IndexUpdateHelper
from ._indexing import getitem
from ._selection import compress
from ._shape import reshape, transpose

# What a binary operator takes; for anything else it returns NotImplemented, as JAX's do,
# so that Python tries the other operand's reflected method (Equinox's ``x**ω``).
_OPERANDS = (bool, int, float, complex, np.generic, np.ndarray, Array)


def _binary(f, swap=False):
    def op(self, other):
        if not isinstance(other, _OPERANDS) and not hasattr(type(other), "__jax_array__"):
            return NotImplemented
        return f(other, self) if swap else f(self, other)

    return op


def _operators(jnp):
    ops = {"__invert__": jnp.bitwise_not, "__neg__": jnp.negative, "__pos__": jnp.positive,
           "__abs__": jnp.abs, "__getitem__": getitem}
    arithmetic = {
        "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "truediv": jnp.true_divide,
        "floordiv": jnp.floor_divide, "mod": jnp.remainder, "divmod": jnp.divmod,
        "pow": jnp.power, "matmul": jnp.matmul, "and": jnp.bitwise_and, "or": jnp.bitwise_or,
        "xor": jnp.bitwise_xor,
    }
    for name, f in arithmetic.items():
        ops[f"__{name}__"] = _binary(f)
        ops[f"__r{name}__"] = _binary(f, swap=True)
    comparisons = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less,
                   "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal}
    ops.update((f"__{name}__", _binary(f)) for name, f in comparisons.items())
    return ops


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

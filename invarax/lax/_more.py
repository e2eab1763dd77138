"""More of JAX's ``lax`` functions, each written with the primitives (so every
transformation applies): ``clamp``, ``reciprocal``, ``full``/``full_like``, ``collapse``,
``broadcast_to_rank``, ``sort_key_val``, ``batch_matmul``, ``optimization_barrier``, the
integer bit counts and the arithmetic right shift."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.pytree import tree_map
from ..ops import elementwise as el
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ..ops.contractions import dot_general
from ..ops.sorting import sort


def clamp(min, x, max):  # noqa: A002 - JAX's names
    """``x`` limited to ``[min, max]`` elementwise: ``lax.min(lax.max(x, min), max)``
    (``min`` and ``max`` arrays of ``x``'s shape or scalars, of its dtype).

    Example:
        >>> clamp(0.0, jnp.array([-1.0, 0.5, 2.0]), 1.0)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    return el.min(el.max(x, min), max)


def reciprocal(x):
    """``1 / x`` elementwise (JAX's ``lax.reciprocal``).

    Example:
        >>> reciprocal(jnp.array([2.0, 4.0]))
        Array([0.5 , 0.25], dtype=float32)
    """
    x = to_array(x, "lax.reciprocal operand")
    return el.div(np.ones((), x.dtype), x)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (JAX's ``lax.full``; ``sharding``
    accepted and unused: the result is computed where it is needed).

    Example:
        >>> full((2,), 3, np.float32)
        Array([3., 3.], dtype=float32)
    """
    del sharding
    value = to_array(fill_value, "lax.full fill_value")
    if value.shape != ():
        raise TypeError(f"lax.full: fill_value must be a scalar, got shape {value.shape}")
    if dtype is not None:
        value = el.convert_element_type(value, dtypes.canonicalize(dtype))
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    return sh.broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """``full`` with ``x``'s shape and dtype, either overridden (JAX's ``lax.full_like``).

    Example:
        >>> full_like(jnp.zeros((2, 1), jnp.int32), 7)
        Array([[7],
               [7]], dtype=int32)
    """
    x = to_array(x, "lax.full_like operand")
    weak = dtype is None and x.weak_type
    out = full(x.shape if shape is None else shape, fill_value,
               x.dtype if dtype is None else dtype, sharding=sharding)
    return el.convert_element_type(out, out.dtype, weak_type=True) if weak else out


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """``operand`` with its axes ``start_dimension`` to ``stop_dimension`` (exclusive; to
    the last by default) merged into one (JAX's ``lax.collapse``).

    Example:
        >>> collapse(jnp.zeros((2, 3, 4)), 1).shape
        (2, 12)
    """
    x = to_array(operand, "lax.collapse operand")
    start = canonicalize_axis(start_dimension, x.ndim)
    stop = x.ndim if stop_dimension is None else canonicalize_axis(stop_dimension, x.ndim + 1)
    if start > stop:
        raise ValueError(f"lax.collapse: start_dimension {start_dimension} is after "
                         f"stop_dimension {stop_dimension} for shape {x.shape}")
    merged = math.prod(x.shape[start:stop])
    return sh.reshape(x, (*x.shape[:start], merged, *x.shape[stop:]))


def broadcast_to_rank(x, rank: int):
    """``x`` with leading axes of size 1 added up to ``rank`` (JAX's
    ``lax.broadcast_to_rank``).

    Example:
        >>> broadcast_to_rank(jnp.ones(3), 3).shape
        (1, 1, 3)
    """
    x = to_array(x, "lax.broadcast_to_rank operand")
    if x.ndim >= rank:
        return x
    return sh.reshape(x, (1,) * (rank - x.ndim) + x.shape)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """``keys`` sorted along ``dimension``, and ``values`` permuted alike (JAX's
    ``lax.sort_key_val``).

    Example:
        >>> sort_key_val(jnp.array([3, 1, 2]), jnp.array([10, 20, 30]))
        (Array([1, 2, 3], dtype=int32), Array([20, 30, 10], dtype=int32))
    """
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product of ``(..., m, k)`` and ``(..., k, n)`` with equal batch axes
    (JAX's ``lax.batch_matmul``): one ``dot_general``.

    Example:
        >>> batch_matmul(jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5))).shape
        (2, 3, 5)
    """
    a, b = to_array(lhs, "lax.batch_matmul lhs"), to_array(rhs, "lax.batch_matmul rhs")
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"lax.batch_matmul needs operands of equal rank >= 2 and equal batch "
                         f"axes, got shapes {a.shape} and {b.shape}")
    batch = tuple(range(a.ndim - 2))
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)),
                       precision=precision)


def optimization_barrier(operand):
    """``operand`` unchanged (JAX's ``lax.optimization_barrier``: invarax's compiler never
    moves a computation across a value's uses in a way that changes bits, so there is
    nothing to hold back).

    Example:
        >>> optimization_barrier((1.0, jnp.ones(2)))[1]
        Array([1., 1.], dtype=float32)
    """
    return tree_map(lambda x: x, operand)


def _bits(x, name):
    x = to_array(x, f"lax.{name} operand")
    if x.dtype.kind not in "iu":
        raise TypeError(f"lax.{name} takes integers, got {x.dtype}")
    return x, 8 * x.dtype.itemsize


def _c(x, value):
    """``value``'s low bits as a 0-d constant of ``x``'s dtype."""
    width = 8 * x.dtype.itemsize
    value &= (1 << width) - 1
    if x.dtype.kind == "i" and value >= 1 << (width - 1):
        value -= 1 << width
    return np.asarray(value, x.dtype)


def population_count(x):
    """The number of set bits of each element (JAX's ``lax.population_count``), in its
    dtype; computed with shifts, masks and one multiplication.

    Example:
        >>> population_count(jnp.array([0, 7, -1], jnp.int32))
        Array([ 0,  3, 32], dtype=int32)
    """
    x, width = _bits(x, "population_count")
    ones = sum(1 << (8 * i) for i in range(width // 8))  # 0x0101...
    shift = el.shift_right_logical
    x = el.sub(x, el.bitwise_and(shift(x, _c(x, 1)), _c(x, 0x55 * ones)))
    x = el.add(el.bitwise_and(x, _c(x, 0x33 * ones)),
               el.bitwise_and(shift(x, _c(x, 2)), _c(x, 0x33 * ones)))
    x = el.bitwise_and(el.add(x, shift(x, _c(x, 4))), _c(x, 0x0F * ones))
    return shift(el.mul(x, _c(x, ones)), _c(x, width - 8))


def clz(x):
    """The number of leading zero bits of each element (JAX's ``lax.clz``), in its dtype.

    Example:
        >>> clz(jnp.array([0, 1, 255, -1], jnp.int32))
        Array([32, 31, 24,  0], dtype=int32)
    """
    x, width = _bits(x, "clz")
    step = 1
    while step < width:  # every bit below the highest set one set too
        x = el.bitwise_or(x, el.shift_right_logical(x, _c(x, step)))
        step *= 2
    return el.sub(_c(x, width), population_count(x))


def shift_right_arithmetic(x, y):
    """``x >> y`` filling with the sign bit (of the bits as a signed integer, for unsigned
    dtypes too), as JAX's ``lax.shift_right_arithmetic``; shifts of the width or more give
    all sign bits.

    Example:
        >>> shift_right_arithmetic(jnp.array([-16, 16]), jnp.array([2, 2]))
        Array([-4,  4], dtype=int32)
    """
    x, width = _bits(x, "shift_right_arithmetic")
    y = to_array(y, "lax.shift_right_arithmetic shift")
    negative = el.ne(el.shift_right_logical(x, _c(x, width - 1)), _c(x, 0))
    flipped = el.bitwise_not(el.shift_right_logical(el.bitwise_not(x), y))
    return el.select(negative, flipped, el.shift_right_logical(x, y))

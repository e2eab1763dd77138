"""Array creation: array, asarray, zeros, ones, full, empty, *_like, arange, linspace, eye."""

from __future__ import annotations

import operator

import numpy as np

from ..core import backends, dtypes
from ..core.array import Array, ArrayImpl, concrete_scalar, is_python_scalar
from ..core.aval import ShapeDtypeStruct
from ..core.trace import EVAL_TRACE, current_trace
from ..ops import arithmetic
from ..ops import shape as sh
from ._broadcast import broadcast_to
from ._joining import stack
from ._promote import convert, result_dtype


def _dtype_arg(dtype):
    return None if dtype is None else dtypes.canonicalize(dtype)


def _contains_array(obj) -> bool:
    if isinstance(obj, Array):
        return True
    return isinstance(obj, (list, tuple)) and any(_contains_array(o) for o in obj)


def array(object, dtype=None, copy: bool = True, ndmin: int = 0) -> Array:  # noqa: A002
    """Create an array from an array, a scalar or nested lists/tuples (which may hold arrays).

    Arguments:
        object: the data. Python scalars give weakly typed arrays, as in JAX.
        dtype: the dtype; by default inferred, with 64-bit types narrowed unless x64 is on.
        copy: given an ``Array``, whether the result is a new array with its own buffer (as
            JAX's: donating the copy leaves the original intact), or may be the array.
        ndmin: the minimum number of dimensions of the result.

    Returns:
        An ``Array``.

    Example:
        >>> jnp.array([[1, 2], [3, 4]], dtype=jnp.float32)
        Array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    dtype = _dtype_arg(dtype)
    if isinstance(object, Array):
        out = object.copy() if copy and isinstance(object, ArrayImpl) else object
    elif is_python_scalar(object):
        out = concrete_scalar(object)
    elif isinstance(object, (list, tuple)) and _contains_array(object):
        out = (stack([array(o, copy=False) for o in object]) if object
               else array(np.asarray(object)))
    else:
        value = np.asarray(object)
        if value.dtype.kind in "OSUM" or (value.dtype.kind == "V"
                                           and not dtypes.is_ml_dtype(value.dtype)):
            raise TypeError(
                f"cannot create an invarax array from {type(object).__name__} with NumPy dtype "
                f"{value.dtype}; give numbers (bool, int, float or complex) or arrays"
            )
        target = dtypes.canonicalize(value.dtype if dtype is None else dtype)
        out = ArrayImpl(np.array(value, dtype=target))
    if dtype is not None:
        out = convert(out, dtype)
    if out.ndim < ndmin:
        out = sh.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def asarray(a, dtype=None, order=None, *, copy=None) -> Array:
    """Convert ``a`` to an array (a no-op for an array of the requested dtype).

    Example:
        >>> jnp.asarray(np.arange(3))
        Array([0, 1, 2], dtype=int32)
    """
    if isinstance(a, Array) and (dtype is None or (a.dtype == dtypes.canonicalize(dtype)
                                                   and not a.weak_type)):
        return a  # an explicit dtype makes the result strongly typed, as in JAX
    return array(a, dtype=dtype, copy=False)


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(shape)


def full(shape, fill_value, dtype=None) -> Array:
    """An array of ``shape`` filled with ``fill_value``.

    Example:
        >>> jnp.full((2,), 7)
        Array([7, 7], dtype=int32, weak_type=True)
    """
    return _full(shape, fill_value, dtype, weak=None)


def _full(shape, fill_value, dtype, weak):
    """``full``; ``weak`` (if not None) sets the result's weak type (``full_like``'s)."""
    fill = asarray(fill_value)
    target = dtypes.canonicalize(dtype) if dtype is not None else fill.dtype
    fill = convert(fill, target, fill.weak_type and dtype is None if weak is None else weak)
    shape = _shape(shape)
    if fill.ndim:
        return broadcast_to(fill, shape)
    if (type(fill) is ArrayImpl and fill._sharding is None and current_trace() is EVAL_TRACE
            and backends.runner() is None):
        return ArrayImpl(_filled(sh._shape_tuple(shape), fill._value), fill.weak_type)
    return sh.broadcast_in_dim(fill, shape, ())  # traced, or on an accelerator


def _filled(shape: tuple, value: np.ndarray) -> np.ndarray:
    """A new buffer of ``shape`` holding ``value`` everywhere, as JAX's eager arrays own
    one (so that ``jit`` can write a donated one over). Zeros (all bits 0, so not -0.0)
    come from ``np.zeros``, whose untouched pages cost nothing."""
    if not any(value.tobytes()):
        return np.zeros(shape, value.dtype)
    return np.full(shape, value, value.dtype)


def zeros(shape, dtype=None) -> Array:
    """An array of zeros (float32 by default)."""
    return full(shape, 0, dtype or dtypes.default_float())


def ones(shape, dtype=None) -> Array:
    """An array of ones (float32 by default)."""
    return full(shape, 1, dtype or dtypes.default_float())


def empty(shape, dtype=None) -> Array:
    """An array of zeros: invarax arrays are immutable, so there is no uninitialised memory
    (eagerly, a new buffer: zero pages that cost nothing until read)."""
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    """``(dtype, shape, weak type)`` of the result; ``a`` may be a ``ShapeDtypeStruct``, as
    in JAX (whose result is never weakly typed)."""
    struct = isinstance(a, ShapeDtypeStruct)
    a = a if struct else asarray(a)
    return ((a.dtype if dtype is None else dtype), (a.shape if shape is None else shape),
            dtype is None and not struct and a.weak_type)


def zeros_like(a, dtype=None, shape=None) -> Array:
    """Zeros with the shape and dtype of ``a`` (either may be overridden); ``a`` may be an
    array or a ``ShapeDtypeStruct``.

    Example:
        >>> jnp.zeros_like(ShapeDtypeStruct((2,), jnp.int8))
        Array([0, 0], dtype=int8)
    """
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None) -> Array:
    """Ones with the shape and dtype of ``a``."""
    return full_like(a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None) -> Array:
    """``fill_value`` with the shape and dtype of ``a`` (and its weak type, as JAX, when
    ``dtype`` is None)."""
    dtype, shape, weak = _like(a, dtype, shape)
    return _full(shape, fill_value, dtype, weak)


def arange(start, stop=None, step=None, dtype=None) -> Array:
    """Evenly spaced values in ``[start, stop)``; the bounds must be concrete.

    Example:
        >>> jnp.arange(3)
        Array([0, 1, 2], dtype=int32)
    """
    bounds = [b for b in (start, stop, step) if b is not None]
    if dtype is None:
        dtype, _ = result_dtype(*(asarray(b) for b in bounds))
        if all(isinstance(b, (bool, int, np.integer)) for b in bounds):
            dtype = dtypes.default_int()
    dtype = dtypes.canonicalize(dtype)
    try:
        values = [b if b is None else np.asarray(b).item() for b in (start, stop, step)]
    except TypeError:
        raise TypeError("jnp.arange needs concrete bounds; a traced bound has no known length. "
                        "Use static_argnums for it, or jnp.arange(n) * step + start") from None
    return ArrayImpl(np.arange(*[v for v in values if v is not None], dtype=dtype))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    """``num`` evenly spaced values from ``start`` to ``stop`` along a new ``axis`` (JAX's
    formula, in the result's float dtype: ``start * (1 - t) + stop * t`` for ``t = i / div``,
    then ``stop`` itself last when ``endpoint``), so ``start`` and ``stop`` may be traced
    (and differentiated) and ``jit`` gives eager's bits.

    Example:
        >>> jnp.linspace(0, 1, 3)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"jnp.linspace needs a non-negative num, got {num}")
    if dtype is None:
        dtype, _ = result_dtype(asarray(start), asarray(stop), asarray(1.0))
    dtype = dtypes.canonicalize(dtype)
    compute = dtype if dtype.kind in "fc" else dtypes.default_float()
    start, stop = convert(asarray(start), compute), convert(asarray(stop), compute)
    shape = np.broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    axis = axis + len(shape) + 1 if axis < 0 else axis
    div = num - 1 if endpoint else num
    first, last = sh.expand_dims(start, (axis,)), sh.expand_dims(stop, (axis,))
    if num > 1:
        t = sh.broadcasted_iota(compute, (*shape[:axis], div, *shape[axis:]), axis) / div
        out = first * (1 - t) + last * t
        if endpoint:
            out = sh.concatenate([out, last], axis)
    elif num == 1:
        out = first
    else:
        out = sh.broadcast_in_dim(first, (*shape[:axis], 0, *shape[axis:]),
                                  tuple(range(len(shape) + 1)))
    if dtypes.is_integer(dtype):
        out = arithmetic.floor(out)
    out = convert(out, dtype)
    if not retstep:
        return out
    return out, (stop - start) / div if div else convert(asarray(np.nan), compute)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None) -> Array:
    """A 2-d array with ones on the ``k``-th diagonal and zeros elsewhere."""
    dtype = dtypes.canonicalize(dtype or dtypes.default_float())
    return ArrayImpl(np.eye(int(N), None if M is None else int(M), int(k), dtype=dtype))


def identity(n: int, dtype=None) -> Array:
    """The ``n`` by ``n`` identity matrix."""
    return eye(n, dtype=dtype)

"""Reductions of ``invarax.numpy``: sum, prod, max, min, all, any, mean, var, std, argmax,
argmin, cumsum and cumprod, with JAX's signatures, dtypes and semantics.

Each lowers to the lax reductions of ``invarax.ops.reductions``, whose kernels give
every output element the same bits whatever the layout or the reduced axis's place.
Results are strongly typed, as in JAX (``jnp.sum`` of a weakly typed value is not weak).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl
from ..kernels.reductions import identity
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import shape as sh
from ._promote import asarray_arg, broadcast_to_shape, convert
from ._ufuncs import greater, not_equal
from ._ufuncs import where as _where

# op: (lax reduction, lax binary op applying ``initial``, op used in bool)
_OPS = {
    "sum": (red.reduce_sum, ew.add, "or"),
    "prod": (red.reduce_prod, ew.mul, "and"),
    "max": (red.reduce_max, ew.max, "max"),
    "min": (red.reduce_min, ew.min, "min"),
    "and": (red.reduce_and, ew.bitwise_and, "and"),
    "or": (red.reduce_or, ew.bitwise_or, "or"),
}


def _check_out(name: str, out) -> None:
    if out is not None:
        raise NotImplementedError(
            f"The 'out' argument to jnp.{name} is not supported: arrays are immutable; "
            "use the returned value"
        )


def _dtype_arg(name: str, dtype):
    """The canonical dtype of a user's ``dtype=`` argument (None stays None)."""
    if dtype is None:
        return None
    try:
        return dtypes.canonicalize(dtype)
    except TypeError as err:
        raise TypeError(f"jnp.{name}: bad dtype argument {dtype!r}: {err}") from None


def _axes(name: str, a, axis) -> tuple:
    """The sorted non-negative axes that ``axis`` (None, an int or an iterable of ints, such
    as a ``range``, as JAX takes) names."""
    if axis is None:
        return tuple(range(a.ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list, range)) else (axis,)
    return red.canonical_axes(f"jnp.{name}", a.shape, axes)


def _promote_integers(dtype) -> np.dtype:
    """Bools and integers narrower than the default int widen to it (uint to uint32/uint64)."""
    width = dtypes.default_int().itemsize
    if dtype == dtypes.bool_ or (dtype.kind == "i" and dtype.itemsize < width):
        return dtypes.default_int()
    if dtype.kind == "u" and dtype.itemsize < width:
        return np.dtype(f"uint{8 * width}")
    return dtype


def _upcast_f16(dtype) -> np.dtype:
    """float32 for the floats narrower than it (float16, bfloat16, float8, ...), as JAX."""
    return dtypes.compute_dtype(dtype) if dtypes.is_float(dtype) else dtype


def _constant(value, dtype) -> ArrayImpl:
    return ArrayImpl(np.asarray(value).astype(dtype))


def _reduction(
    name,
    op,
    a,
    axis,
    dtype,
    out,
    keepdims,
    initial,
    where,
    *,
    has_identity=True,
    upcast_f16=False,
    promote_integers=False,
):
    """JAX's ``_reduction``: mask, reduce, apply ``initial``, keep dims, cast.

    Arguments:
        name: the jnp function's name, for messages.
        op: a key of ``_OPS``.
        a, axis, dtype, out, keepdims, initial, where: the jnp arguments.
        has_identity: False for max/min, whose empty reductions need ``initial``.
        upcast_f16: compute in float32 for float16 results (sum, prod, mean).
        promote_integers: widen bools and narrow integers (sum, prod).

    Returns:
        The reduced array, strongly typed.
    """
    _check_out(name, out)
    a = asarray_arg(a, name)
    if initial is None and not has_identity and where is not None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a "
            "where mask one has to specify 'initial'"
        )
    axes = _axes(name, a, axis)
    if initial is None and not has_identity and 0 in (a.shape[d] for d in axes):
        raise ValueError(
            f"zero-size array to reduction operation {name} which has no identity "
            f"(shape {a.shape}, axis {axis}); pass initial=... or reduce a "
            "non-empty axis"
        )
    result_dtype = _dtype_arg(name, dtype)
    if result_dtype is None:
        result_dtype = _promote_integers(a.dtype) if promote_integers else a.dtype
    computation = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
    a = convert(a, computation)
    reducer, binop, _ = _OPS[_OPS[op][2] if computation == dtypes.bool_ else op]
    if where is not None:
        a = _where(where, a, _constant(identity(op, computation), computation))
    result = reducer(a, axes)
    if initial is not None:
        init = asarray_arg(initial, name)
        if init.ndim:
            raise ValueError(f"jnp.{name}: initial value must be a scalar, got shape {init.shape}")
        result = binop(convert(init, computation), result)
    if keepdims:
        result = sh.expand_dims(result, axes)
    return convert(result, result_dtype)


def sum(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,  # noqa: A001
    promote_integers=True,
):
    """Sum of array elements over ``axis``, as ``jax.numpy.sum``.

    Arguments:
        a: an array or scalar.
        axis: None (all axes), an int or a tuple of ints; negative axes count from the end.
        dtype: the result dtype. By default bools and narrow integers give int32 (uint32
            for unsigned), other dtypes are kept; float16 is summed in float32.
        out: unsupported (must be None).
        keepdims: keep the reduced axes as size-1 dimensions.
        initial: a scalar added to the sum.
        where: a boolean mask (broadcast to ``a``) of the elements to include.
        promote_integers: set False to keep narrow integer dtypes.

    Returns:
        The sum; its bits do not depend on layout or on where the reduced axes are.

    Example:
        >>> jnp.sum(jnp.array([[1, 2], [3, 4]]), axis=0)
        Array([4, 6], dtype=int32)
    """
    return _reduction(
        "sum",
        "sum",
        a,
        axis,
        dtype,
        out,
        keepdims,
        initial,
        where,
        upcast_f16=dtype is None,
        promote_integers=promote_integers,
    )


def prod(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Product of array elements over ``axis``, as ``jax.numpy.prod`` (arguments as ``sum``).

    Returns:
        The product (of the elements in order along the flattened reduced axes).

    Example:
        >>> jnp.prod(jnp.array([1.0, 2.0, 3.0]))
        Array(6., dtype=float32)
    """
    return _reduction(
        "prod",
        "prod",
        a,
        axis,
        dtype,
        out,
        keepdims,
        initial,
        where,
        upcast_f16=dtype is None,
        promote_integers=promote_integers,
    )


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over ``axis``, as ``jax.numpy.max``; a NaN anywhere gives NaN.

    Arguments:
        a: an array or scalar.
        axis: None, an int or a tuple of ints.
        out: unsupported (must be None).
        keepdims: keep the reduced axes as size-1 dimensions.
        initial: a scalar lower bound; needed for an empty axis or with ``where``.
        where: a boolean mask of the elements to include.

    Returns:
        The maximum, of ``a``'s dtype.

    Example:
        >>> jnp.max(jnp.array([1.0, 3.0, 2.0]))
        Array(3., dtype=float32)
    """
    return _reduction(
        "max", "max", a, axis, None, out, keepdims, initial, where, has_identity=False
    )


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over ``axis``, as ``jax.numpy.min`` (arguments as ``max``).

    Returns:
        The minimum, of ``a``'s dtype.

    Example:
        >>> jnp.min(jnp.array([1.0, 3.0, 2.0]))
        Array(1., dtype=float32)
    """
    return _reduction(
        "min", "min", a, axis, None, out, keepdims, initial, where, has_identity=False
    )


amax, amin = max, min


def _truth(a, name):
    a = asarray_arg(a, name)
    return a if a.dtype == dtypes.bool_ else not_equal(a, 0)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether every element over ``axis`` is true (nonzero), as ``jax.numpy.all``.

    Returns:
        A bool array.

    Example:
        >>> jnp.all(jnp.array([1, 0]))
        Array(False, dtype=bool)
    """
    return _reduction("all", "and", _truth(a, "all"), axis, None, out, keepdims, None, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether any element over ``axis`` is true (nonzero), as ``jax.numpy.any``.

    Returns:
        A bool array.

    Example:
        >>> jnp.any(jnp.array([1, 0]))
        Array(True, dtype=bool)
    """
    return _reduction("any", "or", _truth(a, "any"), axis, None, out, keepdims, None, where)


def _count(a, axes, keepdims, where, dtype):
    """The number of elements each reduction sees, as ``dtype`` (a mask's sum with ``where``)."""
    if where is None:
        return _constant(math.prod(a.shape[d] for d in axes), dtype)
    mask = broadcast_to_shape(_truth(where, "where"), a.shape)
    return sum(mask, axes, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``: the sum divided by the count, as ``jax.numpy.mean``.

    Arguments:
        a: an array or scalar.
        axis: None, an int or a tuple of ints.
        dtype: the result dtype; by default float32 for bools and integers, else ``a``'s
            (float16 is computed in float32).
        out: unsupported (must be None).
        keepdims: keep the reduced axes as size-1 dimensions.
        where: a boolean mask of the elements to include (the count is the mask's sum).

    Returns:
        The mean; an empty reduction gives NaN.

    Example:
        >>> jnp.mean(jnp.array([1, 2, 4]))
        Array(2.3333333, dtype=float32)
    """
    _check_out("mean", out)
    a = asarray_arg(a, "mean")
    result_dtype = _dtype_arg("mean", dtype)
    if result_dtype is None:
        result_dtype = a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float()
    computation = _upcast_f16(result_dtype) if dtype is None else result_dtype
    axes = _axes("mean", a, axis)
    total = sum(a, axes, dtype=computation, keepdims=keepdims, where=where)
    count = _count(a, axes, keepdims, where, computation)
    return convert(ew.div(total, count), result_dtype)


_mean = mean  # ``var`` and ``std`` take an argument named ``mean``.


def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    """Variance over ``axis``, as ``jax.numpy.var``: ``mean(|a - mean(a)|**2)`` with a correction.

    Arguments:
        a: an array or scalar.
        axis: None, an int or a tuple of ints.
        dtype: the computation and result dtype; by default float32 for bools and
            integers, the real dtype of ``a`` otherwise (float16 is computed in float32).
        out: unsupported (must be None).
        ddof: the divisor is ``N - ddof`` (``correction`` is the Array API's name for it).
        keepdims: keep the reduced axes as size-1 dimensions.
        where: a boolean mask of the elements to include.
        mean: a precomputed mean of ``a`` (with ``keepdims=True``).
        correction: as ``ddof``; give only one of them.

    Returns:
        The variance; NaN where ``N - ddof <= 0``.

    Example:
        >>> jnp.var(jnp.array([1.0, 2.0, 3.0, 4.0]), ddof=1)
        Array(1.6666666, dtype=float32)
    """
    _check_out("var", out)
    if correction is None:
        correction = ddof
    elif ddof != 0:
        raise ValueError(
            "jnp.var: ddof and correction can't be provided simultaneously; give one of them"
        )
    a = asarray_arg(a, "var")
    computation, result_dtype = _var_dtypes(a.dtype, _dtype_arg("var", dtype))
    a = convert(a, computation)
    axes = _axes("var", a, axis)
    if mean is None:
        mean = _mean(a, axes, dtype=computation, keepdims=True, where=where)
    centered = ew.sub(
        a, broadcast_to_shape(convert(asarray_arg(mean, "var"), computation), a.shape)
    )
    if computation.kind == "c":
        squares = ew.real(ew.mul(centered, ew.conj(centered)))
    else:
        squares = ew.square(centered)
    count = _count(a, axes, keepdims, where, squares.dtype)
    divisor = ew.sub(count, convert(asarray_arg(correction, "var"), squares.dtype))
    total = sum(squares, axes, dtype=squares.dtype, keepdims=keepdims, where=where)
    result = convert(ew.div(total, divisor), result_dtype)
    return _where(greater(divisor, 0), result, np.nan)


def _var_dtypes(a_dtype, dtype):
    """``(computation dtype, result dtype)`` of ``var``, as JAX's ``_var_promote_types``."""
    if dtype is not None:
        if a_dtype.kind == "c" and dtype.kind != "c":
            raise ValueError(
                f"jnp.var of a complex array ({a_dtype}) needs a complex dtype "
                f"argument, got {dtype}"
            )
        return _upcast_f16(dtype), dtype
    if not dtypes.is_inexact(a_dtype):
        return dtypes.default_float(), dtypes.default_float()
    real = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
    return _upcast_f16(a_dtype), real.get(a_dtype, a_dtype)


def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    """Standard deviation over ``axis``: ``sqrt(var(...))``, as ``jax.numpy.std``.

    Arguments are those of ``var``; ``dtype`` must be inexact.

    Returns:
        The standard deviation.

    Example:
        >>> jnp.std(jnp.array([1.0, 3.0]))
        Array(1., dtype=float32)
    """
    dtype = _dtype_arg("std", dtype)
    if dtype is not None and not dtypes.is_inexact(dtype):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    return ew.sqrt(
        var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    )


def _arg_extremum(name, lax_op):
    def f(a, axis=None, out=None, keepdims=None):
        _check_out(name, out)
        a = asarray_arg(a, name)
        ndim = a.ndim
        if axis is None:
            result = lax_op(sh.reshape(a, (a.size,)), 0, dtypes.default_int())
            return sh.reshape(result, (1,) * ndim) if keepdims else result
        result = lax_op(a, axis, dtypes.default_int())
        return sh.expand_dims(result, (axis,)) if keepdims else result

    f.__name__ = name
    f.__doc__ = f"""Index of the first {name[3:]}imum over ``axis``, as ``jax.numpy.{name}``.

    A NaN counts as the {name[3:]}imum, so its first occurrence is returned.

    Arguments:
        a: an array or scalar.
        axis: an int, or None for the index into the flattened array.
        out: unsupported (must be None).
        keepdims: keep the reduced axis (all axes for ``axis=None``) as size 1.

    Returns:
        An int32 array (int64 with x64).

    Example:
        >>> jnp.{name}(jnp.array([1.0, 3.0, 1.0]))
        Array({1 if name == "argmax" else 0}, dtype=int32)
    """
    return f


argmax = _arg_extremum("argmax", red.argmax)
argmin = _arg_extremum("argmin", red.argmin)


def _cumulative(name, scan):
    def f(a, axis=None, dtype=None, out=None):
        _check_out(name, out)
        a = asarray_arg(a, name)
        if axis is not None and a.ndim == 0:
            raise ValueError(f"{name}: axis {axis} is out of bounds for a 0-d array, which "
                             "has no axes (as JAX); pass axis=None to scan it as 1-d")
        if axis is None:
            a = sh.reshape(a, (a.size,))
        result_dtype = _dtype_arg(name, dtype)
        if result_dtype is None:
            result_dtype = dtypes.default_int() if a.dtype == dtypes.bool_ else a.dtype
        elif result_dtype == dtypes.bool_:
            a = _truth(a, name)
        # A bool result is scanned in ints (so that [-1, 1] does not cancel), then cast.
        computation = dtypes.default_int() if result_dtype == dtypes.bool_ else result_dtype
        result = scan(convert(a, computation), 0 if axis is None else axis)
        return convert(result, result_dtype)

    f.__name__ = name
    f.__doc__ = f"""Inclusive cumulative {name[3:]} along ``axis``, as ``jax.numpy.{name}``.

    Arguments:
        a: an array or scalar.
        axis: an int, or None to scan the flattened array.
        dtype: the result dtype; by default bools give int32, other dtypes are kept.
        out: unsupported (must be None).

    Returns:
        An array of ``a``'s shape (flattened for ``axis=None``).

    Example:
        >>> jnp.{name}(jnp.array([1, 2, 3]))
        Array([1, {3 if name == "cumsum" else 2}, 6], dtype=int32)
    """
    return f


cumsum = _cumulative("cumsum", red.cumsum)
cumprod = _cumulative("cumprod", red.cumprod)

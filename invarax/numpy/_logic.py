"""Comparisons and predicates of ``invarax.numpy``: ``isclose``, ``allclose``,
``array_equal``, ``array_equiv``, ``isin``, the ``is*`` tests, ``nan_to_num``, ``copy``,
and the shape queries ``ndim``, ``shape``, ``size``."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import Array, is_python_scalar
from ..ops import elementwise as lax
from . import _math
from . import _reductions as red
from . import _ufuncs as uf
from ._creation import array, asarray
from ._dtypes import finfo
from ._promote import asarray_arg, convert, promote_args
from ._shape import expand_dims, ravel


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|``, with infinities and NaNs as NumPy.

    Arguments:
        a, b: arrays or scalars (broadcast together; integers promote to float).
        rtol, atol: the relative and absolute tolerances.
        equal_nan: whether two NaNs compare close.

    Returns:
        A bool array: equal infinities are close, any other infinity is not, a NaN is
        close only to a NaN and only with ``equal_nan``.

    Example:
        >>> jnp.isclose(jnp.array([1.0, jnp.inf, jnp.nan]), jnp.array([1.0 + 1e-9, jnp.inf, 1.0]))
        Array([ True,  True, False], dtype=bool)
    """
    a, b = promote_args("isclose", a, b, to_inexact=True)
    real = np.dtype(a.dtype.char.lower()) if a.dtype.kind == "c" else a.dtype
    rtol = convert(asarray_arg(rtol, "isclose"), real)
    atol = convert(asarray_arg(atol, "isclose"), real)
    out = lax.le(uf.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, uf.abs(b))))
    a_inf, b_inf = uf.isinf(a), uf.isinf(b)
    out = uf.logical_and(out, uf.logical_not(uf.logical_or(a_inf, b_inf)))
    out = uf.logical_or(out, uf.logical_and(uf.logical_and(a_inf, b_inf), lax.eq(a, b)))
    a_nan, b_nan = uf.isnan(a), uf.isnan(b)
    out = uf.logical_and(out, uf.logical_not(uf.logical_or(a_nan, b_nan)))
    if equal_nan:
        out = uf.logical_or(out, uf.logical_and(a_nan, b_nan))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to ``b``: ``all(isclose(...))``.

    Arguments:
        a, b, rtol, atol, equal_nan: as ``isclose``.

    Returns:
        A 0-d bool array.

    Example:
        >>> jnp.allclose(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0 + 1e-7]))
        Array(True, dtype=bool)
    """
    return red.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether two arrays have the same shape and elements.

    Arguments:
        a1, a2: arrays or scalars.
        equal_nan: whether NaNs in the same places count as equal.

    Returns:
        A 0-d bool array (False when the shapes differ).

    Example:
        >>> jnp.array_equal(jnp.array([1, 2]), jnp.array([1, 2])), jnp.array_equal(1, [1, 1])
        (Array(True, dtype=bool), Array(False, dtype=bool))
    """
    a1, a2 = _as_array(a1, "array_equal"), _as_array(a2, "array_equal")
    if a1.shape != a2.shape:
        return asarray_arg(np.bool_(False), "array_equal")
    return _all_equal(a1, a2, equal_nan)


def array_equiv(a1, a2):
    """Whether two arrays are equal after broadcasting them together.

    Arguments:
        a1, a2: arrays or scalars.

    Returns:
        A 0-d bool array (False when the shapes do not broadcast).

    Example:
        >>> jnp.array_equiv(jnp.array([1, 1]), 1)
        Array(True, dtype=bool)
    """
    a1, a2 = _as_array(a1, "array_equiv"), _as_array(a2, "array_equiv")
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray_arg(np.bool_(False), "array_equiv")
    return _all_equal(a1, a2, False)


def _all_equal(a1, a2, equal_nan):
    eq = uf.equal(a1, a2)
    if equal_nan:
        eq = uf.logical_or(eq, uf.logical_and(uf.isnan(a1), uf.isnan(a2)))
    return red.all(eq)


def _as_array(x, name):
    return x if isinstance(x, Array) else asarray(x)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Elementwise: whether each element of ``element`` is among ``test_elements``.

    Arguments:
        element: an array.
        test_elements: an array of the values to look for (flattened).
        assume_unique: accepted as NumPy's (no effect).
        invert: return the negation.
        method: accepted as JAX's; every element is compared with every test value.

    Returns:
        A bool array of ``element``'s shape.

    Example:
        >>> jnp.isin(jnp.array([1, 2, 3]), jnp.array([3, 1]))
        Array([ True, False,  True], dtype=bool)
    """
    element = _as_array(element, "isin")
    tests = ravel(_as_array(test_elements, "isin"))
    # (ranks equal: the comparison holds under jax_numpy_rank_promotion="raise" too)
    eq = uf.equal(expand_dims(element, -1), tests.reshape((1,) * element.ndim + tests.shape))
    out = red.any(eq, axis=-1)
    return uf.logical_not(out) if invert else out


def isneginf(x, /):
    """Elementwise: True where ``x`` is ``-inf``.

    Example:
        >>> jnp.isneginf(jnp.array([-jnp.inf, jnp.inf, 0.0]))
        Array([ True, False, False], dtype=bool)
    """
    (x,) = promote_args("isneginf", x)
    return uf.logical_and(uf.isinf(x), _math.signbit(x)) if dtypes.is_float(x.dtype) \
        else uf.isinf(x)


def isposinf(x, /):
    """Elementwise: True where ``x`` is ``+inf``.

    Example:
        >>> jnp.isposinf(jnp.array([-jnp.inf, jnp.inf, 0.0]))
        Array([False,  True, False], dtype=bool)
    """
    (x,) = promote_args("isposinf", x)
    return uf.logical_and(uf.isinf(x), uf.logical_not(_math.signbit(x))) \
        if dtypes.is_float(x.dtype) else uf.isinf(x)


def isreal(x):
    """Elementwise: True where the imaginary part is zero (everywhere for real dtypes).

    Example:
        >>> jnp.isreal(jnp.array([1 + 0j, 1j]))
        Array([ True, False], dtype=bool)
    """
    x = _as_array(x, "isreal")
    return uf.equal(uf.imag(x), 0)


def iscomplex(x):
    """Elementwise: True where the imaginary part is nonzero.

    Example:
        >>> jnp.iscomplex(jnp.array([1 + 0j, 1j]))
        Array([False,  True], dtype=bool)
    """
    return uf.logical_not(isreal(x))


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype (a Python bool).

    Example:
        >>> jnp.iscomplexobj(jnp.array([1j])), jnp.iscomplexobj(1.0)
        (True, False)
    """
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype if dtype is not None else np.asarray(x).dtype).kind == "c"


def isrealobj(x) -> bool:
    """Whether ``x`` does not have a complex dtype (a Python bool).

    Example:
        >>> jnp.isrealobj(jnp.array([1.0]))
        True
    """
    return not iscomplexobj(x)


def isscalar(element) -> bool:
    """Whether ``element`` is a scalar: a Python or NumPy number, or a 0-d array (as JAX).

    Example:
        >>> jnp.isscalar(1.0), jnp.isscalar(jnp.array(1.0)), jnp.isscalar(jnp.ones(2))
        (True, True, False)
    """
    if is_python_scalar(element) or isinstance(element, np.generic):
        return True
    return isinstance(element, (Array, np.ndarray)) and element.ndim == 0


def iterable(y) -> bool:
    """Whether ``iter(y)`` works (a Python bool).

    Example:
        >>> jnp.iterable([1]), jnp.iterable(1)
        (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


def ndim(a) -> int:
    """The number of dimensions of ``a`` (an array, scalar or nested list).

    Example:
        >>> jnp.ndim(jnp.ones((2, 3))), jnp.ndim(1.0)
        (2, 0)
    """
    return len(shape(a))


def shape(a) -> tuple:
    """The shape of ``a`` (an array, scalar or nested list).

    Example:
        >>> jnp.shape([[1, 2, 3]])
        (1, 3)
    """
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def size(a, axis=None) -> int:
    """The number of elements of ``a``, or its length along ``axis``.

    Example:
        >>> jnp.size(jnp.ones((2, 3))), jnp.size(jnp.ones((2, 3)), 1)
        (6, 3)
    """
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]


def copy(a, order=None):
    """A copy of ``a`` (arrays are immutable, so the array itself when it is one).

    Arguments:
        a: an array, scalar or nested list.
        order: accepted as NumPy's.

    Returns:
        An ``Array`` with ``a``'s values.

    Example:
        >>> jnp.copy(jnp.array([1, 2]))
        Array([1, 2], dtype=int32)
    """
    return array(a, copy=True)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (by default the
    largest and smallest finite values of the dtype).

    Arguments:
        x: an array.
        copy: accepted as NumPy's.
        nan, posinf, neginf: the replacement values.

    Returns:
        An array of ``x``'s dtype (integers and bools unchanged).

    Example:
        >>> jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf, -1.0]))
        Array([ 0.0000000e+00,  3.4028235e+38, -1.0000000e+00], dtype=float32)
    """
    x = _as_array(x, "nan_to_num")
    if not dtypes.is_inexact(x.dtype):
        return x
    if x.dtype.kind == "c":
        re = nan_to_num(uf.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(uf.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return lax.convert_element_type(re, x.dtype) + lax.convert_element_type(im, x.dtype) * 1j
    info = finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = uf.where(uf.isnan(x), convert(asarray_arg(nan, "nan_to_num"), x.dtype), x)
    out = uf.where(isposinf(out), convert(asarray_arg(posinf, "nan_to_num"), x.dtype), out)
    return uf.where(isneginf(out), convert(asarray_arg(neginf, "nan_to_num"), x.dtype), out)

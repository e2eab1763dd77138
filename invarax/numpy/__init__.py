"""``invarax.numpy``: the NumPy API with JAX's semantics (``import invarax.numpy as jnp``)."""

import sys as _sys

import numpy as _np

from ..core.array import Array as ndarray
from . import _indexing
from ._creation import (
    arange, array, asarray, empty, eye, full, full_like, identity, linspace, ones, ones_like,
    zeros, zeros_like,
)
from ._ufuncs import (
    abs, absolute, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, around,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj, conjugate, cos,
    cosh, divide, equal, exp, exp2, expm1, floor, floor_divide, fmod, greater, greater_equal,
    imag, invert, isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply,
    negative, nextafter, not_equal, positive, pow, power, real, reciprocal, remainder, rint,
    round, sign, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc, where,
)
from ._reductions import (
    all, amax, amin, any, argmax, argmin, cumprod, cumsum, max, mean, min, prod, std, sum, var,
)
from ._shape import (
    argsort, broadcast_arrays, broadcast_shapes, broadcast_to, concatenate, expand_dims, flip,
    hstack, moveaxis, pad, ravel, repeat, reshape, roll, sort, split, squeeze, stack, swapaxes,
    take, take_along_axis, tile, transpose, vstack,
)
from ._shape import array_split, atleast_1d, atleast_2d, atleast_3d, column_stack, dstack
from ._contractions import (
    dot, einsum, inner, matmul, outer, tensordot, trace, vdot,
)
from ._convolve import convolve, correlate
from . import linalg
from ._scalar_types import (
    _ScalarMeta, bool_, complex64, complex128, float16, float32, float64, int8, int16, int32,
    int64, uint8, uint16, uint32, uint64,
)
from ._array_methods import install as _install

bool = bool_  # noqa: A001
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
finfo, iinfo = _np.finfo, _np.iinfo
integer, floating, inexact, number = _np.integer, _np.floating, _np.inexact, _np.number
signedinteger, unsignedinteger, complexfloating = (
    _np.signedinteger, _np.unsignedinteger, _np.complexfloating,
)


def result_type(*args):
    """The dtype that ``args`` promote to (JAX's rules, weak types included)."""
    from ._promote import result_dtype

    return result_dtype(*(zeros((), a) if isinstance(a, (_np.dtype, _ScalarMeta)) else asarray(a)
                          for a in args))[0]


def issubdtype(arg1, arg2) -> bool:
    """``numpy.issubdtype``."""
    return _np.issubdtype(arg1, arg2)


_install(_sys.modules[__name__])

"""``jnp``'s dtypes, scalar-type aliases and constants, ``result_type`` and ``issubdtype``."""

import numpy as _np

from ..core.aval import ShapeDtypeStruct
from ._creation import asarray, zeros
from ._promote import result_dtype
from ._scalar_types import (
    _ScalarMeta,
    bool_,
    complex64,
    complex128,
    float32,
    float64,
    int64,
    uint64,
)

bool = bool_  # noqa: A001
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
finfo, iinfo = _np.finfo, _np.iinfo
integer, floating, inexact, number = _np.integer, _np.floating, _np.inexact, _np.number
signedinteger, unsignedinteger, complexfloating = (
    _np.signedinteger, _np.unsignedinteger, _np.complexfloating,
)


def result_type(*args):
    """The dtype that ``args`` promote to (JAX's rules, weak types included).

    Each argument is an array, a scalar, a dtype, a Python scalar type or a
    ``ShapeDtypeStruct`` (its dtype and weak type count).

    Example:
        >>> jnp.result_type(ShapeDtypeStruct((2,), jnp.float16), 1.0)
        dtype('float16')
    """
    return result_type_and_weak(*args)[0]


def result_type_and_weak(*args):
    """``(dtype, weak_type)`` that ``args`` (as for ``result_type``) promote to.

    Python's ``int``, ``float`` and ``complex`` types are weak, as their values are.
    """
    args = [_PYTHON_TYPES.get(a, a) if isinstance(a, type)
            else _np.dtype(a) if isinstance(a, str) else a for a in args]
    return result_dtype(*(a if isinstance(a, ShapeDtypeStruct)
                          else zeros((), a) if isinstance(a, (_np.dtype, _ScalarMeta, type))
                          else asarray(a) for a in args))


_PYTHON_TYPES = {bool: False, int: 0, float: 0.0, complex: 0j}


def issubdtype(arg1, arg2) -> bool:
    """``numpy.issubdtype``; ``ml_dtypes``' floats (bfloat16, float8) are floating, as in JAX."""
    if _is_ml_float(arg1) and not _is_ml_float(arg2):
        return arg2 in (_np.floating, _np.inexact, _np.number, _np.generic)
    return _np.issubdtype(arg1, arg2)


def _is_ml_float(arg) -> bool:
    kind = arg if isinstance(arg, type) else getattr(arg, "type", None)
    return isinstance(kind, type) and kind.__module__.startswith("ml_dtypes")


float_ = double = float64
single = float32
int_, uint = int64, uint64
complex_ = cdouble = complex128
csingle = complex64
object_, character, flexible, generic = _np.object_, _np.character, _np.flexible, _np.generic
ComplexWarning = _np.exceptions.ComplexWarning
euler_gamma = _np.euler_gamma


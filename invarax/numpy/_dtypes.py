"""``jnp``'s dtypes, scalar-type aliases and constants, ``result_type`` and ``issubdtype``."""

import numpy as _np

from ..core import dtypes as _core
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


def finfo(dtype):
    """Machine limits of a float dtype: ``numpy.finfo``, or ``ml_dtypes.finfo`` for
    ``ml_dtypes``' floats (bfloat16, float8, ...), as JAX's.

    Example:
        >>> float(jnp.finfo(jnp.bfloat16).eps)
        0.0078125
    """
    dt = _np.dtype(dtype)
    return _core.ml_dtypes().finfo(dt) if _core.is_ml_dtype(dt) else _np.finfo(dt)


def iinfo(dtype):
    """Machine limits of an integer dtype: ``numpy.iinfo``, or ``ml_dtypes.iinfo`` for
    ``ml_dtypes``' integers (int4, uint2, ...).

    Example:
        >>> int(jnp.iinfo(jnp.int4).max)
        7
    """
    dt = _np.dtype(dtype)
    return _core.ml_dtypes().iinfo(dt) if _core.is_ml_dtype(dt) else _np.iinfo(dt)

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
    """``numpy.issubdtype``, with ``ml_dtypes``' floats (bfloat16, float8, ...) floating and
    its integers (int4, uint2, ...) signed or unsigned integers, as in JAX.

    Example:
        >>> jnp.issubdtype(jnp.bfloat16, jnp.floating), jnp.issubdtype(jnp.int4, jnp.integer)
        (True, True)
    """
    ml1, ml2 = _ml_dtype(arg1), _ml_dtype(arg2)
    if ml1 is None or ml2 is not None:
        return _np.issubdtype(arg1 if ml1 is None else ml1, arg2 if ml2 is None else ml2)
    parents = {"f": (_np.floating, _np.inexact), "i": (_np.signedinteger, _np.integer),
               "u": (_np.unsignedinteger, _np.integer)}[_core.kind(ml1)]
    return arg2 in (*parents, _np.number, _np.generic)


def _ml_dtype(arg):
    """``arg``'s dtype if it names one of ``ml_dtypes``' types, else None."""
    if isinstance(arg, type) and issubclass(arg, _np.generic) and arg.__module__ in (
            "numpy", "builtins"):
        return None  # numpy's abstract classes (floating, integer, ...) and scalar types
    try:
        dt = _np.dtype(arg)
    except TypeError:
        return None
    return dt if _core.is_ml_dtype(dt) else None


float_ = double = float64
single = float32
int_, uint = int64, uint64
complex_ = cdouble = complex128
csingle = complex64
object_, character, flexible, generic = _np.object_, _np.character, _np.flexible, _np.generic
ComplexWarning = _np.exceptions.ComplexWarning
euler_gamma = _np.euler_gamma


"""``invarax.dtypes``: JAX's ``jax.dtypes``.

``canonicalize_dtype`` (64-bit types narrow unless ``jax_enable_x64``), ``result_type``
(JAX's promotion, weak types included), ``issubdtype``, ``finfo``/``iinfo``, ``float0``
(the dtype of the gradient of an integer input), ``bfloat16`` (``ml_dtypes``' type, which
invarax computes in float32, rounding once per operation), and
``extended``/``prng_key``, the abstract classes of JAX's typed keys (invarax's keys are
``uint32`` arrays, so no array's dtype is one of them).

Example:
    >>> import numpy as np
    >>> from invarax import dtypes
    >>> dtypes.canonicalize_dtype(np.float64)
    dtype('float32')
    >>> dtypes.result_type(np.int8, 2.0, return_weak_type_flag=True)
    (dtype('float32'), True)
"""

from __future__ import annotations

import numpy as np

from .core import dtypes as _core
from .core.dtypes import TypePromotionError
from .numpy._dtypes import finfo, iinfo, issubdtype, result_type_and_weak

#: The dtype of the tangent of an integer or bool value (JAX's ``float0``).
float0 = np.dtype([("float0", np.void, 0)])



class extended(np.generic):  # noqa: N801 (JAX's name)
    """Abstract class of JAX's extended dtypes (typed keys); no invarax dtype is one."""


class prng_key(extended):  # noqa: N801 (JAX's name)
    """Abstract class of JAX's typed-key dtypes; invarax's keys are ``uint32`` arrays."""


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype invarax uses for ``dtype``: 64-bit types narrow unless ``jax_enable_x64``.

    ``ml_dtypes``' types (``bfloat16``, the float8 types) are returned as they are, as JAX does.

    Raises:
        TypeError: for a dtype that is not a number or bool (strings, objects).
    """
    return _core.canonicalize(dtype)


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype ``args`` (arrays, scalars, dtypes, Python types) promote to, as JAX's.

    Returns:
        The canonical dtype, and whether it is weak if ``return_weak_type_flag``.
    """
    dtype, weak = result_type_and_weak(*args)
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x) -> type:
    """The Python scalar type of ``x``'s dtype: ``bool``, ``int``, ``float`` or ``complex``."""
    dtype = getattr(x, "dtype", None)
    kind = _core.kind(np.asarray(x).dtype if dtype is None else dtype)
    types = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
    if kind not in types:
        raise TypeError(f"scalar_type_of: {x!r} has no numeric dtype")
    return types[kind]


def itemsize_bits(dtype) -> int:
    """The number of bits of one element of ``dtype`` (a bool takes 8, an int4 4)."""
    dt = np.dtype(dtype)
    if _core.is_ml_dtype(dt):
        return (finfo if _core.kind(dt) == "f" else iinfo)(dt).bits
    return 8 * dt.itemsize


def __getattr__(name):
    if name == "bfloat16":
        try:
            return _core.ml_dtypes().bfloat16
        except ImportError as e:
            raise AttributeError(str(e)) from None
    raise AttributeError(f"module 'invarax.dtypes' has no attribute {name!r}")


__all__ = [
    "TypePromotionError", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo",
    "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of",
]

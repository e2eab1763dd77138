"""The scalar types of ``invarax.numpy`` (``jnp.float32``, ...): dtypes you can also call.

As in JAX, each one is a class whose metaclass makes it

- a dtype wherever one is accepted: ``np.dtype(jnp.float32)`` reads its ``dtype``
  attribute, and it compares and hashes as NumPy's scalar type (``np.float32``), which
  compares equal to ``np.dtype("float32")``;
- a constructor: ``jnp.float32(x)`` is ``jnp.asarray(x, jnp.float32)``, an array (JAX has
  no scalar objects), its dtype canonicalised for the x64 flag.

Example:
    >>> jnp.float32(3.0)
    Array(3., dtype=float32)
    >>> jnp.float64(1.0).dtype  # float32 unless x64 is enabled, as in JAX
    dtype('float32')
    >>> jnp.ones(2).dtype == jnp.float32
    True
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ._creation import asarray


class _ScalarMeta(type):
    """The metaclass of the scalar types: calling one builds an array of its dtype."""

    dtype: np.dtype

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _scalar_type(np_type) -> _ScalarMeta:
    name = np_type.__name__
    doc = f"""The scalar type {name}: a dtype, and a constructor of {name} arrays.

    Arguments:
        x: an array, scalar or nested lists, converted as by ``asarray``.

    Returns:
        ``jnp.asarray(x, dtype)``: an ``Array`` (a 0-d one for a scalar), its dtype
        canonicalised for the x64 flag, as in JAX.

    Example:
        >>> jnp.{name}(1).dtype == jnp.zeros(2, jnp.{name}).dtype
        True
    """
    return _ScalarMeta(name, (), {"dtype": np.dtype(np_type), "__doc__": doc,
                                  "__module__": "invarax.numpy"})


bool_ = _scalar_type(np.bool_)
int8, int16, int32, int64 = map(_scalar_type, (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = map(_scalar_type, (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = map(_scalar_type, (np.float16, np.float32, np.float64))
complex64, complex128 = map(_scalar_type, (np.complex64, np.complex128))


_ML_TYPES = {}  # name -> the scalar type of one of ml_dtypes' types, made on first use


def ml_scalar_type(name: str) -> _ScalarMeta:
    """``jnp.bfloat16``, ``jnp.float8_e4m3fn``, ``jnp.int4``, ...: ``ml_dtypes``' types as
    scalar types, made (and ``ml_dtypes`` imported) the first time one is asked for.

    Raises:
        AttributeError: ``name`` is not one of them, or ``ml_dtypes`` is not installed.
    """
    if name not in dtypes.ML_FLOATS + dtypes.ML_INTS:
        raise AttributeError(f"module 'invarax.numpy' has no attribute {name!r}")
    if name not in _ML_TYPES:
        try:
            module = dtypes.ml_dtypes()
        except ImportError as e:  # an AttributeError: hasattr(jnp, "bfloat16") is False
            raise AttributeError(f"jnp.{name}: {e}") from None
        _ML_TYPES[name] = _scalar_type(getattr(module, name))
    return _ML_TYPES[name]

"""Dtypes: canonicalisation under the x64 flag, and JAX's type promotion with weak types.

Python scalars are *weakly typed*: they take the dtype of the array they meet
(``float32_array + 2.0`` stays float32). Promotion follows JAX's lattice, where
``i*``, ``f*`` and ``c*`` stand for weakly typed int, float and complex.
"""

from __future__ import annotations

import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
             float16, float32, float64, complex64, complex128)
_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# The promotion lattice: each node lists the nodes directly above it.
_I, _F, _C = "i*", "f*", "c*"
_UP = {
    bool_: [_I],
    _I: [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_F],
    int8: [int16], int16: [int32], int32: [int64], int64: [_F],
    _F: [_C, float16], float16: [float32], float32: [float64, complex64], float64: [complex128],
    _C: [complex64], complex64: [complex128], complex128: [],
}


# ``jax_numpy_dtype_promotion="strict"``: a weak type promotes to any type of its kind (or
# the weak type above it); no two distinct strong types promote.
_UP_STRICT = {
    **{dtype: [] for dtype in SUPPORTED},
    _I: [_F, *(d for d in SUPPORTED if d.kind in "iu")],
    _F: [_C, *(d for d in SUPPORTED if d.kind == "f")],
    _C: [d for d in SUPPORTED if d.kind == "c"],
}


class TypePromotionError(ValueError):
    """Two dtypes have no promotion under the strict promotion rules."""


def _ancestors(node, lattice=_UP):
    seen, todo = {node}, [node]
    while todo:
        for up in lattice[todo.pop()]:
            if up not in seen:
                seen.add(up)
                todo.append(up)
    return seen


_ABOVE = {node: _ancestors(node) for node in _UP}
_ABOVE_STRICT = {node: _ancestors(node, _UP_STRICT) for node in _UP_STRICT}


def _join(a, b, above=_ABOVE):
    common = above[a] & above[b]
    # The least upper bound is the common ancestor that is below every other one.
    lub = [n for n in common if all(m in above[n] for m in common)]
    if not lub:
        raise TypePromotionError(
            f"Input dtypes {(str(a), str(b))} have no available implicit dtype promotion path "
            "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
            "desired output type, or set jax_numpy_dtype_promotion=standard.")
    return lub[0]


_x64 = False
_strict = False  # jax_numpy_dtype_promotion == "strict"


def x64_enabled() -> bool:
    """Whether 64-bit dtypes are enabled (``config.update("jax_enable_x64", True)``)."""
    return _x64


def _on_config(name, value):
    global _x64, _strict
    if name == "jax_enable_x64":
        _x64 = value
    elif name == "jax_numpy_dtype_promotion":
        _strict = value == "strict"


config.on_update(_on_config)


def canonicalize(dtype) -> np.dtype:
    """Map ``dtype`` to the dtype invarax uses for it (64-bit types narrow unless x64 is on).

    Raises a TypeError for dtypes invarax does not support (strings, objects, ...).
    """
    dt = np.dtype(dtype)
    if dt not in SUPPORTED:
        raise TypeError(
            f"dtype {dt} is not supported by invarax; use a bool, integer, float or complex dtype"
        )
    return dt if _x64 else _NARROW.get(dt, dt)


def default_int() -> np.dtype:
    return int64 if _x64 else int32


def default_float() -> np.dtype:
    return float64 if _x64 else float32


def default_complex() -> np.dtype:
    return complex128 if _x64 else complex64


def scalar_dtype(x) -> np.dtype:
    """The (weak) dtype a Python scalar takes: int32/float32/complex64 by default, bool for bool."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return default_int()
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"expected a Python scalar, got {type(x).__name__}")


def _node(dtype, weak):
    if not weak:
        return dtype
    kind = dtype.kind
    return {"b": bool_, "i": _I, "u": _I, "f": _F, "c": _C}[kind]


def _resolve(node):
    if node == _I:
        return default_int(), True
    if node == _F:
        return default_float(), True
    if node == _C:
        return default_complex(), True
    return canonicalize(node), False


def promote_types(*pairs, strict=None):
    """Join ``(dtype, weak_type)`` pairs on JAX's lattice; return ``(dtype, weak_type)``.

    ``strict`` (default: the ``jax_numpy_dtype_promotion`` flag is ``"strict"``) joins on
    the strict lattice, where distinct strong dtypes are a ``TypePromotionError``; internal
    questions ("does this dtype hold that one?") pass ``strict=False``.

    Example:
        >>> promote_types((float32, False), (float32, True))   # f32 array + Python float
        (dtype('float32'), False)
    """
    strict = _strict if strict is None else strict
    key = (pairs, _x64, strict)
    result = _PROMOTED.get(key)
    if result is None:
        above = _ABOVE_STRICT if strict else _ABOVE
        node = _node(*pairs[0])
        for pair in pairs[1:]:
            node = _join(node, _node(*pair), above)
        result = _PROMOTED[key] = _resolve(node)
    return result


# (pairs, x64, strict) -> promote_types' result: the lattice walk is slow, the keys few
_PROMOTED = {}


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_inexact(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def short_name(dtype) -> str:
    """The jaxpr spelling of a dtype: ``f32``, ``i32``, ``bool``, ``c64``, ``u8``."""
    return _SHORT[np.dtype(dtype)]


_SHORT = {d: d.name if d == bool_ else f"{d.kind}{8 * d.itemsize}" for d in SUPPORTED}

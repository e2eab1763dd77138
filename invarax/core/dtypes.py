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


def _ancestors(node):
    seen, todo = {node}, [node]
    while todo:
        for up in _UP[todo.pop()]:
            if up not in seen:
                seen.add(up)
                todo.append(up)
    return seen


_ABOVE = {node: _ancestors(node) for node in _UP}


def _join(a, b):
    common = _ABOVE[a] & _ABOVE[b]
    # The least upper bound is the common ancestor that is below every other one.
    (lub,) = [n for n in common if all(m in _ABOVE[n] for m in common)]
    return lub


_x64 = False


def x64_enabled() -> bool:
    """Whether 64-bit dtypes are enabled (``config.update("jax_enable_x64", True)``)."""
    return _x64


def _on_config(name, value):
    global _x64
    if name == "jax_enable_x64":
        _x64 = value


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


def promote_types(*pairs):
    """Join ``(dtype, weak_type)`` pairs on JAX's lattice; return ``(dtype, weak_type)``.

    Example:
        >>> promote_types((float32, False), (float32, True))   # f32 array + Python float
        (dtype('float32'), False)
    """
    key = (pairs, _x64)
    result = _PROMOTED.get(key)
    if result is None:
        node = _node(*pairs[0])
        for pair in pairs[1:]:
            node = _join(node, _node(*pair))
        result = _PROMOTED[key] = _resolve(node)
    return result


_PROMOTED = {}  # (pairs, x64) -> promote_types' result: the lattice walk is slow, the keys few


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

"""Dtypes: canonicalisation under the x64 flag, and JAX's type promotion with weak types.

Python scalars are *weakly typed*: they take the dtype of the array they meet
(``float32_array + 2.0`` stays float32). Promotion follows JAX's lattice, where
``i*``, ``f*`` and ``c*`` stand for weakly typed int, float and complex.

``ml_dtypes``' types (``bfloat16``, the float8/float6/float4 types, ``int4``/``int2``/
``int1`` and their unsigned twins) join the lattice the first time one is met: ``ml_dtypes``
is imported then, never by the core itself (it is an optional dependency; JAX brings it).
NumPy gives most of their dtypes kind ``"V"``: ``kind`` tells them as floats or integers.
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
#: ``ml_dtypes``' floats and integers JAX's ``jax.numpy`` names, in JAX's order.
ML_FLOATS = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
             "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
             "float8_e5m2", "float8_e5m2fnuz", "bfloat16")
ML_INTS = ("int1", "int2", "int4", "uint1", "uint2", "uint4")
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
_ML = {}  # name -> dtype of ml_dtypes' types, once registered
_ML_SET = set()  # their dtypes


def is_ml_dtype(dtype) -> bool:
    """Whether ``dtype`` is one of ``ml_dtypes``' types (bfloat16, float8, int4, ...)."""
    dt = np.dtype(dtype)
    return dt.names is None and dt.type.__module__.startswith("ml_dtypes")


def ml_dtypes():
    """The ``ml_dtypes`` module, imported and its types joined to the lattice on first use.

    Raises:
        ImportError: naming the package to install, where ``ml_dtypes`` is absent.
    """
    try:
        import ml_dtypes as module
    except ImportError:
        raise ImportError("bfloat16, the float8 types and int4 are ml_dtypes' types: install "
                          "ml_dtypes (pip install ml_dtypes, or invarax[ml_dtypes])") from None
    if not _ML:
        _register(module)
    return module


def _register(module):
    # As JAX's lattice: bfloat16 joins float16 at float32; the 8-, 6- and 4-bit floats and
    # the 1-, 2- and 4-bit integers promote to nothing but themselves (and take weak types).
    global SUPPORTED
    for name in ML_FLOATS + ML_INTS:
        _ML[name] = np.dtype(getattr(module, name))
    new = tuple(_ML.values())
    SUPPORTED = SUPPORTED + new
    _ML_SET.update(new)
    _UP.update({dt: [] for dt in new})
    _UP[_ML["bfloat16"]] = [float32]
    _UP[_F] = [*_UP[_F], *(_ML[n] for n in ML_FLOATS)]
    _UP[_I] = [*_UP[_I], *(_ML[n] for n in ML_INTS)]
    _UP_STRICT.update({dt: [] for dt in new})
    _UP_STRICT[_F] = [*_UP_STRICT[_F], *(_ML[n] for n in ML_FLOATS)]
    _UP_STRICT[_I] = [*_UP_STRICT[_I], *(_ML[n] for n in ML_INTS)]
    _ABOVE.update({node: _ancestors(node) for node in _UP})
    _ABOVE_STRICT.update({node: _ancestors(node, _UP_STRICT) for node in _UP_STRICT})
    _SHORT.update({dt: _short(name) for name, dt in _ML.items()})
    _PROMOTED.clear()


def _short(name):
    # JAX's jaxpr spelling: bf16, f8_e4m3fn, f4_e2m1fn, i4, u2
    if name == "bfloat16":
        return "bf16"
    if name.startswith("float"):
        bits, _, rest = name[len("float"):].partition("_")
        return f"f{bits}_{rest}"
    return name.replace("uint", "u").replace("int", "i")


def kind(dtype) -> str:
    """NumPy's kind letter of ``dtype``, with ``ml_dtypes``' floats ``"f"`` and integers
    ``"i"``/``"u"`` (NumPy says ``"V"`` for most of them).

    Example:
        >>> kind(np.float32), kind(np.int8)
        ('f', 'i')
    """
    dt = np.dtype(dtype)
    if dt not in _ML_SET and (dt.kind != "V" or not is_ml_dtype(dt)):
        return dt.kind
    name = dt.name
    return "u" if name.startswith("uint") else "i" if name.startswith("int") else "f"


def _join(a, b, above=_ABOVE):
    common = above[a] & above[b]
    # The least upper bound is the common ancestor that is below every other one.
    lub = [n for n in common if all(m in above[n] for m in common)]
    if not lub and above is _ABOVE:  # ml_dtypes' narrow types promote to no other type
        raise TypePromotionError(
            f"Input dtypes {(str(a), str(b))} have no available implicit dtype promotion "
            "path: 8-, 6- and 4-bit floats and 1-, 2- and 4-bit integers promote to no "
            "other type, as in JAX. Convert explicitly first, e.g. x.astype('float32').")
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
    if dt not in SUPPORTED and is_ml_dtype(dt):
        ml_dtypes()
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
    if dtype not in _UP and is_ml_dtype(dtype):
        ml_dtypes()
    if not weak:
        return dtype
    return {"b": bool_, "i": _I, "u": _I, "f": _F, "c": _C}[kind(dtype)]


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
    return kind(dtype) == "f"


def is_inexact(dtype) -> bool:
    return kind(dtype) in "fc"


def is_integer(dtype) -> bool:
    return kind(dtype) in "iu"


def compute_dtype(dtype) -> np.dtype:
    """The dtype ``dtype``'s values are computed in: float32 for the floats narrower than it
    (float16, bfloat16, float8, ...: their conversions to float32 are exact, and results
    are rounded back once), int32 for ``ml_dtypes``' 1-, 2- and 4-bit integers, else itself.

    Example:
        >>> compute_dtype(np.float16), compute_dtype(np.int8)
        (dtype('float32'), dtype('int8'))
    """
    dt = np.dtype(dtype)
    if dt == float16 or (dt in _ML_SET and kind(dt) == "f"):
        return float32
    return int32 if dt in _ML_SET else dt


def short_name(dtype) -> str:
    """The jaxpr spelling of a dtype: ``f32``, ``i32``, ``bool``, ``c64``, ``u8``."""
    return _SHORT[np.dtype(dtype)]


_SHORT = {d: d.name if d == bool_ else f"{d.kind}{8 * d.itemsize}" for d in SUPPORTED}

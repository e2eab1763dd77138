"""Helpers shared by the op families: shape/dtype checks with clear messages, operand conversion."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray

KIND_NAMES = {
    "b": "bool", "i": "signed integer", "u": "unsigned integer",
    "f": "floating", "c": "complex floating",
}
FLOAT = "fc"  # kinds accepted by transcendental ops
NUMBER = "iufc"  # kinds accepted by arithmetic
INTEGRAL = "biu"  # kinds accepted by bitwise ops
ANY = "biufc"


def check_kinds(name: str, aval: ShapedArray, kinds: str) -> None:
    """Raise a TypeError if ``aval``'s dtype kind is not one of ``kinds``."""
    if dtypes.kind(aval.dtype) not in kinds:
        accepted = ", ".join(KIND_NAMES[k] for k in kinds)
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are {accepted}; "
            f"convert with .astype(...) first"
        )


def check_same_dtypes(name: str, avals) -> None:
    if len({a.dtype for a in avals}) > 1:
        got = ", ".join(a.dtype.name for a in avals)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {got}. "
            f"(jnp.{name} promotes dtypes; with lax, convert first with .astype(...).)"
        )


def broadcast_shapes_strict(name: str, avals) -> tuple:
    """The common shape of lax elementwise operands: equal shapes, or 0-d scalars."""
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        got = ", ".join(str(a.shape) for a in avals)
        raise TypeError(
            f"lax.{name} got incompatible shapes for broadcasting: {got}. lax ops need equal "
            f"shapes (or 0-d scalars); jnp.{name} broadcasts, or use jnp.broadcast_to first."
        )
    return shapes.pop() if shapes else ()


def canonicalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` in ``[0, ndim)``; a negative axis counts from the end."""
    try:
        axis = int(axis.__index__())
    except AttributeError:
        raise TypeError(f"{what} must be an int, got {type(axis).__name__} {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{what} {axis} is out of bounds for an array of dimension {ndim}; "
            f"valid axes are {-ndim} to {ndim - 1}" if ndim else
            f"{what} {axis} is out of bounds for a 0-d array, which has no axes"
        )
    return axis % ndim


def weak_to(x, dtype):
    """Convert a weakly typed concrete scalar to ``dtype`` at trace time (as JAX's literals)."""
    with np.errstate(over="ignore"):  # a literal beyond the dtype's range becomes inf, as JAX
        return ArrayImpl(x._value.astype(dtype), x.weak_type)


def lax_operands(name: str, args):
    """Convert lax operands; weak scalars take the dtype of the strongly typed operands."""
    arrays = [to_array(a, f"lax.{name} operand") for a in args]
    strong = {a.dtype for a in arrays if not a.weak_type}
    if len(strong) == 1:
        (dtype,) = strong
        for i, a in enumerate(arrays):
            if a.weak_type and a.dtype != dtype and isinstance(a, ArrayImpl):
                if dtypes.promote_types((dtype, False), (a.dtype, True), strict=False)[0] == dtype:
                    arrays[i] = weak_to(a, dtype)
    return arrays

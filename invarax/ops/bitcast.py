"""``bitcast_convert_type``: the operand's bits read as another dtype (no value changes).

A dtype of the same width keeps the shape; a narrower one adds a trailing axis of
``old width / new width`` elements, and a wider one removes a trailing axis of that many,
as JAX's ``lax.bitcast_convert_type`` (the bytes of an element in the machine's order,
little-endian on every supported CPU).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import defjvp_zero
from ..interpreters.batching import batching_rules, moveaxis

bitcast_convert_type_p = Primitive("bitcast_convert_type")


def _shape(shape, old, new, where="bitcast_convert_type"):
    old, new = np.dtype(old).itemsize, np.dtype(new).itemsize
    if old == new:
        return tuple(shape)
    if old > new:
        return (*shape, old // new)
    if not shape or shape[-1] != new // old:
        raise ValueError(
            f"{where}: converting {shape} of a {old}-byte dtype to a {new}-byte one needs a "
            f"last axis of {new // old} elements (the bytes of one new element), got "
            f"{shape[-1] if shape else 'a 0-d operand'}")
    return tuple(shape[:-1])


def _impl(x, new_dtype):
    value = np.ascontiguousarray(x)
    return value.view(new_dtype).reshape(_shape(x.shape, x.dtype, new_dtype))


def _abstract_eval(x, new_dtype):
    return ShapedArray(_shape(x.shape, x.dtype, new_dtype), np.dtype(new_dtype))


bitcast_convert_type_p.def_impl(_impl)
bitcast_convert_type_p.def_abstract_eval(_abstract_eval)
register_lowering(bitcast_convert_type_p)
defjvp_zero(bitcast_convert_type_p)
batching_rules[bitcast_convert_type_p] = lambda vals, dims, new_dtype: (
    bitcast_convert_type_p.bind(moveaxis(vals[0], dims[0], 0), new_dtype=new_dtype), 0)


def bitcast_convert_type(operand, new_dtype):
    """``operand``'s bits as ``new_dtype`` (JAX's ``lax.bitcast_convert_type``).

    Example:
        >>> bitcast_convert_type(np.float32(1.0), np.int32)
        Array(1065353216, dtype=int32)
        >>> bitcast_convert_type(np.array([1, 0], np.int32), np.int16).shape
        (2, 2)
    """
    x = to_array(operand, "bitcast_convert_type operand")
    new = np.dtype(dtypes.canonicalize(new_dtype))
    if x.dtype == new:
        return x
    return bitcast_convert_type_p.bind(x, new_dtype=new)

"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, rev, concatenate, pad,
slice and iota. They move or copy values and never compute with them.

All but iota (which has no inputs) are linear: each JVP applies the primitive to the
tangents (``deflinear``), and each transpose moves the cotangent back with another shape
primitive (broadcast_in_dim's sums it over the broadcast dims).

Batching: the batch axis is one more axis to carry along, so each rule rewrites the
parameters around it and keeps it where it is (reshape moves it to the front, the only
place a row-major reshape leaves it alone); iota has no operands, so it is never batched.
Values are only moved, so every example's bits are the unbatched op's (N1)."""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.ir import Literal
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import emitted
from ..interpreters.ad import UndefinedPrimal, Zero, deflinear
from ..interpreters.batching import (
    axis_size_of,
    batching_rules,
    move_batch_axis,
    moveaxis,
    not_mapped,
)
from ._util import canonicalize_axis, check_same_dtypes, weak_to
from .elementwise import convert_element_type, select, sub


def _shape_tuple(shape, what="shape") -> tuple:
    try:
        shape = tuple(int(d.__index__()) for d in shape)
    except (TypeError, AttributeError):
        raise TypeError(
            f"{what} must be a tuple of ints, got {shape!r}; shapes are static, so a traced "
            "value cannot be used as a size (mark it static with static_argnums)"
        ) from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{what} {shape} has a negative dimension")
    return shape


def defshape(name, impl, abstract_eval, **lowering) -> Primitive:
    """A primitive that rearranges values: impl and abstract eval are given directly;
    ``lowering``: the fields of its CPU lowering (``core.lowering.Lowering``) but ``impl``."""
    prim = Primitive(name)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    register_lowering(prim, **lowering)
    return prim


# broadcast_in_dim: operand dim i becomes output dim broadcast_dimensions[i].
def _broadcast_in_dim_impl(x, shape, broadcast_dimensions):
    if x.size == math.prod(shape):  # unit axes only: a reshape (np.broadcast_to is ~10x slower)
        view = x.reshape(shape)
        view.flags.writeable = False  # as broadcast_to's: never a buffer to write over
        return view
    expanded = [1] * len(shape)
    for d, size in zip(broadcast_dimensions, x.shape, strict=True):
        expanded[d] = size
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_abstract_eval(x, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must have "
                        f"one entry per operand dimension (operand shape {x.shape})")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)) or any(
        not 0 <= d < len(shape) for d in broadcast_dimensions
    ):
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must be "
                        f"strictly increasing and within the output rank {len(shape)}")
    for d, size in zip(broadcast_dimensions, x.shape, strict=True):
        if size != 1 and size != shape[d]:
            raise TypeError(f"broadcast_in_dim: cannot broadcast operand shape {x.shape} to "
                            f"{shape} (operand dimension of size {size} maps to size {shape[d]})")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _tiles(x_shape, out_shape, broadcast_dimensions) -> bool:
    """Whether the output repeats the operand whole over its leading axes."""
    lead = len(out_shape) - len(x_shape)
    return (tuple(broadcast_dimensions) == tuple(range(lead, len(out_shape)))
            and tuple(x_shape) == tuple(out_shape[lead:]))


def _unit_tail(x_shape, out_shape, p) -> bool:
    """Whether both shapes have ``p`` equal leading axes and ``x_shape`` only unit ones after."""
    return (len(x_shape) >= p and tuple(x_shape[:p]) == tuple(out_shape[:p])
            and all(d == 1 for d in x_shape[p:]))


broadcast_in_dim_p = defshape(
    "broadcast_in_dim", _broadcast_in_dim_impl, _broadcast_in_dim_abstract_eval,
    scalar_broadcast=True,
    row_broadcast=lambda eqn, p: _unit_tail(
        eqn.invars[0].aval.shape, eqn.params["shape"], p)
    and tuple(eqn.params["broadcast_dimensions"][:p]) == tuple(range(p)),
    noop=lambda ndim, p: tuple(p["broadcast_dimensions"]) == tuple(range(ndim)),
    tiles=lambda eqn: _tiles(eqn.invars[0].aval.shape, eqn.params["shape"],
                             eqn.params["broadcast_dimensions"]),
)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    if isinstance(ct, Zero):
        return [None]
    kept = {d for d, size in zip(broadcast_dimensions, x.aval.shape, strict=True)
            if size == shape[d]}
    summed = emitted.reduce_sum(ct, tuple(d for d in range(len(shape)) if d not in kept))
    return [reshape(summed, x.aval.shape)]  # back to the operand's size-1 dims


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    """The batch axis goes right after the output dim of the operand dim before it."""
    (x,), (bdim,) = vals, dims
    out_bdim = broadcast_dimensions[bdim - 1] + 1 if bdim else 0
    kept = [d + (d >= out_bdim) for d in broadcast_dimensions]
    kept.insert(bdim, out_bdim)
    shape = (*shape[:out_bdim], x.shape[bdim], *shape[out_bdim:])
    return broadcast_in_dim(x, shape, kept), out_bdim


batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch


def _reshape_abstract_eval(x, new_sizes, dimensions):
    if math.prod(new_sizes) != x.size:
        raise TypeError(
            f"cannot reshape array of shape {x.shape} (size {x.size}) into shape {new_sizes} "
            f"(size {math.prod(new_sizes)}); the sizes must be equal (-1 infers one dimension)"
        )
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = defshape(
    "reshape", lambda x, new_sizes, dimensions: x.reshape(new_sizes), _reshape_abstract_eval,
    noop=lambda ndim, p: p["dimensions"] is None,
    row_broadcast=lambda eqn, p: eqn.params["dimensions"] is None and _unit_tail(
        eqn.invars[0].aval.shape, eqn.params["new_sizes"], p),
)


def _reshape_transpose(ct, x, *, new_sizes, dimensions):
    return [None if isinstance(ct, Zero) else reshape(ct, x.aval.shape)]


deflinear(reshape_p, _reshape_transpose)


def _reshape_batch(vals, dims, *, new_sizes, dimensions):
    (x,), (bdim,) = vals, dims
    return reshape(moveaxis(x, bdim, 0), (x.shape[bdim], *new_sizes)), 0


batching_rules[reshape_p] = _reshape_batch


def _transpose_abstract_eval(x, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose permutation {permutation} is not a permutation of the "
                         f"{x.ndim} axes of an array of shape {x.shape}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = defshape(
    "transpose", lambda x, permutation: np.transpose(x, permutation), _transpose_abstract_eval,
    noop=lambda ndim, p: tuple(p["permutation"]) == tuple(range(ndim)),
    permutation=lambda p: p["permutation"],
)


def _transpose_transpose(ct, x, *, permutation):
    return [None if isinstance(ct, Zero) else transpose(ct, np.argsort(permutation))]


deflinear(transpose_p, _transpose_transpose)


def _transpose_batch(vals, dims, *, permutation):
    (x,), (bdim,) = vals, dims
    perm = [p + (p >= bdim) for p in permutation]
    perm.insert(bdim, bdim)
    return transpose(x, perm), bdim


batching_rules[transpose_p] = _transpose_batch


def _squeeze_abstract_eval(x, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(f"cannot squeeze axis {d} of an array of shape {x.shape}: "
                             f"its size is {x.shape[d]}, not 1")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


squeeze_p = defshape(
    "squeeze", lambda x, dimensions: np.squeeze(x, dimensions), _squeeze_abstract_eval,
    noop=lambda ndim, p: tuple(p["dimensions"]) == (),
)


def _squeeze_transpose(ct, x, *, dimensions):
    return [None if isinstance(ct, Zero) else reshape(ct, x.aval.shape)]


deflinear(squeeze_p, _squeeze_transpose)


def _squeeze_batch(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    out_bdim = bdim - sum(d < bdim for d in dimensions)
    return squeeze(x, [d + (d >= bdim) for d in dimensions]), out_bdim


batching_rules[squeeze_p] = _squeeze_batch

rev_p = defshape("rev", lambda x, dimensions: np.flip(x, dimensions), lambda x, dimensions: x)
deflinear(rev_p, lambda ct, x, *, dimensions: [
    None if isinstance(ct, Zero) else rev(ct, dimensions)
])


def _rev_batch(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    return rev(x, [d + (d >= bdim) for d in dimensions]), bdim


batching_rules[rev_p] = _rev_batch


def _concatenate_abstract_eval(*xs, dimension):
    check_same_dtypes("concatenate", xs)
    first = xs[0]
    for x in xs[1:]:
        if x.ndim != first.ndim or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, first.shape, strict=True))
            if i != dimension
        ):
            raise TypeError(
                f"concatenate: all shapes must match except along axis {dimension}, got "
                f"{[y.shape for y in xs]}"
            )
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


concatenate_p = defshape(
    "concatenate", lambda *xs, dimension: np.concatenate(xs, dimension),
    _concatenate_abstract_eval,
)


def _concatenate_transpose(ct, *xs, dimension):
    """Each linear operand's cotangent is its slice of ``ct``."""
    cts, start = [], 0
    for x in xs:
        stop = start + x.aval.shape[dimension]
        linear = isinstance(x, UndefinedPrimal) and not isinstance(ct, Zero)
        cts.append(slice_in_dim(ct, start, stop, axis=dimension) if linear else None)
        start = stop
    return cts


deflinear(concatenate_p, _concatenate_transpose)


def _concatenate_batch(vals, dims, *, dimension):
    xs, bdim = same_batch_axis(vals, dims)
    return concatenate(xs, dimension + (dimension >= bdim)), bdim


batching_rules[concatenate_p] = _concatenate_batch


# pad: padding_config holds (low, high, interior) per dimension; low/high may be negative.
def pad_slices(shape, padding_config) -> tuple:
    """``(out_shape, dst, src)`` of padding an array of ``shape``: element i lands at
    ``lo + i * (interior + 1)`` along each axis, and the ones that land outside the result
    (negative padding crops) are dropped, so ``out[dst] = x[src]`` (when every ``src``
    slice is non-empty) writes the operand into the padded array. Tuples, worked out once
    per shape and padding."""
    try:
        return _pad_slices(shape, padding_config)
    except TypeError:  # unhashable: lists
        return _pad_slices(tuple(shape), tuple(tuple(c) for c in padding_config))


@functools.lru_cache(maxsize=4096)
def _pad_slices(shape, padding_config) -> tuple:
    out_shape, dst, src = [], [], []
    for s, (lo, hi, interior) in zip(shape, padding_config, strict=True):
        step = interior + 1
        size = lo + hi + s + max(s - 1, 0) * interior
        first = -(lo // step) if lo < 0 else 0  # the first i with lo + i * step >= 0
        stop = max(first, min(s, (size - 1 - lo) // step + 1))
        out_shape.append(size)
        src.append(builtins.slice(first, stop))
        start = lo + first * step
        dst.append(builtins.slice(start, start + (stop - first - 1) * step + 1, step))
    return tuple(out_shape), tuple(dst), tuple(src)


def _pad_impl(x, padval, padding_config):
    shape, dst, src = pad_slices(x.shape, padding_config)  # a copy: no value changes
    out = np.empty(shape, x.dtype)
    out.fill(padval)  # (np.full costs twice as much on small arrays)
    if all(sl.stop > sl.start for sl in src):
        out[dst] = x[src]
    return out


def _pad_abstract_eval(x, padval, padding_config):
    check_same_dtypes("pad", (x, padval))
    if padval.shape != ():
        raise TypeError(f"pad: the padding value must be a scalar, got shape {padval.shape}")
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad: padding_config needs one (low, high, interior) per dimension of "
                         f"shape {x.shape}, got {padding_config}")
    shape = []
    for s, (lo, hi, interior) in zip(x.shape, padding_config, strict=True):
        if interior < 0:
            raise ValueError(f"pad: interior padding must be >= 0, got {interior}")
        size = lo + hi + s + max(s - 1, 0) * interior
        if size < 0:
            raise ValueError(f"pad: negative padding {(lo, hi)} removes more than the size {s}")
        shape.append(size)
    return ShapedArray(shape, x.dtype, x.weak_type and padval.weak_type)


def _pad_piece(pad):
    """The slices a pad equation's operand fills, or None unless it pads with +0 and no
    interior or negative padding (a piece of a sum that ``jit`` computes by copies)."""
    x, value = pad.invars
    if not isinstance(value, Literal):
        return None
    v = np.asarray(value.val._value)
    if v.shape != () or v != 0 or np.signbit(v):
        return None
    config = pad.params["padding_config"]
    if any(interior != 0 or lo < 0 or hi < 0 for lo, hi, interior in config):
        return None
    return tuple(builtins.slice(lo, lo + n)
                 for (lo, _, _), n in zip(config, x.aval.shape, strict=True))


pad_p = defshape("pad", _pad_impl, _pad_abstract_eval, pad_piece=_pad_piece)


def _pad_transpose(ct, x, padval, *, padding_config):
    """The operand's cotangent is ``ct`` un-padded: low/high padding cut off (negative
    padding, a crop, padded back with zeros), then every ``interior + 1``-th element.
    The padding value's is the rest of ``ct``: ``sum(ct) - sum(operand's cotangent)``."""
    if isinstance(ct, Zero):
        return [None, None]
    zero = ArrayImpl(np.zeros((), ct.dtype))
    unpadded = pad_p.bind(ct, zero, padding_config=tuple(
        (-lo, -hi, 0) for lo, hi, _ in padding_config
    ))
    x_ct = slice(unpadded, (0,) * ct.ndim, unpadded.shape,
                 tuple(interior + 1 for _, _, interior in padding_config))
    if not isinstance(padval, UndefinedPrimal):
        return [x_ct, None]
    every = tuple(range(ct.ndim))
    padval_ct = sub(emitted.reduce_sum(ct, every), emitted.reduce_sum(x_ct, every))
    return [x_ct if isinstance(x, UndefinedPrimal) else None, padval_ct]


deflinear(pad_p, _pad_transpose)


def _pad_batch(vals, dims, *, padding_config):
    """A batched padding value: pad with zeros, then select each example's value where a
    mask of the operand's positions (padded the same way) is False."""
    (x, padval), (bdim, padval_bdim) = vals, dims
    if padval_bdim is not_mapped:
        config = list(padding_config)
        config.insert(bdim, (0, 0, 0))
        return pad(x, padval, config), bdim
    if bdim is not_mapped:
        x, bdim = move_batch_axis(x, bdim, 0, padval.shape[0]), 0
    config = list(padding_config)
    config.insert(bdim, (0, 0, 0))
    padded = pad(x, ArrayImpl(np.zeros((), x.dtype), padval.weak_type), config)
    inside = broadcast_in_dim(ArrayImpl(np.ones((), np.bool_)), x.shape, ())
    inside = pad(inside, ArrayImpl(np.zeros((), np.bool_)), config)
    return select(inside, padded, broadcast_in_dim(padval, padded.shape, (bdim,))), bdim


batching_rules[pad_p] = _pad_batch


def _slice_impl(x, start_indices, limit_indices, strides):
    steps = strides or (1,) * x.ndim
    return x[tuple(map(builtins.slice, start_indices, limit_indices, steps))]


def _slice_abstract_eval(x, start_indices, limit_indices, strides):
    steps = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(steps) == x.ndim:
        raise TypeError(f"slice: start {start_indices}, limit {limit_indices} and strides "
                        f"{strides} need one entry per dimension of shape {x.shape}")
    shape = []
    for s, lo, hi, st in zip(x.shape, start_indices, limit_indices, steps, strict=True):
        if not 0 <= lo <= hi <= s or st < 1:
            raise ValueError(f"slice: start {start_indices}, limit {limit_indices}, strides "
                             f"{strides} are not valid for shape {x.shape} "
                             "(need 0 <= start <= limit <= size and stride >= 1)")
        shape.append(-(-(hi - lo) // st))
    return ShapedArray(shape, x.dtype, x.weak_type)


slice_p = defshape("slice", _slice_impl, _slice_abstract_eval)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    """``ct`` padded with zeros back to the operand's shape (interior padding for strides)."""
    if isinstance(ct, Zero):
        return [None]
    config = []
    steps = strides or (1,) * ct.ndim
    for size, lo, n, step in zip(x.aval.shape, start_indices, ct.shape, steps, strict=True):
        end = lo + (n - 1) * step + 1 if n else lo  # one past the last element taken
        config.append((lo, size - end, step - 1))
    return [pad_p.bind(ct, ArrayImpl(np.zeros((), ct.dtype)), padding_config=tuple(config))]


deflinear(slice_p, _slice_transpose)


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (bdim,) = vals, dims
    start, limit = list(start_indices), list(limit_indices)
    start.insert(bdim, 0)
    limit.insert(bdim, x.shape[bdim])
    if strides is not None:
        strides = list(strides)
        strides.insert(bdim, 1)
    return slice(x, start, limit, strides), bdim


batching_rules[slice_p] = _slice_batch


def _iota_impl(dtype, shape, dimension):
    line = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


iota_p = defshape(
    "iota", _iota_impl, lambda dtype, shape, dimension: ShapedArray(shape, dtype)
)


# ---------------------------------------------------------------------------------------
# Batching helpers, for the rules of the primitives with several array operands (here and
# in indexing and sorting).


def same_batch_axis(vals, dims):
    """``(vals, bdim)``: every value with its batch axis at the first batched value's
    (unbatched ones broadcast there)."""
    size = axis_size_of(vals, dims)
    bdim = next(d for d in dims if d is not not_mapped)
    return [move_batch_axis(v, d, bdim, size) for v, d in zip(vals, dims, strict=True)], bdim


# ---------------------------------------------------------------------------------------
# lax-level wrappers.


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """Broadcast ``operand`` to ``shape``; its dim i becomes dim ``broadcast_dimensions[i]``."""
    x = to_array(operand, "lax.broadcast_in_dim operand")
    shape = _shape_tuple(shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if x.shape == shape and dims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(operand, sizes):
    """Add leading dimensions ``sizes`` to ``operand``."""
    x = to_array(operand, "lax.broadcast operand")
    sizes = _shape_tuple(sizes)
    dims = tuple(range(len(sizes), len(sizes) + x.ndim))
    return broadcast_in_dim(x, sizes + x.shape, dims)


def reshape(operand, new_sizes, dimensions=None):
    """Reshape ``operand`` (row-major) to ``new_sizes``; ``dimensions`` transposes first."""
    x = to_array(operand, "lax.reshape operand")
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = _shape_tuple(new_sizes, "new shape")
    if x.shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=None)


def transpose(operand, permutation):
    """Permute the axes of ``operand``."""
    x = to_array(operand, "lax.transpose operand")
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return transpose_p.bind(x, permutation=permutation)


def squeeze(array, dimensions):
    """Remove the size-1 axes ``dimensions``."""
    x = to_array(array, "lax.squeeze operand")
    dims = tuple(sorted({canonicalize_axis(d, x.ndim) for d in dimensions}))
    return squeeze_p.bind(x, dimensions=dims) if dims else x


def expand_dims(array, dimensions):
    """Insert size-1 axes at ``dimensions`` (positions in the output)."""
    x = to_array(array, "lax.expand_dims operand")
    ndim_out = x.ndim + len(dimensions)
    dims = sorted(canonicalize_axis(d, ndim_out) for d in dimensions)
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in dims]
    return broadcast_in_dim(x, shape, kept)


def rev(operand, dimensions):
    """Reverse ``operand`` along ``dimensions``."""
    x = to_array(operand, "lax.rev operand")
    dims = tuple(sorted({canonicalize_axis(d, x.ndim) for d in dimensions}))
    return rev_p.bind(x, dimensions=dims) if dims else x


def concatenate(operands, dimension):
    """Join ``operands`` (same dtype and rank) along ``dimension``."""
    xs = [to_array(x, "lax.concatenate operand") for x in operands]
    if not xs:
        raise ValueError("concatenate needs at least one array")
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=canonicalize_axis(dimension, xs[0].ndim))


def pad(operand, padding_value, padding_config):
    """Pad with a scalar; ``padding_config`` is ``(low, high, interior)`` per dimension."""
    x = to_array(operand, "lax.pad operand")
    padval = to_array(padding_value, "lax.pad padding_value")
    if padval.dtype != x.dtype and padval.weak_type:
        padval = convert_weak(padval, x.dtype)
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return pad_p.bind(x, padval, padding_config=config)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    """``operand[start:limit:stride]`` along every dimension, with static bounds."""
    x = to_array(operand, "lax.slice operand")
    start = tuple(int(i) for i in start_indices)
    limit = tuple(int(i) for i in limit_indices)
    strides = None if strides is None or all(s == 1 for s in strides) else tuple(map(int, strides))
    if start == (0,) * x.ndim and limit == x.shape and strides is None:
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``lax.slice`` along one axis."""
    x = to_array(operand, "lax.slice_in_dim operand")
    axis = canonicalize_axis(axis, x.ndim)
    start, limit, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    start[axis], limit[axis], strides[axis] = start_index, limit_index, stride
    return slice(x, start, limit, strides)


def iota(dtype, size):
    """``[0, 1, ..., size-1]`` of ``dtype``."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    """An array of ``shape`` whose values count along ``dimension``."""
    shape = _shape_tuple(shape)
    dtype = dtypes.canonicalize(dtype)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=canonicalize_axis(dimension, len(shape)))


def convert_weak(x, dtype):
    """A weakly typed value converted to ``dtype`` (a concrete scalar is folded)."""
    if isinstance(x, ArrayImpl):
        return weak_to(x, dtype)
    return convert_element_type(x, dtype, weak_type=True)


emitted.provide(broadcast_in_dim=broadcast_in_dim, transpose=transpose)

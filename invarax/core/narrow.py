"""The values of ``ml_dtypes``' types (bfloat16, the float8 types, int4, ...) are computed
in a wider type and rounded once.

A primitive never sees them: its operands of those types are converted to their compute
type (``dtypes.compute_dtype``: float32 for the floats, whose conversion to it is exact;
int32 for the integers), its impl runs there, and each result whose dtype is one of those
types is converted back once (round to nearest even, as ``ml_dtypes`` and JAX). float16
follows the same rule inside the kernels that need it; NumPy's float16 ufuncs round once
too. Eager evaluation and ``jit`` both run a primitive of such values here, so they agree
bitwise. Primitives that reinterpret bits (``bitcast_convert_type``) or step by one ulp
of the type (``nextafter``, ``ml_dtypes``' own loop) and those that run
jaxprs (control flow, calls: their inner primitives come back here) see the values as
they are.

Two rules follow JAX's CPU backend instead: the cumulative sums and products of the
narrow floats (float16 too) round at every step, in XLA's tiled order (``stepped_scan``),
and a contraction whose ``preferred_element_type`` is a float narrower than its operands
is computed as without it and then rounded (``contraction_types``).
"""

from __future__ import annotations

import numpy as np

from . import dtypes

# Primitives that take the values of these types as they are: reinterpreting their bits,
# or stepping by their own ulp (NumPy's nextafter loop of ml_dtypes' types).
_AS_IS = frozenset({"bitcast_convert_type", "nextafter"})


def involves(avals) -> bool:
    """Whether one of ``avals`` has one of ``ml_dtypes``' types (False until one is used)."""
    types = dtypes._ML_SET
    for a in avals:  # a loop, not any(...): this runs at every eager operation
        if a.dtype in types:
            return True
    return False


def _runs_jaxprs(params) -> bool:
    def program(p):
        if isinstance(p, (tuple, list)):
            return any(map(program, p))
        return hasattr(p, "eqns") or hasattr(p, "jaxpr") or callable(p)

    return any(map(program, params.values()))


def run(primitive, values, out_avals, params):
    """``primitive``'s impl on ``values`` computed in their compute types, its results of
    ``ml_dtypes``' types rounded once to ``out_avals``' dtypes."""
    if primitive.name in _AS_IS or _runs_jaxprs(params):
        return primitive.impl(*values, **params)
    if stepped(primitive.name, values[0].dtype):
        return stepped_scan(primitive.name, np.asarray(values[0]), **params)
    wide = [v.astype(dtypes.compute_dtype(v.dtype)) if v.dtype in dtypes._ML_SET else v
            for v in map(np.asarray, values)]
    outs = primitive.impl(*wide, **params)
    if not primitive.multiple_results:
        return _round(outs, out_avals.dtype)
    return [_round(o, a.dtype) for o, a in zip(outs, out_avals, strict=True)]


def _round(value, dtype):
    value = np.asarray(value)
    return value.astype(dtype) if value.dtype != dtype and dtype in dtypes._ML_SET else value


def contraction_types(operand, preferred) -> tuple:
    """``(computed, rounded_to)`` for a contraction (``dot_general``, a convolution) of
    ``operand``-typed operands with ``preferred_element_type`` ``preferred``: the
    ``preferred_element_type`` its primitive computes with, and the dtype its result is
    then converted to (None: none), as JAX's CPU backend.

    A float ``preferred`` that cannot hold every ``operand`` value (float32 operands with
    preferred bfloat16, bfloat16 with float16 or float8) gets the product as without it
    (in ``operand``, rounded once), converted; one that holds them all but is not on the
    promotion lattice (float8 operands with bfloat16) gets the float32 product, rounded
    once to it. Any other ``preferred`` is the primitive's.

    Example:
        >>> import ml_dtypes
        >>> contraction_types(np.dtype(np.float32), ml_dtypes.bfloat16)
        (None, dtype(bfloat16))
        >>> contraction_types(np.dtype(ml_dtypes.float8_e4m3fn), ml_dtypes.bfloat16)
        (dtype('float32'), dtype(bfloat16))
        >>> contraction_types(np.dtype(np.float16), np.float32)
        (dtype('float32'), None)
    """
    if preferred is None:
        return None, None
    preferred = dtypes.canonicalize(preferred)
    if preferred == operand or dtypes.kind(operand) != "f" or dtypes.kind(preferred) != "f":
        return preferred, None
    wide = dtypes.compute_dtype(operand)
    try:
        promoted = dtypes.promote_types((operand, False), (preferred, False), strict=False)[0]
    except dtypes.TypePromotionError:  # the 8-, 6- and 4-bit floats promote to no type
        promoted = None
    if preferred in (promoted, wide):
        return preferred, None
    if not (dtypes.is_ml_dtype(operand) or dtypes.is_ml_dtype(preferred)):
        return None, preferred  # off the lattice of NumPy's floats: narrower
    finfo = dtypes.ml_dtypes().finfo
    outer, inner = finfo(preferred), finfo(operand)
    holds = (outer.nmant >= inner.nmant and outer.maxexp >= inner.maxexp
             and outer.smallest_subnormal <= inner.smallest_subnormal)
    return (wide, preferred) if holds else (None, preferred)


# Cumulative sums and products of the narrow floats, as JAX computes them on the CPU: XLA
# rounds every step to the type, and a scan longer than _TILE is split into tiles of
# _TILE: each tile scanned, the tiles' totals scanned the same way (recursively), and the
# scan of the tiles before a tile combined with each of its values, rounded once more.
_TILE = 16
_STEPPED = {"cumsum": (np.add, 0.0), "cumprod": (np.multiply, 1.0)}


def stepped(name: str, dtype) -> bool:
    """Whether the primitive ``name`` of ``dtype`` is a cumulative sum or product of a
    float narrower than float32 (bfloat16, float16, the float8 types, ...)."""
    return name in _STEPPED and dtype != np.float32 and dtypes.compute_dtype(dtype) == np.float32


def stepped_scan(name: str, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """``cumsum`` or ``cumprod`` (``name``) of the narrow-float array ``x`` along ``axis``:
    each step computed in float32 and rounded to ``x``'s dtype, in the tiled order above.

    Within a tile (and for a scan of at most 16 values) output ``j`` of a forward scan is
    ``((x[0] + x[1]) + ...) + x[j]``; of a reverse scan ``((x[j] + x[j+1]) + ...) + x[-1]``,
    the values always taken in increasing index order (XLA's window order), from the
    identity (0 or 1). Tiles start at index 0; the last one is padded with the identity.

    Example:
        >>> import ml_dtypes
        >>> ones = np.ones(300, ml_dtypes.bfloat16)
        >>> stepped_scan("cumsum", ones, 0, False)[[255, 256, 257, 299]].tolist()
        [256.0, 256.0, 258.0, 300.0]
    """
    op, identity = _STEPPED[name]
    wide = np.moveaxis(x.astype(np.float32), axis, -1)
    out = _tiled(op, wide, reverse, x.dtype, np.float32(identity))
    return np.ascontiguousarray(np.moveaxis(out, -1, axis).astype(x.dtype))


def _tiled(op, x, reverse, dtype, identity):
    """The stepped scan of float32 ``x`` (values of ``dtype``) along its last axis."""
    n = x.shape[-1]
    if n <= _TILE:
        return _within(op, x, reverse, dtype, identity)
    size = -(-n // _TILE) * _TILE
    padded = np.full((*x.shape[:-1], size), identity, np.float32)
    padded[..., :n] = x
    tiles = _within(op, padded.reshape(*x.shape[:-1], size // _TILE, _TILE), reverse, dtype,
                    identity)
    totals = _tiled(op, tiles[..., 0] if reverse else tiles[..., -1], reverse, dtype, identity)
    edge = np.full((*totals.shape[:-1], 1), identity, np.float32)
    before = np.concatenate([totals[..., 1:], edge] if reverse else [edge, totals[..., :-1]], -1)
    out = _rounded(op(tiles, before[..., None]), dtype)
    return out.reshape(*x.shape[:-1], size)[..., :n]


def _within(op, x, reverse, dtype, identity):
    """The stepped scan of ``x`` along its last axis, one step at a time: output ``j`` takes
    ``x[0..j]`` (forward) or ``x[j..]`` (reverse), in increasing index order."""
    acc = np.full(x.shape, identity, np.float32)
    for k in range(x.shape[-1]):
        taking = np.s_[..., :k + 1] if reverse else np.s_[..., k:]  # the outputs x[k] is in
        acc[taking] = _rounded(op(acc[taking], x[..., k:k + 1]), dtype)
    return acc


def _rounded(value, dtype):
    return value.astype(dtype).astype(np.float32)

"""The convolution primitive ``conv_general_dilated`` and its lax wrappers.

``conv_general_dilated`` is JAX's: N-d, with window strides, padding, input (lhs) and
kernel (rhs) dilation, any ``dimension_numbers``, feature and batch groups. Its impl
moves the operands to the canonical layouts ``(N, C, *spatial)`` and ``(O, I, *window)``
and calls ``invarax.kernels.conv``, which computes each output element as the canonical
contraction of its window, terms in ``(input channel, *window)`` order: bitwise the
``einsum`` of the explicit patches with the kernel (N4, ``docs/numerics.md``).

It is bilinear: the JVP is ``conv(dx, w) + conv(x, dw)``; the transposes are convolutions
again (JAX's rules: the input cotangent convolves the output cotangent with the flipped
kernel, the kernel cotangent convolves the input with the output cotangent). Batching
folds the vmapped axis into the batch axis (batched input), the output-feature axis
(batched kernel) or the feature groups (both), so each example's outputs are computed
with exactly the operations they get alone (N1).
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from .. import kernels
from ..core import narrow
from ..core.array import ArrayImpl
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import defbilinear
from ..interpreters.batching import batching_rules
from ._util import lax_operands
from .elementwise import convert_element_type
from .shape import reshape, rev, transpose


class ConvDimensionNumbers(NamedTuple):
    """The axes of a convolution's operands, as ``jax.lax.ConvDimensionNumbers``.

    Each spec lists axis indices: ``lhs_spec`` = (batch, feature, *spatial) of the input,
    ``rhs_spec`` = (out feature, in feature, *spatial) of the kernel, ``out_spec`` =
    (batch, feature, *spatial) of the output.

    Example:
        >>> dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))  # NHWC
        >>> lax.conv_general_dilated(jnp.ones((1, 5, 5, 2)), jnp.ones((3, 3, 2, 4)), (1, 1),
        ...                          "VALID", dimension_numbers=dn).shape
        (1, 3, 3, 4)
    """

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _permutation(spec: str, pair, rhs_spec: str) -> tuple:
    """The axes of ``spec``: the two named in ``pair``, then the spatial ones in
    ``rhs_spec``'s order (JAX's ``conv_general_permutations``)."""
    spatial = [i for i, ch in enumerate(spec) if ch not in pair]
    if spec is not rhs_spec:
        spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Convert ``dimension_numbers`` to a ``ConvDimensionNumbers`` (as JAX's).

    Arguments:
        lhs_shape, rhs_shape: the shapes of the input and the kernel.
        dimension_numbers: None (``NC...``, ``OI...``, ``NC...``), a
            ``ConvDimensionNumbers``, or three strings such as
            ``("NHWC", "HWIO", "NHWC")``: ``N``/``C`` name the batch and feature axes of
            the input and output, ``O``/``I`` the kernel's output and input features, and
            any other letters the spatial axes (paired by letter; ``window_strides`` and
            the other per-axis arguments follow the kernel's order of them).

    Returns:
        A ``ConvDimensionNumbers`` of axis indices.

    Example:
        >>> lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
        ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs of the same rank, got shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3
            and all(isinstance(s, str) for s in dimension_numbers)):
        raise TypeError(
            "convolution dimension_numbers must be None, a ConvDimensionNumbers or three "
            f"strings such as ('NCHW', 'OIHW', 'NCHW'), got {dimension_numbers!r}")
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for name, spec, pair in zip(("lhs", "rhs", "out"), dimension_numbers, pairs, strict=True):
        if len(spec) != len(lhs_shape):
            raise TypeError(
                f"convolution dimension_numbers {name} spec {spec!r} must have one letter "
                f"per axis of the operands (rank {len(lhs_shape)}); lhs shape "
                f"{tuple(lhs_shape)}, rhs shape {tuple(rhs_shape)}")
        if spec.count(pair[0]) != 1 or spec.count(pair[1]) != 1 or len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers {name} spec {spec!r} must contain "
                            f"'{pair[0]}' and '{pair[1]}' once each and no repeated letter")
    lhs, rhs, out = dimension_numbers
    if not set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}:
        raise TypeError("convolution dimension_numbers must name the same spatial letters in "
                        f"all three specs, got {dimension_numbers!r}")
    return ConvDimensionNumbers(*(_permutation(s, p, rhs) for s, p in
                                  zip(dimension_numbers, pairs, strict=True)))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """The ``(low, high)`` pads of ``"SAME"``, ``"SAME_LOWER"`` or ``"VALID"`` (as JAX's).

    Arguments:
        in_shape, window_shape, window_strides: the spatial sizes, the (dilated) window
            sizes and the strides, one per spatial axis.
        padding: ``"SAME"`` (the output has ``ceil(in / stride)`` elements, the odd pad at
            the end), ``"SAME_LOWER"`` (the odd pad at the start) or ``"VALID"`` (none).

    Returns:
        A list of ``(low, high)`` pairs.

    Example:
        >>> lax.padtype_to_pads((5,), (3,), (2,), "SAME")
        [(1, 1)]
    """
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padding must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
    pads = []
    for size, w, s in zip(in_shape, window_shape, window_strides, strict=True):
        total = max((-(-size // s) - 1) * s + w - size, 0)
        low = total // 2 if mode == "SAME" else total - total // 2
        pads.append((low, total - low))
    return pads


def _dilate(size: int, d: int) -> int:
    return 0 if size == 0 else (size - 1) * d + 1


# ---------------------------------------------------------------------------------------
# The primitive.


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision,
               preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    out = kernels.conv(np.transpose(lhs, lhs_spec), np.transpose(rhs, rhs_spec),
                       window_strides, padding, lhs_dilation, rhs_dilation,
                       feature_group_count, batch_group_count, out_dtype)
    return np.transpose(out, np.argsort(out_spec))


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type):
    shapes = f"lhs shape {lhs.shape}, rhs shape {rhs.shape}"
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            f"lax.conv_general_dilated requires arguments of the same dtype, got "
            f"{lhs.dtype.name} and {rhs.dtype.name}; convert first with .astype(...)")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError(f"lax.conv_general_dilated requires lhs and rhs of the same rank (at "
                        f"least 2), got {shapes}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    n = lhs.ndim - 2
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation), ("padding", padding)):
        if len(value) != n:
            raise TypeError(f"lax.conv_general_dilated: {name} must have one entry per "
                            f"spatial axis ({n}), got {value!r} ({shapes})")
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if any(v < 1 for v in value):
            raise ValueError(f"lax.conv_general_dilated: {name} must be positive, got {value}")
    fg, bg = feature_group_count, batch_group_count
    if fg < 1 or bg < 1 or (fg > 1 and bg > 1):
        raise ValueError(
            "lax.conv_general_dilated: feature_group_count and batch_group_count must be "
            f"positive and at most one of them above 1, got {fg} and {bg}")
    batch, features = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    out_features, in_features = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if features % fg or features // fg != in_features:
        raise ValueError(
            f"lax.conv_general_dilated: the input has {features} feature channels (axis "
            f"{lhs_spec[1]}) but the kernel expects {in_features} x feature_group_count "
            f"{fg} = {in_features * fg} (its axis {rhs_spec[1]}); {shapes}. The kernel's "
            "input-feature axis must equal the input's channels divided by the groups")
    if out_features % fg or out_features % bg:
        raise ValueError(
            f"lax.conv_general_dilated: the kernel's {out_features} output features (axis "
            f"{rhs_spec[0]}) must be a multiple of feature_group_count {fg} and "
            f"batch_group_count {bg}; {shapes}")
    if batch % bg:
        raise ValueError(f"lax.conv_general_dilated: batch_group_count {bg} must divide the "
                         f"input's batch size {batch}; {shapes}")
    spatial = []
    for i in range(n):
        size = _dilate(lhs.shape[lhs_spec[i + 2]], lhs_dilation[i])
        padded = size + padding[i][0] + padding[i][1]
        window = _dilate(rhs.shape[rhs_spec[i + 2]], rhs_dilation[i])
        if padded < 0:
            raise ValueError(
                f"lax.conv_general_dilated: negative padding {padding[i]} removes more than "
                f"the {size} elements of spatial axis {i}; {shapes}")
        spatial.append(max(0, (padded - window) // window_strides[i] + 1)
                       if padded >= window else 0)
    out_shape = [batch // bg, out_features, *spatial]
    shape = tuple(out_shape[i] for i in np.argsort(out_spec))
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type and dtype == lhs.dtype)


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.def_impl(_conv_impl)
conv_general_dilated_p.def_abstract_eval(_conv_abstract_eval)
register_lowering(conv_general_dilated_p)


# ---------------------------------------------------------------------------------------
# Differentiation (JAX's rules). Ignoring spatial axes, with m = batch, j = input feature
# and k = output feature, the forward pass is [m, j] x [j, k] -> [m, k]; the input
# cotangent is [m, k] x [k, j] (a convolution with the flipped kernel) and the kernel's
# [j, m] x [m, k] (a convolution of the input with the output cotangent). Feature groups
# of the forward pass become batch groups of the kernel cotangent, and conversely.


def _reshape_axis_into(src: int, dst: int, x):
    """Merge axis ``src`` of ``x`` into axis ``dst`` (numbered without ``src``), as its
    major part."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    shape = [x.shape[i] for i in range(x.ndim) if i != src]
    shape[dst] *= x.shape[src]
    return reshape(transpose(x, perm), shape)


def _reshape_axis_out_of(src: int, size: int, x):
    """Split axis ``src`` of ``x`` into ``(size, rest)``."""
    shape = list(x.shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return reshape(x, shape)


def _spatial(shape, spec):
    return [shape[i] for i in spec[2:]]


def _swap(spec):
    return (spec[1], spec[0], *spec[2:])


def vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                    rhs_dilation) -> tuple:
    """The padding of the convolution (or window sum) that transposes one with respect to
    its input (JAX's ``_conv_general_vjp_lhs_padding``): the cotangent, dilated by the
    strides, padded by ``dilated window - low - 1`` before and the rest after."""
    pads = []
    for size, w, s, out, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                                lhs_dilation, rhs_dilation, strict=True):
        before = _dilate(w, rd) - lo - 1
        pads.append((before, _dilate(size, ld) + _dilate(w, rd) - 1 - _dilate(out, s) - before))
    return tuple(pads)


def _transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = feature_group_count * batch_group_count
    rhs_shape = rhs.shape
    if groups > 1:  # move the groups from the kernel's output to its input features
        rhs = _reshape_axis_out_of(rhs_spec[0], groups, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    pads = vjp_lhs_padding(_spatial(lhs_aval.shape, lhs_spec), _spatial(rhs_shape, rhs_spec),
                           window_strides, _spatial(ct.shape, out_spec), padding,
                           lhs_dilation, rhs_dilation)
    flipped = rev(rhs, tuple(rhs_spec[2:]))
    if flipped.dtype != ct.dtype:
        flipped = convert_element_type(flipped, ct.dtype)
    out = conv_general_dilated_p.bind(
        ct, flipped, window_strides=tuple(lhs_dilation), padding=tuple(pads),
        lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, precision=precision,
        preferred_element_type=None)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return convert_element_type(out, lhs_aval.dtype) if out.dtype != lhs_aval.dtype else out


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    in_sizes = _spatial(lhs.shape, lhs_spec)
    pads = []
    for i, (size, w, (lo, _)) in enumerate(zip(in_sizes, _spatial(rhs_aval.shape, rhs_spec),
                                               padding, strict=True)):
        from_lhs = (_dilate(ct.shape[out_spec[i + 2]], window_strides[i])
                    - _dilate(size, lhs_dilation[i]))
        pads.append((lo, from_lhs + _dilate(w, rhs_dilation[i]) - lo - 1))
    if lhs.dtype != ct.dtype:
        lhs = convert_element_type(lhs, ct.dtype)
    out = conv_general_dilated_p.bind(
        lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads),
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(_swap(lhs_spec), _swap(out_spec),
                                               _swap(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=None)
    return convert_element_type(out, rhs_aval.dtype) if out.dtype != rhs_aval.dtype else out


defbilinear(conv_general_dilated_p, _transpose_lhs, _transpose_rhs)


# ---------------------------------------------------------------------------------------
# Batching (JAX's rule): a batched input folds the vmapped axis into the batch axis; a
# batched kernel into the output features; both into feature (or batch) groups. Each
# output element is still the contraction of the same window with the same kernel row.


def _conv_batch(vals, dims, **params):
    lhs, rhs = vals
    lbd, rbd = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    size = lhs.shape[lbd] if lbd is not None else rhs.shape[rbd]
    if size == 0:
        unbatched = [ShapedArray(tuple(s for i, s in enumerate(v.shape) if i != d), v.dtype)
                     if d is not None else ShapedArray(v.shape, v.dtype)
                     for v, d in zip(vals, dims, strict=True)]
        aval = _conv_abstract_eval(*unbatched, **params)
        return ArrayImpl(np.zeros((0, *aval.shape), aval.dtype)), 0
    bind = conv_general_dilated_p.bind
    if lbd is not None and rbd is not None:
        if bg > 1:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[0], lhs)
            params = {**params, "batch_group_count": bg * size}
        else:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[1], lhs)
            params = {**params, "feature_group_count": fg * size}
        out = bind(new_lhs, _reshape_axis_into(rbd, rhs_spec[0], rhs), **params)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lbd is not None:
        if bg == 1:
            out = bind(_reshape_axis_into(lbd, lhs_spec[0], lhs), rhs, **params)
            return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
        new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lbd <= lhs_spec[0]), bg, lhs)
        new_lhs = _reshape_axis_into(lbd + int(lhs_spec[0] < lbd), lhs_spec[0] + 1, new_lhs)
        new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = bind(new_lhs, rhs, **params)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    if fg == 1 and bg == 1:
        out = bind(lhs, _reshape_axis_into(rbd, rhs_spec[0], rhs), **params)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    groups = fg * bg
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rbd <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rbd + int(rhs_spec[0] < rbd), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = bind(lhs, new_rhs, **params)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


batching_rules[conv_general_dilated_p] = _conv_batch


# ---------------------------------------------------------------------------------------
# lax-level wrappers.


def _ints(name: str, value, n: int, default=1) -> tuple:
    if value is None:
        return (default,) * n
    try:
        value = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"lax.conv_general_dilated: {name} must be a sequence of {n} ints, "
                        f"got {value!r}") from None
    return value


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General N-d convolution (cross-correlation) with dilation, as JAX's.

    Arguments:
        lhs: the input, rank ``n + 2`` (batch, features and ``n`` spatial axes).
        rhs: the kernel, rank ``n + 2`` (output features, input features, window).
        window_strides: ``n`` ints, the step between windows.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"``, or ``n`` ``(low, high)`` pairs
            of ints (negative crops).
        lhs_dilation: ``n`` ints (``lhs_dilation - 1`` zeros between input elements, a
            transposed convolution), or None.
        rhs_dilation: ``n`` ints (gaps in the window, an atrous convolution), or None.
        dimension_numbers: None, a ``ConvDimensionNumbers`` or three strings such as
            ``("NHWC", "HWIO", "NHWC")`` (see ``conv_dimension_numbers``).
        feature_group_count: split the input features into this many groups, each
            convolved with its share of the kernel's output features.
        batch_group_count: split the batch likewise (used by gradients of grouped
            convolutions); at most one of the two counts may exceed 1.
        precision: accepted for JAX compatibility and ignored (one kernel, one order).
        preferred_element_type: None or a dtype the operands' dtype promotes to; a float
            that cannot hold the operands' values (bfloat16 for float32 operands) takes
            the convolution computed as without it, rounded once to it (JAX refuses it).

    Returns:
        The convolution, laid out by ``dimension_numbers``' output spec. Each element is
        the canonical contraction of its window, terms in (input feature, window) order:
        bitwise the ``einsum`` of the explicit patches with the kernel.

    Example:
        >>> x, w = jnp.ones((1, 2, 5, 5)), jnp.ones((4, 2, 3, 3))
        >>> lax.conv_general_dilated(x, w, (1, 1), "SAME").shape
        (1, 4, 5, 5)
    """
    lhs, rhs = lax_operands("conv_general_dilated", (lhs, rhs))
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n = lhs.ndim - 2
    strides = _ints("window_strides", window_strides, n)
    lhs_dilation = _ints("lhs_dilation", lhs_dilation, n)
    rhs_dilation = _ints("rhs_dilation", rhs_dilation, n)
    for name, value in (("window_strides", strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if len(value) != n:
            raise TypeError(f"lax.conv_general_dilated: {name} must have one entry per "
                            f"spatial axis ({n}), got {value!r} (lhs shape {lhs.shape}, rhs "
                            f"shape {rhs.shape})")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("lax.conv_general_dilated: string padding is not defined with "
                             "lhs_dilation; give explicit (low, high) pairs or use "
                             "lax.conv_transpose")
        window = [_dilate(rhs.shape[i], d) for i, d in
                  zip(dnums.rhs_spec[2:], rhs_dilation, strict=True)]
        padding = padtype_to_pads([lhs.shape[i] for i in dnums.lhs_spec[2:]], window, strides,
                                  padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(
            "lax.conv_general_dilated: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a "
            f"sequence of (low, high) int pairs, got {padding!r} (lhs shape {lhs.shape}, "
            f"rhs shape {rhs.shape})") from None
    preferred_element_type, rounded_to = narrow.contraction_types(lhs.dtype,
                                                                  preferred_element_type)
    out = conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count), precision=None,
        preferred_element_type=preferred_element_type)
    return out if rounded_to is None else convert_element_type(out, rounded_to)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` without dilation, in ``NC...``/``OI...`` layout (JAX's).

    Arguments:
        lhs, rhs, window_strides, padding, precision, preferred_element_type: as for
            ``conv_general_dilated``.

    Returns:
        The convolution, ``(N, O, *spatial)``.

    Example:
        >>> lax.conv(jnp.ones((1, 1, 4)), jnp.ones((1, 1, 2)), (1,), "VALID")
        Array([[[2., 2., 2.]]], dtype=float32)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in ``NC...``/``OI...`` layout with dilations (JAX's).

    Arguments:
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision,
            preferred_element_type: as for ``conv_general_dilated``.

    Returns:
        The convolution, ``(N, O, *spatial)``.

    Example:
        >>> x, w = jnp.ones((1, 1, 4)), jnp.ones((1, 1, 2))
        >>> lax.conv_with_general_padding(x, w, (1,), ((1, 1),), None, (2,)).shape
        (1, 1, 4)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding):
    """The ``(before, after)`` padding of one axis of a transposed convolution (JAX's)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    else:
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    return before, total - before


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A transposed ("fractionally strided") convolution, as ``jax.lax.conv_transpose``.

    Arguments:
        lhs, rhs: the input and the kernel, rank ``n + 2``.
        strides: ``n`` ints: the input is dilated by them.
        padding: ``"SAME"``, ``"VALID"`` (the padding of the forward convolution this one
            transposes) or ``n`` ``(low, high)`` pairs (of this convolution, or of the
            forward one with ``use_consistent_padding=True``).
        rhs_dilation: ``n`` ints or None.
        dimension_numbers: as ``conv_general_dilated``; default ``NHWC``/``HWIO``/``NHWC``
            (TensorFlow's) for the operands' rank.
        transpose_kernel: flip the window and swap the kernel's feature axes, so that the
            result is the gradient of ``conv_general_dilated`` with the same kernel.
        precision, preferred_element_type: as ``conv_general_dilated``.
        use_consistent_padding: read explicit pairs as the forward convolution's padding.

    Returns:
        The transposed convolution.

    Example:
        >>> lax.conv_transpose(jnp.ones((1, 4, 4, 2)), jnp.ones((3, 3, 2, 5)), (2, 2),
        ...                    "SAME").shape
        (1, 8, 8, 5)
    """
    lhs, rhs = lax_operands("conv_transpose", (lhs, rhs))
    ndim = lhs.ndim
    if ndim != rhs.ndim or ndim < 2:
        raise TypeError(f"lax.conv_transpose requires lhs and rhs of the same rank (at least "
                        f"2), got shapes {lhs.shape} and {rhs.shape}")
    if dimension_numbers is None:
        if ndim > 5:
            raise ValueError("lax.conv_transpose: no default dimension_numbers beyond 3 "
                             "spatial axes; pass them explicitly")
        letters = "HWD"[:ndim - 2]
        dimension_numbers = (f"N{letters}C", f"{letters}IO", f"N{letters}C")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    window = [rhs.shape[i] for i in dn.rhs_spec[2:]]
    n = ndim - 2
    strides = _ints("strides", strides, n)
    rhs_dilation = _ints("rhs_dilation", rhs_dilation, n)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        per_axis = [padding] * n if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(_dilate(k, d), s, p) for k, d, s, p in
                     zip(window, rhs_dilation, strides, per_axis, strict=True))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * n, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)

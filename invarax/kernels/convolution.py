"""The convolution kernel: every ``conv_general_dilated`` in invarax is computed here.

A convolution is the contraction of every window of the (padded, dilated) input with the
kernel: output ``(n, o, *y)`` of feature group ``g`` is
``sum over (c, *w) of xp[n, g*Cg + c, *(y*stride + w*rhs_dilation)] * rhs[o, c, *w]``,
where ``xp`` is the input with ``lhs_dilation - 1`` zeros between its elements and the
padding (zeros) around them. The terms are taken in the order ``(c, *w)`` row-major:
the input channel outermost, then the window positions in the order of the kernel's
spatial axes. That is the order of ``dot_general`` on the explicit patches
``P[n, *y, c, *w]`` contracted with ``rhs[o, c, *w]`` over ``(c, *w)``, so a convolution
is bitwise that ``einsum`` (N4): the product runs in the canonical contraction kernel,
whose order for each output element is a fixed function of ``K = Cg * prod(window)``
(blocks of 256 FMA chains, ``docs/numerics.md``).

The patches are never built. The compiled ``conv_gemm`` packs, block by block, the rows
of the patch matrix it is about to use from the padded input, through two offset tables
(``rowoff`` for the output positions, ``coloff`` for the ``(c, *w)`` terms). Padding and
``lhs_dilation`` zeros are real zeros of the padded input, multiplied like any other
element, so an infinite or NaN weight gives the NaN the einsum would.
"""

from __future__ import annotations

import math

import numpy as np

from . import _native
from ._support import num_threads
from .contraction import _FLOATS, _bmm
from .windows import dilate_pad, out_shape


def conv(lhs: np.ndarray, rhs: np.ndarray, window_strides, padding, lhs_dilation,
         rhs_dilation, feature_group_count: int, batch_group_count: int,
         out_dtype) -> np.ndarray:
    """``lax.conv_general_dilated`` on operands in canonical layout.

    Arguments:
        lhs: the input, ``(N, C, *spatial)``, any strides (it is padded in its own memory
            order, so a transposed channels-last input is not transposed back).
        rhs: the kernel, ``(O, C // feature_group_count, *window)``.
        window_strides, lhs_dilation, rhs_dilation: one int per spatial axis.
        padding: one ``(low, high)`` pair per spatial axis (negative crops).
        feature_group_count, batch_group_count: as in ``lax.conv_general_dilated`` (at
            most one above 1).
        out_dtype: the result dtype; both operands are converted to it first.

    Returns:
        ``(N // batch_group_count, O, *out_spatial)`` of ``out_dtype``, laid out
        channels-last in memory when there is one group.

    Example:
        >>> x, w = np.ones((1, 2, 5), np.float32), np.ones((3, 2, 3), np.float32)
        >>> conv(x, w, [1], [(0, 0)], [1], [1], 1, 1, np.float32)[0, 0].tolist()
        [6.0, 6.0, 6.0]
    """
    out_dtype = np.dtype(out_dtype)
    compute = np.dtype(np.float32) if out_dtype == np.float16 else out_dtype
    # Pad in the operand's own memory order (an NHWC input stays channels-last), then
    # view it as (N, C, *spatial): the offsets below follow any strides.
    order = sorted(range(lhs.ndim), key=lambda a: -abs(lhs.strides[a]))
    pads, dilation = [(0, 0), (0, 0), *padding], [1, 1, *lhs_dilation]
    buffer = dilate_pad(lhs.transpose(order).astype(compute, copy=False),
                        [pads[a] for a in order], [dilation[a] for a in order])
    xp = buffer.transpose(np.argsort(order))
    rhs = rhs.astype(compute, copy=False)
    n, c = xp.shape[:2]
    o, window = rhs.shape[0], rhs.shape[2:]
    groups = feature_group_count * batch_group_count
    cg, ng, og = c // feature_group_count, n // batch_group_count, o // groups
    strides = np.array(xp.strides) // xp.itemsize  # of N, C, then each spatial axis
    out_spatial = out_shape(xp.shape[2:], window, window_strides, rhs_dilation)
    # rowoff over (n, *y), coloff over (c, *w), both row-major.
    rowoff = np.arange(ng, dtype=np.int64) * strides[0]
    coloff = np.arange(cg, dtype=np.int64) * strides[1]
    for i, (y, w) in enumerate(zip(out_spatial, window, strict=True)):
        step = strides[i + 2]
        rowoff = (rowoff[:, None] + np.arange(y) * (window_strides[i] * step)).ravel()
        coloff = (coloff[:, None] + np.arange(w) * (rhs_dilation[i] * step)).ravel()
    gstride = int(cg * strides[1] if feature_group_count > 1 else ng * strides[0])
    # The gather order of each block of 256 terms: by increasing offset (memory order).
    blocks = [np.argsort(coloff[i:i + 256], kind="stable") for i in range(0, coloff.size, 256)]
    columns = np.concatenate([coloff, *blocks]).astype(np.int64)
    b = rhs.reshape(groups, og, cg * math.prod(window)).transpose(0, 2, 1)
    if compute in _FLOATS:
        out = np.empty((groups, rowoff.size, og), compute)
        _native.conv_gemm(buffer, gstride, rowoff, columns, b, out, num_threads())
    else:  # exact integer arithmetic or complex parts: the explicit patches, in order
        flat = buffer.reshape(-1)
        index = rowoff[:, None] + coloff[None, :]
        a = np.stack([flat[g * gstride + index] for g in range(groups)])
        out = _bmm(a, np.ascontiguousarray(b))
    # (G, N, *y, O/G) -> (N, O, *y): a view (channels-last in memory) when G = 1
    out = out.reshape(groups, ng, *out_spatial, og)
    out = np.moveaxis(out, (0, out.ndim - 1), (1, 2)).reshape(ng, o, *out_spatial)
    return out.astype(out_dtype, copy=False)

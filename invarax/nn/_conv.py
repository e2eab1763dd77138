"""``Conv``, ``Conv1d``, ``Conv2d``, ``Conv3d``: convolution as patches and one contraction.

invarax has no convolution primitive. A convolution moves the channels last, gathers
every patch of the (padded) input with one indexing operation (constant index arrays
``o * stride + k * dilation`` per spatial axis), and contracts the patches with the weight
in one ``dot_general`` over the kernel positions and the input channels of a group. So
its reduction runs in the canonical contraction kernel: each output element sums
``prod(kernel_size) * in_channels / groups`` products in one fixed order (the kernel taps
in row-major order, outermost, then the channels), whatever the batch size or layout; and
its gradients and batching rules are those of indexing and ``dot_general``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from .. import lax, random
from .. import numpy as jnp
from ..module import Module, field
from ._misc import check_key, float_dtype, uniform_init

_PAD_MODES = {"ZEROS": "constant", "REFLECT": "reflect", "REPLICATE": "edge",
              "CIRCULAR": "wrap"}


class Conv(Module):
    """An ``N``-dimensional convolution (cross-correlation), as ``equinox.nn.Conv``.

    The weight has shape ``(out_channels, in_channels // groups, *kernel_size)`` and the
    bias ``(out_channels, 1, ..., 1)``; both are uniform in ``[-lim, lim)`` with
    ``lim = 1 / sqrt(in_channels // groups * prod(kernel_size))``, from
    ``random.split(key, 2)``, so a key gives Equinox's initial parameters bit for bit.

    Beyond Equinox, which takes one input of shape ``(in_channels, *spatial)``, the input
    may carry leading batch dimensions; every example has bitwise the bits it has alone or
    under ``vmap``.

    Arguments:
        num_spatial_dims: the number of spatial axes ``N``.
        in_channels: the number of input channels.
        out_channels: the number of output channels.
        kernel_size: an int or ``N`` ints.
        stride: an int or ``N`` ints.
        padding: an int, ``N`` ints, ``N`` ``(low, high)`` pairs, or ``"VALID"``,
            ``"SAME"`` or ``"SAME_LOWER"`` (as ``lax.conv_general_dilated`` pads).
        dilation: the kernel dilation, an int or ``N`` ints.
        groups: split the channels into this many groups, each convolved separately.
        use_bias: add a bias per output channel.
        padding_mode: ``"ZEROS"``, ``"REFLECT"``, ``"REPLICATE"`` or ``"CIRCULAR"``.
        dtype: the parameters' dtype (default float32, float64 with x64 on).
        key: a PRNG key (keyword only), e.g. ``invarax.random.key(0)``.

    Returns:
        The layer; call it on ``(..., in_channels, *spatial)``.

    Example:
        >>> conv = Conv(1, 2, 4, kernel_size=3, key=invarax.random.key(0))
        >>> conv(jnp.ones((2, 10))).shape
        (4, 8)
    """

    num_spatial_dims: int = field(static=True)
    weight: object
    bias: object
    in_channels: int = field(static=True)
    out_channels: int = field(static=True)
    kernel_size: tuple = field(static=True)
    stride: tuple = field(static=True)
    padding: object = field(static=True)
    dilation: tuple = field(static=True)
    groups: int = field(static=True)
    use_bias: bool = field(static=True)
    padding_mode: str = field(static=True)

    def __init__(self, num_spatial_dims, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, dilation=1, groups=1, use_bias=True, padding_mode="ZEROS",
                 dtype=None, *, key=None):
        name = _layer_name(num_spatial_dims)
        key = check_key(name, key)
        n = num_spatial_dims
        kernel_size = _ints(name, "kernel_size", kernel_size, n, minimum=1)
        stride = _ints(name, "stride", stride, n, minimum=1)
        dilation = _ints(name, "dilation", dilation, n, minimum=1)
        for arg, value in (("in_channels", in_channels), ("out_channels", out_channels),
                           ("groups", groups)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: {arg} must be a positive int, got {value!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                f"must both be divisible by groups ({groups})"
            )
        dtype = float_dtype(dtype)
        wkey, bkey = random.split(key, 2)
        fan_in = in_channels // groups * math.prod(kernel_size)
        lim = 1 / math.sqrt(fan_in)
        self.weight = uniform_init(wkey, (out_channels, in_channels // groups, *kernel_size),
                                   dtype, lim)
        self.bias = (uniform_init(bkey, (out_channels,) + (1,) * n, dtype, lim)
                     if use_bias else None)
        self.num_spatial_dims = n
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = _padding(name, padding, n)
        self.dilation = dilation
        self.groups = groups
        self.use_bias = use_bias
        mode = str(padding_mode).upper()
        if mode not in _PAD_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {sorted(_PAD_MODES)}, "
                             f"got {padding_mode!r}")
        self.padding_mode = mode

    def __call__(self, x, *, key=None):
        """Convolve ``x`` with the weight (and add the bias).

        Arguments:
            x: an array of shape ``(..., in_channels, *spatial)``.
            key: ignored (for the common layer signature).

        Returns:
            An array of shape ``(..., out_channels, *out_spatial)``, where each output
            size is ``(padded - dilation * (kernel - 1) - 1) // stride + 1``.

        Example:
            >>> conv = Conv1d(1, 1, 2, use_bias=False, key=invarax.random.key(0))
            >>> conv = invarax.tree_at(lambda c: c.weight, conv, jnp.ones((1, 1, 2)))
            >>> conv(jnp.array([[1.0, 2.0, 3.0]]))
            Array([[3., 5.]], dtype=float32)
        """
        del key
        x = jnp.asarray(x)
        n = self.num_spatial_dims
        if x.ndim < n + 1 or x.shape[-n - 1] != self.in_channels:
            raise ValueError(
                f"{_layer_name(n)} expects an input of shape (in_channels, "
                f"{', '.join('spatial' for _ in range(n))}) with in_channels = "
                f"{self.in_channels}, optionally with leading batch dimensions (rank "
                f"{n + 1} or more); got shape {tuple(x.shape)}. Check the channel axis: "
                "channels come first, before the spatial axes."
            )
        batch = x.ndim - n - 1
        dtype = jnp.result_type(x.dtype, self.weight.dtype)
        x = self._pad(x.astype(dtype), batch)
        # channels last, then one gather of every patch: (*batch, *out, *kernel, C)
        x = jnp.moveaxis(x, batch, -1)
        batch_shape, spatial = x.shape[:batch], x.shape[batch:batch + n]
        rows = _patch_rows(math.prod(batch_shape), spatial, self.kernel_size, self.stride,
                           self.dilation)
        x = jnp.take(x.reshape(-1, self.in_channels), rows, axis=0, mode="clip")
        x = x.reshape(*batch_shape, *x.shape[1:])
        g, cg = self.groups, self.in_channels // self.groups
        x = x.reshape(*x.shape[:-1], g, cg)
        w = self.weight.astype(dtype).reshape(g, self.out_channels // g, cg,
                                              *self.kernel_size)
        kernel_axes = tuple(range(batch + n, batch + 2 * n))
        contract = ((*kernel_axes, batch + 2 * n + 1), (*range(3, n + 3), 2))
        y = lax.dot_general(x, w, (contract, ((batch + 2 * n,), (0,))))
        # (G, *batch, *out, O/G) -> (*batch, O, *out)
        y = jnp.moveaxis(y, (0, y.ndim - 1), (batch, batch + 1))
        y = y.reshape(*y.shape[:batch], self.out_channels, *y.shape[batch + 2:])
        if self.bias is not None:
            y = y + self.bias
        return y

    def _pad(self, x, batch):
        spatial = x.shape[batch + 1:]
        if isinstance(self.padding, str):
            window = [d * (k - 1) + 1 for k, d in zip(self.kernel_size, self.dilation,
                                                       strict=True)]
            pads = _string_pads(self.padding, spatial, window, self.stride)
        else:
            pads = self.padding
        for size, k, d, (lo, hi) in zip(spatial, self.kernel_size, self.dilation, pads,
                                        strict=True):
            if size + lo + hi < d * (k - 1) + 1:
                raise ValueError(
                    f"{_layer_name(self.num_spatial_dims)}: the padded input "
                    f"{tuple(x.shape[batch + 1:])} with padding {tuple(pads)} is smaller "
                    f"than the dilated kernel {self.kernel_size} (dilation "
                    f"{self.dilation}); pass a larger input or more padding"
                )
        if all(p == (0, 0) for p in pads):
            return x
        return jnp.pad(x, [(0, 0)] * (batch + 1) + [tuple(p) for p in pads],
                       mode=_PAD_MODES[self.padding_mode])


class _FixedRankConv(Conv):
    """``Conv`` with the number of spatial dimensions fixed by the subclass (``_rank``)."""

    _rank: ClassVar[int]

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, use_bias=True, padding_mode="ZEROS", dtype=None, *,
                 key=None):
        super().__init__(self._rank, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, use_bias, padding_mode, dtype, key=key)


class Conv1d(_FixedRankConv):
    """A 1-d convolution: ``Conv`` with ``num_spatial_dims=1``, as ``equinox.nn.Conv1d``.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, use_bias,
        padding_mode, dtype, key: as for ``Conv``.

    Returns:
        The layer; call it on ``(..., in_channels, length)``.

    Example:
        >>> Conv1d(3, 8, 5, padding="SAME", key=invarax.random.key(0))(jnp.ones((3, 20))).shape
        (8, 20)
    """

    _rank = 1


class Conv2d(_FixedRankConv):
    """A 2-d convolution: ``Conv`` with ``num_spatial_dims=2``, as ``equinox.nn.Conv2d``.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, use_bias,
        padding_mode, dtype, key: as for ``Conv``.

    Returns:
        The layer; call it on ``(..., in_channels, height, width)``.

    Example:
        >>> conv = Conv2d(3, 8, 3, stride=2, padding=1, key=invarax.random.key(0))
        >>> conv(jnp.ones((3, 32, 32))).shape
        (8, 16, 16)
    """

    _rank = 2


class Conv3d(_FixedRankConv):
    """A 3-d convolution: ``Conv`` with ``num_spatial_dims=3``, as ``equinox.nn.Conv3d``.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, use_bias,
        padding_mode, dtype, key: as for ``Conv``.

    Returns:
        The layer; call it on ``(..., in_channels, depth, height, width)``.

    Example:
        >>> Conv3d(1, 2, 2, key=invarax.random.key(0))(jnp.ones((1, 3, 3, 3))).shape
        (2, 2, 2, 2)
    """

    _rank = 3


def _layer_name(n):
    return f"Conv{n}d" if n in (1, 2, 3) else "Conv"


def _ints(layer, name, value, n, minimum):
    values = tuple(value) if isinstance(value, Sequence) else (value,) * n
    if len(values) != n or not all(isinstance(v, int) and not isinstance(v, bool)
                                   and v >= minimum for v in values):
        raise ValueError(f"{layer}: {name} must be an int >= {minimum} or {n} such ints, "
                         f"got {value!r}")
    return values


def _padding(layer, padding, n):
    """Equinox's padding forms as ``N`` ``(low, high)`` pairs, or an upper-case string."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "SAME_LOWER", "VALID"):
            raise ValueError(f"{layer}: a padding string must be 'SAME', 'SAME_LOWER' or "
                             f"'VALID', got {padding!r}")
        return mode
    if isinstance(padding, int) and not isinstance(padding, bool):
        pads = ((padding, padding),) * n
    elif isinstance(padding, Sequence) and len(padding) == n:
        pads = tuple(tuple(p) if isinstance(p, Sequence) else (p, p) for p in padding)
    else:
        pads = None
    if pads is None or not all(len(p) == 2 and all(isinstance(v, int) and v >= 0 for v in p)
                               for p in pads):
        raise ValueError(
            f"{layer}: padding must be a string ('SAME', 'SAME_LOWER', 'VALID'), an int, "
            f"{n} ints or {n} (low, high) pairs of non-negative ints; got {padding!r}"
        )
    return pads


def _string_pads(mode, spatial, window, stride):
    """``lax.padtype_to_pads``: the ``(low, high)`` pads of ``"SAME"`` and friends."""
    if mode == "VALID":
        return ((0, 0),) * len(spatial)
    pads = []
    for size, w, s in zip(spatial, window, stride, strict=True):
        total = max((-(-size // s) - 1) * s + w - size, 0)
        low = total // 2 if mode == "SAME" else total - total // 2
        pads.append((low, total - low))
    return tuple(pads)


def _patch_rows(batch_size, spatial, kernel, stride, dilation):
    """``int32[batch, *out, *kernel]``: the row of each patch element in ``x.reshape(-1, C)``.

    ``x`` is ``(*batch, *spatial, C)``; output position ``o`` and kernel tap ``k`` read the
    input position ``o * stride + k * dilation`` on each spatial axis.
    """
    n = len(spatial)
    out = [(size - d * (k - 1) - 1) // s + 1
           for size, k, s, d in zip(spatial, kernel, stride, dilation, strict=True)]
    rows = np.arange(batch_size).reshape((batch_size,) + (1,) * (2 * n)) * math.prod(spatial)
    for i in range(n):
        o_shape, k_shape = [1] * (2 * n + 1), [1] * (2 * n + 1)
        o_shape[1 + i], k_shape[1 + n + i] = out[i], kernel[i]
        positions = (np.arange(out[i]).reshape(o_shape) * stride[i]
                     + np.arange(kernel[i]).reshape(k_shape) * dilation[i])
        rows = rows + positions * math.prod(spatial[i + 1:])
    if rows.size and rows.max() > np.iinfo(np.int32).max:
        return rows
    return rows.astype(np.int32)

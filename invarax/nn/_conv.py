"""``Conv``, ``Conv1d/2d/3d``, ``ConvTranspose``, ``ConvTranspose1d/2d/3d``, as Equinox's.

Each layer is one ``lax.conv_general_dilated``, computed by the canonical convolution
kernel: every output element is the contraction of its window, terms in (input channel,
window position) order, bitwise the ``einsum`` of the explicit patches with the weight,
whatever the batch size or layout (``docs/numerics.md``, Convolutions). Leading batch
dimensions are merged into the convolution's batch axis, so every example has the bits it
has alone or under ``vmap``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

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
        batch_shape = x.shape[:batch]
        x = x.astype(dtype).reshape((math.prod(batch_shape), *x.shape[batch:]))
        x, pads = self._pad(x)
        y = lax.conv_general_dilated(x, self.weight.astype(dtype), self.stride, pads,
                                     rhs_dilation=self.dilation,
                                     feature_group_count=self.groups)
        y = y.reshape(batch_shape + y.shape[1:])
        if self.bias is not None:
            y = y + self.bias
        return y

    def _pad(self, x):
        """``x`` (N, C, *spatial) padded by ``padding_mode`` unless it is ``"ZEROS"``, and
        the zero padding left to the convolution."""
        spatial = x.shape[2:]
        if isinstance(self.padding, str):
            window = [d * (k - 1) + 1 for k, d in zip(self.kernel_size, self.dilation,
                                                       strict=True)]
            pads = tuple(lax.padtype_to_pads(spatial, window, self.stride, self.padding))
        else:
            pads = self.padding
        for size, k, d, (lo, hi) in zip(spatial, self.kernel_size, self.dilation, pads,
                                        strict=True):
            if size + lo + hi < d * (k - 1) + 1:
                raise ValueError(
                    f"{_layer_name(self.num_spatial_dims)}: the padded input "
                    f"{tuple(spatial)} with padding {tuple(pads)} is smaller than the "
                    f"dilated kernel {self.kernel_size} (dilation {self.dilation}); pass a "
                    "larger input or more padding"
                )
        if self.padding_mode == "ZEROS" or all(p == (0, 0) for p in pads):
            return x, pads
        x = jnp.pad(x, [(0, 0), (0, 0), *(tuple(p) for p in pads)],
                    mode=_PAD_MODES[self.padding_mode])
        return x, ((0, 0),) * len(pads)


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


class ConvTranspose(Module):
    """An ``N``-dimensional transposed convolution, as ``equinox.nn.ConvTranspose``.

    The weight has shape ``(out_channels, in_channels // groups, *kernel_size)`` and the
    bias ``(out_channels, 1, ..., 1)``, uniform in ``[-lim, lim)`` with
    ``lim = 1 / sqrt(in_channels // groups * prod(kernel_size))`` from
    ``random.split(key, 2)``: a key gives Equinox's initial parameters bit for bit. The
    layer is one ``lax.conv_general_dilated`` with ``lhs_dilation=stride`` and the
    transposed padding ``dilation * (kernel - 1) - padding`` (plus ``output_padding`` at the
    end), so it has the connectivity of the ``Conv`` with the same arguments, in reverse.
    Beyond Equinox, the input may carry leading batch dimensions.

    Arguments:
        num_spatial_dims, in_channels, out_channels, kernel_size, stride, dilation, groups,
        use_bias, dtype, key: as for ``Conv``.
        padding: the padding of the corresponding forward ``Conv`` (an int, ``N`` ints,
            ``N`` pairs, ``"VALID"``, ``"SAME"`` or ``"SAME_LOWER"``).
        output_padding: an int or ``N`` ints, each below its stride: extra elements at the
            end of each axis (which of the input sizes a strided ``Conv`` maps to one
            output size).
        padding_mode: ``"ZEROS"``, or ``"CIRCULAR"`` with ``"SAME"``/``"SAME_LOWER"``
            padding and no output padding.

    Returns:
        The layer; call it on ``(..., in_channels, *spatial)``.

    Example:
        >>> up = ConvTranspose(2, 4, 2, kernel_size=3, stride=2, padding=1,
        ...                    output_padding=1, key=invarax.random.key(0))
        >>> up(jnp.ones((4, 5, 5))).shape
        (2, 10, 10)
    """

    num_spatial_dims: int = field(static=True)
    weight: object
    bias: object
    in_channels: int = field(static=True)
    out_channels: int = field(static=True)
    kernel_size: tuple = field(static=True)
    stride: tuple = field(static=True)
    padding: object = field(static=True)
    output_padding: tuple = field(static=True)
    dilation: tuple = field(static=True)
    groups: int = field(static=True)
    use_bias: bool = field(static=True)
    padding_mode: str = field(static=True)

    def __init__(self, num_spatial_dims, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, output_padding=0, dilation=1, groups=1, use_bias=True,
                 padding_mode="ZEROS", dtype=None, *, key=None):
        name = f"ConvTranspose{num_spatial_dims}d" if num_spatial_dims in (1, 2, 3) else \
            "ConvTranspose"
        key = check_key(name, key)
        n = num_spatial_dims
        kernel_size = _ints(name, "kernel_size", kernel_size, n, minimum=1)
        stride = _ints(name, "stride", stride, n, minimum=1)
        dilation = _ints(name, "dilation", dilation, n, minimum=1)
        output_padding = _ints(name, "output_padding", output_padding, n, minimum=0)
        if any(o >= s for o, s in zip(output_padding, stride, strict=True)):
            raise ValueError(f"{name}: output_padding {output_padding} must be below the "
                             f"stride {stride} on every axis")
        for arg, value in (("in_channels", in_channels), ("out_channels", out_channels),
                           ("groups", groups)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: {arg} must be a positive int, got {value!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                f"must both be divisible by groups ({groups})"
            )
        padding = _padding(name, padding, n)
        mode = str(padding_mode).upper()
        if mode in ("REFLECT", "REPLICATE"):
            raise NotImplementedError(f"{name}: padding_mode {mode!r} is not implemented "
                                      "(as in Equinox); use 'ZEROS' or 'CIRCULAR'")
        if mode not in _PAD_MODES:
            raise ValueError(f"{name}: padding_mode must be 'ZEROS' or 'CIRCULAR', got "
                             f"{padding_mode!r}")
        if mode == "CIRCULAR" and (padding not in ("SAME", "SAME_LOWER")
                                   or any(output_padding)):
            raise NotImplementedError(f"{name}: padding_mode 'CIRCULAR' needs padding 'SAME' "
                                      "or 'SAME_LOWER' and no output_padding (as Equinox)")
        dtype = float_dtype(dtype)
        wkey, bkey = random.split(key, 2)
        lim = 1 / math.sqrt(in_channels // groups * math.prod(kernel_size))
        self.weight = uniform_init(wkey, (out_channels, in_channels // groups, *kernel_size),
                                   dtype, lim)
        self.bias = (uniform_init(bkey, (out_channels,) + (1,) * n, dtype, lim)
                     if use_bias else None)
        self.num_spatial_dims = n
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.output_padding = output_padding
        self.dilation = dilation
        self.groups = groups
        self.use_bias = use_bias
        self.padding_mode = mode

    def _padding_transpose(self):
        """The padding of the equivalent convolution (Equinox's; Relationship 14 of
        arXiv:1603.07285)."""
        pads = []
        for k, s, a, d, i in zip(self.kernel_size, self.stride, self.output_padding,
                                 self.dilation, range(self.num_spatial_dims), strict=True):
            if self.padding == "VALID":
                p0 = p1 = 0
            elif isinstance(self.padding, str):
                total = d * (k - 1) - s + a + 1
                a, total = (-total, 0) if total < 0 else (0, total)
                p0 = (total + (self.padding == "SAME_LOWER")) // 2
                p1 = total - p0
            else:
                p0, p1 = self.padding[i]
            pads.append((d * (k - 1) - p0, d * (k - 1) - p1 + a))
        return tuple(pads)

    def __call__(self, x, *, key=None):
        """Apply the transposed convolution (and add the bias).

        Arguments:
            x: an array of shape ``(..., in_channels, *spatial)``.
            key: ignored (for the common layer signature).

        Returns:
            An array of shape ``(..., out_channels, *out_spatial)``.

        Example:
            >>> up = ConvTranspose1d(1, 1, 2, stride=2, use_bias=False,
            ...                      key=invarax.random.key(0))
            >>> up = invarax.tree_at(lambda c: c.weight, up, jnp.ones((1, 1, 2)))
            >>> up(jnp.array([[1.0, 2.0]]))
            Array([[1., 1., 2., 2.]], dtype=float32)
        """
        del key
        x = jnp.asarray(x)
        n = self.num_spatial_dims
        if x.ndim < n + 1 or x.shape[-n - 1] != self.in_channels:
            raise ValueError(
                f"ConvTranspose{n}d expects an input of shape (in_channels, "
                f"{', '.join('spatial' for _ in range(n))}) with in_channels = "
                f"{self.in_channels}, optionally with leading batch dimensions; got shape "
                f"{tuple(x.shape)}"
            )
        batch = x.ndim - n - 1
        dtype = jnp.result_type(x.dtype, self.weight.dtype)
        batch_shape = x.shape[:batch]
        x = x.astype(dtype).reshape((math.prod(batch_shape), *x.shape[batch:]))
        pads = self._padding_transpose()
        if self.padding_mode == "CIRCULAR":
            wrap = [(lo // s, hi // s) for (lo, hi), s in zip(pads, self.stride, strict=True)]
            x = jnp.pad(x, [(0, 0), (0, 0), *wrap], mode="wrap")
            pads = tuple((lo % s, hi % s) for (lo, hi), s in zip(pads, self.stride,
                                                                 strict=True))
        y = lax.conv_general_dilated(x, self.weight.astype(dtype), (1,) * n, pads,
                                     lhs_dilation=self.stride, rhs_dilation=self.dilation,
                                     feature_group_count=self.groups)
        y = y.reshape(batch_shape + y.shape[1:])
        if self.bias is not None:
            y = y + self.bias
        return y


class _FixedRankConvTranspose(ConvTranspose):
    """``ConvTranspose`` with the number of spatial dimensions fixed by the subclass."""

    _rank: ClassVar[int]

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups=1, use_bias=True, padding_mode="ZEROS",
                 dtype=None, *, key=None):
        super().__init__(self._rank, in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, dilation, groups, use_bias, padding_mode, dtype,
                         key=key)


class ConvTranspose1d(_FixedRankConvTranspose):
    """A 1-d transposed convolution, as ``equinox.nn.ConvTranspose1d``.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation,
        groups, use_bias, padding_mode, dtype, key: as for ``ConvTranspose``.

    Returns:
        The layer; call it on ``(..., in_channels, length)``.

    Example:
        >>> ConvTranspose1d(3, 2, 4, stride=2, key=invarax.random.key(0))(
        ...     jnp.ones((3, 5))).shape
        (2, 12)
    """

    _rank = 1


class ConvTranspose2d(_FixedRankConvTranspose):
    """A 2-d transposed convolution, as ``equinox.nn.ConvTranspose2d``.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation,
        groups, use_bias, padding_mode, dtype, key: as for ``ConvTranspose``.

    Returns:
        The layer; call it on ``(..., in_channels, height, width)``.

    Example:
        >>> ConvTranspose2d(3, 2, 3, stride=2, padding="SAME", key=invarax.random.key(0))(
        ...     jnp.ones((3, 4, 4))).shape
        (2, 8, 8)
    """

    _rank = 2


class ConvTranspose3d(_FixedRankConvTranspose):
    """A 3-d transposed convolution, as ``equinox.nn.ConvTranspose3d``.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation,
        groups, use_bias, padding_mode, dtype, key: as for ``ConvTranspose``.

    Returns:
        The layer; call it on ``(..., in_channels, depth, height, width)``.

    Example:
        >>> ConvTranspose3d(1, 2, 2, key=invarax.random.key(0))(jnp.ones((1, 3, 3, 3))).shape
        (2, 4, 4, 4)
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

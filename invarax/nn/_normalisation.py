"""``LayerNorm``, ``RMSNorm`` and ``GroupNorm``."""

from __future__ import annotations

from .. import lax
from .. import numpy as jnp
from ..module import Module, field
from ._misc import compute_dtype, float_dtype
from ._stateful import NO_STATE


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _check_shape(layer, expected, x):
    if tuple(x.shape) != expected:
        raise ValueError(
            f"{layer}(shape)(x) needs x.shape == shape = {expected}, got x.shape = "
            f"{tuple(x.shape)}. For a batch of inputs, map the layer over it: "
            f"invarax.vmap({layer.lower()})(x)."
        )


class _Normalisation(Module):
    """What LayerNorm and RMSNorm share: the fields, the parameters and the call's frame."""

    shape: tuple = field(static=True)
    eps: float = field(static=True)
    use_weight: bool = field(static=True)
    use_bias: bool = field(static=True)
    weight: object
    bias: object

    def __init__(self, shape, eps=1e-5, use_weight=True, use_bias=True, dtype=None):
        self.shape = _shape(shape)
        self.eps = eps
        self.use_weight = use_weight
        self.use_bias = use_bias
        dtype = float_dtype(dtype)
        self.weight = jnp.ones(self.shape, dtype) if use_weight else None
        self.bias = jnp.zeros(self.shape, dtype) if use_bias else None

    def __call__(self, x, state=NO_STATE, *, key=None):
        """Normalise ``x``.

        Arguments:
            x: an array of shape ``shape``.
            state: optional; if given it is returned unchanged with the output, as in
                Equinox (so the layer fits among stateful ones).
            key: ignored (for the common layer signature).

        Returns:
            The normalised array, of ``x``'s shape and dtype (and ``state``, if given).

        Example:
            >>> LayerNorm((2,), use_weight=False, use_bias=False)(jnp.array([0.0, 2.0]))
            Array([-0.999995,  0.999995], dtype=float32)
            >>> RMSNorm(1, eps=0.0)(jnp.array([-2.0]))
            Array([-1.], dtype=float32)
        """
        del key
        x = jnp.asarray(x)
        _check_shape(type(self).__name__, self.shape, x)
        dtype = compute_dtype(x)
        out_dtype, x = x.dtype, x.astype(dtype)
        out = self._normalise(x)
        if self.weight is not None:
            out = self.weight.astype(dtype) * out
        if self.bias is not None:
            out = out + self.bias.astype(dtype)
        return _with_state(out.astype(out_dtype), state)


def _with_state(out, state):
    return out if state is NO_STATE else (out, state)


class LayerNorm(_Normalisation):
    """Layer normalisation over the whole input, as ``equinox.nn.LayerNorm``.

    ``(x - mean(x)) / sqrt(var(x) + eps) * weight + bias``, computed in float32 at least
    and returned in ``x``'s dtype. The weight starts at ones and the bias at zeros.

    Arguments:
        shape: the input's shape (an int or a tuple of ints).
        eps: added to the variance.
        use_weight: multiply by a learnt weight of ``shape``.
        use_bias: add a learnt bias of ``shape``.
        dtype: the parameters' dtype (default float32, float64 with x64 on).

    Returns:
        The layer; call it on one input of ``shape`` (``vmap`` it over a batch).

    Example:
        >>> LayerNorm(2)(jnp.array([1.0, 3.0]))
        Array([-0.999995,  0.999995], dtype=float32)
    """

    def _normalise(self, x):
        mean = jnp.mean(x, keepdims=True)
        variance = jnp.maximum(0.0, jnp.var(x, keepdims=True))
        return (x - mean) * lax.rsqrt(variance + self.eps)


class RMSNorm(_Normalisation):
    """Root-mean-square normalisation, as ``equinox.nn.RMSNorm``.

    ``x / sqrt(mean(x ** 2) + eps) * weight + bias``, computed in float32 at least and
    returned in ``x``'s dtype. The weight starts at ones and the bias at zeros.

    Arguments:
        shape: the input's shape (an int or a tuple of ints).
        eps: added to the mean square.
        use_weight: multiply by a learnt weight of ``shape``.
        use_bias: add a learnt bias of ``shape``.
        dtype: the parameters' dtype (default float32, float64 with x64 on).

    Returns:
        The layer; call it on one input of ``shape`` (``vmap`` it over a batch).

    Example:
        >>> RMSNorm(2, eps=0.0)(jnp.array([3.0, 4.0]))
        Array([0.84852815, 1.1313709 ], dtype=float32)
    """

    def _normalise(self, x):
        return lax.rsqrt(jnp.mean(x ** 2) + self.eps) * x


class GroupNorm(Module):
    """Group normalisation, as ``equinox.nn.GroupNorm``.

    The channels (the input's first axis) are split into ``groups`` groups; each group is
    normalised by its own mean and variance (over its channels and all other axes), then
    scaled and shifted per channel. Computed in float32 at least, returned in ``x``'s dtype.

    Arguments:
        groups: the number of groups; it must divide ``channels``.
        channels: the number of channels (needed with ``channelwise_affine``).
        eps: added to the variance.
        channelwise_affine: learn a weight (ones) and bias (zeros) per channel.
        dtype: the parameters' dtype (default float32, float64 with x64 on).

    Returns:
        The layer; call it on one input of shape ``(channels, *spatial)``.

    Example:
        >>> GroupNorm(1, 2)(jnp.array([[1.0], [3.0]]))
        Array([[-0.999995],
               [ 0.999995]], dtype=float32)
    """

    weight: object
    bias: object
    groups: int = field(static=True)
    channels: object = field(static=True)
    eps: float = field(static=True)
    channelwise_affine: bool = field(static=True)

    def __init__(self, groups, channels=None, eps=1e-5, channelwise_affine=True, dtype=None):
        if channels is not None and channels % groups != 0:
            raise ValueError(f"GroupNorm: groups={groups} must divide channels={channels}")
        if channels is None and channelwise_affine:
            raise ValueError("GroupNorm: pass channels= with channelwise_affine=True (the "
                             "weight and bias have one entry per channel)")
        dtype = float_dtype(dtype)
        self.groups = groups
        self.channels = channels
        self.eps = eps
        self.channelwise_affine = channelwise_affine
        self.weight = jnp.ones(channels, dtype) if channelwise_affine else None
        self.bias = jnp.zeros(channels, dtype) if channelwise_affine else None

    def __call__(self, x, state=NO_STATE, *, key=None):
        """Normalise one input ``x`` of shape ``(channels, *spatial)``.

        Arguments:
            x: the input.
            state: optional; returned unchanged with the output when given.
            key: ignored.

        Returns:
            The normalised array of ``x``'s shape and dtype (and ``state``, if given).
        """
        del key
        x = jnp.asarray(x)
        channels = x.shape[0] if x.ndim else None
        if channels is None or channels % self.groups or (
                self.channels is not None and channels != self.channels):
            raise ValueError(
                f"GroupNorm({self.groups}, {self.channels}) needs an input of shape "
                f"(channels, ...) whose channels the {self.groups} groups divide, got "
                f"{tuple(x.shape)}; for a batch use invarax.vmap(layer)")
        out_dtype = x.dtype
        x = x.astype(compute_dtype(x))
        y = x.reshape(self.groups, -1)
        mean = jnp.mean(y, axis=1, keepdims=True)
        variance = jnp.maximum(0.0, jnp.var(y, axis=1, keepdims=True))
        out = ((y - mean) * lax.rsqrt(variance + self.eps)).reshape(x.shape)
        if self.channelwise_affine:
            shape = (-1,) + (1,) * (x.ndim - 1)
            out = (self.weight.astype(x.dtype).reshape(shape) * out
                   + self.bias.astype(x.dtype).reshape(shape))
        return _with_state(out.astype(out_dtype), state)

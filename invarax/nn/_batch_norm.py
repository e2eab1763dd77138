"""``BatchNorm``: normalisation by statistics over a ``vmap``'s batch axis, as Equinox's."""

from __future__ import annotations

import warnings

from .. import lax
from .. import numpy as jnp
from ..module import field
from ._misc import float_dtype
from ._stateful import StatefulLayer, StateIndex


class BatchNorm(StatefulLayer):
    """Batch normalisation, as ``equinox.nn.BatchNorm``: call it under ``vmap(axis_name=...)``.

    Each channel ``x[c]`` is normalised by its mean and variance over its other axes and
    over the batch, which the layer reaches with ``lax.pmean(..., axis_name)``: it must run
    inside ``vmap``/``filter_vmap`` with that ``axis_name``. In training mode the running
    statistics in the ``State`` are updated; in inference mode they are used.

    Two modes, as Equinox's: ``"ema"`` (the running statistics are an exponential moving
    average, started from the first batch's) and ``"batch"`` (a debiased moving average,
    ``hidden / (1 - momentum ** count)``). Left unset, the mode is ``"ema"`` with Equinox's
    warning that ``"batch"`` is recommended for new code.

    Arguments:
        input_size: the number of channels (the input's first axis).
        axis_name: the ``vmap`` axis name (or names) to take batch statistics over.
        eps: added to the variance.
        channelwise_affine: learn a weight (ones) and bias (zeros) per channel.
        momentum: the moving averages' decay.
        inference: the default mode: True uses the running statistics.
        dtype: the parameters' and statistics' dtype (default float32; float64 with x64).
        mode: ``"ema"`` or ``"batch"``.

    Returns:
        The layer; build it with its state by ``nn.make_with_state(nn.BatchNorm)(...)``.

    Example:
        >>> bn, state = nn.make_with_state(nn.BatchNorm)(1, "batch", mode="ema")
        >>> f = invarax.vmap(bn, in_axes=(0, None), out_axes=(0, None), axis_name="batch")
        >>> y, state = f(jnp.array([[1.0], [3.0]]), state)
        >>> y[:, 0]
        Array([-0.999995,  0.999995], dtype=float32)
        >>> state.get(bn.ema_state_index)  # the first batch's mean and variance
        (Array([2.], dtype=float32), Array([1.], dtype=float32))
    """

    weight: object
    bias: object
    ema_first_time_index: object
    ema_state_index: object
    batch_counter: object
    batch_state_index: object
    axis_name: object
    inference: bool
    input_size: int = field(static=True)
    eps: float = field(static=True)
    channelwise_affine: bool = field(static=True)
    momentum: float = field(static=True)
    mode: str = field(static=True)

    def __init__(self, input_size, axis_name, eps=1e-5, channelwise_affine=True,
                 momentum=0.99, inference=False, dtype=None, mode="legacy"):
        if mode == "legacy":
            mode = "ema"
            warnings.warn(
                "When BatchNorm(..., mode=...) is unspecified it defaults to 'ema', as in "
                "Equinox; for new code pass mode='batch' (see "
                "https://github.com/patrick-kidger/equinox/issues/659).", UserWarning,
                stacklevel=3)
        if mode not in ("ema", "batch"):
            raise ValueError(f"BatchNorm: mode must be 'ema' or 'batch', got {mode!r}")
        dtype = float_dtype(dtype)
        self.mode = mode
        self.weight = jnp.ones((input_size,), dtype) if channelwise_affine else None
        self.bias = jnp.zeros((input_size,), dtype) if channelwise_affine else None
        self.ema_first_time_index = self.ema_state_index = None
        self.batch_counter = self.batch_state_index = None
        if mode == "ema":
            self.ema_first_time_index = StateIndex(jnp.array(True))
            self.ema_state_index = StateIndex((jnp.zeros((input_size,), dtype),
                                               jnp.zeros((input_size,), dtype)))
        else:
            self.batch_counter = StateIndex(jnp.array(0))
            self.batch_state_index = StateIndex((jnp.zeros((input_size,), dtype),
                                                 jnp.ones((input_size,), dtype)))
        self.inference = inference
        self.axis_name = axis_name
        self.input_size = input_size
        self.eps = eps
        self.channelwise_affine = channelwise_affine
        self.momentum = momentum

    def _stats(self, x):
        """Per-channel mean and variance over the other axes and the batch."""
        axes = tuple(range(1, x.ndim))
        mean = lax.pmean(jnp.mean(x, axis=axes), self.axis_name)
        centred = x - mean.reshape((-1,) + (1,) * (x.ndim - 1))
        var = lax.pmean(jnp.mean(centred * jnp.conj(centred), axis=axes), self.axis_name)
        return mean, jnp.maximum(0.0, var)

    def __call__(self, x, state, *, key=None, inference=None):
        """Normalise one example ``x`` of shape ``(input_size, *spatial)``.

        Arguments:
            x: one example; the batch is the enclosing ``vmap``'s axis ``axis_name``.
            state: the ``State`` holding the running statistics.
            key: ignored (for the common layer signature).
            inference: overrides the layer's ``inference`` flag when not None.

        Returns:
            ``(y, state)``: ``x`` normalised, and the updated state.
        """
        del key
        x = jnp.asarray(x)
        if x.ndim < 1 or x.shape[0] != self.input_size:
            raise ValueError(
                f"BatchNorm({self.input_size}) needs one example of shape (input_size, ...) "
                f"= ({self.input_size}, ...), got {tuple(x.shape)}; map the layer over the "
                "batch with vmap(..., axis_name=...)")
        if inference is None:
            inference = self.inference
        if self.mode == "ema":
            if inference:
                mean, var = state.get(self.ema_state_index)
            else:
                first = state.get(self.ema_first_time_index)
                state = state.set(self.ema_first_time_index, jnp.array(False))
                batch_mean, batch_var = self._stats(x)
                run_mean, run_var = state.get(self.ema_state_index)
                m = self.momentum
                mean = lax.select(first, batch_mean, (1 - m) * batch_mean + m * run_mean)
                var = lax.select(first, batch_var, (1 - m) * batch_var + m * run_var)
                state = state.set(self.ema_state_index, (mean, var))
        else:
            counter = state.get(self.batch_counter)
            hidden_mean, hidden_var = state.get(self.batch_state_index)
            if inference:
                scale = jnp.where(counter == 0, 1, 1 - self.momentum ** counter)
                mean, var = hidden_mean / scale, hidden_var / scale
            else:
                mean, var = self._stats(x)
                m = self.momentum
                state = state.set(self.batch_counter, counter + 1)
                state = state.set(self.batch_state_index,
                                  (hidden_mean * m + mean * (1 - m),
                                   hidden_var * m + var * (1 - m)))
        shape = (-1,) + (1,) * (x.ndim - 1)
        out = (x - mean.reshape(shape)) / jnp.sqrt(var.reshape(shape) + self.eps)
        if self.channelwise_affine:
            out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        return out, state

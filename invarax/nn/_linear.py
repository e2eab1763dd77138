"""``Linear`` and ``Identity``."""

from __future__ import annotations

import math

from .. import numpy as jnp
from .. import random
from ..module import Module, field
from ._misc import check_key, float_dtype, uniform_init


class Linear(Module):
    """The affine map ``x @ weight.T + bias``, as ``equinox.nn.Linear``.

    The weight has shape ``(out_features, in_features)``; weight and bias are initialised
    uniform in ``[-1/sqrt(in_features), 1/sqrt(in_features))`` from
    ``random.split(key, 2)``, so a key gives Equinox's initial parameters bit for bit.

    Beyond Equinox, which takes one example of shape ``(in_features,)``, the input may
    carry leading batch dimensions, ``(..., in_features)``. The result is bitwise
    ``x @ weight.T + bias``, and row ``i`` has the same bits whether computed alone,
    under ``vmap`` or in a batch of any size (the numerics contract, N1, N2 and N4).

    Arguments:
        in_features: the input size, or ``"scalar"`` for inputs of shape ``()``.
        out_features: the output size, or ``"scalar"`` for outputs of shape ``()``.
        use_bias: add a bias.
        dtype: the parameters' dtype (default float32, float64 with x64 on).
        key: a PRNG key (keyword only), e.g. ``invarax.random.key(0)``.

    Returns:
        The layer; call it on an array of shape ``(..., in_features)`` to get one of
        shape ``(..., out_features)``.

    Example:
        >>> linear = Linear(3, 2, key=invarax.random.key(0))
        >>> linear
        Linear(weight=f32[2,3], bias=f32[2], in_features=3, out_features=2, use_bias=True)
        >>> linear(jnp.ones((5, 3))).shape
        (5, 2)
    """

    weight: object
    bias: object
    in_features: object = field(static=True)
    out_features: object = field(static=True)
    use_bias: bool = field(static=True)

    def __init__(self, in_features, out_features, use_bias=True, dtype=None, *, key=None):
        key = check_key("Linear", key)
        _check_features("in_features", in_features)
        _check_features("out_features", out_features)
        dtype = float_dtype(dtype)
        wkey, bkey = random.split(key, 2)
        n_in = 1 if in_features == "scalar" else in_features
        n_out = 1 if out_features == "scalar" else out_features
        lim = 1.0 if n_in == 0 else 1 / math.sqrt(n_in)
        self.weight = uniform_init(wkey, (n_out, n_in), dtype, lim)
        self.bias = uniform_init(bkey, (n_out,), dtype, lim) if use_bias else None
        self.in_features = in_features
        self.out_features = out_features
        self.use_bias = use_bias

    def __call__(self, x, *, key=None):
        """Apply the layer.

        Arguments:
            x: an array of shape ``(..., in_features)`` (``(...)`` for ``"scalar"``).
            key: ignored (for the common layer signature).

        Returns:
            ``x @ weight.T + bias``, of shape ``(..., out_features)`` (``(...)`` for
            ``"scalar"``).

        Example:
            >>> linear = Linear(2, 1, key=invarax.random.key(0))
            >>> linear(jnp.zeros(2)) == linear.bias
            Array([ True], dtype=bool)
        """
        del key
        x = jnp.asarray(x)
        if self.in_features == "scalar":
            x = jnp.expand_dims(x, -1)
        elif x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(
                f"Linear expects an input of shape (in_features,) = ({self.in_features},), "
                f"or (..., {self.in_features}) with batch dimensions; got shape "
                f"{tuple(x.shape)}. Pass an input whose last axis has size "
                f"{self.in_features}, or build Linear({_last(x)}, ...)."
            )
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        if self.out_features == "scalar":
            y = jnp.squeeze(y, -1)
        return y


class Identity(Module):
    """The identity layer, as ``equinox.nn.Identity``: a placeholder that returns its input.

    Arguments:
        *args, **kwargs: ignored.

    Returns:
        The layer; calling it returns its input unchanged.

    Example:
        >>> Identity()(jnp.array([1.0, 2.0]))
        Array([1., 2.], dtype=float32)
    """

    def __init__(self, *args, **kwargs):
        del args, kwargs

    def __call__(self, x, *, key=None):
        """Return ``x`` unchanged (``key`` is ignored).

        Arguments:
            x: anything.
            key: ignored.

        Returns:
            ``x``.

        Example:
            >>> Identity()(3)
            3
        """
        del key
        return x


def _check_features(name, n):
    if n == "scalar":
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"Linear: {name} must be a non-negative int or 'scalar', got {n!r}")


def _last(x):
    return x.shape[-1] if x.ndim else "'scalar'"

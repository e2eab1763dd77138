"""Activation functions, as ``jax.nn`` has them, with JAX's formulas and derivatives."""

from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..core.config import numpy_dtype_promotion, numpy_rank_promotion
from ..module import Module
from ..numpy._promote import promote_args
from ..ops.special import erfc
from ..transforms._custom_derivatives import custom_jvp


@custom_jvp
def relu(x):
    """The rectified linear unit ``max(x, 0)``, as ``jax.nn.relu``.

    Its derivative is 0 at ``x = 0`` (as JAX's), not the 0.5 that ``maximum``'s rule gives
    at a tie.

    Arguments:
        x: an array or scalar.

    Returns:
        ``max(x, 0)`` elementwise (NaN stays NaN).

    Example:
        >>> relu(jnp.array([-1.0, 0.0, 2.0]))
        Array([0., 0., 2.], dtype=float32)
    """
    return jnp.maximum(x, 0)


relu.defjvps(lambda t, ans, x: jnp.where(jnp.greater(x, 0), t, jnp.zeros_like(t)))


def identity(x):
    """The identity, ``x`` unchanged: the default final activation of ``MLP``.

    Arguments:
        x: anything.

    Returns:
        ``x``.

    Example:
        >>> identity(jnp.array([1.0, -1.0]))
        Array([ 1., -1.], dtype=float32)
    """
    return x


def sigmoid(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``, as ``jax.nn.sigmoid`` (``lax.logistic``).

    Arguments:
        x: an array or scalar.

    Returns:
        ``1 / (1 + exp(-x))`` elementwise.

    Example:
        >>> sigmoid(jnp.array([0.0]))
        Array([0.5], dtype=float32)
    """
    (x,) = promote_args("sigmoid", x, to_inexact=True)
    return lax.logistic(x)


def silu(x):
    """The sigmoid linear unit ``x * sigmoid(x)``, as ``jax.nn.silu`` (also called swish).

    Arguments:
        x: an array or scalar.

    Returns:
        ``x * sigmoid(x)`` elementwise.

    Example:
        >>> silu(jnp.array([0.0, 1.0]))
        Array([0.       , 0.7310586], dtype=float32)
    """
    (x,) = promote_args("silu", x, to_inexact=True)
    return x * lax.logistic(x)


def softplus(x):
    """``log(1 + exp(x))`` without overflow (``logaddexp(x, 0)``), as ``jax.nn.softplus``.

    Arguments:
        x: an array or scalar.

    Returns:
        ``log(1 + exp(x))`` elementwise; about ``x`` for large ``x`` (and its derivative
        about 1), not ``inf``.

    Example:
        >>> softplus(jnp.array([0.0, 100.0]))
        Array([  0.6931472, 100.       ], dtype=float32)
    """
    return jnp.logaddexp(x, 0)


def gelu(x, approximate: bool = True):
    """The Gaussian error linear unit, as ``jax.nn.gelu`` (tanh approximation by default).

    ``approximate=True``: ``x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``;
    ``approximate=False``: ``0.5 * x * erfc(-x / sqrt(2))``, JAX's form, which keeps the
    far negative tail (tiny negative values rather than 0).

    Arguments:
        x: an array or scalar.
        approximate: use the tanh approximation.

    Returns:
        ``gelu(x)`` elementwise.

    Example:
        >>> gelu(jnp.array([0.0, 1.0]))
        Array([0.      , 0.841192], dtype=float32)
    """
    (x,) = promote_args("gelu", x, to_inexact=True)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return 0.5 * x * erfc(-x * sqrt_half)


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` over ``axis``, shifted by the maximum, as ``jax.nn.softmax``.

    Its derivative is JAX's custom rule ``y * (t - sum(y * t))``.

    Arguments:
        x: an array.
        axis: an int or a tuple of ints (default the last axis).
        where: a boolean mask of the elements to include; the others give 0.

    Returns:
        An array of ``x``'s shape whose entries over ``axis`` sum to 1.

    Example:
        >>> softmax(jnp.array([0.0, 0.0]))
        Array([0.5, 0.5], dtype=float32)
    """
    (x,) = promote_args("softmax", x, to_inexact=True)
    return _softmax(x, _axis(axis), where)


def _softmax_impl(x, axis, where):
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalised = jnp.exp(x_safe - x_max)
    result = unnormalised / jnp.sum(unnormalised, axis, where=where, keepdims=True)
    return result if where is None else jnp.where(where, result, 0)


_softmax = custom_jvp(_softmax_impl, nondiff_argnums=(1, 2))


@_softmax.defjvp
def _softmax_jvp(axis, where, primals, tangents):
    (x,), (t,) = primals, tangents
    y = _softmax(x, axis, where)
    return y, y * (t - jnp.sum(y * t, axis, where=where, keepdims=True))


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` over ``axis``, as ``jax.nn.log_softmax``.

    Arguments:
        x: an array.
        axis: an int or a tuple of ints (default the last axis).
        where: a boolean mask of the elements to include; the others give ``-inf``.

    Returns:
        An array of ``x``'s shape: the log of ``softmax(x, axis)``, computed without
        overflow.

    Example:
        >>> log_softmax(jnp.array([0.0, 0.0]))
        Array([-0.6931472, -0.6931472], dtype=float32)
    """
    (x,) = promote_args("log_softmax", x, to_inexact=True)
    axis = _axis(axis)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    return result if where is None else jnp.where(where, result, -np.inf)


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1):
    """One-hot encode integers, as ``jax.nn.one_hot``: entry ``c`` is ``x == c``.

    Arguments:
        x: an integer array of class indices (out-of-range indices give all zeros).
        num_classes: the number of classes, a Python int.
        dtype: the result's dtype (default float32, float64 with x64 on).
        axis: where the new axis of size ``num_classes`` goes.

    Returns:
        An array of shape ``x.shape`` with ``num_classes`` inserted at ``axis``.

    Example:
        >>> one_hot(jnp.array([0, 2]), 3)
        Array([[1., 0., 0.],
               [0., 0., 1.]], dtype=float32)
    """
    try:
        num_classes = int(num_classes)
    except TypeError:
        raise TypeError("one_hot: num_classes must be a Python int (static), got "
                        f"{type(num_classes).__name__}") from None
    x = jnp.asarray(x)
    dtype = dtypes.default_float() if dtype is None else np.dtype(dtype)
    out_axis = axis + x.ndim + 1 if axis < 0 else axis
    if not 0 <= out_axis <= x.ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for a result of rank "
                         f"{x.ndim + 1}")
    shape = [1] * (x.ndim + 1)
    shape[out_axis] = num_classes
    classes = lax.broadcasted_iota(x.dtype, tuple(shape), out_axis)
    return jnp.equal(jnp.expand_dims(x, out_axis), classes).astype(dtype)


def _axis(axis):
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


class PReLU(Module):
    """A parametric ReLU, as ``equinox.nn.PReLU``: ``x`` where ``x >= 0``, else ``alpha * x``.

    Arguments:
        init_alpha: the initial negative slope: a float, or an array broadcastable to the
            input (one slope per channel, say).

    Returns:
        The layer; its learnt slope is the field ``negative_slope``.

    Example:
        >>> PReLU()(jnp.array([-2.0, 3.0]))
        Array([-0.5,  3. ], dtype=float32)
    """

    negative_slope: object

    def __init__(self, init_alpha=0.25):
        self.negative_slope = jnp.asarray(init_alpha)

    def __call__(self, x, *, key=None):
        """``where(x >= 0, x, negative_slope * x)`` (``key`` is ignored, for ``Sequential``),
        with JAX's standard promotion whatever the flags say (as Equinox: an int input gives
        a float output, a slope per channel broadcasts)."""
        del key
        x = jnp.asarray(x)
        with numpy_dtype_promotion("standard"), numpy_rank_promotion("allow"):
            return jnp.where(x >= 0, x, self.negative_slope * x)

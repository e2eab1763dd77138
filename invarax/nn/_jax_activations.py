"""More of ``jax.nn``'s activations, each with JAX's formula (so the same derivatives):
``log_sigmoid``, ``elu``, ``leaky_relu``, ``relu6``, ``hard_tanh``, ``celu``, ``selu``,
``glu``, ``soft_sign``, ``hard_sigmoid``, ``hard_silu`` (``hard_swish``), ``swish``,
``mish``, ``squareplus``, ``sparse_plus``, ``sparse_sigmoid``, ``standardize``,
``log1mexp``, ``logmeanexp``.

Example:
    >>> import invarax.numpy as jnp
    >>> x = jnp.array([-2.0, 0.5, 7.0])
    >>> relu6(x), leaky_relu(x)
    (Array([0. , 0.5, 6. ], dtype=float32), Array([-0.02,  0.5 ,  7.  ], dtype=float32))
"""

from __future__ import annotations

from .. import lax
from .. import numpy as jnp
from ..scipy.special import logsumexp
from ..transforms._custom_derivatives import custom_jvp
from ._activations import sigmoid, silu, softplus

swish = silu


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-jnp.asarray(x))


def elu(x, alpha=1.0):
    """``x`` if ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def leaky_relu(x, negative_slope=1e-2):
    """``x`` if ``x >= 0``, else ``negative_slope * x``."""
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


@custom_jvp
def relu6(x):
    """``min(max(x, 0), 6)``, with derivative 0 at 0 and 6 (as JAX's)."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, jnp.zeros_like(g)))


def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]``."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    """The scaled ELU, ``scale * elu(x, alpha)`` with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def glu(x, axis=-1):
    """The gated linear unit: ``x`` split in halves ``a, b`` along ``axis``, ``a * sigmoid(b)``."""
    x = jnp.asarray(x)
    if x.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} of the input {x.shape} must have an even length")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def soft_sign(x):
    """``x / (|x| + 1)``."""
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1)


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    """``x * hard_sigmoid(x)``."""
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


def squareplus(x, b=4):
    """``(x + sqrt(x^2 + b)) / 2``."""
    x, b = jnp.asarray(x), jnp.asarray(b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x):
    """0 below -1, ``x`` above 1, ``(x + 1)^2 / 4`` between."""
    x = jnp.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """``clip(x + 1, 0, 2) / 2``."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis`` (JAX's ``"fast"`` variance
    ``mean(x^2) - mean^2`` clipped at 0, or the ``"stable"`` two-pass one)."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        else:
            variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where)
                                - jnp.square(mean), 0)
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


_LOG_2 = 0.6931471805599453  # log(2)


@custom_jvp
def log1mexp(x):
    """``log(1 - exp(-x))``, accurate on both sides of ``log 2``."""
    x = jnp.asarray(x)
    return jnp.where(x < _LOG_2, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis``, without overflow."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    ones = jnp.ones_like(x) if where is None else jnp.where(where, 1, 0)
    count = jnp.sum(ones, axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)

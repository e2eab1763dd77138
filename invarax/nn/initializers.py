"""``invarax.nn.initializers``: JAX's ``jax.nn.initializers``.

Each is a function returning an initializer ``init(key, shape, dtype=None)``, with JAX's
formulas over invarax's random samplers (which draw JAX's bits), so the same key gives
JAX's initial values to rounding. Real float dtypes; the default is float32 (float64 under
``jax_enable_x64``).

Example:
    >>> from invarax import random
    >>> init = glorot_normal()
    >>> init(random.key(0), (3, 2)).shape
    (3, 2)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import numpy as jnp
from .. import random
from ..core import dtypes as _dtypes

Initializer = Callable  # init(key, shape, dtype=None) -> Array


def _dtype(dtype):
    dtype = _dtypes.default_float() if dtype is None else np.dtype(dtype)
    if not np.issubdtype(dtype, np.floating):
        raise NotImplementedError(f"invarax's jax.nn.initializers take real float dtypes, "
                                  f"got {dtype}")
    return dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """Zeros of ``shape`` (the key is unused)."""
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """Ones of ``shape`` (the key is unused)."""
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling with ``value``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from ``[0, scale)``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from a normal of standard deviation ``stddev``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from a normal truncated to ``[lower, upper]``, times ``stddev``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev,
                                                                                   dtype)
    return init


def _size(shape, axes) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


_DENOMINATORS = {
    "fan_in": lambda fi, fo: fi,
    "fan_out": lambda fi, fo: fo,
    "fan_avg": lambda fi, fo: (fi + fo) / 2,
    "fan_geo_avg": lambda fi, fo: (fi * fo) ** 0.5,
}


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """An initializer of variance ``scale / n``, ``n`` the fan ``mode`` says (``"fan_in"``,
    ``"fan_out"``, ``"fan_avg"``, ``"fan_geo_avg"``), drawn from ``distribution``
    (``"truncated_normal"``, ``"normal"``, ``"uniform"``), as JAX's."""
    if mode not in _DENOMINATORS:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape, dtype = tuple(int(d) for d in shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        variance = jnp.array(scale / _DENOMINATORS[mode](fan_in, fan_out), dtype=dtype)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)

    return init


def _scaled(scale, mode, distribution, doc):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    make.__doc__ = doc
    return make


glorot_uniform = xavier_uniform = _scaled(1.0, "fan_avg", "uniform", "Glorot's uniform.")
glorot_normal = xavier_normal = _scaled(1.0, "fan_avg", "truncated_normal",
                                        "Glorot's (truncated) normal.")
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "LeCun's uniform.")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal", "LeCun's (truncated) normal.")
he_uniform = kaiming_uniform = _scaled(2.0, "fan_in", "uniform", "He's uniform.")
he_normal = kaiming_normal = _scaled(2.0, "fan_in", "truncated_normal",
                                     "He's (truncated) normal.")

__all__ = [
    "Initializer", "constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform",
    "zeros",
]

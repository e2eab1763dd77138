"""Helpers shared by the layers: key checks, Equinox's uniform initialisation, dtypes."""

from __future__ import annotations

import warnings

import numpy as np

from .. import numpy as jnp
from .. import random
from ..core import dtypes
from ..core.array import Array
from ..core.config import numpy_dtype_promotion


def check_key(layer: str, key):
    """``key`` if it is a PRNG key, else an error that shows how to make one."""
    if key is None:
        raise TypeError(
            f"{layer} needs a PRNG key to initialise its parameters: pass "
            f"key=invarax.random.key(0) (any seed), e.g. {layer}(..., key=invarax.random.key(0))"
        )
    data = np.asarray(key) if not isinstance(key, Array) else key
    if data.dtype != np.uint32 or data.shape != (2,):
        raise TypeError(
            f"{layer}: key must be a PRNG key (a uint32[2] array from "
            f"invarax.random.key(seed)), got {_describe(key)}"
        )
    return key


def float_dtype(dtype):
    """The parameters' dtype: ``dtype``, or float32 (float64 with x64 on) when None."""
    return dtypes.default_float() if dtype is None else np.dtype(dtype)


def compute_dtype(x):
    """The dtype a normalisation or softmax computes ``x`` in: ``x``'s promoted with float32
    by the standard rules whatever the promotion flag says, as Equinox (float16 -> float32,
    float64 stays)."""
    with numpy_dtype_promotion("standard"):
        return jnp.result_type(x.dtype, jnp.float32)


def uniform_init(key, shape, dtype, lim):
    """Equinox's initialisation: uniform in ``[-lim, lim)`` from ``random.uniform``; a complex
    dtype draws its real and imaginary parts from the two halves of ``random.split(key)``."""
    if np.issubdtype(dtype, np.complexfloating):
        part = np.finfo(dtype).dtype
        rkey, ikey = random.split(key, 2)
        real = random.uniform(rkey, shape, part, minval=-lim, maxval=lim).astype(dtype)
        imag = random.uniform(ikey, shape, part, minval=-lim, maxval=lim).astype(dtype)
        return real + 1j * imag
    return random.uniform(key, shape, dtype, minval=-lim, maxval=lim)


def _describe(x) -> str:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{np.dtype(dtype).name}{list(shape)}"
    return f"{type(x).__name__} {x!r}"


def deterministic_alias(where: str, inference, deterministic):
    """``inference``, or ``deterministic`` (Equinox's deprecated alias, with its warning)."""
    if deterministic is None:
        return inference
    warnings.warn(f"{where} is deprecated in favour of inference=... (as in Equinox)",
                  UserWarning, stacklevel=3)
    return deterministic

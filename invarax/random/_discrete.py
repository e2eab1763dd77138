"""Permutations and draws from finite sets, by JAX's algorithms (sorts on random keys, the
Gumbel-max and Gumbel-top-k tricks)."""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import to_array
from ..ops import elementwise as lax
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ..ops.sorting import sort
from ._eager import compiled, outside_unit
from ._keys import check_key, check_shape, concrete_value, random_bits, split
from ._samplers import gumbel, randint, uniform


def _shuffle(key, x, axis):
    """JAX's shuffle: sort ``x`` along ``axis`` by fresh 32-bit random keys, enough rounds
    that ties are unlikely (``ceil(3 log n / log(2**32 - 1))``)."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = split(key)
        _, x = sort((random_bits(subkey, 32, x.shape), x), dimension=axis, num_keys=1)
    return x


def _top_k_indices(x, k):
    """The indices of the ``k`` largest entries along the last axis (ties: lower index first)."""
    iota = sh.broadcasted_iota(dtypes.default_int(), x.shape, x.ndim - 1)
    _, indices = sort((lax.neg(x), iota), dimension=x.ndim - 1, num_keys=1)
    return sh.slice_in_dim(indices, 0, k, axis=x.ndim - 1)


@compiled(static=("axis", "independent"), scalar_static=("x",))
def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` or of an array along ``axis``, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        x: an int ``n`` (permute ``arange(n)``) or an array.
        axis: the axis to permute.
        independent: permute each slice along ``axis`` independently.

    Returns:
        The permuted array.

    Example:
        >>> random.permutation(random.PRNGKey(0), 5)
        Array([0, 1, 4, 3, 2], dtype=int32)
    """
    key = check_key("permutation", key)
    x = to_array(x, "random.permutation x")
    if x.ndim == 0:
        if x.dtype.kind not in "iu":
            raise TypeError("random.permutation: x must be an integer or an array of at least "
                            f"one dimension, got a {x.dtype.name} scalar")
        n = operator.index(x)
        if n < 0:
            raise ValueError(f"random.permutation: x must be non-negative, got {n}")
        return _shuffle(key, jnp.arange(n), 0)
    axis = canonicalize_axis(axis, x.ndim, "random.permutation axis")
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, order, axis=axis)


@compiled(static=("shape", "replace", "axis"), scalar_static=("a",),
          inline_if=outside_unit("p"))
def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random draws from ``a`` (an array, or ``arange(a)`` for an int), as JAX.

    Uniform draws with replacement use ``randint``; without, a permutation's prefix. With
    probabilities ``p``: inverse-CDF search of a uniform draw (with replacement), or the
    Gumbel-top-k trick (without).

    Arguments:
        key: a ``uint32[2]`` key.
        a: an int ``n`` or an array whose entries along ``axis`` are drawn.
        shape: the shape of the draws.
        replace: draw with replacement.
        p: probabilities for the entries (1-D, length ``n``, each in ``[0, 1]``).
        axis: the axis of ``a`` to draw along.

    Returns:
        The draws: ``shape`` for an int ``a``, else ``a.shape`` with ``axis`` replaced by
        ``shape``.

    Example:
        >>> random.choice(random.PRNGKey(0), 10, (3,), replace=False)
        Array([0, 1, 8], dtype=int32)
    """
    key = check_key("choice", key)
    shape = check_shape("choice", shape)
    arr = to_array(a, "random.choice a")
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"random.choice: a must be an int or an array, got a "
                            f"{arr.dtype.name} scalar")
        n = operator.index(arr)
    else:
        axis = canonicalize_axis(axis, arr.ndim, "random.choice axis")
        n = arr.shape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return jnp.zeros(shape if arr.ndim == 0 else
                         arr.shape[:axis] + shape + arr.shape[axis + 1:], arr.dtype)
    if n <= 0:
        raise ValueError("random.choice: a must be greater than 0 unless no samples are taken")
    if not replace and draws > n:
        raise ValueError(f"random.choice: cannot take a larger sample (size {draws}) than the "
                         f"population (size {n}) with replace=False")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n)
        else:
            ind = permutation(key, n)[:draws]
    else:
        p = jnp.asarray(p)
        if p.dtype.kind != "f":
            p = p.astype(dtypes.default_float())
        if p.shape != (n,):
            raise ValueError(f"random.choice: p must be a 1-D vector of the {n} entries' "
                             f"probabilities, got shape {p.shape}")
        value = concrete_value(p)
        if value is not None and not np.all((value >= 0) & (value <= 1)):
            raise ValueError(f"random.choice: probabilities must lie in [0, 1], got p={value}")
        if replace:
            cdf = jnp.cumsum(p)
            r = cdf[-1] * (1 - uniform(key, shape, dtype=cdf.dtype))
            # searchsorted(cdf, r, side="left"): the number of entries below r.
            ind = jnp.sum(cdf < r[..., None], axis=-1).astype(dtypes.default_int())
        else:
            g = gumbel(key, (n,), dtype=p.dtype) + jnp.log(p)
            ind = _top_k_indices(g, draws)
    ind = ind.reshape(shape)
    return ind if arr.ndim == 0 else jnp.take(arr, ind, axis=axis)


@compiled(static=("axis", "shape", "replace"))
def categorical(key, logits, axis=-1, shape=None, replace=True):
    """Category indices drawn from ``softmax(logits)`` by the Gumbel-max trick, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        logits: unnormalised log-probabilities; ``axis`` indexes the categories.
        axis: the categories' axis.
        shape: the result's shape: leading sample dims, then the batch shape
            (``logits.shape`` without ``axis``, the default).
        replace: draw with replacement (without: the Gumbel-top-k trick, distinct
            categories along the leading sample dims).

    Returns:
        An int array of ``shape``.

    Example:
        >>> logits = jnp.log(jnp.array([0.2, 0.3, 0.5]))
        >>> random.categorical(random.PRNGKey(0), logits, shape=(4,))
        Array([1, 1, 2, 1], dtype=int32)
    """
    key = check_key("categorical", key)
    logits = jnp.asarray(to_array(logits, "random.categorical logits"))
    if logits.dtype.kind != "f":
        logits = logits.astype(dtypes.default_float())
    axis = canonicalize_axis(axis, logits.ndim, "random.categorical axis")
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch_shape if shape is None else check_shape("categorical", shape)
    if shape[len(shape) - len(batch_shape):] != batch_shape:
        raise ValueError(f"random.categorical: shape {shape} must end with the batch shape "
                         f"{batch_shape} (logits' shape without axis {axis})")
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        noise = gumbel(key, (*prefix, *logits.shape), logits.dtype)
        expanded = sh.expand_dims(logits, tuple(range(len(prefix))))
        return jnp.argmax(noise + expanded, axis=len(prefix) + axis)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"random.categorical: the number of samples without replacement ({k}) "
                         f"cannot exceed the number of categories ({logits.shape[axis]})")
    perturbed = jnp.moveaxis(logits + gumbel(key, logits.shape, logits.dtype), axis, -1)
    indices = _top_k_indices(perturbed, k)
    return jnp.moveaxis(indices, -1, 0).reshape(shape)

"""Memory-light second moments: Adafactor's ``scale_by_factored_rms`` and SM3's
``scale_by_sm3``, as optax has them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core.pytree import tree_flatten, tree_map
from ._base import GradientTransformation, check_params, check_state, require_params
from ._transform import _zero_count, safe_increment
from ._tree_math import _abs_sq, tree_update_moment


def _decay_rate_pow(i, exponent=0.8):
    """The second-moment decay at step ``i``: ``1 - (i + 1)**(-exponent)``."""
    t = jnp.asarray(i + 1).astype(jnp.float32)
    return 1.0 - t ** (-exponent)


def _factored_dims(shape, factored: bool, min_dim_size_to_factor: int):
    """The two largest axes (second largest first), or None if the leaf is not factored."""
    if not factored or len(shape) < 2:
        return None
    order = np.argsort(shape)
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return int(order[-2]), int(order[-1])


class FactoredState(NamedTuple):
    """The state of ``scale_by_factored_rms``: the count and, per leaf, the row and column
    means of the squared gradients (factored leaves) or their full average ``v`` (others);
    the unused entries are zeros of shape (1,)."""

    count: Any
    v_row: Any
    v_col: Any
    v: Any


def scale_by_factored_rms(factored: bool = True, decay_rate: float = 0.8,
                          step_offset: int = 0, min_dim_size_to_factor: int = 128,
                          epsilon: float = 1e-30,
                          decay_rate_fn: Callable[[Any, Any], Any] = _decay_rate_pow
                          ) -> GradientTransformation:
    """Divide the updates by a factored estimate of their root mean square (Adafactor).

    A leaf whose second-largest axis has at least ``min_dim_size_to_factor`` elements keeps
    the moving averages of ``g**2 + epsilon`` over its two largest axes only (row and
    column means); others keep the full average. The decay at step ``t`` is
    ``decay_rate_fn(t - step_offset, decay_rate)``, by default ``1 - (t + 1)**-decay_rate``.

    Arguments:
        factored: factor the second moment of leaves with at least two axes.
        decay_rate: the exponent of the decay schedule.
        step_offset: subtracted from the step count in the decay schedule.
        min_dim_size_to_factor: factor only leaves whose two largest axes are this long.
        epsilon: added to the squared gradients.
        decay_rate_fn: the decay schedule, a function of the step and ``decay_rate``.

    Returns:
        A ``GradientTransformation`` whose state is a ``FactoredState``; its update needs
        ``params``.

    Example:
        >>> opt = scale_by_factored_rms()
        >>> opt.update(jnp.array([2.0, -0.5]), opt.init(jnp.zeros(2)), jnp.zeros(2))[0]
        Array([ 1., -1.], dtype=float32)
    """
    def init_one(param):
        shape, dtype = np.shape(param), param.dtype
        one = jnp.zeros((1,), dtype=dtype)
        dims = _factored_dims(shape, factored, min_dim_size_to_factor)
        if dims is None:
            return one, one, jnp.zeros_like(param)
        d1, d0 = dims
        return (jnp.zeros(shape[:d0] + shape[d0 + 1:], dtype),
                jnp.zeros(shape[:d1] + shape[d1 + 1:], dtype), one)

    def init_fn(params):
        check_params("scale_by_factored_rms.init", params)
        leaves, treedef = tree_flatten(params)
        rows, cols, vs = zip(*map(init_one, leaves), strict=True) if leaves else ((), (), ())
        return FactoredState(_zero_count(), treedef.unflatten(rows), treedef.unflatten(cols),
                             treedef.unflatten(vs))

    def update_one(grad, v_row, v_col, v, param, decay):
        shape, dtype = np.shape(param), param.dtype
        one = jnp.zeros((1,), dtype=dtype)
        grad_sqr = _abs_sq(grad) + epsilon
        dims = _factored_dims(shape, factored, min_dim_size_to_factor)
        if dims is None:
            new_v = (decay * v + (1.0 - decay) * grad_sqr).astype(dtype)
            return grad * new_v ** -0.5, one, one, new_v
        d1, d0 = dims
        new_row = (decay * v_row + (1.0 - decay) * jnp.mean(grad_sqr, axis=d0)).astype(dtype)
        new_col = (decay * v_col + (1.0 - decay) * jnp.mean(grad_sqr, axis=d1)).astype(dtype)
        row_col_mean = jnp.mean(new_row, axis=d1 - 1 if d1 > d0 else d1, keepdims=True)
        row_factor = (new_row / row_col_mean) ** -0.5
        col_factor = new_col ** -0.5
        update = (grad * jnp.expand_dims(row_factor, axis=d0)
                  * jnp.expand_dims(col_factor, axis=d1))
        return update, new_row, new_col, one

    def update_fn(updates, state, params=None):
        require_params("scale_by_factored_rms", params)
        check_state("scale_by_factored_rms.update", state, FactoredState)
        leaves, treedef = tree_flatten(updates)
        try:
            others = [treedef.flatten_up_to(t) for t in (state.v_row, state.v_col, state.v,
                                                         params)]
        except ValueError as e:
            raise ValueError("scale_by_factored_rms.update: the updates, the state and the "
                             f"params have different tree structures: {e}") from None
        decay = decay_rate_fn(state.count - step_offset, decay_rate)
        out = [update_one(*args, decay) for args in zip(leaves, *others, strict=True)]
        parts = [treedef.unflatten(p) for p in zip(*out, strict=True)] if out else \
            [treedef.unflatten([])] * 4
        return parts[0], FactoredState(safe_increment(state.count), *parts[1:])

    return GradientTransformation(init_fn, update_fn)


class ScaleBySM3State(NamedTuple):
    """The state of ``scale_by_sm3``: per leaf, one accumulator per axis (``mu``), and the
    momentum ``nu``."""

    mu: Any
    nu: Any


def scale_by_sm3(b1: float = 0.9, b2: float = 1.0, eps: float = 1e-8) -> GradientTransformation:
    """SM3: Adagrad-like scaling whose accumulator keeps one vector per axis of each leaf
    (the cover of its elements by rows, columns, ...), then momentum ``b1``.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleBySM3State``.

    Example:
        >>> opt = scale_by_sm3()
        >>> opt.update(jnp.array([2.0, -0.5]), opt.init(jnp.zeros(2)))[0]
        Array([ 0.1, -0.1], dtype=float32)
    """
    def init_fn(params):
        check_params("scale_by_sm3.init", params)
        mu = tree_map(lambda p: [jnp.zeros((n,), p.dtype) for n in np.shape(p)], params)
        return ScaleBySM3State(mu, tree_map(jnp.zeros_like, params))

    def new_accum(g, v):
        c0 = (1.0 - b2) if b2 != 1.0 else 1.0
        if g.ndim < 2:
            return c0 * g ** 2 + b2 * v[0]
        return c0 * g ** 2 + b2 * functools.reduce(jnp.minimum, v)

    def new_mu(g, i):
        if g.ndim < 2:
            return g
        return jnp.max(g, axis=tuple(a for a in range(g.ndim) if a != i))

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_sm3.update", state, ScaleBySM3State)
        leaves, treedef = tree_flatten(updates)
        mus = treedef.flatten_up_to(state.mu)
        accums = []
        for g, mu in zip(leaves, mus, strict=True):
            expanded = [jnp.reshape(v, [1] * i + [g.shape[i]] + [1] * (g.ndim - i - 1))
                        for i, v in enumerate(mu)]
            accums.append(new_accum(g, expanded))
        up = [g * jnp.where(t > 0, lax.rsqrt(t + eps), 0.0)
              for g, t in zip(leaves, accums, strict=True)]
        nu = tree_update_moment(treedef.unflatten(up), state.nu, b1, 1)
        mu = treedef.unflatten([[new_mu(t, i) for i in range(t.ndim)] for t in accums])
        return nu, ScaleBySM3State(mu, nu)

    return GradientTransformation(init_fn, update_fn)

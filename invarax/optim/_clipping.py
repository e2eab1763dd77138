"""Clipping: by the global norm of the updates, elementwise (``clip``), by each leaf's RMS."""

from __future__ import annotations

from .. import lax
from .. import numpy as jnp
from ..core.pytree import tree_leaves, tree_map
from ._base import GradientTransformation, check_nonnegative, init_empty_state
from ._tree_math import _abs_sq


def global_norm(updates):
    """The l2 norm of all the leaves of a pytree together: ``sqrt(sum of squares)``.

    Arguments:
        updates: a pytree of arrays.

    Returns:
        A scalar array; the leaves' sums of squares are added in leaf order.

    Example:
        >>> global_norm({"a": jnp.array([3.0]), "b": jnp.array([4.0])})
        Array(5., dtype=float32)
    """
    total = 0
    for leaf in tree_leaves(updates):
        total = total + jnp.sum(leaf * leaf)
    return jnp.sqrt(total)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Scale all the updates by ``max_norm / global_norm`` when their global norm exceeds it.

    Arguments:
        max_norm: the largest global norm the updates may have (non-negative; ``0.0``
            zeroes the updates, as optax's, NaN where they are all zero: ``0 / 0``).

    Returns:
        A stateless ``GradientTransformation``; below ``max_norm`` the updates pass unchanged.

    Example:
        >>> opt = clip_by_global_norm(1.0)
        >>> opt.update([jnp.array([3.0]), jnp.array([4.0])], opt.init(None))[0]
        [Array([0.6], dtype=float32), Array([0.8], dtype=float32)]
    """
    check_nonnegative("clip_by_global_norm", "max_norm", max_norm)

    def update_fn(updates, state, params=None):
        del params
        norm = global_norm(updates)
        keep = norm < max_norm
        updates = tree_map(
            lambda t: lax.select(keep, t, (t / norm.astype(t.dtype)) * max_norm), updates)
        return updates, state

    return GradientTransformation(init_empty_state, update_fn)


def clip(max_delta) -> GradientTransformation:
    """Clip every element of the updates to ``[-max_delta, max_delta]``.

    Arguments:
        max_delta: the largest magnitude an element may have.

    Returns:
        A stateless ``GradientTransformation``.

    Example:
        >>> clip(1.0).update(jnp.array([-3.0, 0.5, 2.0]), EmptyState())[0]
        Array([-1. ,  0.5,  1. ], dtype=float32)
    """
    check_nonnegative("clip", "max_delta", max_delta)

    def update_fn(updates, state, params=None):
        del params
        return tree_map(lambda g: jnp.clip(g, -max_delta, max_delta), updates), state

    return GradientTransformation(init_empty_state, update_fn)


def clip_by_block_rms(threshold) -> GradientTransformation:
    """Divide each update by ``max(1, rms(update) / threshold)`` (its root mean square).

    Arguments:
        threshold: the largest root mean square an update leaf may have.

    Returns:
        A stateless ``GradientTransformation``.

    Example:
        >>> clip_by_block_rms(1.0).update(jnp.array([3.0, 4.0]), EmptyState())[0]
        Array([0.84852815, 1.1313709 ], dtype=float32)
    """
    check_nonnegative("clip_by_block_rms", "threshold", threshold, positive=True)

    def clip_one(u):
        return u / jnp.maximum(1.0, jnp.sqrt(jnp.mean(_abs_sq(u))) / threshold)

    def update_fn(updates, state, params=None):
        del params
        return tree_map(clip_one, updates), state

    return GradientTransformation(init_empty_state, update_fn)

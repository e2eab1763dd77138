"""Clipping by the global norm of the updates."""

from __future__ import annotations

from .. import lax
from .. import numpy as jnp
from ..core.pytree import tree_leaves, tree_map
from ._base import GradientTransformation, check_nonnegative, init_empty_state


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
        max_norm: the largest global norm the updates may have (positive).

    Returns:
        A stateless ``GradientTransformation``; below ``max_norm`` the updates pass unchanged.

    Example:
        >>> opt = clip_by_global_norm(1.0)
        >>> opt.update([jnp.array([3.0]), jnp.array([4.0])], opt.init(None))[0]
        [Array([0.6], dtype=float32), Array([0.8], dtype=float32)]
    """
    check_nonnegative("clip_by_global_norm", "max_norm", max_norm, positive=True)

    def update_fn(updates, state, params=None):
        del params
        norm = global_norm(updates)
        keep = norm < max_norm
        updates = tree_map(
            lambda t: lax.select(keep, t, (t / norm.astype(t.dtype)) * max_norm), updates)
        return updates, state

    return GradientTransformation(init_empty_state, update_fn)

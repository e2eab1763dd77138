"""L-BFGS: ``scale_by_lbfgs`` (the two-loop recursion over a ring of past differences) and
the ``lbfgs`` optimizer (with a zoom line search by default), as optax has them."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core.pytree import tree_map
from ..lax import stop_gradient
from ._base import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    chain,
    check_nonnegative,
    check_params,
    check_state,
    identity,
    require_params,
)
from ._linesearch import scale_by_zoom_linesearch
from ._transform import safe_increment, scale, scale_by_learning_rate
from ._tree_math import (
    tree_add_scale,
    tree_cast_like,
    tree_norm,
    tree_scale,
    tree_sub,
    tree_vdot,
    tree_zeros_like,
)


class ScaleByLBFGSState(NamedTuple):
    """The state of ``scale_by_lbfgs``: the step count, the last params and updates, and
    the rings of ``memory_size`` past differences of params and of updates (each leaf
    stacked on a leading axis) with their weights ``1 / <dw, du>``."""

    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Any


def _at(memory, idx):
    return tree_map(lambda x: x[idx], memory)


def _precondition(updates, diff_params, diff_updates, rhos, identity_scale, memory_idx):
    """The two-loop recursion: ``updates`` times the L-BFGS inverse-Hessian estimate."""
    memory_size = rhos.shape[0]
    indices = [(memory_idx + i) % memory_size for i in range(memory_size)]
    vec, alphas = updates, []
    for idx in reversed(indices):
        alpha = rhos[idx] * jnp.real(tree_vdot(_at(diff_params, idx), vec))
        vec = tree_cast_like(tree_add_scale(vec, -alpha, _at(diff_updates, idx)), vec)
        alphas.append(alpha)
    vec = tree_scale(identity_scale, vec)
    for idx, alpha in zip(indices, reversed(alphas), strict=True):
        beta = rhos[idx] * jnp.real(tree_vdot(_at(diff_updates, idx), vec))
        vec = tree_cast_like(tree_add_scale(vec, alpha - beta, _at(diff_params, idx)), vec)
    return vec


def scale_by_lbfgs(memory_size: int = 10,
                   scale_init_precond: bool = True) -> GradientTransformation:
    """Precondition the updates by the L-BFGS estimate of the inverse Hessian.

    The estimate is built from the last ``memory_size`` differences of parameters and of
    updates (gradients), recorded at each update before preconditioning.

    Arguments:
        memory_size: the number of past differences kept (at least 1).
        scale_init_precond: scale the initial estimate by ``<dw, du> / <du, du>`` (and the
            first step by ``min(1, 1 / ||g||)``); else use the identity.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByLBFGSState``; its update
        needs ``params``.

    Example:
        >>> opt = scale_by_lbfgs()
        >>> x = jnp.array([0.5, 0.0])
        >>> opt.update(x, opt.init(x), x)[0]  # the first step: g / max(1, ||g||)
        Array([0.5, 0. ], dtype=float32)
    """
    if not isinstance(memory_size, int) or memory_size < 1:
        raise ValueError(f"scale_by_lbfgs: memory_size must be an int >= 1, got "
                         f"{memory_size!r}")

    def init_fn(params):
        check_params("scale_by_lbfgs.init", params)
        stacked = tree_map(lambda p: jnp.zeros((memory_size, *np.shape(p)),
                                               dtype=jnp.asarray(p).dtype), params)
        return ScaleByLBFGSState(jnp.asarray(0, dtype=jnp.int32), tree_zeros_like(params),
                                 tree_zeros_like(params), stacked, stacked,
                                 jnp.zeros(memory_size))

    def update_fn(updates, state, params=None):
        require_params("scale_by_lbfgs", params)
        check_state("scale_by_lbfgs.update", state, ScaleByLBFGSState)
        memory_idx = state.count % memory_size
        prev_idx = (state.count - 1) % memory_size
        diff_params = tree_sub(params, state.params)
        diff_updates = tree_sub(updates, state.updates)
        vdot = jnp.real(tree_vdot(diff_updates, diff_params))
        weight = jnp.where(vdot == 0.0, 0.0, 1.0 / vdot)
        started = state.count > 0
        diff_params, diff_updates, weight = tree_map(
            lambda x: jnp.where(started, x, jnp.zeros_like(x)),
            (diff_params, diff_updates, weight))
        diff_params_memory, diff_updates_memory, weights_memory = tree_map(
            lambda x, y: x.at[prev_idx].set(y),
            (state.diff_params_memory, state.diff_updates_memory, state.weights_memory),
            (diff_params, diff_updates, weight))
        if scale_init_precond:
            numerator = jnp.real(tree_vdot(diff_updates, diff_params))
            denominator = tree_norm(diff_updates, squared=True)
            identity_scale = jnp.where(denominator > 0.0, numerator / denominator, 1.0)
            capped_inv_norm = jnp.minimum(1.0, 1.0 / tree_norm(stop_gradient(updates)))
            identity_scale = jnp.where(started, identity_scale, capped_inv_norm)
        else:
            identity_scale = 1.0
        new = _precondition(updates, diff_params_memory, diff_updates_memory, weights_memory,
                            identity_scale, memory_idx)
        return new, ScaleByLBFGSState(safe_increment(state.count), params, updates,
                                      diff_params_memory, diff_updates_memory, weights_memory)

    return GradientTransformation(init_fn, update_fn)


def lbfgs(learning_rate=None, memory_size: int = 10, scale_init_precond: bool = True,
          linesearch: Any = scale_by_zoom_linesearch(max_linesearch_steps=20,  # noqa: B008
                                                     initial_guess_strategy="one")
          ) -> GradientTransformationExtraArgs:
    """The L-BFGS optimizer: preconditioned descent steps with a line search.

    Arguments:
        learning_rate: None (steps of the line search's size), or a rate or schedule
            multiplying the direction before the line search.
        memory_size: the number of past differences kept.
        scale_init_precond: scale the initial inverse-Hessian estimate (see
            ``scale_by_lbfgs``).
        linesearch: a line search transformation; by default optax's
            ``scale_by_zoom_linesearch(max_linesearch_steps=20,
            initial_guess_strategy="one")``; None for none.

    Returns:
        ``chain(scale_by_lbfgs(...), scale(-1) or scale_by_learning_rate(...), linesearch)``:
        its update needs ``params`` and, with a line search, the keyword arguments
        ``value``, ``grad`` and ``value_fn`` (see ``value_and_grad_from_state``).

    Example:
        >>> f = lambda x: jnp.sum((x - 1.0) ** 2)
        >>> opt = lbfgs()
        >>> x = jnp.zeros(2)
        >>> state = opt.init(x)
        >>> for _ in range(3):
        ...     value, grad = value_and_grad_from_state(f)(x, state=state)
        ...     updates, state = opt.update(grad, state, x, value=value, grad=grad,
        ...                                 value_fn=f)
        ...     x = apply_updates(x, updates)
        >>> x
        Array([1., 1.], dtype=float32)
    """
    if learning_rate is None:
        base_scaling = scale(-1.0)
    else:
        if not callable(learning_rate):
            check_nonnegative("lbfgs", "learning_rate", learning_rate)
        base_scaling = scale_by_learning_rate(learning_rate)
    return chain(scale_by_lbfgs(memory_size=memory_size,
                                scale_init_precond=scale_init_precond),
                 base_scaling, identity() if linesearch is None else linesearch)

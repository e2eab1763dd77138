"""The building blocks of the optimizers: scale, schedules, momentum, Adam, weight decay, masks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .. import numpy as jnp
from ..core.pytree import tree_map, tree_structure
from ._base import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    check_nonnegative,
    check_params,
    check_real,
    check_state,
    check_structure,
    identity,
    init_empty_state,
    map_with_params,
    require_params,
    with_extra_args_support,
    zeros_like_params,
)
from ._state_utils import ParamsPlaceholder
from ._tree_math import (
    tree_bias_correction,
    tree_cast,
    tree_cast_like,
    tree_update_moment,
    tree_update_moment_per_elem_norm,
)


def safe_increment(count):
    """``count + 1``, saturating at the largest value of its integer dtype (never wraps).

    Arguments:
        count: an integer scalar (an optimizer's int32 step count).

    Returns:
        An array of ``count``'s dtype.

    Example:
        >>> safe_increment(jnp.asarray(2147483647, dtype=jnp.int32))
        Array(2147483647, dtype=int32)
    """
    count = jnp.asarray(count)
    top = jnp.asarray(jnp.iinfo(count.dtype).max, dtype=count.dtype)
    return jnp.where(count < top, count + jnp.asarray(1, dtype=count.dtype), top)


safe_int32_increment = safe_increment


def _zero_count():
    return jnp.zeros([], jnp.int32)


def scale(step_size: float) -> GradientTransformation:
    """Multiply the updates by a fixed ``step_size``.

    Arguments:
        step_size: a scalar; ``scale(-lr)`` turns gradients into descent steps.

    Returns:
        A stateless ``GradientTransformation``.

    Example:
        >>> scale(-0.5).update(jnp.array([2.0, 4.0]), EmptyState())
        (Array([-1., -2.], dtype=float32), EmptyState())
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_map(lambda g: step_size * g, updates), state

    return GradientTransformation(init_empty_state, update_fn)


class ScaleByScheduleState(NamedTuple):
    """The state of ``scale_by_schedule``: the number of updates so far (int32)."""

    count: Any


def scale_by_schedule(step_size_fn: Callable[[Any], Any]) -> GradientTransformation:
    """Multiply the updates by ``step_size_fn(count)``, where ``count`` counts the updates.

    Arguments:
        step_size_fn: a schedule: a function of the int32 step count (0 at the first update).

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByScheduleState``.

    Example:
        >>> opt = scale_by_schedule(lambda count: 1.0 / (1 + count))
        >>> state = opt.init(jnp.zeros(1))
        >>> for _ in range(3):
        ...     updates, state = opt.update(jnp.ones(1), state)
        >>> updates, state.count
        (Array([0.33333334], dtype=float32), Array(3, dtype=int32))
    """
    def init_fn(params):
        check_params("scale_by_schedule.init", params, integers=True)
        return ScaleByScheduleState(count=_zero_count())

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_schedule.update", state, ScaleByScheduleState)
        step_size = step_size_fn(state.count)
        updates = tree_map(lambda g: jnp.asarray(step_size, dtype=g.dtype) * g, updates)
        return updates, ScaleByScheduleState(count=safe_increment(state.count))

    return GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate=None, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Multiply the updates by ``-learning_rate`` (a float or a schedule of the step count).

    Arguments:
        learning_rate: a non-negative float, a schedule (a function of the step count), or
            None (no scaling: ``identity()``).
        flip_sign: negate the rate, so that gradients become descent steps (default True).

    Returns:
        ``scale(-learning_rate)`` for a float, ``scale_by_schedule`` for a schedule.

    Example:
        >>> opt = scale_by_learning_rate(0.1)
        >>> opt.update(jnp.array([1.0, -2.0]), opt.init(jnp.zeros(2)))[0]
        Array([-0.1,  0.2], dtype=float32)
    """
    if learning_rate is None:
        return identity()
    sign = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    check_nonnegative("scale_by_learning_rate", "learning_rate", learning_rate)
    return scale(sign * learning_rate)


class TraceState(NamedTuple):
    """The state of ``trace``: the momentum buffer, shaped like the parameters."""

    trace: Any


def trace(decay: float, nesterov: bool = False,
          accumulator_dtype=None) -> GradientTransformation:
    """Momentum: ``t = g + decay * t``; the update is ``t`` (or ``g + decay * t``, Nesterov).

    Arguments:
        decay: the momentum coefficient.
        nesterov: use Nesterov's momentum.
        accumulator_dtype: the dtype of the momentum buffer (None: the parameters').

    Returns:
        A ``GradientTransformation`` whose state is a ``TraceState``.

    Example:
        >>> opt = trace(0.5)
        >>> state = opt.init(jnp.zeros(1))
        >>> for _ in range(3):
        ...     updates, state = opt.update(jnp.ones(1), state)
        >>> updates
        Array([1.75], dtype=float32)
    """
    check_nonnegative("trace", "decay", decay)

    def init_fn(params):
        return TraceState(trace=zeros_like_params("trace.init", params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        check_state("trace.update", state, TraceState)
        check_structure("trace.update", updates, state.trace, "the momentum buffer")
        step = lambda g, t: g + decay * t
        new_trace = tree_map(step, updates, state.trace)
        updates = tree_map(step, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(trace=tree_cast(new_trace, accumulator_dtype))

    return GradientTransformation(init_fn, update_fn)


class ScaleByAdamState(NamedTuple):
    """The state of ``scale_by_adam``: the step count (int32) and the two moment estimates."""

    count: Any
    mu: Any
    nu: Any


def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                  eps_root: float = 0.0, mu_dtype=None, *,
                  nesterov: bool = False) -> GradientTransformation:
    """Rescale the updates by Adam's rule: bias-corrected ``mu / (sqrt(nu + eps_root) + eps)``.

    ``mu = (1 - b1) g + b1 mu`` and ``nu = (1 - b2) g**2 + b2 nu`` are divided by
    ``1 - b1**t`` and ``1 - b2**t`` at step ``t = 1, 2, ...``. With ``nesterov`` (NAdam)
    the numerator is ``b1 * mu_hat' + (1 - b1) * g_hat``, ``mu_hat'`` corrected with
    ``t + 1`` and ``g_hat`` with ``t``.

    Arguments:
        b1: the decay of the first moment (the mean of the gradients).
        b2: the decay of the second moment (the mean of their squares).
        eps: added to the denominator, outside the square root.
        eps_root: added inside the square root.
        mu_dtype: the dtype of the first moment in the state (None: the parameters').
        nesterov: use Nesterov's momentum (NAdam).

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAdamState``.

    Example:
        >>> opt = scale_by_adam()
        >>> opt.update(jnp.array([0.5, -2.0]), opt.init(jnp.zeros(2)))[0]
        Array([ 0.9999933, -0.9999933], dtype=float32)
    """
    for name, value in (("b1", b1), ("b2", b2), ("eps", eps), ("eps_root", eps_root)):
        check_nonnegative("scale_by_adam", name, value)

    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(),
                                mu=zeros_like_params("scale_by_adam.init", params,
                                                     dtype=mu_dtype),
                                nu=zeros_like_params("scale_by_adam.init", params))

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_adam.update", state, ScaleByAdamState)
        check_structure("scale_by_adam.update", updates, state.mu, "the state's mu")
        check_structure("scale_by_adam.update", updates, state.nu, "the state's nu")
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        if nesterov:
            mu_hat = tree_map(lambda m, g: b1 * m + (1 - b1) * g,
                              tree_bias_correction(mu, b1, safe_increment(count)),
                              tree_bias_correction(updates, b1, count))
        else:
            mu_hat = tree_bias_correction(mu, b1, count)
        nu_hat = tree_bias_correction(nu, b2, count)
        updates = tree_map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return updates, ScaleByAdamState(count=count, mu=tree_cast(mu, mu_dtype),
                                         nu=tree_cast_like(nu, state.nu))

    return GradientTransformation(init_fn, update_fn)


class MaskedState(NamedTuple):
    """The state of ``masked``: the inner transformation's state over the selected leaves."""

    inner_state: Any


class MaskedNode(NamedTuple):
    """What ``masked`` puts in place of a leaf it leaves out (an empty pytree), as optax."""


def _mask_tree(mask, tree):
    return mask(tree) if callable(mask) else mask


def _select(mask_tree, tree):
    return tree_map(lambda m, x: x if m else MaskedNode(), mask_tree, tree)


def masked(inner: GradientTransformation, mask, *,
           mask_compatible_extra_args: bool = False) -> GradientTransformation:
    """Apply ``inner`` to the leaves that ``mask`` selects; pass the others through unchanged.

    Arguments:
        inner: the transformation to apply.
        mask: a pytree of bools with the parameters' structure (or a prefix of it), or a
            function of the parameters (and of the updates) returning one.
        mask_compatible_extra_args: also mask the extra keyword arguments of the update
            that have the updates' tree structure.

    Returns:
        A ``GradientTransformation`` whose state is a ``MaskedState``.

    Example:
        >>> opt = masked(scale(10.0), {"w": True, "b": False})
        >>> params = {"w": jnp.ones(1), "b": jnp.ones(1)}
        >>> opt.update(params, opt.init(params))[0]
        {'b': Array([1.], dtype=float32), 'w': Array([10.], dtype=float32)}
    """
    inner = with_extra_args_support(inner)

    def init_fn(params):
        if isinstance(params, ParamsPlaceholder):  # tree_map_params: the state's layout
            return MaskedState(inner_state=inner.init(params))
        return MaskedState(inner_state=inner.init(_select(_mask_tree(mask, params), params)))

    def update_fn(updates, state, params=None, **extra_args):
        check_state("masked.update", state, MaskedState)
        mask_tree = _mask_tree(mask, updates)
        if mask_compatible_extra_args:
            structure = tree_structure(updates)
            extra_args = {k: _select(mask_tree, v) if tree_structure(v) == structure else v
                          for k, v in extra_args.items()}
        new, inner_state = inner.update(
            _select(mask_tree, updates), state.inner_state,
            None if params is None else _select(mask_tree, params), **extra_args)
        updates = tree_map(lambda m, n, u: n if m else u, mask_tree, new, updates)
        return updates, MaskedState(inner_state=inner_state)

    return GradientTransformationExtraArgs(init_fn, update_fn)


class WeightDecaySchedule(NamedTuple):
    """The state of ``add_decayed_weights`` with a schedule: the step count (int32)."""

    count: Any


def add_decayed_weights(weight_decay=0.0, mask=None) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (decoupled weight decay, as in AdamW).

    Arguments:
        weight_decay: the coefficient, or a schedule (a function of the step count).
        mask: which parameters to decay: a pytree of bools (or a prefix of one) or a function
            of the parameters returning one; None decays all.

    Returns:
        A ``GradientTransformation`` (stateless, or counting steps for a schedule: a
        ``WeightDecaySchedule``); its update needs ``params``. A coefficient of 0 leaves the
        updates as they are.

    Example:
        >>> opt = add_decayed_weights(0.1)
        >>> opt.update(jnp.zeros(2), opt.init(jnp.ones(2)), jnp.array([1.0, 2.0]))[0]
        Array([0.1, 0.2], dtype=float32)
    """
    scheduled = callable(weight_decay)
    if not scheduled:
        check_real("add_decayed_weights", "weight_decay", weight_decay)

    def init_fn(params):
        check_params("add_decayed_weights.init", params, integers=True)
        return WeightDecaySchedule(_zero_count()) if scheduled else EmptyState()

    def update_fn(updates, state, params=None):
        require_params("add_decayed_weights", params)
        new_state = WeightDecaySchedule(safe_increment(state.count)) if scheduled else state
        if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
            return updates, new_state
        rate = weight_decay(state.count) if scheduled else weight_decay
        return map_with_params("add_decayed_weights.update", lambda g, p: g + rate * p,
                               updates, params), new_state

    transform = GradientTransformation(init_fn, update_fn)
    return transform if mask is None else masked(transform, mask)

"""Per-parameter rescalings: RMSProp, its centred form, Adagrad, Lion, LAMB's trust ratio,
optimistic gradients, EMAs and Adafactor's parameter scale; optax's formulas and states."""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import lax
from .. import numpy as jnp
from ..core.pytree import tree_map
from ._base import (
    GradientTransformation,
    check_nonnegative,
    check_state,
    check_structure,
    init_empty_state,
    map_with_params,
    require_params,
    zeros_like_params,
)
from ._transform import _zero_count, safe_increment
from ._tree_math import (
    _abs_sq,
    tree_bias_correction,
    tree_cast,
    tree_update_moment,
    tree_update_moment_per_elem_norm,
)


class ScaleByRmsState(NamedTuple):
    """The state of ``scale_by_rms``: the moving average of the squared gradients."""

    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    """The state of ``scale_by_rms(bias_correction=True)``: the step count and ``nu``."""

    count: Any
    nu: Any


def _inverse_root(eps, eps_in_sqrt: bool):
    if eps_in_sqrt:
        return lambda n: lax.rsqrt(n + eps)
    return lambda n: 1 / (jnp.sqrt(n) + eps)


def scale_by_rms(decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
                 eps_in_sqrt: bool = True,
                 bias_correction: bool = False) -> GradientTransformation:
    """Divide the updates by the root of the moving average of their squares (RMSProp).

    ``nu = (1 - decay) g**2 + decay nu``; the update is ``g / sqrt(nu + eps)`` (with
    ``eps_in_sqrt``) or ``g / (sqrt(nu) + eps)``, ``nu`` bias-corrected if asked.

    Arguments:
        decay: the decay of the moving average.
        eps: the term added for numerical stability.
        initial_scale: the initial value of ``nu``.
        eps_in_sqrt: add ``eps`` inside the square root (optax's default) or outside.
        bias_correction: divide ``nu`` by ``1 - decay**t`` (the state then has a count).

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByRmsState`` (with a count:
        ``ScaleByRmsWithCountState``).

    Example:
        >>> opt = scale_by_rms(decay=0.5)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([1.4142135], dtype=float32)
    """
    check_nonnegative("scale_by_rms", "decay", decay)
    check_nonnegative("scale_by_rms", "eps", eps)
    state_type = ScaleByRmsWithCountState if bias_correction else ScaleByRmsState
    root = _inverse_root(eps, eps_in_sqrt)

    def init_fn(params):
        nu = zeros_like_params("scale_by_rms.init", params, initial_scale)
        return ScaleByRmsWithCountState(_zero_count(), nu) if bias_correction else \
            ScaleByRmsState(nu)

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_rms.update", state, state_type)
        check_structure("scale_by_rms.update", updates, state.nu, "the state's nu")
        nu = tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count = safe_increment(state.count)
            nu_hat = tree_bias_correction(nu, decay, count)
        else:
            nu_hat = nu
        updates = tree_map(lambda n, g: root(n) * g, nu_hat, updates)
        new_state = ScaleByRmsWithCountState(count, nu) if bias_correction else \
            ScaleByRmsState(nu)
        return updates, new_state

    return GradientTransformation(init_fn, update_fn)


class ScaleByRStdDevState(NamedTuple):
    """The state of ``scale_by_stddev``: the moving averages of the gradients and squares."""

    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    """The state of ``scale_by_stddev(bias_correction=True)``: count, ``mu`` and ``nu``."""

    count: Any
    mu: Any
    nu: Any


def scale_by_stddev(decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
                    eps_in_sqrt: bool = True,
                    bias_correction: bool = False) -> GradientTransformation:
    """Divide the updates by their moving standard deviation (centred RMSProp).

    The update is ``g / sqrt(nu - mu**2 + eps)`` (or ``g / (sqrt(nu - mu**2) + eps)``), with
    ``mu`` and ``nu`` the moving averages of ``g`` and ``g**2``.

    Arguments:
        decay: the decay of the moving averages.
        eps: the term added for numerical stability.
        initial_scale: the initial value of ``nu``.
        eps_in_sqrt: add ``eps`` inside the square root or outside.
        bias_correction: divide ``mu`` and ``nu`` by ``1 - decay**t``.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByRStdDevState`` (with a count:
        ``ScaleByRStdDevWithCountState``).

    Example:
        >>> opt = scale_by_stddev(decay=0.5)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([2.], dtype=float32)
    """
    check_nonnegative("scale_by_stddev", "decay", decay)
    check_nonnegative("scale_by_stddev", "eps", eps)
    state_type = ScaleByRStdDevWithCountState if bias_correction else ScaleByRStdDevState
    root = _inverse_root(eps, eps_in_sqrt)

    def init_fn(params):
        mu = zeros_like_params("scale_by_stddev.init", params)
        nu = zeros_like_params("scale_by_stddev.init", params, initial_scale)
        return ScaleByRStdDevWithCountState(_zero_count(), mu, nu) if bias_correction else \
            ScaleByRStdDevState(mu, nu)

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_stddev.update", state, state_type)
        check_structure("scale_by_stddev.update", updates, state.nu, "the state's nu")
        mu = tree_update_moment(updates, state.mu, decay, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count = safe_increment(state.count)
            mu_hat = tree_bias_correction(mu, decay, count)
            nu_hat = tree_bias_correction(nu, decay, count)
        else:
            mu_hat, nu_hat = mu, nu
        updates = tree_map(lambda m, n, g: root(n - _abs_sq(m)) * g, mu_hat, nu_hat, updates)
        new_state = ScaleByRStdDevWithCountState(count, mu, nu) if bias_correction else \
            ScaleByRStdDevState(mu, nu)
        return updates, new_state

    return GradientTransformation(init_fn, update_fn)


class ScaleByRssState(NamedTuple):
    """The state of ``scale_by_rss``: the sum of the squared gradients so far."""

    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value: float = 0.1,
                 eps: float = 1e-7) -> GradientTransformation:
    """Divide the updates by the root of the sum of all squared gradients so far (Adagrad).

    ``s = s + g**2``; the update is ``g / sqrt(s + eps)`` where ``s > 0``, else 0.

    Arguments:
        initial_accumulator_value: the initial value of the sum.
        eps: added inside the square root.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByRssState``.

    Example:
        >>> opt = scale_by_rss(initial_accumulator_value=0.0, eps=0.0)
        >>> opt.update(jnp.array([-3.0, 0.0]), opt.init(jnp.zeros(2)))[0]
        Array([-1.,  0.], dtype=float32)
    """
    check_nonnegative("scale_by_rss", "initial_accumulator_value", initial_accumulator_value)
    check_nonnegative("scale_by_rss", "eps", eps)

    def init_fn(params):
        return ScaleByRssState(zeros_like_params("scale_by_rss.init", params,
                                                 initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_rss.update", state, ScaleByRssState)
        check_structure("scale_by_rss.update", updates, state.sum_of_squares,
                        "the state's sum_of_squares")
        sums = tree_map(lambda g, t: _abs_sq(g) + t, updates, state.sum_of_squares)
        updates = tree_map(lambda t, g: jnp.where(t > 0, lax.rsqrt(t + eps), 0.0) * g,
                           sums, updates)
        return updates, ScaleByRssState(sums)

    return GradientTransformation(init_fn, update_fn)


class ScaleByLionState(NamedTuple):
    """The state of ``scale_by_lion``: the step count (int32) and the momentum ``mu``."""

    count: Any
    mu: Any


def scale_by_lion(b1: float = 0.9, b2: float = 0.99, mu_dtype=None, *, mode: str = "hard",
                  smooth_beta: float = 1.0) -> GradientTransformation:
    """Lion's direction: the sign of ``(1 - b1) g + b1 mu``; then ``mu`` moves with ``b2``.

    Arguments:
        b1: the interpolation between gradient and momentum for the direction.
        b2: the decay of the momentum ``mu = (1 - b2) g + b2 mu``.
        mu_dtype: the dtype of ``mu`` in the state (None: the parameters').
        mode: ``"hard"`` (the sign), ``"smooth"`` (``tanh(smooth_beta * x)``) or
            ``"refined"`` (``x`` where ``|x| < 1``, else its sign).
        smooth_beta: the slope of the ``"smooth"`` mode.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByLionState``.

    Example:
        >>> opt = scale_by_lion()
        >>> opt.update(jnp.array([0.3, -2.0, 0.0]), opt.init(jnp.zeros(3)))[0]
        Array([ 1., -1.,  0.], dtype=float32)
    """
    check_nonnegative("scale_by_lion", "b1", b1)
    check_nonnegative("scale_by_lion", "b2", b2)
    directions = {"hard": jnp.sign, "smooth": lambda x: jnp.tanh(smooth_beta * x),
                  "refined": lambda x: jnp.where(jnp.abs(x) < 1.0, x, jnp.sign(x))}
    if mode not in directions:
        raise ValueError(f"scale_by_lion: unknown mode {mode!r}; use 'hard', 'smooth' or "
                         "'refined'")
    direction = directions[mode]

    def init_fn(params):
        return ScaleByLionState(_zero_count(),
                                zeros_like_params("scale_by_lion.init", params, dtype=mu_dtype))

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_lion.update", state, ScaleByLionState)
        check_structure("scale_by_lion.update", updates, state.mu, "the state's mu")
        new = tree_map(lambda g, m: direction((1.0 - b1) * g + b1 * m), updates, state.mu)
        mu = tree_cast(tree_update_moment(updates, state.mu, b2, 1), mu_dtype)
        return new, ScaleByLionState(safe_increment(state.count), mu)

    return GradientTransformation(init_fn, update_fn)


def _at_least(measure, x, minimum):
    """``max(measure(x), minimum)`` whose gradient is 0 (not NaN) below ``minimum``, as
    optax's ``safe_norm`` and ``safe_root_mean_squares``: below it, ``measure`` is taken of
    ones instead of ``x``."""
    value = measure(x)
    masked = measure(jnp.where(value <= minimum, jnp.ones_like(x), x))
    return jnp.where(value <= minimum, minimum, masked)


def _norm(x):
    return jnp.linalg.norm(jnp.ravel(x))


def _rms(x):
    return jnp.sqrt(jnp.mean(_abs_sq(x)))


def _safe_norm(x, min_norm):
    """``max(||x||, min_norm)`` (the l2 norm of all the elements), as optax's ``safe_norm``."""
    return _at_least(_norm, x, min_norm)


def scale_by_trust_ratio(min_norm: float = 0.0, trust_coefficient: float = 1.0,
                         eps: float = 0.0) -> GradientTransformation:
    """Scale each update by ``trust_coefficient * ||param|| / (||update|| + eps)`` (LARS/LAMB).

    The ratio is 1 where either norm is zero; norms are at least ``min_norm``.

    Arguments:
        min_norm: the smallest norm used.
        trust_coefficient: a multiplier of the ratio.
        eps: added to the update's norm.

    Returns:
        A stateless ``GradientTransformation``; its update needs ``params``.

    Example:
        >>> opt = scale_by_trust_ratio()
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)), jnp.array([0.0, 1.0]))[0]
        Array([0.6, 0.8], dtype=float32)
    """
    def scale_one(update, param):
        param_norm = _safe_norm(param, min_norm)
        update_norm = _safe_norm(update, min_norm)
        ratio = trust_coefficient * param_norm / (update_norm + eps)
        zero = jnp.logical_or(param_norm == 0.0, update_norm == 0.0)
        return update * jnp.where(zero, jnp.array(1.0, dtype=param.dtype), ratio)

    def update_fn(updates, state, params=None):
        require_params("scale_by_trust_ratio", params)
        return map_with_params("scale_by_trust_ratio.update", scale_one, updates, params), state

    return GradientTransformation(init_empty_state, update_fn)


class ScaleByOptimisticGradientState(NamedTuple):
    """The state of ``scale_by_optimistic_gradient``: first step flag and last gradient."""

    is_initial_step: Any
    previous_gradient: Any


def scale_by_optimistic_gradient(alpha: float = 1.0,
                                 beta: float = 1.0) -> GradientTransformation:
    """Optimistic gradients: ``(alpha + beta) g - beta g_prev`` (``g_prev = g`` at step 0).

    Arguments:
        alpha: the coefficient of the current gradient.
        beta: the coefficient of the correction by the previous gradient.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByOptimisticGradientState``.

    Example:
        >>> opt = scale_by_optimistic_gradient()
        >>> u, state = opt.update(jnp.array([1.0]), opt.init(jnp.zeros(1)))
        >>> u, opt.update(jnp.array([3.0]), state)[0]
        (Array([1.], dtype=float32), Array([5.], dtype=float32))
    """
    def init_fn(params):
        return ScaleByOptimisticGradientState(
            jnp.array(True),
            zeros_like_params("scale_by_optimistic_gradient.init", params))

    def update_fn(updates, state, params=None):
        del params
        check_state("scale_by_optimistic_gradient.update", state,
                    ScaleByOptimisticGradientState)
        check_structure("scale_by_optimistic_gradient.update", updates,
                        state.previous_gradient, "the state's previous_gradient")

        def step(g, prev):
            prev = jnp.where(state.is_initial_step, g, prev)
            return (alpha + beta) * g - beta * prev

        new = tree_map(step, updates, state.previous_gradient)
        return new, ScaleByOptimisticGradientState(jnp.array(False), updates)

    return GradientTransformation(init_fn, update_fn)


class EmaState(NamedTuple):
    """The state of ``ema``: the step count (int32) and the moving average."""

    count: Any
    ema: Any


def ema(decay: float, debias: bool = True, accumulator_dtype=None) -> GradientTransformation:
    """The exponential moving average of the updates, ``(1 - decay) g + decay ema``.

    Arguments:
        decay: the decay of the average.
        debias: divide by ``1 - decay**t`` (the average is then unbiased from step 1).
        accumulator_dtype: the dtype of the average in the state (None: the parameters').

    Returns:
        A ``GradientTransformation`` whose state is an ``EmaState``.

    Example:
        >>> opt = ema(0.5, debias=False)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([1.], dtype=float32)
    """
    check_nonnegative("ema", "decay", decay)

    def init_fn(params):
        return EmaState(_zero_count(),
                        zeros_like_params("ema.init", params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        check_state("ema.update", state, EmaState)
        check_structure("ema.update", updates, state.ema, "the state's ema")
        new_ema = tree_update_moment(updates, state.ema, decay, 1)
        count = safe_increment(state.count)
        updates = tree_bias_correction(new_ema, decay, count) if debias else new_ema
        return updates, EmaState(count, tree_cast(new_ema, accumulator_dtype))

    return GradientTransformation(init_fn, update_fn)


def scale_by_param_block(who: str, measure, min_scale) -> GradientTransformation:
    """Multiply each update by ``max(measure(param), min_scale)``; the update needs params."""
    def update_fn(updates, state, params=None):
        require_params(who, params)
        return map_with_params(f"{who}.update",
                               lambda u, p: u * _at_least(measure, p, min_scale), updates,
                               params), state

    return GradientTransformation(init_empty_state, update_fn)


def scale_by_param_block_rms(min_scale: float = 1e-3) -> GradientTransformation:
    """Multiply each update by the root mean square of its parameter (at least ``min_scale``).

    Arguments:
        min_scale: the smallest scale used.

    Returns:
        A stateless ``GradientTransformation``; its update needs ``params``.

    Example:
        >>> opt = scale_by_param_block_rms()
        >>> opt.update(jnp.ones(2), opt.init(jnp.zeros(2)), jnp.array([3.0, 4.0]))[0]
        Array([3.535534, 3.535534], dtype=float32)
    """
    return scale_by_param_block("scale_by_param_block_rms", _rms, min_scale)

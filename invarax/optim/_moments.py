"""More of optax's rescalings: Adamax, AMSGrad, AdaBelief, Yogi, RAdam, NovoGrad, AdaDelta,
Rprop, Adan, sign, centralisation, the parameter block norm and Polyak's step size."""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import numpy as jnp
from ..core.pytree import tree_map
from ._adaptive import _norm, scale_by_param_block
from ._base import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    check_state,
    check_structure,
    init_empty_state,
    require_params,
    zeros_like_params,
)
from ._transform import ScaleByAdamState, _zero_count, safe_increment
from ._tree_math import (
    _abs_sq,
    tree_add_scale,
    tree_bias_correction,
    tree_cast,
    tree_norm,
    tree_scale,
    tree_sub,
    tree_update_infinity_moment,
    tree_update_moment,
    tree_update_moment_per_elem_norm,
)


def _adam_state(who, initial=0.0, mu_dtype=None):
    def init_fn(params):
        return ScaleByAdamState(_zero_count(),
                                zeros_like_params(f"{who}.init", params, initial, mu_dtype),
                                zeros_like_params(f"{who}.init", params, initial))

    return init_fn


def _check(who, state, state_type, updates, moment):
    check_state(f"{who}.update", state, state_type)
    check_structure(f"{who}.update", updates, moment, "the state's moments")


def _nesterov_mu_hat(mu, updates, b1, count):
    return tree_map(lambda m, g: b1 * m + (1 - b1) * g,
                    tree_bias_correction(mu, b1, safe_increment(count)),
                    tree_bias_correction(updates, b1, count))


def scale_by_adamax(b1: float = 0.9, b2: float = 0.999,
                    eps: float = 1e-8) -> GradientTransformation:
    """Adamax: the bias-corrected first moment over the infinity-norm moment
    ``nu = max(|g| + eps, b2 * nu)``.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAdamState``.

    Example:
        >>> opt = scale_by_adamax()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([0.99999976], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adamax", state, ScaleByAdamState, updates, state.mu)
        count = safe_increment(state.count)
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_infinity_moment(updates, state.nu, b2, eps)
        updates = tree_map(lambda m, v: m / v, tree_bias_correction(mu, b1, count), nu)
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(_adam_state("scale_by_adamax"), update_fn)


class ScaleByAmsgradState(NamedTuple):
    """The state of ``scale_by_amsgrad``: count, moments and the running maximum of ``nu``."""

    count: Any
    mu: Any
    nu: Any
    nu_max: Any


def scale_by_amsgrad(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                     eps_root: float = 0.0, mu_dtype=None, bias_correction_mu: bool = True,
                     bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad: Adam with the running maximum of the (bias-corrected) second moment.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAmsgradState``.

    Example:
        >>> opt = scale_by_amsgrad()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([0.9999933], dtype=float32)
    """
    def init_fn(params):
        zeros = zeros_like_params("scale_by_amsgrad.init", params)
        return ScaleByAmsgradState(
            _zero_count(), zeros_like_params("scale_by_amsgrad.init", params, dtype=mu_dtype),
            zeros, zeros)

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_amsgrad", state, ScaleByAmsgradState, updates, state.nu)
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        mu_hat = tree_bias_correction(mu, b1, count) if bias_correction_mu else mu
        nu_eff = tree_bias_correction(nu, b2, count) if bias_correction_nu else nu
        nu_max = tree_map(jnp.maximum, state.nu_max, nu_eff)
        updates = tree_map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_max)
        return updates, ScaleByAmsgradState(count, tree_cast(mu, mu_dtype), nu, nu_max)

    return GradientTransformation(init_fn, update_fn)


class ScaleByBeliefState(NamedTuple):
    """The state of ``scale_by_belief``: count, first moment and the belief ``nu``."""

    count: Any
    mu: Any
    nu: Any


def scale_by_belief(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-16,
                    eps_root: float = 1e-16, *, nesterov: bool = False
                    ) -> GradientTransformation:
    """AdaBelief: Adam whose second moment is that of ``g - mu`` (the belief in ``mu``).

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByBeliefState``.

    Example:
        >>> opt = scale_by_belief()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([1.1111037], dtype=float32)
    """
    def init_fn(params):
        zeros = zeros_like_params("scale_by_belief.init", params)
        return ScaleByBeliefState(_zero_count(), zeros, zeros)

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_belief", state, ScaleByBeliefState, updates, state.mu)
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(tree_sub(updates, mu), state.nu, b2, 2)
        nu = tree_map(lambda v: v + eps_root, nu)
        count = safe_increment(state.count)
        mu_hat = _nesterov_mu_hat(mu, updates, b1, count) if nesterov else \
            tree_bias_correction(mu, b1, count)
        nu_hat = tree_bias_correction(nu, b2, count)
        updates = tree_map(lambda m, v: m / (jnp.sqrt(v) + eps), mu_hat, nu_hat)
        return updates, ScaleByBeliefState(count, mu, nu)

    return GradientTransformation(init_fn, update_fn)


def scale_by_yogi(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-3,
                  eps_root: float = 0.0,
                  initial_accumulator_value: float = 1e-6) -> GradientTransformation:
    """Yogi: Adam whose second moment moves additively, ``nu - (1-b2) sign(nu - g^2) g^2``.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAdamState``.

    Example:
        >>> opt = scale_by_yogi()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([0.9993734], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_yogi", state, ScaleByAdamState, updates, state.mu)
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_map(lambda g, v: v - (1 - b2) * jnp.sign(v - _abs_sq(g)) * _abs_sq(g),
                      updates, state.nu)
        count = safe_increment(state.count)
        updates = tree_map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps),
                           tree_bias_correction(mu, b1, count),
                           tree_bias_correction(nu, b2, count))
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(_adam_state("scale_by_yogi", initial_accumulator_value),
                                  update_fn)


def scale_by_radam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                   eps_root: float = 0.0, threshold: float = 5.0, *,
                   nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam: Adam's step times a variance rectification once its estimate is
    reliable (``rho >= threshold``), the bias-corrected momentum before.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAdamState``.

    Example:
        >>> opt = scale_by_radam()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([1.9999995], dtype=float32)
    """
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_radam", state, ScaleByAdamState, updates, state.mu)
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        b2t = b2 ** count
        ro = ro_inf - 2 * count * b2t / (1 - b2t)
        mu_hat = _nesterov_mu_hat(mu, updates, b1, count) if nesterov else \
            tree_bias_correction(mu, b1, count)
        nu_hat = tree_bias_correction(nu, b2, count)
        r = jnp.sqrt((ro - 4.0) * (ro - 2.0) * ro_inf / ((ro_inf - 4.0) * (ro_inf - 2.0) * ro))
        rectified = tree_map(lambda m, v: r.astype(m.dtype) * m / (jnp.sqrt(v + eps_root) + eps),
                             mu_hat, nu_hat)
        updates = tree_map(lambda t, f: jnp.where(ro >= threshold, t, f), rectified, mu_hat)
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(_adam_state("scale_by_radam"), update_fn)


class ScaleByNovogradState(NamedTuple):
    """The state of ``scale_by_novograd``: count, momentum ``mu`` and per-leaf ``nu``."""

    count: Any
    mu: Any
    nu: Any


def scale_by_novograd(b1: float = 0.9, b2: float = 0.25, eps: float = 1e-8,
                      eps_root: float = 0.0, weight_decay: float = 0.0,
                      mu_dtype=None) -> GradientTransformation:
    """NovoGrad: layer-wise second moments (one scalar per leaf, of ``||g||^2``) and a
    momentum of the normalised gradients plus weight decay.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByNovogradState``; its update
        needs ``params``.

    Example:
        >>> opt = scale_by_novograd()
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)), jnp.zeros(2))[0]
        Array([0.6, 0.8], dtype=float32)
    """
    def init_fn(params):
        mu = zeros_like_params("scale_by_novograd.init", params, dtype=mu_dtype)
        return ScaleByNovogradState(_zero_count(), mu,
                                    tree_map(lambda p: jnp.asarray(0.0, dtype=p.dtype), params))

    def mu_addition(g, p, n):
        return g / (jnp.sqrt(n + eps_root) + eps) + weight_decay * p

    def update_fn(updates, state, params=None):
        require_params("scale_by_novograd", params)
        _check("scale_by_novograd", state, ScaleByNovogradState, updates, state.mu)
        count = safe_increment(state.count)
        first = count == 1
        norms = tree_map(lambda g, n: (jnp.linalg.norm(jnp.ravel(g)) ** 2).astype(n.dtype),
                         updates, state.nu)
        nu = tree_map(lambda a, b: jnp.where(first, a, b), norms,
                      tree_update_moment(norms, state.nu, b2, 1))
        added = tree_map(mu_addition, updates, params, nu)
        mu = tree_map(lambda a, m: jnp.where(first, a, b1 * m + a), added, state.mu)
        mu = tree_cast(mu, mu_dtype)
        return mu, ScaleByNovogradState(count, mu, nu)

    return GradientTransformation(init_fn, update_fn)


class ScaleByAdaDeltaState(NamedTuple):
    """The state of ``scale_by_adadelta``: the averages of squared gradients and updates."""

    e_g: Any
    e_x: Any


def scale_by_adadelta(rho: float = 0.9, eps: float = 1e-6) -> GradientTransformation:
    """AdaDelta: ``g * sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps)``.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAdaDeltaState``.

    Example:
        >>> opt = scale_by_adadelta()
        >>> opt.update(jnp.array([1.0]), opt.init(jnp.zeros(1)))[0]
        Array([0.00316226], dtype=float32)
    """
    def init_fn(params):
        zeros = zeros_like_params("scale_by_adadelta.init", params)
        return ScaleByAdaDeltaState(zeros, zeros)

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adadelta", state, ScaleByAdaDeltaState, updates, state.e_g)
        e_g = tree_update_moment(updates, state.e_g, rho, 2)
        updates = tree_map(lambda g, eg, ex: (jnp.sqrt(ex + eps) / jnp.sqrt(eg + eps)) * g,
                           updates, e_g, state.e_x)
        e_x = tree_update_moment(updates, state.e_x, rho, 2)
        return updates, ScaleByAdaDeltaState(e_g, e_x)

    return GradientTransformation(init_fn, update_fn)


class ScaleByRpropState(NamedTuple):
    """The state of ``scale_by_rprop``: per-element step sizes and the last updates."""

    step_sizes: Any
    prev_updates: Any


def scale_by_rprop(learning_rate: float, eta_minus: float = 0.5, eta_plus: float = 1.2,
                   min_step_size: float = 1e-6,
                   max_step_size: float = 50.0) -> GradientTransformation:
    """Rprop: per-element steps along the gradient's sign, grown by ``eta_plus`` while the
    sign holds and shrunk by ``eta_minus`` when it flips (that step is skipped).

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByRpropState``.

    Example:
        >>> opt = scale_by_rprop(0.1)
        >>> u, state = opt.update(jnp.array([2.0, -1.0]), opt.init(jnp.zeros(2)))
        >>> u, opt.update(jnp.array([2.0, 1.0]), state)[0]
        (Array([0., 0.], dtype=float32), Array([0.1, 0. ], dtype=float32))
    """
    def init_fn(params):
        return ScaleByRpropState(
            zeros_like_params("scale_by_rprop.init", params, learning_rate),
            zeros_like_params("scale_by_rprop.init", params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_rprop", state, ScaleByRpropState, updates, state.step_sizes)
        sign = tree_map(lambda g, prev: g * prev, updates, state.prev_updates)
        step_sizes = tree_map(
            lambda s, size: jnp.where(s == 0, size, jnp.clip(
                size * jnp.where(s > 0, eta_plus, eta_minus), min_step_size, max_step_size)),
            sign, state.step_sizes)
        prev_updates = tree_map(
            lambda s, g, size: jnp.where(s < 0, jnp.zeros_like(g), size * jnp.sign(g)),
            sign, updates, step_sizes)
        updates = tree_map(lambda s, g, prev: jnp.where(s < 0, jnp.zeros_like(prev), prev),
                           sign, prev_updates, state.prev_updates)
        return updates, ScaleByRpropState(step_sizes, prev_updates)

    return GradientTransformation(init_fn, update_fn)


def scale_by_sign() -> GradientTransformation:
    """Replace each update by its sign.

    Example:
        >>> scale_by_sign().update(jnp.array([-3.0, 0.0, 0.5]), EmptyState())[0]
        Array([-1.,  0.,  1.], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_map(jnp.sign, updates), state

    return GradientTransformation(init_empty_state, update_fn)


def centralize() -> GradientTransformation:
    """Subtract from each update of two or more axes its mean over all axes but the first.

    Example:
        >>> centralize().update(jnp.array([[1.0, 3.0]]), EmptyState())[0]
        Array([[-1.,  1.]], dtype=float32)
    """
    def subtract_mean(g):
        if g.ndim > 1:
            return g - jnp.mean(g, tuple(range(1, g.ndim)), keepdims=True)
        return g

    def update_fn(updates, state, params=None):
        del params
        return tree_map(subtract_mean, updates), state

    return GradientTransformation(init_empty_state, update_fn)


def scale_by_param_block_norm(min_scale: float = 1e-3) -> GradientTransformation:
    """Multiply each update by the l2 norm of its parameter (at least ``min_scale``).

    Example:
        >>> opt = scale_by_param_block_norm()
        >>> opt.update(jnp.ones(2), opt.init(jnp.zeros(2)), jnp.array([3.0, 4.0]))[0]
        Array([5., 5.], dtype=float32)
    """
    return scale_by_param_block("scale_by_param_block_norm", _norm, min_scale)


def scale_by_polyak(f_min: float = 0.0, max_learning_rate: float = 1.0, eps: float = 0.0,
                    variant: str = "sps") -> GradientTransformationExtraArgs:
    """Scale by Polyak's step size ``min((f - f_min) / ||g||^2, max_learning_rate)``.

    Arguments:
        f_min: a lower bound of the function (its minimum, if known).
        max_learning_rate: the largest step size.
        eps: added to ``||g||^2``.
        variant: ``"sps"``, or ``"sps+"`` (the gap ``f - f_min`` clipped at 0).

    Returns:
        A ``GradientTransformationExtraArgs``; its update needs the keyword ``value``.

    Example:
        >>> opt = scale_by_polyak()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)), value=1.0)[0]
        Array([0.5], dtype=float32)
    """
    if variant not in ("sps", "sps+"):
        raise ValueError(f"scale_by_polyak: unknown variant {variant!r}; use 'sps' or 'sps+'")

    def update_fn(updates, state, params=None, *, value, **extra_args):
        del params, extra_args
        grad_sq_norm = tree_norm(updates, squared=True)
        gap = jnp.asarray(value - f_min).astype(grad_sq_norm.dtype)
        if variant == "sps+":
            gap = jnp.maximum(gap, 0.0)
        step = jnp.where(grad_sq_norm + eps <= jnp.finfo(float).eps, jnp.array(0.0),
                         jnp.minimum(gap / (grad_sq_norm + eps), max_learning_rate))
        return tree_scale(step, updates), state

    return GradientTransformationExtraArgs(init_empty_state, update_fn)



class ScaleByAdanState(NamedTuple):
    """The state of ``scale_by_adan``: the three moments, the last gradient and the count."""

    m: Any
    v: Any
    n: Any
    g: Any
    t: Any


def scale_by_adan(b1: float = 0.98, b2: float = 0.92, b3: float = 0.99, eps: float = 1e-8,
                  eps_root: float = 0.0) -> GradientTransformation:
    """Adan: Nesterov-style moments of the gradient and of its change between steps.

    Returns:
        A ``GradientTransformation`` whose state is a ``ScaleByAdanState``.

    Example:
        >>> opt = scale_by_adan()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([1.0000005], dtype=float32)
    """
    def init_fn(params):
        zeros = zeros_like_params("scale_by_adan.init", params)
        return ScaleByAdanState(zeros, zeros, zeros, zeros, _zero_count())

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adan", state, ScaleByAdanState, updates, state.m)
        g = updates
        diff = tree_map(lambda a, b: jnp.where(state.t == 0, a, b), tree_map(jnp.zeros_like, g),
                        tree_sub(g, state.g))
        m = tree_update_moment(g, state.m, b1, 1)
        v = tree_update_moment(diff, state.v, b2, 1)
        n = tree_update_moment_per_elem_norm(tree_add_scale(g, 1 - b2, diff), state.n, b3, 2)
        t = safe_increment(state.t)
        u = tree_add_scale(tree_bias_correction(m, b1, t), 1 - b2,
                           tree_bias_correction(v, b2, t))
        u = tree_map(lambda x, nh: x / (jnp.sqrt(nh + eps_root) + eps), u,
                     tree_bias_correction(n, b3, t))
        return u, ScaleByAdanState(m, v, n, g, t)

    return GradientTransformation(init_fn, update_fn)

"""The optimizers (``sgd``, ``adam``, ``adamw``, ``rmsprop``, ``adagrad``, ``lion``, ``lamb``,
``adafactor``, ``optimistic_gradient_descent``), each a chain of building blocks."""

from __future__ import annotations

from .. import numpy as jnp
from ._adaptive import (
    ema,
    scale_by_lion,
    scale_by_optimistic_gradient,
    scale_by_param_block_rms,
    scale_by_rms,
    scale_by_rss,
    scale_by_stddev,
    scale_by_trust_ratio,
)
from ._base import GradientTransformation, chain, check_nonnegative, identity
from ._clipping import clip_by_block_rms
from ._factorized import scale_by_factored_rms
from ._transform import (
    add_decayed_weights,
    scale,
    scale_by_adam,
    scale_by_learning_rate,
    trace,
)


def _check_learning_rate(who: str, learning_rate) -> None:
    if not callable(learning_rate):
        check_nonnegative(who, "learning_rate", learning_rate)


def _check_weight_decay(who: str, weight_decay) -> None:
    if not callable(weight_decay):
        check_nonnegative(who, "weight_decay", weight_decay)


def sgd(learning_rate, momentum: float | None = None, nesterov: bool = False,
        accumulator_dtype=None) -> GradientTransformation:
    """Stochastic gradient descent, with optional (Nesterov) momentum.

    The update is ``-learning_rate * g`` or, with momentum, ``-learning_rate * t`` where
    ``t = g + momentum * t`` (Nesterov: ``-learning_rate * (g + momentum * t)``).

    Arguments:
        learning_rate: a non-negative float, or a schedule (a function of the step count).
        momentum: the momentum coefficient; None for plain SGD.
        nesterov: use Nesterov's momentum.
        accumulator_dtype: the dtype of the momentum buffer (None: the parameters').

    Returns:
        ``chain(trace(momentum, nesterov, accumulator_dtype),
        scale_by_learning_rate(learning_rate))``.

    Example:
        >>> opt = sgd(0.1, momentum=0.9)
        >>> params = jnp.array([1.0, 2.0])
        >>> updates, state = opt.update(jnp.array([1.0, -1.0]), opt.init(params))
        >>> apply_updates(params, updates)
        Array([0.9, 2.1], dtype=float32)
    """
    _check_learning_rate("sgd", learning_rate)
    return chain(
        identity() if momentum is None else trace(decay=momentum, nesterov=nesterov,
                                                  accumulator_dtype=accumulator_dtype),
        scale_by_learning_rate(learning_rate),
    )


def adam(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
         eps_root: float = 0.0, mu_dtype=None, *, nesterov: bool = False
         ) -> GradientTransformation:
    """The Adam optimizer: ``-learning_rate`` times the bias-corrected ``mu / (sqrt(nu) + eps)``.

    Arguments:
        learning_rate: a non-negative float, or a schedule (a function of the step count).
        b1: the decay of the first moment.
        b2: the decay of the second moment.
        eps: added to the denominator, outside the square root.
        eps_root: added inside the square root.
        mu_dtype: the dtype of the first moment in the state (None: the parameters').
        nesterov: use Nesterov's momentum (NAdam).

    Returns:
        ``chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
        scale_by_learning_rate(learning_rate))``.

    Example:
        >>> opt = adam(0.1)
        >>> params = jnp.array([1.0, 2.0])
        >>> updates, state = opt.update(jnp.array([0.5, -3.0]), opt.init(params))
        >>> apply_updates(params, updates)
        Array([0.9000007, 2.0999994], dtype=float32)
    """
    _check_learning_rate("adam", learning_rate)
    return chain(
        scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                      nesterov=nesterov),
        scale_by_learning_rate(learning_rate),
    )


def adamw(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          eps_root: float = 0.0, mu_dtype=None, weight_decay: float = 1e-4,
          mask=None, *, nesterov: bool = False) -> GradientTransformation:
    """Adam with decoupled weight decay: the Adam direction plus ``weight_decay * params``.

    Arguments:
        learning_rate: a non-negative float, or a schedule (a function of the step count).
        b1: the decay of the first moment.
        b2: the decay of the second moment.
        eps: added to the denominator, outside the square root.
        eps_root: added inside the square root.
        weight_decay: the decay coefficient (it is multiplied by the learning rate too).
        mask: which parameters to decay: a pytree of bools or a function of the parameters
            returning one (for example, to skip biases); None decays all.
        nesterov: use Nesterov's momentum (NAdamW).

    Returns:
        ``chain(scale_by_adam(...), add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate))``; its update needs ``params``.

    Example:
        >>> opt = adamw(0.1, weight_decay=0.5)
        >>> params = jnp.array([1.0, 2.0])
        >>> updates, state = opt.update(jnp.array([0.5, -3.0]), opt.init(params), params)
        >>> apply_updates(params, updates)
        Array([0.8500007, 1.9999993], dtype=float32)
    """
    _check_learning_rate("adamw", learning_rate)
    _check_weight_decay("adamw", weight_decay)
    return chain(
        scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                      nesterov=nesterov),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    )


def _momentum(momentum, nesterov):
    return identity() if momentum is None else trace(decay=momentum, nesterov=nesterov)


def rmsprop(learning_rate, decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
            eps_in_sqrt: bool = True, centered: bool = False, momentum: float | None = None,
            nesterov: bool = False, bias_correction: bool = False) -> GradientTransformation:
    """RMSProp: the gradients divided by the root of their moving mean square (or variance).

    Arguments:
        learning_rate: a non-negative float, or a schedule.
        decay: the decay of the moving averages.
        eps: the term added for numerical stability.
        initial_scale: the initial value of the mean square.
        eps_in_sqrt: add ``eps`` inside the square root (default) or outside.
        centered: divide by the standard deviation (``scale_by_stddev``) instead.
        momentum: a momentum applied after the scaling; None for none.
        nesterov: use Nesterov's momentum.
        bias_correction: bias-correct the moving averages.

    Returns:
        ``chain(scale_by_rms(...) or scale_by_stddev(...), scale_by_learning_rate(...),
        trace(momentum) or identity())``.

    Example:
        >>> opt = rmsprop(0.1)
        >>> opt.update(jnp.array([1.0, -4.0]), opt.init(jnp.zeros(2)))[0]
        Array([-0.31622776,  0.31622776], dtype=float32)
    """
    _check_learning_rate("rmsprop", learning_rate)
    scaling = scale_by_stddev if centered else scale_by_rms
    return chain(
        scaling(decay=decay, eps=eps, initial_scale=initial_scale, eps_in_sqrt=eps_in_sqrt,
                bias_correction=bias_correction),
        scale_by_learning_rate(learning_rate),
        _momentum(momentum, nesterov),
    )


def adagrad(learning_rate, initial_accumulator_value: float = 0.1,
            eps: float = 1e-7) -> GradientTransformation:
    """Adagrad: the gradients divided by the root of the sum of all their squares so far.

    Arguments:
        learning_rate: a non-negative float, or a schedule.
        initial_accumulator_value: the initial value of the sum of squares.
        eps: added inside the square root.

    Returns:
        ``chain(scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(...))``.

    Example:
        >>> opt = adagrad(0.1, initial_accumulator_value=0.0, eps=0.0)
        >>> opt.update(jnp.array([2.0, -0.5]), opt.init(jnp.zeros(2)))[0]
        Array([-0.1,  0.1], dtype=float32)
    """
    _check_learning_rate("adagrad", learning_rate)
    return chain(scale_by_rss(initial_accumulator_value=initial_accumulator_value, eps=eps),
                 scale_by_learning_rate(learning_rate))


def lion(learning_rate, b1: float = 0.9, b2: float = 0.99, mu_dtype=None,
         weight_decay: float = 1e-3, mask=None) -> GradientTransformation:
    """Lion: steps of fixed size along the sign of a momentum, with decoupled weight decay.

    Arguments:
        learning_rate: a non-negative float, or a schedule.
        b1: the interpolation between gradient and momentum for the direction.
        b2: the decay of the momentum.
        mu_dtype: the dtype of the momentum in the state (None: the parameters').
        weight_decay: the decoupled weight decay (multiplied by the learning rate too).
        mask: which parameters to decay (as ``adamw``'s).

    Returns:
        ``chain(scale_by_lion(b1, b2, mu_dtype), add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate))``; its update needs ``params``.

    Example:
        >>> opt = lion(0.1, weight_decay=0.0)
        >>> opt.update(jnp.array([0.3, -2.0]), opt.init(jnp.zeros(2)), jnp.zeros(2))[0]
        Array([-0.1,  0.1], dtype=float32)
    """
    _check_learning_rate("lion", learning_rate)
    _check_weight_decay("lion", weight_decay)
    return chain(scale_by_lion(b1=b1, b2=b2, mu_dtype=mu_dtype),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def lamb(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-6,
         eps_root: float = 0.0, weight_decay: float = 0.0, mask=None) -> GradientTransformation:
    """LAMB: Adam's direction with weight decay, rescaled per leaf by the trust ratio.

    Arguments:
        learning_rate: a non-negative float, or a schedule.
        b1: the decay of the first moment.
        b2: the decay of the second moment.
        eps: added to the denominator, outside the square root.
        eps_root: added inside the square root.
        weight_decay: the decoupled weight decay.
        mask: which parameters to decay (as ``adamw``'s).

    Returns:
        ``chain(scale_by_adam(...), add_decayed_weights(...), scale_by_trust_ratio(),
        scale_by_learning_rate(learning_rate))``; its update needs ``params``.

    Example:
        >>> opt = lamb(0.1)
        >>> params = jnp.array([3.0, 4.0])
        >>> opt.update(jnp.array([1.0, 1.0]), opt.init(params), params)[0]
        Array([-0.35355338, -0.35355338], dtype=float32)
    """
    _check_learning_rate("lamb", learning_rate)
    _check_weight_decay("lamb", weight_decay)
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay=weight_decay, mask=mask),
                 scale_by_trust_ratio(),
                 scale_by_learning_rate(learning_rate))


def optimistic_gradient_descent(learning_rate, alpha: float = 1.0,
                                beta: float = 1.0) -> GradientTransformation:
    """Optimistic gradient descent: steps along ``(alpha + beta) g - beta g_prev``.

    Arguments:
        learning_rate: a non-negative float, or a schedule.
        alpha: the coefficient of the current gradient.
        beta: the coefficient of the correction by the previous gradient.

    Returns:
        ``chain(scale_by_optimistic_gradient(alpha, beta), scale_by_learning_rate(...))``.

    Example:
        >>> opt = optimistic_gradient_descent(0.1)
        >>> opt.update(jnp.array([1.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.1], dtype=float32)
    """
    _check_learning_rate("optimistic_gradient_descent", learning_rate)
    return chain(scale_by_optimistic_gradient(alpha=alpha, beta=beta),
                 scale_by_learning_rate(learning_rate))


def adafactor(learning_rate=None, min_dim_size_to_factor: int = 128, decay_rate: float = 0.8,
              decay_offset: int = 0, multiply_by_parameter_scale: bool = True,
              clipping_threshold: float | None = 1.0, momentum: float | None = None,
              dtype_momentum=jnp.float32, weight_decay_rate: float | None = None,
              eps: float = 1e-30, factored: bool = True,
              weight_decay_mask=None) -> GradientTransformation:
    """Adafactor: a factored RMS scaling (memory-light for matrices), clipped and rescaled.

    Arguments:
        learning_rate: a non-negative float, a schedule, or None (no scaling by a rate:
            the step is then set by the parameter scale alone).
        min_dim_size_to_factor: factor only leaves whose two largest axes are this long.
        decay_rate: the exponent of the second-moment decay schedule.
        decay_offset: the step offset of that schedule.
        multiply_by_parameter_scale: multiply the updates by each parameter's RMS.
        clipping_threshold: the largest RMS of an update leaf (None: no clipping).
        momentum: a moving average of the updates (None: none).
        dtype_momentum: the dtype of that average.
        weight_decay_rate: a decoupled weight decay (None: none).
        eps: added to the squared gradients.
        factored: factor the second moments at all.
        weight_decay_mask: which parameters to decay.

    Returns:
        A chain of ``scale_by_factored_rms``, ``clip_by_block_rms``,
        ``scale_by_learning_rate``, ``scale_by_param_block_rms``, ``ema``,
        ``add_decayed_weights`` (those selected) and ``scale(-1)``; its update needs
        ``params``.

    Example:
        >>> opt = adafactor(0.1, multiply_by_parameter_scale=False)
        >>> opt.update(jnp.array([2.0, -0.5]), opt.init(jnp.zeros(2)), jnp.zeros(2))[0]
        Array([-0.1,  0.1], dtype=float32)
    """
    links = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor,
                                   eps)]
    if clipping_threshold is not None:
        links.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        _check_learning_rate("adafactor", learning_rate)
        links.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        links.append(scale_by_param_block_rms())
    if momentum is not None:
        links.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        links.append(add_decayed_weights(weight_decay_rate, mask=weight_decay_mask))
    links.append(scale(-1))
    return chain(*links)

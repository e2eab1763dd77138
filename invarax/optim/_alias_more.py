"""The less common optimizers of optax: NAdam(W), Adamax(W), AMSGrad, AdaBelief, signSGD,
RAdam, Yogi, NovoGrad, AdaDelta, Fromage, LARS, Polyak SGD, Rprop, Adan, optimistic Adam
and SM3."""

from __future__ import annotations

import functools

from ._adaptive import scale_by_optimistic_gradient, scale_by_trust_ratio
from ._alias import _check_learning_rate, adam, adamw, sgd
from ._base import GradientTransformation, chain
from ._factorized import scale_by_sm3
from ._moments import (
    scale_by_adadelta,
    scale_by_adamax,
    scale_by_adan,
    scale_by_amsgrad,
    scale_by_belief,
    scale_by_novograd,
    scale_by_polyak,
    scale_by_radam,
    scale_by_rprop,
    scale_by_sign,
    scale_by_yogi,
)
from ._transform import (
    add_decayed_weights,
    masked,
    scale,
    scale_by_adam,
    scale_by_learning_rate,
    trace,
)

nadam = functools.partial(adam, nesterov=True)
nadam.__doc__ = """NAdam: ``adam(..., nesterov=True)``.

Example:
    >>> opt = nadam(0.1)
    >>> opt.update(jnp.array([1.0]), opt.init(jnp.zeros(1)))[0]
    Array([-0.14736815], dtype=float32)
"""

nadamw = functools.partial(adamw, nesterov=True)
nadamw.__doc__ = """NAdamW: ``adamw(..., nesterov=True)`` (its update needs ``params``)."""


def _with_rate(who, transform, learning_rate):
    _check_learning_rate(who, learning_rate)
    return chain(transform, scale_by_learning_rate(learning_rate))


def adamax(learning_rate, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> GradientTransformation:
    """Adamax: ``chain(scale_by_adamax(b1, b2, eps), scale_by_learning_rate(...))``.

    Example:
        >>> opt = adamax(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.09999998], dtype=float32)
    """
    return _with_rate("adamax", scale_by_adamax(b1=b1, b2=b2, eps=eps), learning_rate)


def adamaxw(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
            weight_decay=1e-4, mask=None) -> GradientTransformation:
    """Adamax with decoupled weight decay (its update needs ``params``).

    Example:
        >>> opt = adamaxw(0.1, weight_decay=0.0)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)), jnp.zeros(1))[0]
        Array([-0.09999998], dtype=float32)
    """
    _check_learning_rate("adamaxw", learning_rate)
    return chain(scale_by_adamax(b1=b1, b2=b2, eps=eps), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def amsgrad(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
            eps_root: float = 0.0, mu_dtype=None, bias_correction_mu: bool = True,
            bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad: ``chain(scale_by_amsgrad(...), scale_by_learning_rate(...))``.

    Example:
        >>> opt = amsgrad(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.09999933], dtype=float32)
    """
    return _with_rate("amsgrad", scale_by_amsgrad(
        b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
        bias_correction_mu=bias_correction_mu, bias_correction_nu=bias_correction_nu),
        learning_rate)


def adabelief(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-16,
              eps_root: float = 1e-16, *, nesterov: bool = False) -> GradientTransformation:
    """AdaBelief: ``chain(scale_by_belief(...), scale_by_learning_rate(...))``.

    Example:
        >>> opt = adabelief(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.11111037], dtype=float32)
    """
    return _with_rate("adabelief", scale_by_belief(b1=b1, b2=b2, eps=eps, eps_root=eps_root,
                                                   nesterov=nesterov), learning_rate)


def sign_sgd(learning_rate) -> GradientTransformation:
    """signSGD: steps of ``learning_rate`` along the sign of each gradient element.

    Example:
        >>> opt = sign_sgd(0.1)
        >>> opt.update(jnp.array([2.0, -0.5]), opt.init(jnp.zeros(2)))[0]
        Array([-0.1,  0.1], dtype=float32)
    """
    return _with_rate("sign_sgd", scale_by_sign(), learning_rate)


def radam(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          eps_root: float = 0.0, threshold: float = 5.0, *,
          nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam: ``chain(scale_by_radam(...), scale_by_learning_rate(...))``.

    Example:
        >>> opt = radam(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.19999996], dtype=float32)
    """
    return _with_rate("radam", scale_by_radam(b1=b1, b2=b2, eps=eps, eps_root=eps_root,
                                              threshold=threshold, nesterov=nesterov),
                      learning_rate)


def yogi(learning_rate, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-3) -> GradientTransformation:
    """Yogi: ``chain(scale_by_yogi(b1, b2, eps), scale_by_learning_rate(...))``.

    Example:
        >>> opt = yogi(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.09993734], dtype=float32)
    """
    return _with_rate("yogi", scale_by_yogi(b1=b1, b2=b2, eps=eps), learning_rate)


def novograd(learning_rate, b1: float = 0.9, b2: float = 0.25, eps: float = 1e-6,
             eps_root: float = 0.0, weight_decay: float = 0.0) -> GradientTransformation:
    """NovoGrad (its update needs ``params``).

    Example:
        >>> opt = novograd(0.1)
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)), jnp.zeros(2))[0]
        Array([-0.05999999, -0.07999998], dtype=float32)
    """
    return _with_rate("novograd", scale_by_novograd(b1=b1, b2=b2, eps=eps, eps_root=eps_root,
                                                    weight_decay=weight_decay), learning_rate)


def adadelta(learning_rate=None, rho: float = 0.9, eps: float = 1e-6, weight_decay=0.0,
             weight_decay_mask=None) -> GradientTransformation:
    """AdaDelta (with optional weight decay; ``learning_rate=None``: no rate at all).

    Example:
        >>> opt = adadelta(1.0)
        >>> opt.update(jnp.array([1.0]), opt.init(jnp.zeros(1)), jnp.zeros(1))[0]
        Array([-0.00316226], dtype=float32)
    """
    if learning_rate is not None:
        _check_learning_rate("adadelta", learning_rate)
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 scale_by_adadelta(rho=rho, eps=eps), scale_by_learning_rate(learning_rate))


def fromage(learning_rate, min_norm: float = 1e-6) -> GradientTransformation:
    """Fromage: trust-ratio steps with a weight shrinkage keeping the parameters' norms.

    Example:
        >>> opt = fromage(0.1)
        >>> p = jnp.array([3.0, 4.0])
        >>> opt.update(jnp.array([1.0, 0.0]), opt.init(p), p)[0]
        Array([-0.512407  , -0.01985124], dtype=float32)
    """
    _check_learning_rate("fromage", learning_rate)
    if not callable(learning_rate):
        mult = 1 / (1 + learning_rate ** 2) ** 0.5
        return chain(scale_by_trust_ratio(min_norm),
                     scale_by_learning_rate(learning_rate * mult),
                     add_decayed_weights(mult - 1))

    def mult_lr(count):
        return 1 / (1 + learning_rate(count) ** 2) ** 0.5

    return chain(scale_by_trust_ratio(min_norm),
                 scale_by_learning_rate(lambda c: mult_lr(c) * learning_rate(c)),
                 add_decayed_weights(lambda c: mult_lr(c) - 1))


def lars(learning_rate, weight_decay=0.0, weight_decay_mask=True,
         trust_coefficient: float = 0.001, eps: float = 0.0, trust_ratio_mask=True,
         momentum: float = 0.9, nesterov: bool = False) -> GradientTransformation:
    """LARS: weight decay, a layer-wise trust ratio, the rate, then momentum.

    Example:
        >>> opt = lars(0.1)
        >>> p = jnp.array([3.0, 4.0])
        >>> opt.update(jnp.array([1.0, 0.0]), opt.init(p), p)[0]
        Array([-0.0005,  0.    ], dtype=float32)
    """
    _check_learning_rate("lars", learning_rate)
    return chain(
        add_decayed_weights(weight_decay, mask=weight_decay_mask),
        masked(scale_by_trust_ratio(trust_coefficient=trust_coefficient, eps=eps),
               mask=trust_ratio_mask),
        scale_by_learning_rate(learning_rate),
        trace(decay=momentum, nesterov=nesterov))


def polyak_sgd(max_learning_rate: float = 1.0, scaling=1.0, f_min: float = 0.0,
               eps: float = 0.0, variant: str = "sps") -> GradientTransformation:
    """SGD with Polyak's step size (its update needs the keyword ``value``).

    Example:
        >>> opt = polyak_sgd()
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)), value=1.0)[0]
        Array([-0.5], dtype=float32)
    """
    return chain(sgd(learning_rate=scaling),
                 scale_by_polyak(max_learning_rate=max_learning_rate, f_min=f_min, eps=eps,
                                 variant=variant))


def rprop(learning_rate: float, eta_minus: float = 0.5, eta_plus: float = 1.2,
          min_step_size: float = 1e-6, max_step_size: float = 50.0) -> GradientTransformation:
    """Rprop: ``chain(scale_by_rprop(...), scale(-1))``.

    Example:
        >>> opt = rprop(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.], dtype=float32)
    """
    return chain(scale_by_rprop(learning_rate=learning_rate, eta_minus=eta_minus,
                                eta_plus=eta_plus, min_step_size=min_step_size,
                                max_step_size=max_step_size), scale(-1.0))


def adan(learning_rate, b1: float = 0.98, b2: float = 0.92, b3: float = 0.99, eps: float = 1e-8,
         eps_root: float = 1e-8, weight_decay=0.0, mask=None) -> GradientTransformation:
    """Adan with decoupled weight decay (its update needs ``params``).

    Example:
        >>> opt = adan(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)), jnp.zeros(1))[0]
        Array([-0.10000005], dtype=float32)
    """
    _check_learning_rate("adan", learning_rate)
    return chain(scale_by_adan(b1=b1, b2=b2, b3=b3, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def optimistic_adam(learning_rate: float, optimism: float | None = None, b1: float = 0.9,
                    b2: float = 0.999, eps: float = 1e-08, eps_root: float = 0.0,
                    mu_dtype=None, *, nesterov: bool = True) -> GradientTransformation:
    """Optimistic Adam: optimistic gradients of NAdam's directions (optax's first version,
    which takes no schedule; ``optimism`` defaults to the learning rate).

    Example:
        >>> opt = optimistic_adam(0.1)
        >>> opt.update(jnp.array([2.0]), opt.init(jnp.zeros(1)))[0]
        Array([-0.14736743], dtype=float32)
    """
    if callable(learning_rate):
        raise ValueError("optimistic_adam: this version takes no learning rate schedule; pass "
                         "a float")
    _check_learning_rate("optimistic_adam", learning_rate)
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_optimistic_gradient(alpha=learning_rate,
                                              beta=learning_rate if optimism is None else
                                              optimism),
                 scale_by_learning_rate(1.0))


def sm3(learning_rate: float, momentum: float = 0.9) -> GradientTransformation:
    """SM3: ``chain(scale_by_sm3(momentum), scale(-learning_rate))``.

    Example:
        >>> opt = sm3(1.0)
        >>> opt.update(jnp.array([2.0, -0.5]), opt.init(jnp.zeros(2)))[0]
        Array([-0.1,  0.1], dtype=float32)
    """
    _check_learning_rate("sm3", learning_rate)
    return chain(scale_by_sm3(momentum), scale(-learning_rate))

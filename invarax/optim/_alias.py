"""The optimizers: ``sgd``, ``adam`` and ``adamw``, each a chain of building blocks."""

from __future__ import annotations

from ._base import GradientTransformation, chain, check_nonnegative, identity
from ._transform import add_decayed_weights, scale_by_adam, scale_by_learning_rate, trace


def _check_learning_rate(who: str, learning_rate) -> None:
    if not callable(learning_rate):
        check_nonnegative(who, "learning_rate", learning_rate)


def sgd(learning_rate, momentum: float | None = None,
        nesterov: bool = False) -> GradientTransformation:
    """Stochastic gradient descent, with optional (Nesterov) momentum.

    The update is ``-learning_rate * g`` or, with momentum, ``-learning_rate * t`` where
    ``t = g + momentum * t`` (Nesterov: ``-learning_rate * (g + momentum * t)``).

    Arguments:
        learning_rate: a non-negative float, or a schedule (a function of the step count).
        momentum: the momentum coefficient; None for plain SGD.
        nesterov: use Nesterov's momentum.

    Returns:
        ``chain(trace(momentum, nesterov), scale_by_learning_rate(learning_rate))``.

    Example:
        >>> opt = sgd(0.1, momentum=0.9)
        >>> params = jnp.array([1.0, 2.0])
        >>> updates, state = opt.update(jnp.array([1.0, -1.0]), opt.init(params))
        >>> apply_updates(params, updates)
        Array([0.9, 2.1], dtype=float32)
    """
    _check_learning_rate("sgd", learning_rate)
    return chain(
        identity() if momentum is None else trace(decay=momentum, nesterov=nesterov),
        scale_by_learning_rate(learning_rate),
    )


def adam(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
         eps_root: float = 0.0) -> GradientTransformation:
    """The Adam optimizer: ``-learning_rate`` times the bias-corrected ``mu / (sqrt(nu) + eps)``.

    Arguments:
        learning_rate: a non-negative float, or a schedule (a function of the step count).
        b1: the decay of the first moment.
        b2: the decay of the second moment.
        eps: added to the denominator, outside the square root.
        eps_root: added inside the square root.

    Returns:
        ``chain(scale_by_adam(b1, b2, eps, eps_root), scale_by_learning_rate(learning_rate))``.

    Example:
        >>> opt = adam(0.1)
        >>> params = jnp.array([1.0, 2.0])
        >>> updates, state = opt.update(jnp.array([0.5, -3.0]), opt.init(params))
        >>> apply_updates(params, updates)
        Array([0.9000007, 2.0999994], dtype=float32)
    """
    _check_learning_rate("adam", learning_rate)
    return chain(
        scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
        scale_by_learning_rate(learning_rate),
    )


def adamw(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          eps_root: float = 0.0, weight_decay: float = 1e-4,
          mask=None) -> GradientTransformation:
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
    return chain(
        scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    )

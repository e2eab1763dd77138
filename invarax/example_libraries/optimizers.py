"""``invarax.example_libraries.optimizers``: JAX's ``jax.example_libraries.optimizers``.

An optimizer is ``(init_fun, update_fun, get_params)``: ``init_fun(params)`` gives a state,
``update_fun(step, grads, state)`` the next state, ``get_params(state)`` the parameters;
parameters are any pytree of arrays. Step sizes may be numbers or schedules ``step ->
size``. The formulas are JAX's.

Example:
    >>> import invarax, invarax.numpy as jnp
    >>> init, update, get_params = sgd(0.1)
    >>> state = init({"w": jnp.ones(2)})
    >>> state = update(0, {"w": jnp.ones(2)}, state)
    >>> get_params(state)["w"]
    Array([0.9, 0.9], dtype=float32)
"""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import NamedTuple

from .. import numpy as jnp
from ..core.pytree import register_pytree_node, tree_flatten, tree_map, tree_unflatten

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    """``(init_fn, update_fn, params_fn)`` over pytrees of parameters."""

    init_fn: object
    update_fn: object
    params_fn: object


def optimizer(opt_maker):
    """Turn a maker of ``(init, update, get_params)`` on single arrays into one of
    ``Optimizer`` s on pytrees (each leaf gets its own state)."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            flats = [tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([f for f, _ in flats], tree, [t for _, t in flats])

        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_def = tree_flatten(grad_tree)
            if grad_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {grad_def}.")
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat, strict=True)]
            news = [tree_flatten(update(i, g, s)) for g, s in zip(grad_flat, states,
                                                                   strict=True)]
            for subtree, (_, new_def) in zip(subtrees, news, strict=True):
                if new_def != subtree:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {subtree} and output {new_def}.")
            return OptimizerState([f for f, _ in news], tree, subtrees)

        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            return tree_unflatten(tree, [get_params(tree_unflatten(t, s)) for t, s in
                                         zip(subtrees, states_flat, strict=True)])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass):
    """Gradient descent with momentum ``mass``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient with momentum ``mass``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad, with momentum."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam, with bias correction."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam's infinity-norm variant."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


def constant(step_size):
    """The schedule that is always ``step_size``."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)`` (the quotient floored if
    ``staircase``)."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` over ``decay_steps``, as ``(1 - t) ** power``."""
    def schedule(step_num):
        step_mult = (1 - jnp.minimum(step_num, decay_steps) / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` for a step with ``k`` boundaries below it."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    """A schedule from a schedule or a number."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


def l2_norm(tree):
    """The L2 norm of all the leaves of ``tree`` together."""
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in tree_flatten(tree)[0]))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled down to L2 norm ``max_norm`` if it is larger."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """A leaf of ``unpack_optimizer_state``'s tree holding one parameter's state."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """``opt_state`` as a pytree of the parameters' structure with ``JoinPoint`` leaves
    (to save it)."""
    states_flat, tree_def, subtree_defs = opt_state
    return tree_unflatten(tree_def, [JoinPoint(tree_unflatten(t, s)) for t, s in
                                     zip(subtree_defs, states_flat, strict=True)])


def pack_optimizer_state(marked_pytree):
    """The inverse of ``unpack_optimizer_state``."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint")
    flats = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState([f for f, _ in flats], tree_def, [t for _, t in flats])

"""The workloads in a library with JAX's API: invarax and JAX itself, under ``jit``."""

from __future__ import annotations

from functools import partial

import numpy as np

from . import cnn, problems, transformer


def workloads(jax, jnp, cfg: problems.Config) -> dict:
    """Workload name -> builder of the timed call, for the library ``jax`` (numpy ``jnp``).

    A builder makes the workload's inputs and returns a no-argument function that runs
    it once and returns its result, computed (``block_until_ready``).
    """

    def put(tree):
        return jax.tree_util.tree_map(jnp.asarray, tree)

    def timed(f, *args):
        args = put(args)
        return lambda: jax.block_until_ready(f(*args))

    def train_step():
        return partial(problems.sgd_step, jax.grad(partial(problems.loss, jnp)))

    def train_loop():
        loop = problems.training_loop(
            jax.jit(train_step()), *put(problems.train_data(cfg)), cfg.steps
        )
        return lambda: jax.block_until_ready(loop())

    def first_call():
        params, x, y = put(problems.train_data(cfg))
        return lambda: jax.block_until_ready(jax.jit(train_step())(params, x, y))

    def jacobian(transform):
        return timed(
            jax.jit(transform(partial(problems.prod_poly, jnp))), problems.jacobian_data(cfg)
        )

    example_grad = jax.grad(partial(problems.example_loss, jnp))
    return {
        "train": lambda: timed(jax.jit(train_step()), *problems.train_data(cfg)),
        "vmap": lambda: timed(
            jax.jit(jax.vmap(partial(problems.mlp, jnp), in_axes=(None, 0))),
            *problems.vmap_data(cfg),
        ),
        "per_example": lambda: timed(
            jax.jit(jax.vmap(example_grad, in_axes=(None, 0, 0))), *problems.example_data(cfg)
        ),
        "elementwise": lambda: timed(
            jax.jit(partial(problems.elementwise, jnp)), *problems.elementwise_data(cfg)
        ),
        "jacfwd": lambda: jacobian(jax.jacfwd),
        "jacrev": lambda: jacobian(jax.jacrev),
        "first_call": first_call,
        "dispatch": lambda: problems.repeated(jax.jit(problems.dispatch),
                                              *put(problems.dispatch_data()),
                                              finish=jax.block_until_ready),
        "matmul": lambda: timed(jnp.matmul, *problems.matmul_data(cfg)),
        "train_loop": train_loop,
        "fori": lambda: timed(jax.jit(partial(problems.fori_scalar, jax.lax, cfg.fori_steps)),
                              np.float32(1.0)),
        "rnn": lambda: timed(
            jax.jit(jax.value_and_grad(partial(problems.lstm_loss, jnp, jax.lax))),
            *problems.rnn_data(cfg)),
        "newton": lambda: timed(jax.jit(jax.vmap(partial(problems.newton_sqrt, jnp, jax.lax))),
                                problems.newton_data(cfg)),
        **cnn.workloads(jax, jnp, cfg),
        **transformer.workloads(jax, jnp, cfg),
    }


def to_numpy(x) -> np.ndarray:
    """A result array as a NumPy array."""
    return np.asarray(x)

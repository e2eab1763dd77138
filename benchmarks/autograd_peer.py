"""The workloads in autograd: reverse mode over NumPy, eager (no jit, vmap or jacfwd)."""

from __future__ import annotations

from functools import partial

import autograd
import autograd.numpy as anp
import numpy as np

from . import problems


def workloads(cfg: problems.Config) -> dict:
    """Workload name -> builder of the timed call (see ``jaxlike.workloads``).

    ``autograd.jacobian`` is reverse mode, so it stands for ``jacrev``.
    """
    step = partial(problems.sgd_step, autograd.grad(partial(problems.loss, anp)))

    def train_loop():
        return problems.training_loop(step, *problems.train_data(cfg), cfg.steps)

    def timed(f, *args):
        return lambda: f(*args)

    return {
        "train": lambda: timed(step, *problems.train_data(cfg)),
        "elementwise": lambda: timed(
            partial(problems.elementwise, anp), *problems.elementwise_data(cfg)
        ),
        "jacrev": lambda: timed(
            autograd.jacobian(partial(problems.prod_poly, anp)), problems.jacobian_data(cfg)
        ),
        "matmul": lambda: timed(anp.matmul, *problems.matmul_data(cfg)),
        "train_loop": train_loop,
    }


def to_numpy(x) -> np.ndarray:
    """A result array as a NumPy array."""
    return np.asarray(x)

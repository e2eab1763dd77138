"""The workloads in PyTorch (CPU): eager, ``torch.func`` transforms, ``torch.compile`` as jit."""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
import torch._dynamo
from torch.func import grad, jacfwd, jacrev, vmap

from . import problems


def _put(tree):
    if isinstance(tree, np.ndarray):
        return torch.from_numpy(tree)
    return type(tree)(_put(leaf) for leaf in tree)


def _timed(f, *args):
    args = _put(args)
    return lambda: f(*args)


def workloads(cfg: problems.Config) -> dict:
    """Workload name -> builder of the timed call (see ``jaxlike.workloads``).

    Training steps run eagerly (as most PyTorch training does); the jit rows use
    ``torch.compile``, reset before each first call so that it compiles again
    (its on-disk caches stay warm), and only when ``cfg.torch_compile``.
    """

    def train_step():
        return partial(problems.sgd_step, grad(partial(problems.loss, torch)))

    def train_loop():
        return problems.training_loop(train_step(), *_put(problems.train_data(cfg)), cfg.steps)

    def first_call():
        params, x, y = _put(problems.train_data(cfg))

        def call():
            torch._dynamo.reset()
            return torch.compile(train_step())(params, x, y)

        return call

    out = {
        "train": lambda: _timed(train_step(), *problems.train_data(cfg)),
        "vmap": lambda: _timed(
            vmap(partial(problems.mlp, torch), in_dims=(None, 0)), *problems.vmap_data(cfg)
        ),
        "per_example": lambda: _timed(
            vmap(grad(partial(problems.example_loss, torch)), in_dims=(None, 0, 0)),
            *problems.example_data(cfg),
        ),
        "elementwise": lambda: _timed(
            partial(problems.elementwise, torch), *problems.elementwise_data(cfg)
        ),
        "jacfwd": lambda: _timed(
            jacfwd(partial(problems.prod_poly, torch)), problems.jacobian_data(cfg)
        ),
        "jacrev": lambda: _timed(
            jacrev(partial(problems.prod_poly, torch)), problems.jacobian_data(cfg)
        ),
        "matmul": lambda: _timed(torch.matmul, *problems.matmul_data(cfg)),
        "train_loop": train_loop,
    }
    if cfg.torch_compile:
        out["first_call"] = first_call
        out["dispatch"] = lambda: problems.repeated(
            torch.compile(problems.dispatch), *_put(problems.dispatch_data())
        )
    return out


def to_numpy(x) -> np.ndarray:
    """A result tensor as a NumPy array."""
    return x.detach().numpy()

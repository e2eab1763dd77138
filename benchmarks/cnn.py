"""The convolution workloads, in invarax and in JAX (with Equinox).

- ``cnn_eqx``: an Equinox-style CNN train step (``nn.Conv2d(3, 32, 3)``,
  ``nn.Conv2d(32, 64, 3)``, ``nn.Linear``, tanh; ``filter_vmap`` over the batch,
  ``filter_grad`` and SGD under ``filter_jit``);
- ``cnn_lax``: the same network written with ``lax.conv_general_dilated`` on the batch;
- ``resnet``: a ResNet-style block ``relu(conv(relu(conv(x, w1)), w2) + x)`` (3x3, SAME),
  forward and backward (the gradients of all three inputs);
- ``maxpool``: a 2x2 max-pool, forward and backward;
- ``conv``: one 3x3 convolution forward, reported in GFLOP/s.

Each library gets the same NumPy inputs (and Equinox-style models from the same key,
whose parameters are bitwise equal in the two libraries).
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import partial

import numpy as np

from .problems import LR

# name -> (batch, image side, ResNet (batch, channels, side), max-pool NHWC shape)
SIZES = {
    "full": (64, 32, (32, 64, 32), (64, 32, 32, 64)),
    "quick": (64, 32, (32, 64, 32), (64, 32, 32, 64)),
    "tiny": (2, 8, (2, 4, 6), (2, 4, 4, 3)),
}


def sizes(cfg):
    """The workload sizes of configuration ``cfg``."""
    return SIZES[cfg.name]


def conv_flops(cfg) -> float:
    """Floating-point operations of the timed convolution (the ResNet block's first)."""
    n, c, side = sizes(cfg)[2]
    return 2.0 * n * c * c * 9 * side * side


def _xent(jnp, logits, y):
    z = logits - jnp.max(logits, axis=1, keepdims=True)
    return jnp.mean(jnp.log(jnp.sum(jnp.exp(z), axis=1)) - jnp.sum(z * y, axis=1))


def _eqx_forward(jnp, model, x):
    conv1, conv2, linear = model
    x = jnp.tanh(conv1(x))
    x = jnp.tanh(conv2(x))
    return linear(x.reshape(-1))


def _lax_forward(lax, jnp, params, x):
    (w1, b1), (w2, b2), (w3, b3) = params
    x = jnp.tanh(lax.conv_general_dilated(x, w1, (1, 1), "VALID") + b1[None, :, None, None])
    x = jnp.tanh(lax.conv_general_dilated(x, w2, (1, 1), "VALID") + b2[None, :, None, None])
    return x.reshape(x.shape[0], -1) @ w3 + b3


def _conv(lax, x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME")


def _resnet_loss(lax, jnp, w1, w2, x):
    h = jnp.maximum(_conv(lax, x, w1), 0.0)
    return jnp.sum(jnp.maximum(_conv(lax, h, w2) + x, 0.0) ** 2)


def _maxpool_loss(lax, jnp, x):
    y = lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.sum(y * y)


def data(cfg):
    """``(images, one-hot labels, lax-style params, ResNet (w1, w2, x), max-pool x)``."""
    rng = np.random.default_rng(17)
    batch, side, (rn, rc, rs), pool = sizes(cfg)
    x = rng.standard_normal((batch, 3, side, side)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    feat = 64 * (side - 4) ** 2
    params = [
        ((rng.standard_normal((32, 3, 3, 3)) / np.sqrt(27)).astype(np.float32),
         np.zeros(32, np.float32)),
        ((rng.standard_normal((64, 32, 3, 3)) / np.sqrt(288)).astype(np.float32),
         np.zeros(64, np.float32)),
        ((rng.standard_normal((feat, 10)) / np.sqrt(feat)).astype(np.float32),
         np.zeros(10, np.float32)),
    ]
    scale = 1 / np.sqrt(9 * rc)
    resnet = tuple((rng.standard_normal((rc, rc, 3, 3)) * scale).astype(np.float32)
                   for _ in range(2)) + (rng.standard_normal((rn, rc, rs, rs))
                                         .astype(np.float32),)
    return x, y, params, resnet, rng.standard_normal(pool).astype(np.float32)


def workloads(jax, jnp, cfg) -> dict:
    """Workload name -> builder of the timed call (see ``jaxlike.workloads``)."""
    lax = jax.lax
    eqx = jax
    if jax.__name__ != "invarax":
        eqx = importlib.import_module("equinox") if importlib.util.find_spec("equinox") else None

    def put(tree):
        return jax.tree_util.tree_map(jnp.asarray, tree)

    def timed(f, *args):
        args = put(args)
        return lambda: jax.block_until_ready(jax.tree_util.tree_leaves(f(*args)))

    def cnn_eqx():
        x, y = data(cfg)[:2]
        side = x.shape[-1]
        k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
        model = [eqx.nn.Conv2d(3, 32, 3, key=k1), eqx.nn.Conv2d(32, 64, 3, key=k2),
                 eqx.nn.Linear(64 * (side - 4) ** 2, 10, key=k3)]
        forward = eqx.filter_vmap(partial(_eqx_forward, jnp), in_axes=(None, 0))

        @eqx.filter_jit
        def step(model, x, y):
            grads = eqx.filter_grad(lambda m: _xent(jnp, forward(m, x), y))(model)
            return eqx.apply_updates(model, jax.tree_util.tree_map(lambda g: -LR * g, grads))

        x, y = put((x, y))
        return lambda: jax.block_until_ready(jax.tree_util.tree_leaves(step(model, x, y)))

    def cnn_lax():
        x, y, params = data(cfg)[:3]
        loss = lambda p, x, y: _xent(jnp, _lax_forward(lax, jnp, p, x), y)  # noqa: E731

        @jax.jit
        def step(params, x, y):
            grads = jax.grad(loss)(params, x, y)
            return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)

        return timed(step, params, x, y)

    return {
        **({"cnn_eqx": cnn_eqx} if eqx is not None else {}),
        "cnn_lax": cnn_lax,
        "resnet": lambda: timed(
            jax.jit(jax.value_and_grad(partial(_resnet_loss, lax, jnp), argnums=(0, 1, 2))),
            *data(cfg)[3]),
        "maxpool": lambda: timed(
            jax.jit(jax.value_and_grad(partial(_maxpool_loss, lax, jnp))), data(cfg)[4]),
        "conv": lambda: timed(jax.jit(partial(_conv, lax)), data(cfg)[3][2], data(cfg)[3][0]),
    }

"""The workloads' sizes, inputs and math, written once for every library.

Each function of the math takes the library's NumPy-like namespace ``xp``
(``invarax.numpy``, ``jax.numpy``, ``torch`` or ``autograd.numpy``) first, so that
every library computes the same thing from the same NumPy inputs.
"""

from __future__ import annotations

import dataclasses

import numpy as np

LR = 0.01  # SGD learning rate
# The root of a**2 - a**3 - a = -1: factors near it keep a product of 1000 of them finite.
PROD_ROOT = -0.5437


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of the workloads and how many times each is timed.

    Each timed workload runs ``rounds`` blocks of ``calls`` back-to-back calls per library,
    the libraries alternating block by block, each block after a pause of ``pause``
    seconds (see ``timing.medians``); the peak-memory runs repeat ``memory_repeats``
    times. ``torch_compile=False`` leaves PyTorch out of the jit rows (its first
    ``torch.compile`` takes 15 s or more).
    """

    name: str
    mlp: tuple = (784, 512, 512, 10)
    batch: int = 256
    small_mlp: tuple = (2, 10, 10, 2)
    points: int = 10_000
    example_mlp: tuple = (784, 128, 128, 10)
    example_batch: int = 128
    elementwise: int = 10_000_000
    jacobian: int = 1000
    matmul: int = 1024
    steps: int = 100
    rounds: int = 5
    calls: int = 5
    memory_repeats: int = 3
    pause: float = 0.25
    torch_compile: bool = True
    fori_steps: int = 100_000  # control flow (workloads 10-12)
    rnn: tuple = (256, 32, 100, 64)  # hidden, batch, steps, input features
    newton: int = 10_000


CONFIGS = {
    "full": Config("full"),
    "quick": Config("quick", rounds=3, calls=3, memory_repeats=1),
    "tiny": Config(
        "tiny", mlp=(8, 16, 16, 4), batch=4, small_mlp=(2, 3, 2), points=5,
        example_mlp=(8, 6, 4), example_batch=3, elementwise=100, jacobian=5, matmul=8,
        steps=2, rounds=1, calls=1, memory_repeats=1, pause=0.0, torch_compile=False,
        fori_steps=10, rnn=(4, 2, 3, 3), newton=5,
    ),
}  # fmt: skip


def mlp(xp, params, x):
    """A tanh MLP: ``params`` is a list of ``(W, b)``, the last layer linear."""
    for w, b in params[:-1]:
        x = xp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(xp, params, x, y):
    """Softmax cross-entropy of the MLP's logits against the one-hot labels ``y``."""
    z = mlp(xp, params, x)
    return xp.mean(xp.log(xp.sum(xp.exp(z), axis=1)) - xp.sum(z * y, axis=1))


def example_loss(xp, params, x, y):
    """``loss`` of one example (``x`` and ``y`` without their batch axis)."""
    return loss(xp, params, x[None], y[None])


def sgd_step(grad_loss, params, x, y):
    """One SGD step of a list of ``(W, b)``, against the gradient ``grad_loss(params, x, y)``."""
    grads = grad_loss(params, x, y)
    return [
        tuple(p - LR * g for p, g in zip(layer, grad, strict=True))
        for layer, grad in zip(params, grads, strict=True)
    ]


def training_loop(step, params, x, y, steps: int):
    """A function running ``steps`` training steps from ``params``; returns the last params."""

    def loop():
        p = params
        for _ in range(steps):
            p = step(p, x, y)
        return p

    return loop


def elementwise(xp, x1, x2):
    """The fused elementwise expression of the issue."""
    return (x1 / x2 - xp.exp(x2)) * (xp.sin(x1 / x2) + x1 / x2 - xp.exp(x2))


def prod_poly(xp, a):
    """``prod(a**2 - a**3 - a)``, whose Jacobians are timed."""
    return xp.prod(a**2 - a**3 - a)


def dispatch(x, y):
    """The tiny function whose cached jitted call measures dispatch latency."""
    return x * y + y


DISPATCH_CALLS = 100  # back-to-back calls per timed sample of workload 7


def repeated(f, *args, finish=lambda out: out):
    """A no-argument function calling ``f(*args)`` ``DISPATCH_CALLS`` times in a row.

    One call is too short to time alone: the clock and the pause between samples (which
    leaves the caches cold) would dominate. ``finish`` waits for the last result.
    """

    def run():
        for _ in range(DISPATCH_CALLS - 1):
            f(*args)
        return finish(f(*args))

    return run


def _params(rng, sizes):
    return [
        ((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def _classification(rng, sizes, batch):
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    return _params(rng, sizes), x, y


def train_data(cfg: Config):
    """``(params, x, y)`` of the training step (workloads 1, 6 and 9), float32."""
    return _classification(np.random.default_rng(1), cfg.mlp, cfg.batch)


def example_data(cfg: Config):
    """``(params, x, y)`` of the per-example gradients (workload 3)."""
    return _classification(np.random.default_rng(3), cfg.example_mlp, cfg.example_batch)


def vmap_data(cfg: Config):
    """``(params, points)`` of the vmapped small MLP (workload 2)."""
    rng = np.random.default_rng(2)
    points = rng.standard_normal((cfg.points, cfg.small_mlp[0])).astype(np.float32)
    return _params(rng, cfg.small_mlp), points


def elementwise_data(cfg: Config):
    """``(x1, x2)`` of the elementwise expression (workload 4), in [0.5, 1.5)."""
    rng = np.random.default_rng(4)
    return tuple(rng.uniform(0.5, 1.5, cfg.elementwise).astype(np.float32) for _ in range(2))


def jacobian_data(cfg: Config):
    """``a`` of the Jacobians (workload 5): near PROD_ROOT, so the product stays near 1."""
    rng = np.random.default_rng(5)
    return (PROD_ROOT + 1e-3 * rng.standard_normal(cfg.jacobian)).astype(np.float32)


def dispatch_data():
    """Two small float32 arrays (workload 7)."""
    return np.arange(8, dtype=np.float32), np.ones(8, np.float32)


def matmul_data(cfg: Config):
    """Two square float32 matrices (workload 8)."""
    rng = np.random.default_rng(8)
    return tuple(rng.standard_normal((cfg.matmul,) * 2).astype(np.float32) for _ in range(2))


# ---------------------------------------------------------------------------------------
# Control flow (workloads 10-12): the library's ``lax`` is passed beside ``xp``.


def fori_scalar(lax, steps, x):
    """``steps`` iterations of a three-operation scalar body: the per-iteration overhead."""
    return lax.fori_loop(0, steps, lambda i, c: c * 0.999 + 0.001, x)


def lstm_loss(xp, lax, params, xs):
    """An LSTM over ``xs`` (steps, batch, features) by ``lax.scan``: mean of h**2 over steps."""
    wx, wh, b = params
    hidden = wh.shape[1]

    def sigmoid(z):
        return 0.5 * xp.tanh(0.5 * z) + 0.5

    def step(carry, x):
        h, c = carry
        z = x @ wx + h @ wh.T + b
        i, f = sigmoid(z[:, :hidden]), sigmoid(z[:, hidden:2 * hidden])
        g, o = xp.tanh(z[:, 2 * hidden:3 * hidden]), sigmoid(z[:, 3 * hidden:])
        c = f * c + i * g
        h = o * xp.tanh(c)
        return (h, c), h

    zeros = xs[0, :, :1] * 0.0 + xp.zeros((xs.shape[1], hidden), dtype=xs.dtype)
    _, hs = lax.scan(step, (zeros, zeros), xs)
    return xp.mean(hs * hs)


def newton_sqrt(xp, lax, a):
    """Newton's iteration for sqrt(a) until |x*x - a| <= 1e-6 a: data-dependent trip counts."""
    return lax.while_loop(lambda x: xp.abs(x * x - a) > 1e-6 * a, lambda x: 0.5 * (x + a / x), a)


def rnn_data(cfg: Config):
    """``(params, xs)`` of the LSTM (workload 11)."""
    hidden, batch, steps, features = cfg.rnn
    rng = np.random.default_rng(11)
    params = ((rng.standard_normal((features, 4 * hidden)) / np.sqrt(features)).astype(np.float32),
              (rng.standard_normal((4 * hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
              np.zeros(4 * hidden, np.float32))
    return params, rng.standard_normal((steps, batch, features)).astype(np.float32)


def newton_data(cfg: Config):
    """``a`` of the vmapped Newton iterations (workload 12), in [1, 1e4)."""
    return np.random.default_rng(12).uniform(1.0, 1e4, cfg.newton).astype(np.float32)

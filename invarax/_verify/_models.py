"""The battery's programs: an MLP's train step under ``jit`` and with per-example gradients
under ``vmap`` (nn + optim), a convolutional network's train step, an LSTM's ``scan``
gradient, and collectives (``psum`` and friends over a named axis, and ``pmap`` over the
local devices, which must give ``vmap``'s bits)."""

from __future__ import annotations

import numpy as np

from .. import lax, nn, optim, random
from .. import numpy as jnp
from ..distributed.devices import local_device_count
from ..module import (
    filter,
    filter_grad,
    filter_jit,
    filter_value_and_grad,
    filter_vmap,
    is_array,
    is_inexact_array,
)
from ..transforms import pmap, vmap
from ._inputs import uniform

STEPS = 3


def _data(seed, batch, features, classes, dtype):
    x = jnp.asarray(uniform(seed, (batch, features), dtype))
    labels = jnp.asarray(np.arange(batch) * 7 % classes)  # exact integers
    return x, labels


def _cross_entropy(model, x, labels):
    logits = vmap(model)(x)
    picked = jnp.take_along_axis(nn.log_softmax(logits), labels[:, None], axis=1)
    return -jnp.mean(picked)


def _train(model, optimiser, step, *data):
    """``STEPS`` steps of ``step``; the losses and the trained model's arrays."""
    state = optimiser.init(filter(model, is_inexact_array))
    losses = []
    for _ in range(STEPS):
        model, state, loss = step(model, state, *data)
        losses.append(loss)
    return [losses, filter(model, is_array), state]


def _mlp_jit(dtype):
    model = nn.MLP(16, 4, 32, 2, dtype=dtype, key=random.PRNGKey(1))
    optimiser = optim.adam(1e-2)

    @filter_jit
    def step(model, state, x, labels):
        loss, grads = filter_value_and_grad(_cross_entropy)(model, x, labels)
        updates, state = optimiser.update(grads, state, model)
        return optim.apply_updates(model, updates), state, loss

    return _train(model, optimiser, step, *_data(400, 64, 16, 4, dtype))


def _mlp_vmap(dtype):
    """Per-example gradients (``vmap`` of ``grad``), each clipped to norm 1, then averaged:
    differentially private SGD's step, eager."""
    model = nn.MLP(16, 4, 24, 2, dtype=dtype, key=random.PRNGKey(2))
    optimiser = optim.sgd(0.1, momentum=0.9)

    def one(model, x, label):
        return _cross_entropy(model, x[None], label[None])

    def step(model, state, x, labels):
        grads = filter_vmap(filter_grad(one), in_axes=(None, 0, 0))(model, x, labels)
        clipped = optim.per_example_global_norm_clip(grads, 1.0)[0]
        grads = optim.tree_utils.tree_scale(1 / x.shape[0], clipped)
        updates, state = optimiser.update(grads, state, model)
        return optim.apply_updates(model, updates), state, _cross_entropy(model, x, labels)

    return _train(model, optimiser, step, *_data(401, 32, 16, 4, dtype))


def _conv_net(key, dtype):
    keys = random.split(key, 3)
    return nn.Sequential([
        nn.Conv2d(2, 4, 3, padding=1, dtype=dtype, key=keys[0]), nn.Lambda(nn.relu),
        nn.Conv2d(4, 6, 3, stride=2, dtype=dtype, key=keys[1]), nn.Lambda(nn.relu),
        nn.Lambda(lambda h: jnp.mean(h, axis=(1, 2))),
        nn.Linear(6, 3, dtype=dtype, key=keys[2])])


def _conv_train(dtype):
    model = _conv_net(random.PRNGKey(3), dtype)
    optimiser = optim.adamw(3e-3)
    images = jnp.asarray(uniform(402, (16, 2, 12, 12), dtype))
    labels = jnp.asarray(np.arange(16) * 5 % 3)

    @filter_jit
    def step(model, state, images, labels):
        loss, grads = filter_value_and_grad(_cross_entropy)(model, images, labels)
        updates, state = optimiser.update(grads, state, filter(model, is_inexact_array))
        return optim.apply_updates(model, updates), state, loss

    return _train(model, optimiser, step, images, labels)


def _lstm_scan(dtype):
    cell = nn.LSTMCell(8, 16, dtype=dtype, key=random.PRNGKey(4))
    xs = jnp.asarray(uniform(403, (20, 8), dtype))

    def loss(cell, xs):
        def step(carry, x):
            carry = cell(x, carry)
            return carry, carry[0]

        zero = jnp.zeros(16, dtype)
        _, hs = lax.scan(step, (zero, zero), xs)
        return jnp.sum(hs * hs)

    eager = filter_value_and_grad(loss)(cell, xs)
    return [eager, filter_jit(filter_value_and_grad(loss))(cell, xs)]


def _shard_program(size):
    """Collectives over an axis of ``size`` shards, and a data-parallel gradient step."""

    def program(x):
        w = jnp.linspace(-1, 1, x.shape[-1], dtype=x.dtype)
        grad = filter_grad(lambda w: jnp.mean(jnp.tanh(x * w) ** 2))(w)
        shifted = lax.ppermute(x, "i", [(j, (j + 1) % size) for j in range(size)])
        return [lax.psum(x, "i"), lax.pmean(x, "i"), lax.pmax(x, "i"), lax.pmin(x, "i"),
                lax.all_gather(x, "i"), shifted, lax.psum_scatter(x[:size], "i"),
                w - 0.1 * lax.pmean(grad, "i")]

    return program


def _collectives(dtype):
    """``vmap`` over 8 shards (the digest), and ``pmap`` over the local devices, which must
    give the bits of ``vmap`` over the same shards (if not, the digest changes)."""
    shards = jnp.asarray(uniform(404, (8, 33), dtype))
    results = vmap(_shard_program(8), axis_name="i")(shards)
    size = min(local_device_count(), 8)
    if size > 1:
        program = _shard_program(size)
        pmapped = pmap(program, axis_name="i")(shards[:size])
        vmapped = vmap(program, axis_name="i")(shards[:size])
        if not all(np.array_equal(np.asarray(p), np.asarray(v), equal_nan=True)
                   for p, v in zip(pmapped, vmapped, strict=True)):
            results.append(["pmap differs from vmap", pmapped])
    return results


def workloads() -> list[tuple[str, bool, object]]:
    """``(name, needs float64, function)`` for each program."""
    f32, f64 = np.float32, np.float64
    return [
        ("mlp_train_jit/float32", False, lambda: _mlp_jit(f32)),
        ("mlp_train_jit/float64", True, lambda: _mlp_jit(f64)),
        ("mlp_train_vmap/float32", False, lambda: _mlp_vmap(f32)),
        ("conv_train/float32", False, lambda: _conv_train(f32)),
        ("lstm_scan_grad/float32", False, lambda: _lstm_scan(f32)),
        ("lstm_scan_grad/float64", True, lambda: _lstm_scan(f64)),
        ("collectives/float32", False, lambda: _collectives(f32)),
    ]

"""The transformer workload, in invarax and in JAX with Equinox.

``transformer``: one train step of a pre-LN transformer block written in the Equinox
style (``nn.LayerNorm``, ``nn.MultiheadAttention``, ``nn.MLP`` with GELU, a ``Module``
subclass), ``filter_vmap`` over the batch, ``filter_grad`` of the mean squared error
against a target and SGD (``apply_updates``) under ``filter_jit``. Both libraries build
the block from the same key, so their parameters are bitwise equal.
"""

from __future__ import annotations

import importlib
import importlib.util

import numpy as np

from .problems import LR

# name -> (batch, sequence length, model width, heads)
SIZES = {
    "full": (8, 128, 256, 4),
    "quick": (8, 128, 256, 4),
    "tiny": (2, 4, 8, 2),
}


def sizes(cfg):
    """``(batch, seq, d, heads)`` of configuration ``cfg``."""
    return SIZES[cfg.name]


def block_class(jax, eqx):
    """The pre-LN block ``x + attn(ln1(x)); x + mlp(ln2(x))`` as a Module of ``eqx``."""

    class Block(eqx.Module):
        ln1: eqx.nn.LayerNorm
        attention: eqx.nn.MultiheadAttention
        ln2: eqx.nn.LayerNorm
        mlp: eqx.nn.MLP

        def __init__(self, d, heads, *, key):
            k1, k2 = jax.random.split(key)
            self.ln1 = eqx.nn.LayerNorm(d)
            self.attention = eqx.nn.MultiheadAttention(heads, d, key=k1)
            self.ln2 = eqx.nn.LayerNorm(d)
            self.mlp = eqx.nn.MLP(d, d, 4 * d, 1, activation=jax.nn.gelu, key=k2)

        def __call__(self, x):  # x: (seq, d)
            y = jax.vmap(self.ln1)(x)
            x = x + self.attention(y, y, y)
            return x + jax.vmap(self.mlp)(jax.vmap(self.ln2)(x))

    return Block


def data(cfg):
    """``(x, target)``, each ``(batch, seq, d)`` float32."""
    rng = np.random.default_rng(18)
    batch, seq, d, _ = sizes(cfg)
    return tuple(rng.standard_normal((batch, seq, d)).astype(np.float32) for _ in range(2))


def workloads(jax, jnp, cfg) -> dict:
    """``{"transformer": builder}`` (see ``jaxlike.workloads``), or ``{}`` without Equinox."""
    eqx = jax
    if jax.__name__ != "invarax":
        if importlib.util.find_spec("equinox") is None:
            return {}
        eqx = importlib.import_module("equinox")

    def transformer():
        _, _, d, heads = sizes(cfg)
        model = block_class(jax, eqx)(d, heads, key=jax.random.key(0))
        x, target = (jnp.asarray(a) for a in data(cfg))

        def loss(model, x, target):
            return jnp.mean((eqx.filter_vmap(model)(x) - target) ** 2)

        @eqx.filter_jit
        def step(model, x, target):
            grads = eqx.filter_grad(loss)(model, x, target)
            return eqx.apply_updates(model, jax.tree_util.tree_map(lambda g: -LR * g, grads))

        def run():  # the new parameters (the MLP's activation is a leaf too)
            new = eqx.filter(step(model, x, target), eqx.is_array)
            return jax.block_until_ready(jax.tree_util.tree_leaves(new))

        return run

    return {"transformer": transformer}

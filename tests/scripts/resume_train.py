"""A small training run that checkpoints after every step and resumes from its checkpoint.

``python tests/scripts/resume_train.py DIR STEPS`` trains an MLP with Adam (warmup-cosine
learning rate) on minibatches drawn with the PRNG key, saving ``{model, opt_state, key,
step}`` atomically to ``DIR/ckpt.eqx`` after each step and printing ``step N``; started
again it resumes from that checkpoint. At the end it writes the parameters to
``DIR/final.eqx``. tests/test_resume.py kills it with SIGKILL at a random step.
"""

import os
import sys

import invarax
import invarax.numpy as jnp
from invarax import nn, optim


def main(directory: str, steps: int) -> None:
    key = invarax.random.PRNGKey(0)
    data_key, model_key, key = invarax.random.split(key, 3)
    x = invarax.random.uniform(data_key, (256, 2), minval=-1.0, maxval=1.0)
    y = jnp.sin(3.0 * x[:, 0]) * jnp.cos(2.0 * x[:, 1])
    model = nn.MLP(2, "scalar", 16, 2, activation=jnp.tanh, key=model_key)
    opt = optim.adam(optim.warmup_cosine_decay_schedule(0.0, 1e-2, 5, steps, 1e-4))
    state = {"model": model, "opt_state": opt.init(invarax.filter(model, invarax.is_array)),
             "key": key, "step": 0}
    ckpt = os.path.join(directory, "ckpt.eqx")
    if os.path.exists(ckpt):
        state = invarax.tree_deserialise_leaves(ckpt, state)

    @invarax.filter_jit
    def train_step(model, opt_state, batch_key):
        idx = invarax.random.choice(batch_key, x.shape[0], (32,), replace=False)

        def loss_fn(m):
            return jnp.mean((invarax.vmap(m)(x[idx]) - y[idx]) ** 2)

        grads = invarax.filter_grad(loss_fn)(model)
        updates, opt_state = opt.update(grads, opt_state, model)
        return invarax.apply_updates(model, updates), opt_state

    while state["step"] < steps:
        key, batch_key = invarax.random.split(state["key"])
        model, opt_state = train_step(state["model"], state["opt_state"], batch_key)
        state = {"model": model, "opt_state": opt_state, "key": key, "step": state["step"] + 1}
        invarax.tree_serialise_leaves(ckpt, state)
        print(f"step {state['step']}", flush=True)
    invarax.tree_serialise_leaves(os.path.join(directory, "final.eqx"), state["model"])


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

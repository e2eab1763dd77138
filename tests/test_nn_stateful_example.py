"""Equinox's documented stateful example (BatchNorm + SpectralNorm, trained with adam under
filter_jit), run with only the imports changed, against Equinox + optax: the same losses to
float tolerance. The model code below is the example's, verbatim but for the library
argument."""

import numpy as np
import pytest

import invarax
import invarax.numpy as invarax_jnp
import invarax.optim as invarax_optax
import invarax.random as invarax_jr


def run_example(eqx, jax, jnp, jr, optax, steps):
    class Model(eqx.Module):
        norm1: eqx.nn.BatchNorm
        spectral_linear: eqx.nn.SpectralNorm
        norm2: eqx.nn.BatchNorm
        linear1: eqx.nn.Linear
        linear2: eqx.nn.Linear

        def __init__(self, key):
            key1, key2, key3, key4 = jr.split(key, 4)
            self.norm1 = eqx.nn.BatchNorm(input_size=3, axis_name="batch")
            self.spectral_linear = eqx.nn.SpectralNorm(
                layer=eqx.nn.Linear(in_features=3, out_features=32, key=key1),
                weight_name="weight", key=key2)
            self.norm2 = eqx.nn.BatchNorm(input_size=32, axis_name="batch")
            self.linear1 = eqx.nn.Linear(in_features=32, out_features=32, key=key3)
            self.linear2 = eqx.nn.Linear(in_features=32, out_features=3, key=key4)

        def __call__(self, x, state):
            x, state = self.norm1(x, state)
            x, state = self.spectral_linear(x, state)
            x = jax.nn.relu(x)
            x, state = self.norm2(x, state)
            x = self.linear1(x)
            x = jax.nn.relu(x)
            x = self.linear2(x)
            return x, state

    def compute_loss(model, state, xs, ys):
        batch_model = jax.vmap(model, axis_name="batch", in_axes=(0, None),
                               out_axes=(0, None))
        pred_ys, state = batch_model(xs, state)
        loss = jnp.mean((pred_ys - ys) ** 2)
        return loss, state

    @eqx.filter_jit
    def make_step(model, state, opt_state, xs, ys):
        grads, state = eqx.filter_grad(compute_loss, has_aux=True)(model, state, xs, ys)
        updates, opt_state = optim.update(grads, opt_state)
        model = eqx.apply_updates(model, updates)
        return model, state, opt_state

    rng = np.random.default_rng(0)
    xs = jnp.asarray(rng.standard_normal((32, 3)).astype(np.float32))
    ys = jnp.sin(xs)
    model, state = eqx.nn.make_with_state(Model)(jr.PRNGKey(0))
    optim = optax.adam(3e-3)
    opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))
    losses = []
    for _ in range(steps):
        model, state, opt_state = make_step(model, state, opt_state, xs, ys)
        losses.append(float(compute_loss(model, state, xs, ys)[0]))
    inference_model = eqx.nn.inference_mode(model)
    inference_model = eqx.Partial(inference_model, state=state)

    @eqx.filter_jit
    def evaluate(model, xs):
        # discard state
        out, _ = jax.vmap(model, axis_name="batch")(xs)
        return out

    pred = evaluate(inference_model, xs)
    return losses, float(jnp.mean((pred - ys) ** 2))


pytestmark = pytest.mark.filterwarnings("ignore:When .*BatchNorm.*mode")


def test_the_stateful_example_ports_by_changing_imports():
    losses, inference_loss = run_example(invarax, invarax, invarax_jnp, invarax_jr,
                                         invarax_optax, steps=20)
    assert losses[-1] < losses[0] / 5
    assert abs(inference_loss - losses[-1]) < 0.01


def test_the_stateful_example_matches_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    ours = run_example(invarax, invarax, invarax_jnp, invarax_jr, invarax_optax, steps=5)
    theirs = run_example(eqx, jax, jax.numpy, jax.random, optax, steps=5)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-3)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-3)

"""``lax.checkpointed_while_loop``: reverse mode of a while loop by binomial checkpointing.

Its gradient is bitwise the gradient of the same loop as a ``scan`` of the trip count (for
any number of checkpoints), N3 of the gradient, N1 of per-example gradients with per-example
trip counts; the schedule (Equinox's, which tests/test_eqx_internal_loops.py compares with
Equinox) reverses each step once, from its own carry, in at most ``checkpoints`` slots;
``max_steps`` stops the loop; clear errors."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax.numpy as jnp
from invarax import grad, jit, jvp, lax, vmap
from invarax.control_flow.while_grad import OnlinePlacement, treeverse

W = jnp.asarray(data((4, 4), seed=1) * 0.5)


def looped(W, h, steps=37, max_steps=50, checkpoints=None):
    out = lax.checkpointed_while_loop(
        lambda c: c[0] < steps, lambda c: (c[0] + 1, jnp.tanh(W @ c[1]) + 0.1 * c[1]), (0, h),
        max_steps=max_steps, checkpoints=checkpoints)
    return jnp.sum(out[1] ** 2)


def scanned(W, h, steps=37):
    return jnp.sum(lax.scan(lambda c, _: (jnp.tanh(W @ c) + 0.1 * c, None), h, None,
                            length=steps)[0] ** 2)


@pytest.mark.parametrize("checkpoints", [1, 2, 3, 5, 50, None])
def test_gradient_is_the_scan_gradient_bitwise(checkpoints):
    h = jnp.asarray(data((4,), seed=2))
    assert_bitwise(looped(W, h, checkpoints=checkpoints), scanned(W, h))
    g = grad(looped, argnums=(0, 1))(W, h, checkpoints=checkpoints)
    want = grad(scanned, argnums=(0, 1))(W, h)
    for a, b in zip(g, want, strict=True):
        assert_bitwise(a, b)


def test_max_steps_stops_the_loop_and_n3():
    h = jnp.asarray(data((4,), seed=3))
    assert_bitwise(looped(W, h, steps=37, max_steps=10), scanned(W, h, steps=10))
    assert_bitwise(grad(looped)(W, h, 37, 10), grad(scanned)(W, h, 10))
    f = grad(looped, argnums=(0, 1))
    for a, b in zip(jit(f)(W, h), f(W, h), strict=True):
        assert_bitwise(a, b)
    with pytest.raises(TypeError, match="forward-mode autodiff"):  # as Equinox's
        jvp(lambda h: looped(W, h), (h,), (jnp.ones(4),))


def test_per_example_gradients_with_per_example_trip_counts():
    def f(W, h):
        out = lax.checkpointed_while_loop(
            lambda c: jnp.sum(c[1]) < 3.0,
            lambda c: (c[0] + 1, c[1] + 0.1 * jnp.tanh(W @ c[1]) ** 2), (0, h), max_steps=60)
        return jnp.sum(out[1] * out[1]), out[0]

    H = jnp.asarray(data((6, 4), seed=4))
    loss = lambda W, h: f(W, h)[0]  # noqa: E731
    steps = vmap(lambda h: f(W, h)[1])(H)
    assert len(set(np.asarray(steps).tolist())) > 1
    gw, gh = vmap(grad(loss, argnums=(0, 1)), in_axes=(None, 0))(W, H)
    for i in range(6):
        wi, hi = grad(loss, argnums=(0, 1))(W, H[i])
        assert_bitwise(gw[i], wi)
        assert_bitwise(gh[i], hi)
    total = grad(lambda W: jnp.sum(vmap(loss, in_axes=(None, 0))(W, H)))(W)
    np.testing.assert_allclose(total, np.sum(np.asarray(gw), 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 30, 100])
@pytest.mark.parametrize("checkpoints", [1, 2, 4, 9])
def test_schedule_reverses_each_step_once_in_order(n, checkpoints):
    """The forward placement stores the initial carry first and at most ``checkpoints``
    carries; the backward pass reverses every step once, from the last, each at its own
    carry, storing no more than the slots hold; with the slots for every step, no step is
    recomputed."""
    placement = OnlinePlacement(checkpoints)
    slots = [placement.slot(s) for s in range(n)]
    assert slots[:1] == [0][:n] and all(j is None or 0 <= j < checkpoints for j in slots)
    saved = sorted((s, s) for s in placement.steps)  # the carry of step s is s
    assert [s for s, _ in saved[:min(n, checkpoints)]] == sorted(
        s for s in placement.steps if s < n)
    forward, reversed_steps = [], []

    def step(s):
        forward.append(s)
        return s + 1

    def back(s, ct):
        assert ct == s + 1  # the cotangent reaching a step is that of its output
        reversed_steps.append(s)
        return s

    assert treeverse(n, checkpoints, saved, n, step, back) == 0
    assert reversed_steps == list(range(n - 1, -1, -1))
    if checkpoints >= n:
        assert forward == []


def test_errors():
    with pytest.raises(ValueError, match="max_steps must be a positive int"):
        lax.checkpointed_while_loop(lambda c: c < 3, lambda c: c + 1, 0, max_steps=0)
    with pytest.raises(ValueError, match="checkpoints must be an int >= 1"):
        lax.checkpointed_while_loop(lambda c: c < 3, lambda c: c + 1, 0, max_steps=5,
                                    checkpoints=0)
    with pytest.raises(TypeError, match=r"init_val\[0\] has type float32\[2\]"):
        lax.checkpointed_while_loop(lambda c: c[0][0] < 3, lambda c: (jnp.ones(3),),
                                    (jnp.ones(2),), max_steps=5)


def test_gradient_with_an_integer_const_before_a_float_one():
    # the body closes over an int array first (a step size), then W: each const keeps its
    # own accumulator (an int const's accumulator went to W's: diffrax's adjoint hit it)
    step = jnp.asarray(np.int32(1))
    h = jnp.asarray(data((4,), seed=5))

    def looped_int(W, h, step):
        out = lax.checkpointed_while_loop(
            lambda c: c[0] < 37, lambda c: (c[0] + step, jnp.tanh(W @ c[1]) + 0.1 * c[1]),
            (0, h), max_steps=50, checkpoints=3)
        return jnp.sum(out[1] ** 2)

    g = jit(grad(looped_int, argnums=(0, 1)))(W, h, step)  # under jit, step is traced
    for a, b in zip(g, grad(scanned, argnums=(0, 1))(W, h), strict=True):
        assert_bitwise(a, b)

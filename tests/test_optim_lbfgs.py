"""L-BFGS and the line searches: against optax (skipped without it), jit and vmap bitwise
the eager steps (whose loops stop early on concrete values), errors."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import optim
from invarax.tree_util import tree_leaves

X0 = np.array([-1.2, 1.0, 0.5, -0.3], np.float32)


def _rosenbrock(npl):
    def f(x):
        return npl.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    return f


def _quadratic(npl):
    scales = np.array([1.0, 10.0, 0.5, 3.0], np.float32)

    def f(params, shift):
        return npl.sum(scales * (params["a"] - shift) ** 2) + npl.sum(params["b"] ** 4)

    return f


OPTIMIZERS = {
    "lbfgs": lambda o: o.lbfgs(),
    "lbfgs_memory_2": lambda o: o.lbfgs(memory_size=2, scale_init_precond=False),
    "lbfgs_rate": lambda o: o.lbfgs(learning_rate=0.5),
    "lbfgs_no_linesearch": lambda o: o.lbfgs(learning_rate=0.01, linesearch=None),
    "lbfgs_zoom_keep": lambda o: o.lbfgs(linesearch=o.scale_by_zoom_linesearch(
        8, max_learning_rate=2.0, initial_guess_strategy="keep")),
    "lbfgs_zoom_short": lambda o: o.lbfgs(linesearch=o.scale_by_zoom_linesearch(
        3, approx_dec_rtol=None, curv_rtol=0.1)),
    "lbfgs_backtracking": lambda o: o.lbfgs(linesearch=o.scale_by_backtracking_linesearch(
        15, store_grad=True)),
    "sgd_backtracking": lambda o: o.chain(o.sgd(1e-2),
                                          o.scale_by_backtracking_linesearch(6)),
    "sgd_backtracking_grad": lambda o: o.chain(o.sgd(1.0), o.scale_by_backtracking_linesearch(
        20, decrease_factor=0.5, increase_factor=2.0, store_grad=True, rtol=1e-3)),
}


def _run(lib, npl, opt, f, x, steps, plain_grad=None, **fn_kwargs):
    """``steps`` steps; gradients from the state, or from ``plain_grad(f)`` if given."""
    state = opt.init(x)
    value_and_grad = lib.value_and_grad_from_state(f)
    update = opt.update
    if lib is not optim:  # optax: compile its while loops once, not at every eager call
        import jax

        update = jax.jit(opt.update, static_argnames="value_fn")
    out = []
    for _ in range(steps):
        if plain_grad is None:
            value, grad = value_and_grad(x, state=state, **fn_kwargs)
        else:
            value, grad = plain_grad(f)(x, **fn_kwargs)
        updates, state = update(grad, state, x, value=value, grad=grad, value_fn=f,
                                **fn_kwargs)
        x = lib.apply_updates(x, updates)
        out.append((x, state))
    return out


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_rosenbrock_trajectory_matches_optax(name):
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    plain = name in ("sgd_backtracking", "lbfgs_no_linesearch")  # no gradient in the state
    ours = _run(optim, jnp, OPTIMIZERS[name](optim), _rosenbrock(jnp), jnp.asarray(X0), 8,
                invarax.value_and_grad if plain else None)
    theirs = _run(optax, jax.numpy, OPTIMIZERS[name](optax), _rosenbrock(jax.numpy),
                  jax.numpy.asarray(X0), 8, jax.value_and_grad if plain else None)
    for (x, s), (y, t) in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-5)
        ours_leaves, theirs_leaves = tree_leaves(s), jax.tree_util.tree_leaves(t)
        assert len(ours_leaves) == len(theirs_leaves)
        for a, b in zip(ours_leaves, theirs_leaves, strict=True):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape
            if a.dtype.kind == "f" and b.dtype.kind == "f":
                # Gradients in the state: Rosenbrock's Hessian (entries up to ~1e3) turns the
                # parameters' float32-ulp differences into ~1e-4 relative differences.
                scale = max(1.0, float(np.nanmax(np.abs(b), initial=0.0)))
                np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3 * scale)


def test_linesearch_with_extra_arguments_on_a_pytree_matches_optax():
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    params = {"a": np.array([1.0, -2.0, 0.5, 3.0], np.float32),
              "b": np.array([0.5, -0.5], np.float32)}

    def run(lib, npl):
        x = {k: npl.asarray(v) for k, v in params.items()}
        return _run(lib, npl, lib.lbfgs(memory_size=3), _quadratic(npl), x, 6,
                    shift=npl.asarray(0.25))

    for (x, _), (y, _) in zip(run(optim, jnp), run(optax, jax.numpy), strict=True):
        for k in params:
            np.testing.assert_allclose(np.asarray(x[k]), np.asarray(y[k]), rtol=1e-5,
                                       atol=1e-5)


def test_lbfgs_converges_on_rosenbrock():
    out = _run(optim, jnp, optim.lbfgs(), _rosenbrock(jnp), jnp.asarray(X0), 60)
    np.testing.assert_allclose(np.asarray(out[-1][0]), np.ones(4), atol=1e-3)


@pytest.mark.parametrize("name", ["lbfgs", "lbfgs_zoom_short", "sgd_backtracking_grad"])
def test_jit_step_is_bitwise_the_eager_step(name):
    f = _rosenbrock(jnp)
    opt = OPTIMIZERS[name](optim)
    value_and_grad = optim.value_and_grad_from_state(f)

    def step(x, state):
        value, grad = value_and_grad(x, state=state)
        updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=f)
        return optim.apply_updates(x, updates), state

    x0 = jnp.asarray(X0)
    eager = compiled = (x0, opt.init(x0))
    jitted = invarax.jit(step)
    for _ in range(4):
        eager, compiled = step(*eager), jitted(*compiled)
        for a, b in zip(tree_leaves(compiled), tree_leaves(eager), strict=True):
            assert_bitwise(a, b)


def test_vmap_over_starting_points_is_bitwise_each_member():
    f = _rosenbrock(jnp)
    opt = optim.lbfgs(linesearch=optim.scale_by_zoom_linesearch(6))

    def two_steps(x):
        state = opt.init(x)
        for _ in range(2):
            value, grad = invarax.value_and_grad(f)(x)
            updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=f)
            x = optim.apply_updates(x, updates)
        return x

    starts = [X0, X0[::-1].copy(), X0 * 0.5]
    batched = invarax.vmap(two_steps)(jnp.stack([jnp.asarray(s) for s in starts]))
    for i, s in enumerate(starts):
        assert_bitwise(batched[i], two_steps(jnp.asarray(s)))


def test_backtracking_takes_no_step_where_the_function_is_nan():
    f = lambda x: jnp.sum(jnp.log(x))  # NaN for every step below zero
    opt = optim.chain(optim.sgd(10.0), optim.scale_by_backtracking_linesearch(3))
    x = jnp.array([1.0, 2.0])
    updates, state = opt.update(jnp.array([1.0, 1.0]), opt.init(x), x, value=f(x),
                                grad=jnp.array([1.0, 0.5]), value_fn=f)
    assert_bitwise(updates, jnp.array([-0.0, -0.0]))
    assert int(state[1].info.num_linesearch_steps) == 4


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="scale_by_zoom_linesearch: max_linesearch_steps must "
                                        "be a Python int"):
        optim.scale_by_zoom_linesearch(2.5)
    with pytest.raises(ValueError, match="unknown initial_guess_strategy 'two'"):
        optim.scale_by_zoom_linesearch(5, initial_guess_strategy="two")
    with pytest.raises(ValueError, match="scale_by_lbfgs: memory_size must be an int >= 1"):
        optim.lbfgs(memory_size=0)
    f = _rosenbrock(jnp)
    opt = optim.lbfgs()
    x = jnp.asarray(X0)
    with pytest.raises(TypeError, match=r"the extra arguments \['shift'\] are not arguments "
                                        r"of value_fn"):
        opt.update(x, opt.init(x), x, value=f(x), grad=x, value_fn=f, shift=1.0)
    with pytest.raises(ValueError, match="value_and_grad_from_state: the state holds no value"):
        optim.value_and_grad_from_state(f)(x, state=optim.sgd(0.1).init(x))

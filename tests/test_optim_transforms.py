"""The optimizers and transformations beyond sgd/adam: jit and vmap bitwise, float64
references of the formulas, integer parameters, errors. (Against optax: test_optim_optax.py.)"""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import optim
from invarax.tree_util import tree_leaves, tree_map

OPTIMIZERS = {
    "adam_nesterov_f16": lambda: optim.adam(0.01, mu_dtype=jnp.float16, nesterov=True),
    "rmsprop": lambda: optim.rmsprop(0.01, momentum=0.9, bias_correction=True),
    "rmsprop_centered": lambda: optim.rmsprop(0.01, centered=True, initial_scale=1.0),
    "adagrad": lambda: optim.adagrad(0.05),
    "lion": lambda: optim.lion(optim.exponential_decay(0.01, 2, 0.5)),
    "lamb": lambda: optim.lamb(0.01, weight_decay=0.1),
    "optimistic": lambda: optim.optimistic_gradient_descent(0.05),
    "adafactor": lambda: optim.adafactor(0.01, min_dim_size_to_factor=3, momentum=0.9),
    "clip": lambda: optim.chain(optim.clip(0.1), optim.clip_by_block_rms(0.05),
                                optim.sgd(optim.piecewise_constant_schedule(0.1, {2: 0.5}))),
    "inject": lambda: optim.inject_hyperparams(optim.adamw)(
        optim.cosine_decay_schedule(0.01, 3), weight_decay=0.1),
    "partition": lambda: optim.partition({"a": optim.adam(0.01), "b": optim.sgd(0.1, 0.9)},
                                         {"w": "a", "b": "b"}),
    "flatten": lambda: optim.flatten(optim.lamb(0.01)),
    "multisteps": lambda: optim.MultiSteps(optim.adam(0.01), 2).gradient_transformation(),
    "apply_if_finite": lambda: optim.apply_if_finite(optim.adam(0.01), 1),
    "more": lambda: optim.chain(optim.centralize(), optim.scale_by_belief(),
                                optim.scale_by_yogi(), optim.scale_by_radam(threshold=1.0),
                                optim.scale_by_amsgrad(), optim.scale_by_adamax(),
                                optim.scale_by_rprop(0.1), optim.scale_by_adadelta(),
                                optim.scale_by_novograd(), optim.sgd(0.01)),
    "fromage_lars": lambda: optim.chain(optim.fromage(0.01), optim.lars(0.1)),
}
STEPS = 4


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w": jnp.asarray(rng.standard_normal((3, 4)), dtype=jnp.float32),
            "b": jnp.asarray(rng.standard_normal(4), dtype=jnp.float32)}


def _data(seed=3):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.standard_normal((8, 3)), dtype=jnp.float32),
            jnp.asarray(rng.standard_normal((8, 4)), dtype=jnp.float32))


def _step(opt):
    def loss(params, x, y):
        return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)

    def step(params, state, x, y):
        value, grads = invarax.value_and_grad(loss)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, value

    return step


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_jit_step_is_bitwise_the_eager_step(name):
    opt = OPTIMIZERS[name]()
    step = _step(opt)
    jitted = invarax.jit(step)
    x, y = _data()
    eager = compiled = (_params(), opt.init(_params()))
    for _ in range(STEPS):
        eager, compiled = step(*eager[:2], x, y), jitted(*compiled[:2], x, y)
        for a, b in zip(tree_leaves(compiled), tree_leaves(eager), strict=True):
            assert_bitwise(a, b)


@pytest.mark.parametrize("name", ["adafactor", "lamb", "rmsprop_centered", "multisteps",
                                  "apply_if_finite", "inject"])
def test_vmap_over_an_ensemble_is_bitwise_each_member(name):
    opt = OPTIMIZERS[name]()
    step = _step(opt)

    def two_steps(params, x, y):
        params, state, _ = step(params, opt.init(params), x, y)
        return step(params, state, x, y)

    members = [_params(seed) for seed in range(3)]
    stacked = tree_map(lambda *xs: jnp.stack(xs), *members)
    x, y = _data()
    batched = invarax.vmap(two_steps, in_axes=(0, None, None))(stacked, x, y)
    for i, member in enumerate(members):
        for a, b in zip(tree_leaves(batched), tree_leaves(two_steps(member, x, y)),
                        strict=True):
            assert_bitwise(a[i], b)


# ---------------------------------------------------------------------------------------
# float64 references, from the formulas.

def _grads(n=STEPS, seed=10):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(5) for _ in range(n)]


def _run(opt, params, grads):
    params = jnp.asarray(params, dtype=jnp.float32)
    state = opt.init(params)
    for g in grads:
        updates, state = opt.update(jnp.asarray(g, dtype=jnp.float32), state, params)
        params = optim.apply_updates(params, updates)
    return np.asarray(params, np.float64)


def test_rmsprop_matches_reference():
    p, grads, nu = np.linspace(-1, 1, 5), _grads(), np.full(5, 0.1)
    expected = p.copy()
    for g in grads:
        nu = 0.2 * g * g + 0.8 * nu
        expected -= 0.01 * g / np.sqrt(nu + 1e-6)
    actual = _run(optim.rmsprop(0.01, decay=0.8, eps=1e-6, initial_scale=0.1), p, grads)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-6)


def test_adagrad_matches_reference():
    p, grads, s = np.linspace(-1, 1, 5), _grads(), np.full(5, 0.1)
    expected = p.copy()
    for g in grads:
        s = s + g * g
        expected -= 0.05 * g / np.sqrt(s + 1e-7)
    np.testing.assert_allclose(_run(optim.adagrad(0.05), p, grads), expected, rtol=0,
                               atol=1e-6)


def test_lion_steps_by_the_learning_rate_along_a_sign():
    p, grads, mu = np.linspace(-1, 1, 5), _grads(), np.zeros(5)
    expected = p.copy()
    for g in grads:
        expected -= 0.01 * (np.sign(0.1 * g + 0.9 * mu) + 0.001 * expected)
        mu = 0.01 * g + 0.99 * mu
    np.testing.assert_allclose(_run(optim.lion(0.01), p, grads), expected, rtol=0, atol=1e-6)


def test_lamb_update_has_the_norm_of_the_parameter_times_the_rate():
    params = jnp.array([3.0, 4.0, 0.0])
    opt = optim.lamb(0.1)
    updates, _ = opt.update(jnp.array([0.5, -2.0, 1.0]), opt.init(params), params)
    np.testing.assert_allclose(float(jnp.linalg.norm(updates)), 0.5, rtol=1e-6)
    zero = jnp.zeros(3)
    updates, _ = opt.update(jnp.array([0.5, -2.0, 1.0]), opt.init(zero), zero)
    np.testing.assert_allclose(np.abs(np.asarray(updates)), 0.1, rtol=1e-5)  # ratio 1


def test_adafactor_factors_large_matrices_only():
    params = {"m": jnp.ones((4, 6)), "v": jnp.ones(6), "small": jnp.ones((2, 6))}
    state = optim.adafactor(0.1, min_dim_size_to_factor=4).init(params)[0]
    assert state.v_row["m"].shape == (4,) and state.v_col["m"].shape == (6,)
    assert state.v["m"].shape == (1,) and state.v["v"].shape == (6,)
    assert state.v["small"].shape == (2, 6) and state.v_row["small"].shape == (1,)


def test_nesterov_adam_first_step_matches_reference():
    g = np.array([0.5, -2.0])
    b1, b2 = 0.9, 0.999
    mu, nu = (1 - b1) * g, (1 - b2) * g * g
    mu_hat = b1 * mu / (1 - b1 ** 2) + (1 - b1) * g / (1 - b1)
    expected = -0.1 * mu_hat / (np.sqrt(nu / (1 - b2)) + 1e-8)
    opt = optim.adam(0.1, nesterov=True, mu_dtype=jnp.float16)
    state = opt.init(jnp.zeros(2))
    assert state[0].mu.dtype == np.float16 and state[0].nu.dtype == np.float32
    updates, state = opt.update(jnp.asarray(g, dtype=jnp.float32), state)
    # 1 - b2 rounds to 1.3e-5 relative off in float32 (halved by the root), 1 - b1 less.
    np.testing.assert_allclose(np.asarray(updates, np.float64), expected, rtol=1e-5)
    assert state[0].mu.dtype == np.float16


def test_optimistic_gradient_uses_the_previous_gradient():
    opt = optim.optimistic_gradient_descent(1.0, alpha=0.5, beta=2.0)
    state = opt.init(jnp.zeros(1))
    first, state = opt.update(jnp.array([1.0]), state)
    second, _ = opt.update(jnp.array([3.0]), state)
    assert_bitwise(first, jnp.array([-0.5]))
    assert_bitwise(second, jnp.array([-(2.5 * 3.0 - 2.0 * 1.0)]))


# ---------------------------------------------------------------------------------------
# Integer parameters (issue 20, item 10) and bad input.

def test_apply_updates_adds_to_an_integer_leaf_and_keeps_its_dtype():
    params = {"n": jnp.array([1, 2, 3], dtype=jnp.int32), "w": jnp.ones(2)}
    out = optim.apply_updates(params, {"n": jnp.array([0.5, 1.7, -1.5]), "w": jnp.ones(2)})
    assert_bitwise(out["n"], np.array([1, 3, 1], np.int32))  # p + u, truncated, as optax
    out = optim.apply_updates(params, {"n": None, "w": jnp.ones(2)})
    assert out["n"] is params["n"]
    jitted = invarax.jit(optim.apply_updates)(params, {"n": jnp.array([0.5, 1.7, -1.5]),
                                                        "w": jnp.ones(2)})
    assert_bitwise(jitted["n"], np.array([1, 3, 1], np.int32))


def test_apply_updates_on_an_integer_leaf_matches_optax():
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    p, u = np.array([1, -2, 3], np.int32), np.array([0.5, -1.7, 2.5], np.float32)
    ours = optim.apply_updates([jnp.asarray(p)], [jnp.asarray(u)])[0]
    theirs = optax.apply_updates([jax.numpy.asarray(p)], [jax.numpy.asarray(u)])[0]
    assert_bitwise(ours, np.asarray(theirs))


def test_bad_hyperparameters_are_rejected():
    with pytest.raises(ValueError, match="rmsprop: learning_rate must be non-negative"):
        optim.rmsprop(-0.1)
    with pytest.raises(ValueError, match="scale_by_lion: unknown mode 'soft'"):
        optim.scale_by_lion(mode="soft")
    with pytest.raises(ValueError, match="clip: max_delta must be non-negative"):
        optim.clip(-1.0)
    with pytest.raises(ValueError, match="piecewise_constant_schedule: the scales must be "
                                         "non-negative"):
        optim.piecewise_constant_schedule(0.1, {2: -0.5})
    with pytest.raises(ValueError, match=r"scale_by_trust_ratio: the update needs the "
                                         r"parameters: call opt\.update\(grads, state, params\)"):
        opt = optim.scale_by_trust_ratio()
        opt.update(jnp.ones(2), opt.init(jnp.ones(2)))
    with pytest.raises(TypeError, match=r"scale_by_rms\.update: expected a "
                                        r"ScaleByRmsWithCountState as the state, got "
                                        r"ScaleByRmsState"):
        optim.scale_by_rms(bias_correction=True).update(
            jnp.ones(2), optim.scale_by_rms().init(jnp.ones(2)))


# ---------------------------------------------------------------------------------------
# The wrappers.

def test_inject_hyperparams_reads_an_edited_learning_rate_under_jit():
    opt = optim.inject_hyperparams(optim.adam)(learning_rate=0.1)
    params = jnp.ones(2)
    state = opt.init(params)
    assert sorted(state.hyperparams) == ["b1", "b2", "eps", "eps_root", "learning_rate"]
    state.hyperparams["learning_rate"] = jnp.asarray(0.0)
    updates, state = invarax.jit(opt.update)(jnp.ones(2), state, params)
    assert_bitwise(updates, jnp.array([-0.0, -0.0]))
    assert_bitwise(state.count, np.int32(1))
    with pytest.raises(ValueError, match=r"inject_hyperparams: static_args \['lr'\] must name "
                                         r"parameters of adam"):
        optim.inject_hyperparams(optim.adam, static_args="lr")


def test_apply_if_finite_skips_then_gives_up():
    opt = optim.apply_if_finite(optim.sgd(1.0), max_consecutive_errors=1)
    state = opt.init(jnp.zeros(1))
    bad = jnp.array([np.nan])
    u1, state = opt.update(bad, state)
    assert_bitwise(u1, jnp.zeros(1))
    u2, state = opt.update(bad, state)  # the second in a row: taken
    assert np.isnan(np.asarray(u2)).all() and int(state.total_notfinite) == 2
    u3, state = opt.update(jnp.array([2.0]), state)
    assert_bitwise(u3, jnp.array([-2.0]))
    assert int(state.notfinite_count) == 0 and bool(state.last_finite)


def test_multisteps_emits_the_mean_every_k_steps():
    opt = optim.MultiSteps(optim.sgd(1.0), every_k_schedule=3)
    state = opt.init(jnp.zeros(1))
    outs = []
    for g in [1.0, 2.0, 6.0, 4.0]:
        u, state = opt.update(jnp.array([g]), state)
        outs.append(float(u[0]))
        assert bool(opt.has_updated(state)) == (len(outs) == 3)
    assert outs == [0.0, 0.0, -3.0, 0.0]
    assert int(state.gradient_step) == 1 and int(state.mini_step) == 1


def test_partition_names_a_label_without_a_transformation():
    opt = optim.partition({"a": optim.sgd(0.1)}, {"w": "a", "b": "frozen"})
    with pytest.raises(ValueError, match=r"partition: the labels \['frozen'\] have no "
                                         r"transformation; the transformations are labelled "
                                         r"\['a'\]"):
        opt.init({"w": jnp.ones(1), "b": jnp.ones(1)})


def test_flatten_keeps_one_flat_state_and_returns_the_params_structure():
    opt = optim.flatten(optim.sgd(0.1, momentum=0.9))
    params = {"a": jnp.ones((2, 2)), "b": jnp.ones(3)}
    state = opt.init(params)
    assert state[0].trace.shape == (7,)
    updates, _ = opt.update(params, state)
    assert updates["a"].shape == (2, 2) and updates["b"].shape == (3,)


def test_stateless_inits_take_integer_params_as_optax_and_moment_inits_do_not():
    params = {"w": jnp.ones(2), "n": jnp.arange(2)}
    for opt in (optim.sgd(0.1), optim.sgd(optim.linear_schedule(0.1, 0.0, 5)),
                optim.chain(optim.clip(1.0), optim.add_decayed_weights(0.1))):
        for a, b in zip(tree_leaves(opt.init(params)), tree_leaves(opt.init({"w": jnp.ones(2)})),
                        strict=True):
            assert_bitwise(a, b)
    with pytest.raises(TypeError, match=r"scale_by_adam\.init: the parameter at \['n'\] is an "
                                        r"array of dtype int32"):
        optim.adam(0.1).init(params)
    with pytest.raises(TypeError, match=r"init: the parameter at \['f'\] is 'x'"):
        optim.sgd(0.1).init({"f": "x"})


# Every transformation, eager against jit over three updates (fixed gradients, no autodiff).
ALL = {
    "sm3": lambda: optim.sm3(0.1),
    "adan": lambda: optim.adan(0.01, weight_decay=0.1),
    "noisy_sgd": lambda: optim.noisy_sgd(0.1, key=3),
    "optimistic_adam": lambda: optim.optimistic_adam(0.01),
    "rprop": lambda: optim.rprop(0.01),
    "sign_sgd_nadamw": lambda: optim.chain(optim.sign_sgd(0.1), optim.nadamw(0.01)),
    "adamaxw_amsgrad": lambda: optim.chain(optim.adamaxw(0.1), optim.amsgrad(0.01)),
    "adadelta_radam": lambda: optim.chain(optim.adadelta(), optim.radam(0.01, threshold=1.0)),
    "novograd_yogi": lambda: optim.chain(optim.novograd(0.1), optim.yogi(0.01)),
    "conditional": lambda: optim.chain(
        optim.conditionally_transform(optim.adam(0.1), lambda step: step % 2 == 0),
        optim.conditionally_mask(optim.scale(2.0), lambda step: step > 0)),
    "small": lambda: optim.named_chain(
        ("nans", optim.zero_nans()), ("every", optim.apply_every(2)),
        ("norm", optim.normalize_by_update_norm()), ("agc", optim.adaptive_grad_clip(0.1)),
        ("nonneg", optim.keep_params_nonnegative()), ("freeze", optim.freeze({"w": False,
                                                                               "b": True}))),
    "monitor": lambda: optim.chain(optim.monitor({"n": optim.measure_with_ema(
        optim.tree.norm, 0.9)}), optim.snapshot("s", optim.tree.sum), optim.sgd(0.1)),
    "multisteps_skip": lambda: optim.MultiSteps(
        optim.adam(0.1), 2, should_skip_update_fn=optim.skip_not_finite
    ).gradient_transformation(),
    "selective": lambda: optim.selective_transform(optim.lamb(0.1),
                                                   freeze_mask={"w": False, "b": True}),
    "polyak": lambda: optim.polyak_sgd(0.5),
}


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_update_under_jit_is_bitwise_eager(name):
    opt = ALL[name]()
    params = _params()
    extra = {"value": jnp.asarray(0.7)} if name == "polyak" else {}

    def update(grads, state, params):
        return opt.update(grads, state, params, **extra)

    jitted = invarax.jit(update)
    eager = compiled = opt.init(params)
    for seed in range(3):
        grads = _params(seed + 5)
        (u_e, eager), (u_j, compiled) = update(grads, eager, params), jitted(grads, compiled,
                                                                             params)
        for a, b in zip(tree_leaves((u_j, compiled)), tree_leaves((u_e, eager)), strict=True):
            assert_bitwise(a, b)


@pytest.mark.parametrize("schedule", [
    optim.exponential_decay(0.5, 3, 0.7, transition_begin=2, staircase=True, end_value=0.2),
    optim.piecewise_constant_schedule(0.5, {4: 0.5, 2: 2.0}),
    optim.piecewise_interpolate_schedule("cosine", 0.5, {4: 0.5, 20: 0.0}),
    optim.linear_onecycle_schedule(20, 0.5),
    optim.cosine_onecycle_schedule(20, 0.5),
    optim.warmup_constant_schedule(0.1, 0.5, 5),
    optim.warmup_exponential_decay_schedule(0.0, 0.5, 3, 4, 0.5),
    optim.sgdr_schedule([dict(init_value=0.0, peak_value=0.5, warmup_steps=2, decay_steps=6)]
                        * 2),
], ids=lambda s: getattr(s, "__qualname__", "schedule").split(".")[0])
def test_schedules_under_jit_are_bitwise_eager(schedule):
    jitted = invarax.jit(schedule)
    for t in [0, 1, 2, 3, 5, 6, 7, 12, 19, 20, 25]:
        count = jnp.asarray(t, dtype=jnp.int32)
        assert_bitwise(jitted(count), schedule(count))

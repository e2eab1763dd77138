"""invarax.optim against optax (skipped when optax is absent): the same program, the same values.

Both compute each formula in float32 in the same order; they can differ only where XLA rounds
an operation differently from NumPy (``b2 ** count`` through XLA's pow, for one: a float32
ulp), so the bound is a few float32 ulps of the parameters (|p| < 4) after six steps.
"""

import functools

import numpy as np
import pytest

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")

import invarax  # noqa: E402
import invarax.numpy as jnp  # noqa: E402
from invarax import optim  # noqa: E402
from invarax.tree_util import tree_leaves, tree_map  # noqa: E402

STEPS = 6
RTOL, ATOL = 1e-6, 2e-6


def _tree(seed):
    rng = np.random.default_rng(seed)
    return {"w": rng.standard_normal((3, 4)).astype(np.float32),
            "b": rng.standard_normal(4).astype(np.float32)}


def _run(lib, opt, to_array):
    params = tree_map(to_array, _tree(0))
    state = opt.init(params)
    trajectory = []
    for i in range(STEPS):
        grads = tree_map(to_array, _tree(1 + 10 * i))
        updates, state = opt.update(grads, state, params)
        params = lib.apply_updates(params, updates)
        trajectory.append(params)
    return trajectory, state


def _both(make):
    """Run ``make(lib)`` in invarax.optim and in optax; return both trajectories and states."""
    ours = _run(optim, make(optim), jnp.asarray)
    theirs = _run(optax, make(optax), jax.numpy.asarray)
    return ours, theirs


def _assert_close(ours, theirs):
    ours_leaves, theirs_leaves = tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


CASES = {
    "sgd": lambda o: o.sgd(0.05),
    "sgd_momentum": lambda o: o.sgd(0.05, momentum=0.9),
    "sgd_nesterov": lambda o: o.sgd(0.05, momentum=0.9, nesterov=True),
    "adam": lambda o: o.adam(0.01),
    "adam_kwargs": lambda o: o.adam(0.01, b1=0.5, b2=0.9, eps=1e-3, eps_root=1e-4),
    "adamw": lambda o: o.adamw(0.01),
    "adamw_mask": lambda o: o.adamw(0.01, weight_decay=0.1, mask={"w": True, "b": False}),
    "adamw_mask_fn": lambda o: o.adamw(0.01, weight_decay=0.1,
                                       mask=lambda p: {"w": False, "b": True}),
    "clip_adam": lambda o: o.chain(o.clip_by_global_norm(0.5), o.adam(0.01)),
    "clip_unclipped": lambda o: o.chain(o.clip_by_global_norm(1e3), o.sgd(0.01)),
    "sgd_linear": lambda o: o.sgd(o.linear_schedule(0.1, 0.01, 4, transition_begin=1), 0.9),
    "adam_cosine": lambda o: o.adam(o.cosine_decay_schedule(0.05, 4, alpha=0.1)),
    "adamw_warmup": lambda o: o.adamw(o.warmup_cosine_decay_schedule(0.0, 0.05, 2, 5, 1e-3),
                                      weight_decay=0.1),
    "adam_nesterov": lambda o: o.adam(0.01, nesterov=True),
    "adam_mu_dtype": lambda o: o.adam(0.01, mu_dtype=np.float16),
    "adamw_nesterov": lambda o: o.adamw(0.01, nesterov=True, weight_decay=0.1),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_kwargs": lambda o: o.rmsprop(0.01, decay=0.8, eps=1e-4, initial_scale=0.1,
                                          eps_in_sqrt=False, momentum=0.9, nesterov=True,
                                          bias_correction=True),
    "rmsprop_centered": lambda o: o.rmsprop(0.01, centered=True, initial_scale=1.0),
    "rmsprop_centered_bc": lambda o: o.rmsprop(0.01, centered=True, bias_correction=True,
                                               eps=1e-3, eps_in_sqrt=False),
    "adagrad": lambda o: o.adagrad(0.05),
    "adagrad_zero": lambda o: o.adagrad(0.05, initial_accumulator_value=0.0, eps=1e-4),
    "lion": lambda o: o.lion(0.01),
    "lion_kwargs": lambda o: o.lion(0.01, b1=0.5, b2=0.9, weight_decay=0.1,
                                    mask={"w": True, "b": False}),
    "lion_modes": lambda o: o.chain(o.scale_by_lion(mode="smooth", smooth_beta=2.0),
                                    o.scale_by_lion(mode="refined"), o.scale(-0.01)),
    "lamb": lambda o: o.lamb(0.01),
    "lamb_kwargs": lambda o: o.lamb(0.01, b1=0.8, eps=1e-4, weight_decay=0.1),
    "trust_ratio": lambda o: o.chain(o.scale_by_trust_ratio(min_norm=3.0,
                                                            trust_coefficient=0.5, eps=0.1),
                                     o.scale(-0.01)),
    "optimistic": lambda o: o.optimistic_gradient_descent(0.05),
    "optimistic_kwargs": lambda o: o.optimistic_gradient_descent(0.05, alpha=0.5, beta=2.0),
    "adafactor": lambda o: o.adafactor(0.01),
    "adafactor_factored": lambda o: o.adafactor(0.01, min_dim_size_to_factor=2, momentum=0.9,
                                                weight_decay_rate=0.1, decay_offset=1),
    "adafactor_no_rate": lambda o: o.adafactor(min_dim_size_to_factor=3,
                                               multiply_by_parameter_scale=False,
                                               clipping_threshold=None),
    "clip": lambda o: o.chain(o.clip(0.5), o.sgd(0.05)),
    "clip_block_rms": lambda o: o.chain(o.clip_by_block_rms(0.5), o.sgd(0.05)),
    "set_to_zero": lambda o: o.chain(o.set_to_zero(), o.sgd(0.05)),
    "ema": lambda o: o.chain(o.ema(0.8), o.ema(0.5, debias=False), o.scale(-0.05)),
    "exponential_decay": lambda o: o.sgd(o.exponential_decay(0.1, 2, 0.5, transition_begin=1,
                                                             end_value=0.03)),
    "piecewise": lambda o: o.sgd(o.piecewise_constant_schedule(0.1, {2: 0.5, 4: 0.1})),
    "inject_adam": lambda o: o.inject_hyperparams(o.adam)(learning_rate=0.01, b1=0.8),
    "inject_schedule": lambda o: o.inject_hyperparams(o.sgd)(
        learning_rate=o.linear_schedule(0.1, 0.01, 4), momentum=0.9),
    "inject_static": lambda o: o.inject_hyperparams(o.rmsprop, static_args="decay")(
        0.01, decay=0.8, centered=True),
    "partition": lambda o: o.partition({"a": o.adam(0.01), "z": o.set_to_zero()},
                                       {"w": "a", "b": "z"}),
    "multi_transform": lambda o: o.multi_transform(
        {"a": o.sgd(0.05, momentum=0.9), "b": o.lion(0.01)},
        lambda p: {k: "a" if k == "w" else "b" for k in p}),
    "flatten": lambda o: o.flatten(o.adam(0.01)),
    "multisteps": lambda o: o.MultiSteps(o.adam(0.01), 3).gradient_transformation(),
    "multisteps_sum": lambda o: o.MultiSteps(o.sgd(0.01, 0.9), lambda step: 2,
                                             use_grad_mean=False).gradient_transformation(),
    "apply_if_finite": lambda o: o.apply_if_finite(o.adam(0.01), 2),
    "nadam": lambda o: o.nadam(0.01),
    "nadamw": lambda o: o.nadamw(0.01, weight_decay=0.1),
    "adamax": lambda o: o.adamax(0.01, b1=0.8),
    "adamaxw": lambda o: o.adamaxw(0.01, weight_decay=0.1, mask={"w": True, "b": False}),
    "amsgrad": lambda o: o.amsgrad(0.01),
    "amsgrad_no_bc": lambda o: o.amsgrad(0.01, bias_correction_mu=False,
                                         bias_correction_nu=False, mu_dtype=np.float16),
    "adabelief": lambda o: o.adabelief(0.01),
    "adabelief_nesterov": lambda o: o.adabelief(0.01, nesterov=True),
    "sign_sgd": lambda o: o.sign_sgd(0.01),
    "radam": lambda o: o.radam(0.01, b2=0.9),
    "radam_nesterov": lambda o: o.radam(0.01, threshold=2.0, nesterov=True),
    "yogi": lambda o: o.yogi(0.01),
    "novograd": lambda o: o.novograd(0.01, weight_decay=0.1),
    "adadelta": lambda o: o.adadelta(1.0, weight_decay=0.1),
    "adadelta_no_rate": lambda o: o.adadelta(),
    "fromage": lambda o: o.fromage(0.01),
    "fromage_schedule": lambda o: o.fromage(o.linear_schedule(0.1, 0.01, 4)),
    "lars": lambda o: o.lars(0.01, weight_decay=0.1, nesterov=True),
    "lars_masks": lambda o: o.lars(0.01, weight_decay=0.1, weight_decay_mask={"w": True,
                                                                             "b": False},
                                   trust_ratio_mask={"w": False, "b": True}),
    "rprop": lambda o: o.rprop(0.01),
    "centralize": lambda o: o.chain(o.centralize(), o.sgd(0.05)),
    "param_block_norm": lambda o: o.chain(o.scale_by_param_block_norm(), o.sgd(0.05)),
    "decay_schedule": lambda o: o.chain(o.add_decayed_weights(o.linear_schedule(0.1, 0.0, 4)),
                                        o.sgd(0.05)),
    "zero_nans": lambda o: o.chain(o.zero_nans(), o.sgd(0.05)),
    "nonnegative": lambda o: o.chain(o.sgd(0.5), o.keep_params_nonnegative()),
    "normalize": lambda o: o.chain(o.normalize_by_update_norm(2.0), o.sgd(0.05)),
    "adaptive_clip": lambda o: o.chain(o.adaptive_grad_clip(0.1), o.sgd(0.05)),
    "adaptive_clip_axis": lambda o: o.chain(o.adaptive_grad_clip(0.2, axis=-1), o.sgd(0.05)),
    "apply_every": lambda o: o.chain(o.apply_every(3), o.adam(0.01)),
    "conditionally_transform": lambda o: o.conditionally_transform(
        o.adam(0.01), lambda step: step % 2 == 0),
    "conditionally_mask": lambda o: o.conditionally_mask(o.adam(0.01), lambda step: step > 2),
    "freeze": lambda o: o.chain(o.freeze({"w": True, "b": False}), o.sgd(0.05)),
    "selective_transform": lambda o: o.selective_transform(o.adam(0.01),
                                                           freeze_mask={"w": False, "b": True}),
    "named_chain": lambda o: o.named_chain(("clip", o.clip(0.5)), ("adam", o.adam(0.01))),
    "stateless": lambda o: o.chain(o.stateless(lambda u, p: o.tree.scale(-0.01, u))),
    "stateless_tree_map": lambda o: o.stateless_with_tree_map(lambda u, p: -0.01 * u + 0.1 * p),
    "multisteps_skip": lambda o: o.MultiSteps(
        o.adam(0.01), 2, should_skip_update_fn=functools.partial(o.skip_large_updates,
                                                                 max_squared_norm=20.0)
    ).gradient_transformation(),
    "adan": lambda o: o.adan(0.01, weight_decay=0.1),
    "adan_kwargs": lambda o: o.chain(o.scale_by_adan(b1=0.9, b2=0.8, b3=0.95, eps_root=1e-6),
                                     o.scale(-0.01)),
    "sm3": lambda o: o.sm3(0.05),
    "sm3_kwargs": lambda o: o.chain(o.scale_by_sm3(b1=0.5, b2=0.9, eps=1e-4), o.scale(-0.05)),
    "monitor": lambda o: o.chain(
        o.monitor({"norm": o.tree.norm, "ema": o.measure_with_ema(o.tree.norm, 0.8),
                   "max": o.measure_with_ema(o.tree.max, 0.5, debias=False)}),
        o.snapshot("sum", o.tree.sum), o.sgd(0.05)),
    "multisteps_skip_nonfinite": lambda o: o.MultiSteps(
        o.adam(0.01), 2, should_skip_update_fn=o.skip_not_finite).gradient_transformation(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_optax(name):
    (ours, our_state), (theirs, their_state) = _both(CASES[name])
    _assert_close(ours, theirs)
    _assert_close(our_state, their_state)  # step counts (int32) and moments too


def test_building_blocks_match_optax():
    def make(o):
        return o.chain(o.trace(decay=0.5, nesterov=True), o.scale_by_adam(b1=0.8),
                       o.add_decayed_weights(0.01), o.scale(-0.02))

    (ours, our_state), (theirs, their_state) = _both(make)
    _assert_close(ours, theirs)
    _assert_close(our_state, their_state)


@pytest.mark.parametrize("make", [
    lambda o: o.constant_schedule(0.3),
    lambda o: o.linear_schedule(0.1, 0.02, transition_steps=8, transition_begin=3),
    lambda o: o.polynomial_schedule(1.0, 0.1, power=2, transition_steps=5),
    lambda o: o.cosine_decay_schedule(0.2, 10, alpha=0.1, exponent=2.0),
    lambda o: o.warmup_cosine_decay_schedule(0.01, 0.5, 4, 20, end_value=0.05),
    lambda o: o.join_schedules([o.constant_schedule(1.0), o.linear_schedule(1.0, 0.0, 4)],
                               [2]),
    lambda o: o.exponential_decay(0.5, transition_steps=3, decay_rate=0.7),
    lambda o: o.exponential_decay(0.5, 3, 0.7, transition_begin=2, staircase=True,
                                  end_value=0.2),
    lambda o: o.exponential_decay(0.5, 3, 1.5, end_value=0.9),
    lambda o: o.exponential_decay(0.5, 0, 0.7),
    lambda o: o.piecewise_constant_schedule(0.5, {4: 0.5, 2: 2.0, 10: 0.1}),
    lambda o: o.piecewise_constant_schedule(0.5),
    lambda o: o.piecewise_interpolate_schedule("linear", 0.5, {3: 2.0, 10: 0.1, 11: 0.5}),
    lambda o: o.piecewise_interpolate_schedule("cosine", 0.5, {4: 0.5, 20: 0.0}),
    lambda o: o.linear_onecycle_schedule(20, 0.5),
    lambda o: o.cosine_onecycle_schedule(20, 0.5, pct_start=0.2, div_factor=10.0),
    lambda o: o.warmup_constant_schedule(0.1, 0.5, 5),
    lambda o: o.warmup_exponential_decay_schedule(0.0, 0.5, 3, 4, 0.5, transition_begin=2,
                                                  staircase=True, end_value=0.1),
    lambda o: o.sgdr_schedule([dict(init_value=0.0, peak_value=0.5, warmup_steps=2,
                                    decay_steps=6),
                               dict(init_value=0.1, peak_value=0.3, warmup_steps=1,
                                    decay_steps=10, end_value=0.05)]),
])
def test_schedules_match_optax(make):
    ours, theirs = make(optim), make(optax)
    for t in [0, 1, 2, 3, 4, 5, 6, 10, 11, 19, 20, 21, 1000]:
        for count_ours, count_theirs in [(t, t), (jnp.asarray(t, dtype=jnp.int32),
                                                  jax.numpy.asarray(t, dtype=np.int32))]:
            a, b = np.asarray(ours(count_ours)), np.asarray(theirs(count_theirs))
            assert a.dtype == b.dtype, (t, a.dtype, b.dtype)
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8, err_msg=str(t))


def test_apply_updates_keeps_dtypes_as_optax():
    params = {"h": np.ones(3, np.float16), "w": np.ones(3, np.float32)}
    updates = {"h": np.full(3, 0.1, np.float32), "w": np.full(3, 0.1, np.float32)}
    ours = optim.apply_updates(tree_map(jnp.asarray, params), tree_map(jnp.asarray, updates))
    theirs = optax.apply_updates(tree_map(jax.numpy.asarray, params),
                                 tree_map(jax.numpy.asarray, updates))
    for k in params:
        assert ours[k].dtype == theirs[k].dtype
        np.testing.assert_array_equal(ours[k], theirs[k])


def _nonfinite_run(lib, to_array, make):
    opt = make(lib)
    params = tree_map(to_array, _tree(0))
    state = opt.init(params)
    out = []
    for i in range(7):
        grads = _tree(1 + 10 * i)
        if i in (1, 3, 4, 5):  # one skipped step, then three in a row (the third is taken)
            grads["w"][0, i % 4] = np.inf if i % 2 else np.nan
        updates, state = opt.update(tree_map(to_array, grads), state, params)
        params = lib.apply_updates(params, updates)
        out.append((params, state))
    return out


@pytest.mark.parametrize("make", [
    lambda o: o.apply_if_finite(o.adam(0.01), max_consecutive_errors=2),
    lambda o: o.MultiSteps(
        o.sgd(0.1), 2,
        should_skip_update_fn=lambda u, s, p: (
            jax.numpy.logical_not(jax.numpy.all(jax.numpy.isfinite(u["w"])))
            if o is optax else jnp.logical_not(jnp.all(jnp.isfinite(u["w"]))), ()),
    ).gradient_transformation(),
])
def test_nonfinite_steps_as_optax(make):
    ours = _nonfinite_run(optim, jnp.asarray, make)
    theirs = _nonfinite_run(optax, jax.numpy.asarray, make)
    for a, b in zip(ours, theirs, strict=True):
        _assert_close(a, b)


@pytest.mark.parametrize("variant", ["sps", "sps+"])
def test_polyak_sgd_matches_optax(variant):
    def run(lib, to_array):
        opt = lib.polyak_sgd(max_learning_rate=0.5, f_min=0.5, variant=variant)
        params = tree_map(to_array, _tree(0))
        state = opt.init(params)
        out = []
        for i in range(STEPS):
            grads = tree_map(to_array, _tree(1 + 10 * i))
            updates, state = opt.update(grads, state, params, value=0.1 * i)
            params = lib.apply_updates(params, updates)
            out.append(params)
        return out

    _assert_close(run(optim, jnp.asarray), run(optax, jax.numpy.asarray))


def test_optimistic_adam_matches_optax():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # optax's, not ours
        (ours, our_state), (theirs, their_state) = _both(
            lambda o: o.optimistic_adam(0.01, optimism=0.02))
    _assert_close(ours, theirs)
    _assert_close(our_state, their_state)


def test_lookahead_matches_optax():
    def run(lib, to_array):
        opt = lib.lookahead(lib.adam(0.05), sync_period=3, slow_step_size=0.5,
                            reset_state=True)
        params = lib.LookaheadParams.init_synced(tree_map(to_array, _tree(0)))
        state = opt.init(params)
        out = []
        for i in range(7):
            updates, state = opt.update(tree_map(to_array, _tree(1 + 10 * i)), state, params)
            params = lib.apply_updates(params, updates)
            out.append((params, state))
        return out

    for a, b in zip(run(optim, jnp.asarray), run(optax, jax.numpy.asarray), strict=True):
        _assert_close(a, b)


@pytest.mark.parametrize("uniform", [True, False])
def test_per_example_clipping_matches_optax(uniform):
    rng = np.random.default_rng(5)
    grads = {"w": rng.standard_normal((6, 3, 2)).astype(np.float32),
             "b": (rng.standard_normal((6, 2)) * 0.1).astype(np.float32)}
    ours = optim.per_example_global_norm_clip(tree_map(jnp.asarray, grads), 1.5)
    theirs = optax.per_example_global_norm_clip(tree_map(jax.numpy.asarray, grads), 1.5)
    _assert_close(ours, theirs)
    ours = optim.per_example_layer_norm_clip(tree_map(jnp.asarray, grads), 1.5, uniform)
    theirs = optax.per_example_layer_norm_clip(tree_map(jax.numpy.asarray, grads), 1.5,
                                               uniform)
    _assert_close(ours, theirs)


@pytest.mark.parametrize("make", [lambda o: o.noisy_sgd(0.05, key=3),
                                  lambda o: o.chain(o.add_noise(0.1, 0.3, key=7), o.adam(0.01))])
def test_gradient_noise_matches_optax(make):
    """The same random bits as jax.random: the trajectories agree (the key leaves differ in
    type, a raw uint32 pair here and a typed key in JAX, so only counts are compared)."""
    def run(lib, to_array):
        opt = make(lib)
        params = tree_map(to_array, _tree(0))
        state = opt.init(params)
        out = []
        for i in range(STEPS):
            updates, state = opt.update(tree_map(to_array, _tree(1 + 10 * i)), state, params)
            params = lib.apply_updates(params, updates)
            out.append(params)
        return out, state

    (ours, our_state), (theirs, their_state) = run(optim, jnp.asarray), run(
        optax, jax.numpy.asarray)
    _assert_close(ours, theirs)
    assert int(our_state[0].count) == int(their_state[0].count) == STEPS


def test_tree_random_like_matches_optax():
    tree = {"a": np.zeros((2, 3), np.float32), "b": [np.zeros(4, np.float32)]}
    ours = optim.tree.random_like(invarax.random.key(4), tree_map(jnp.asarray, tree))
    theirs = optax.tree.random_like(jax.random.key(4), tree_map(jax.numpy.asarray, tree))
    _assert_close(ours, theirs)


@pytest.mark.parametrize("step", [0, 3, 4])
def test_incremental_and_periodic_update_match_optax(step):
    new, old = _tree(1), _tree(2)
    for lib, npl in ((optim, jnp), (optax, jax.numpy)):
        n, o = tree_map(npl.asarray, new), tree_map(npl.asarray, old)
        out = (lib.incremental_update(n, o, 0.3),
               lib.periodic_update(n, o, npl.asarray(step), 2))
        if lib is optim:
            ours = out
        else:
            theirs = out
    _assert_close(ours, theirs)
    periodic = invarax.jit(optim.periodic_update, static_argnums=3)(
        tree_map(jnp.asarray, new), tree_map(jnp.asarray, old), jnp.asarray(step), 2)
    _assert_close(periodic, theirs[1])


def _parameters(f):
    """Each parameter's name, kind and default (``<obj>`` for a default that is not a
    plain number, string, bool or None; a line search object, a dtype)."""
    import inspect

    out = []
    for p in inspect.signature(f).parameters.values():
        default = p.default
        if default is inspect.Parameter.empty:
            default = "<none>"
        elif not isinstance(default, (int, float, str, bool, type(None))):
            default = "<obj>"
        out.append((p.name, p.kind, default))
    return out


@pytest.mark.parametrize("module", ["", "losses", "tree_utils"])
def test_signatures_are_optax_signatures(module):
    """Every public function shared with optax takes the same parameters: names, order,
    positional/keyword kinds and plain defaults, so calls port unchanged."""
    import warnings

    ours_module = getattr(optim, module) if module else optim
    theirs_module = getattr(optax, module) if module else optax
    checked, differ = 0, []
    for name in ours_module.__all__:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # optax's deprecated aliases
            theirs = getattr(theirs_module, name, None)
        ours = getattr(ours_module, name)
        if not callable(theirs) or (isinstance(theirs, type) and name != "MultiSteps"):
            continue
        try:
            import inspect

            inspect.signature(theirs)
        except (TypeError, ValueError):  # typing aliases (TransformInitFn, ...)
            continue
        checked += 1
        if _parameters(ours) != _parameters(theirs):
            differ.append((name, _parameters(ours), _parameters(theirs)))
    assert checked > 10 and differ == []

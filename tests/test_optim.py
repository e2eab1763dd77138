"""invarax.optim against float64 NumPy references of each formula; jit/vmap bitwise; errors."""

import math
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax as eqx
import invarax.numpy as jnp
from invarax import optim
from invarax.tree_util import tree_leaves, tree_map

ROOT = Path(__file__).resolve().parent.parent
STEPS = 6
# float32 optimizers against the float64 references. Each step rounds each parameter
# (|p| < 4, half an ulp is 2.4e-7) and its update a few times; Adam's bias correction adds up
# to lr * 2e-5 (1 - b2 in float32 is 0.0009999871, 1.3e-5 relative off 0.001, and sqrt halves
# it; 1 - b1 adds less). The bound below sums both over STEPS steps.
RTOL = 2e-6


def _atol(lr):
    return STEPS * (5e-7 + 2e-5 * lr)


def _params(dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return {"w": rng.standard_normal((3, 4)).astype(dtype),
            "b": rng.standard_normal(4).astype(dtype)}


def _grads(dtype=np.float32, seed=1):
    """STEPS gradient pytrees (fixed, so the references need no autodiff)."""
    return [_params(dtype, seed + 10 * i) for i in range(STEPS)]


def _as_invarax(tree):
    return tree_map(jnp.asarray, tree)


def _run(opt, params, grads):
    """Params after each step of ``opt`` on the fixed gradients (eager)."""
    params = _as_invarax(params)
    state = opt.init(params)
    out = []
    for g in grads:
        updates, state = opt.update(_as_invarax(g), state, params)
        params = optim.apply_updates(params, updates)
        out.append(params)
    return out


def _assert_close(actual, expected, lr, rtol=RTOL, atol=None):
    atol = _atol(lr) if atol is None else atol
    for a, e in zip(tree_leaves(actual), tree_leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), e, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------
# float64 NumPy references, written from the formulas (not from the implementation).


def _f64(tree):
    return {k: np.asarray(v, np.float64) for k, v in tree.items()}


def _ref_sgd(params, grads, lr, momentum=None, nesterov=False):
    p, t, out = _f64(params), {k: 0.0 for k in params}, []
    for step, g in enumerate(_f64(x) for x in grads):
        rate = lr(step) if callable(lr) else lr
        for k in p:
            if momentum is None:
                direction = g[k]
            else:
                t[k] = g[k] + momentum * t[k]
                direction = g[k] + momentum * t[k] if nesterov else t[k]
            p[k] = p[k] - rate * direction
        out.append(dict(p))
    return out


def _ref_adamw(params, grads, lr, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
               weight_decay=0.0, decay_mask=None, max_norm=None):
    p, out = _f64(params), []
    m, v = {k: 0.0 for k in p}, {k: 0.0 for k in p}
    for t, g in enumerate((_f64(x) for x in grads), start=1):
        if max_norm is not None:
            norm = math.sqrt(sum(float(np.sum(x * x)) for x in g.values()))
            if norm >= max_norm:
                g = {k: x / norm * max_norm for k, x in g.items()}
        rate = lr(t - 1) if callable(lr) else lr
        for k in p:
            m[k] = (1 - b1) * g[k] + b1 * m[k]
            v[k] = (1 - b2) * g[k] ** 2 + b2 * v[k]
            m_hat, v_hat = m[k] / (1 - b1 ** t), v[k] / (1 - b2 ** t)
            direction = m_hat / (np.sqrt(v_hat + eps_root) + eps)
            if decay_mask is None or decay_mask[k]:
                direction = direction + weight_decay * p[k]
            p[k] = p[k] - rate * direction
        out.append(dict(p))
    return out


# ---------------------------------------------------------------------------------------
# Optimizers against the references, several steps.


@pytest.mark.parametrize("momentum, nesterov", [(None, False), (0.9, False), (0.9, True)])
def test_sgd_matches_reference(momentum, nesterov):
    params, grads = _params(), _grads()
    got = _run(optim.sgd(0.05, momentum, nesterov), params, grads)
    _assert_close(got, _ref_sgd(params, grads, 0.05, momentum, nesterov), lr=0.05)


@pytest.mark.parametrize("kwargs", [{}, {"b1": 0.5, "b2": 0.9, "eps": 1e-3, "eps_root": 1e-4}])
def test_adam_matches_reference_with_bias_correction(kwargs):
    params, grads = _params(), _grads()
    got = _run(optim.adam(0.01, **kwargs), params, grads)
    _assert_close(got, _ref_adamw(params, grads, 0.01, **kwargs), lr=0.01)


def test_adam_first_step_is_the_sign_times_the_rate():
    # Bias correction makes the first Adam step lr * g / (|g| + eps) for every element.
    params, grads = _params(), _grads()
    got = _run(optim.adam(0.01), params, grads[:1])[0]
    for k in params:
        np.testing.assert_allclose(got[k], params[k] - 0.01 * np.sign(grads[0][k]), atol=1e-6)


@pytest.mark.parametrize("mask", [None, {"w": True, "b": False},
                                  lambda p: {"w": True, "b": False}])
def test_adamw_matches_reference_with_weight_decay_and_mask(mask):
    params, grads = _params(), _grads()
    got = _run(optim.adamw(0.01, weight_decay=0.1, mask=mask), params, grads)
    decay_mask = None if mask is None else {"w": True, "b": False}
    want = _ref_adamw(params, grads, 0.01, weight_decay=0.1, decay_mask=decay_mask)
    _assert_close(got, want, lr=0.01)
    if mask is not None:  # the masked-out leaf follows plain Adam
        plain = _ref_adamw(params, grads, 0.01)
        _assert_close([g["b"] for g in got], [w["b"] for w in plain], lr=0.01)


def test_adamw_defaults_are_optax_defaults():
    params, grads = _params(), _grads()
    _assert_close(_run(optim.adamw(0.01), params, grads),
                  _ref_adamw(params, grads, 0.01, weight_decay=1e-4), lr=0.01)


@pytest.mark.parametrize("max_norm", [0.5, 1e3])  # clipped at every step / never clipped
def test_clip_by_global_norm_then_adam_matches_reference(max_norm):
    params, grads = _params(), _grads()
    opt = optim.chain(optim.clip_by_global_norm(max_norm), optim.adam(0.01))
    _assert_close(_run(opt, params, grads),
                  _ref_adamw(params, grads, 0.01, max_norm=max_norm), lr=0.01)


def test_clip_by_global_norm_rescales_to_max_norm():
    grads = _as_invarax(_grads()[0])
    norm = math.sqrt(sum(float(np.sum(np.float64(x) ** 2)) for x in _grads()[0].values()))
    assert float(optim.global_norm(grads)) == pytest.approx(norm, rel=1e-6)
    opt = optim.clip_by_global_norm(1.0)
    clipped, _ = opt.update(grads, opt.init(grads))
    assert float(optim.global_norm(clipped)) == pytest.approx(1.0, rel=1e-6)
    for k in grads:
        np.testing.assert_allclose(clipped[k], np.float64(grads[k]) / norm, rtol=1e-6)
    same, _ = optim.clip_by_global_norm(2 * norm).update(grads, optim.EmptyState())
    for k in grads:  # below the threshold the updates pass bit for bit
        assert_bitwise(same[k], grads[k])


def test_float64_params_match_reference_tightly(x64):
    params, grads = _params(np.float64), _grads(np.float64)
    got = _run(optim.adamw(0.01, weight_decay=0.1), params, grads)
    _assert_close(got, _ref_adamw(params, grads, 0.01, weight_decay=0.1), lr=0.01,
                  rtol=1e-13, atol=0)
    got = _run(optim.sgd(0.05, 0.9, nesterov=True), params, grads)
    _assert_close(got, _ref_sgd(params, grads, 0.05, 0.9, True), lr=0.05, rtol=1e-13, atol=0)
    assert all(p.dtype == np.float64 for p in tree_leaves(got[-1]))


# ---------------------------------------------------------------------------------------
# Schedules, at their boundary steps.


def _ref_cosine(t, init, steps, alpha=0.0, exponent=1.0):
    c = 0.5 * (1 + math.cos(math.pi * min(t, steps) / steps))
    return init * ((1 - alpha) * c ** exponent + alpha)


def _ref_linear(t, init, end, steps, begin=0):
    s = min(max(t - begin, 0), steps)
    return init + (end - init) * s / steps


def _check_schedule(schedule, reference, steps):
    for t in steps:
        for count in (t, jnp.asarray(t, dtype=jnp.int32)):
            value = schedule(count)
            assert float(value) == pytest.approx(reference(t), rel=1e-6, abs=1e-7), t
        # a schedule runs under jit with the int32 count of an optimizer state, same bits
        count = jnp.asarray(t, dtype=jnp.int32)
        assert_bitwise(invarax.jit(schedule)(count), schedule(count))


def test_constant_schedule():
    assert optim.constant_schedule(0.3)(0) == 0.3 == optim.constant_schedule(0.3)(10 ** 6)


def test_linear_schedule_at_its_boundaries():
    _check_schedule(optim.linear_schedule(0.1, 0.02, transition_steps=8, transition_begin=3),
                    lambda t: _ref_linear(t, 0.1, 0.02, 8, 3), [0, 2, 3, 4, 10, 11, 12, 100])
    assert optim.linear_schedule(0.1, 0.0, transition_steps=0)(5) == 0.1


@pytest.mark.parametrize("alpha, exponent", [(0.0, 1.0), (0.1, 2.0)])
def test_cosine_decay_schedule_at_its_boundaries(alpha, exponent):
    _check_schedule(optim.cosine_decay_schedule(0.2, 10, alpha=alpha, exponent=exponent),
                    lambda t: _ref_cosine(t, 0.2, 10, alpha, exponent),
                    [0, 1, 5, 9, 10, 11, 1000])


def test_warmup_cosine_decay_schedule_at_its_boundaries():
    def reference(t):
        if t < 4:
            return _ref_linear(t, 0.01, 0.5, 4)
        return _ref_cosine(t - 4, 0.5, 16, alpha=0.05 / 0.5)

    _check_schedule(optim.warmup_cosine_decay_schedule(0.01, 0.5, 4, 20, end_value=0.05),
                    reference, [0, 1, 3, 4, 5, 12, 19, 20, 21, 500])


def test_join_schedules_restarts_the_count_at_each_boundary():
    s = optim.join_schedules([optim.constant_schedule(1.0), optim.linear_schedule(1.0, 0.0, 4),
                              optim.constant_schedule(7.0)], [2, 6])
    assert [float(s(t)) for t in range(9)] == [1, 1, 1, 0.75, 0.5, 0.25, 7, 7, 7]


def test_learning_rate_schedule_is_read_at_the_count_before_the_update():
    schedule = optim.warmup_cosine_decay_schedule(0.0, 0.1, 2, STEPS)
    params, grads = _params(), _grads()
    _assert_close(_run(optim.sgd(schedule, momentum=0.5), params, grads),
                  _ref_sgd(params, grads, lambda t: float(schedule(t)), 0.5), lr=0.1)
    _assert_close(_run(optim.adam(schedule), params, grads),
                  _ref_adamw(params, grads, lambda t: float(schedule(t))), lr=0.1)
    state = optim.sgd(schedule).init(_as_invarax(params))
    for _ in range(3):
        _, state = optim.sgd(schedule).update(_as_invarax(grads[0]), state)
    assert_bitwise(state[1].count, np.int32(3))


def test_count_saturates_instead_of_wrapping():
    top = np.iinfo(np.int32).max
    assert_bitwise(optim.safe_increment(jnp.asarray(top - 1, dtype=jnp.int32)), np.int32(top))
    assert_bitwise(optim.safe_increment(jnp.asarray(top, dtype=jnp.int32)), np.int32(top))


# ---------------------------------------------------------------------------------------
# apply_updates.


def test_apply_updates_keeps_dtype_and_none_leaves(x64):
    params = {"w": jnp.ones(2, dtype=jnp.float32), "h": jnp.ones(2, dtype=jnp.float16),
              "act": "relu", "n": jnp.arange(3)}
    updates = {"w": jnp.full(2, 0.1, dtype=jnp.float64), "h": jnp.full(2, 0.5, jnp.float16),
               "act": None, "n": None}
    new = optim.apply_updates(params, updates)
    assert new["w"].dtype == np.float32 and new["h"].dtype == np.float16
    assert_bitwise(new["w"], np.float32(1 + np.float64(0.1)) * np.ones(2, np.float32))
    assert new["act"] == "relu" and new["n"] is params["n"]


class _MLP(eqx.Module):
    """An MLP from plain arrays, with a non-array leaf (the activation) and an int buffer."""

    layers: list
    activation: object
    steps_seen: object

    def __call__(self, x):
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = self.activation(x)
        return x


def _mlp(sizes=(2, 16, 16, 1), seed=0):
    rng = np.random.default_rng(seed)
    layers = [(jnp.asarray(rng.uniform(-1, 1, (m, n)) / math.sqrt(m), dtype=jnp.float32),
               jnp.asarray(rng.uniform(-1, 1, n) / math.sqrt(m), dtype=jnp.float32))
              for m, n in zip(sizes[:-1], sizes[1:], strict=True)]
    return _MLP(layers, jnp.tanh, jnp.zeros((), dtype=jnp.int32))


def _data(n=64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    y = (np.sin(2 * x[:, :1]) * x[:, 1:] + 0.5 * x[:, :1]).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(y)


def _loss(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


def test_apply_updates_on_a_module_keeps_its_non_array_leaves():
    model = _mlp()
    opt = optim.sgd(0.1)
    state = opt.init(eqx.filter(model, eqx.is_inexact_array))
    _, grads = eqx.filter_value_and_grad(_loss)(model, *_data())
    updates, state = opt.update(grads, state)
    new = optim.apply_updates(model, updates)
    assert type(new) is _MLP and new.activation is jnp.tanh
    assert new.steps_seen is model.steps_seen
    assert_bitwise(new.layers[0][0], model.layers[0][0] + (-0.1) * grads.layers[0][0])


# ---------------------------------------------------------------------------------------
# N3 and N1: jit and vmap of a training step give eager's bits.

OPTIMIZERS = {
    "sgd": lambda: optim.sgd(0.05),
    "sgd_momentum": lambda: optim.sgd(0.05, momentum=0.9),
    "sgd_nesterov": lambda: optim.sgd(optim.linear_schedule(0.1, 0.01, 4), 0.9, True),
    "adam": lambda: optim.adam(0.01),
    "adamw": lambda: optim.adamw(optim.cosine_decay_schedule(0.01, 5), weight_decay=0.1,
                                 mask={"w": True, "b": False}),
    "clip_adam": lambda: optim.chain(optim.clip_by_global_norm(0.5), optim.adam(0.01)),
}


def _lsq_loss(params, x, y):
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def _step(opt):
    def step(params, state, x, y):
        loss, grads = invarax.value_and_grad(_lsq_loss)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    return step


def _lsq_data(n=8, seed=3):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.standard_normal((n, 3)), dtype=jnp.float32),
            jnp.asarray(rng.standard_normal((n, 4)), dtype=jnp.float32))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_jit_step_is_bitwise_the_eager_step(name):
    opt = OPTIMIZERS[name]()
    step = _step(opt)
    jitted = invarax.jit(step)
    x, y = _lsq_data()
    eager_p = jit_p = _as_invarax(_params())
    eager_s = jit_s = opt.init(eager_p)
    for _ in range(STEPS):
        eager_p, eager_s, eager_loss = step(eager_p, eager_s, x, y)
        jit_p, jit_s, jit_loss = jitted(jit_p, jit_s, x, y)
        assert_bitwise(jit_loss, eager_loss)
        for a, b in zip(tree_leaves((jit_p, jit_s)), tree_leaves((eager_p, eager_s)),
                        strict=True):
            assert_bitwise(a, b)


@pytest.mark.parametrize("name", ["sgd_momentum", "adamw", "clip_adam"])
def test_vmap_over_an_ensemble_is_bitwise_each_member(name):
    opt = OPTIMIZERS[name]()
    step = _step(opt)

    def two_steps(params, x, y):
        state = opt.init(params)
        params, state, _ = step(params, state, x, y)
        return step(params, state, x, y)

    members = [_as_invarax(_params(seed=s)) for s in range(3)]
    stacked = tree_map(lambda *xs: jnp.stack(xs), *members)
    x, y = _lsq_data()
    batched = invarax.vmap(two_steps, in_axes=(0, None, None))(stacked, x, y)
    for i, member in enumerate(members):
        single = two_steps(member, x, y)
        for a, b in zip(tree_leaves(batched), tree_leaves(single), strict=True):
            assert_bitwise(a[i], b)


def test_filter_jit_module_step_is_bitwise_the_eager_step():
    opt = optim.adamw(0.01, weight_decay=0.1)
    x, y = _data()

    def step(model, state):
        loss, grads = eqx.filter_value_and_grad(_loss)(model, x, y)
        updates, state = opt.update(grads, state, model)
        return optim.apply_updates(model, updates), state, loss

    jitted = eqx.filter_jit(step)
    eager = compiled = (_mlp(), opt.init(eqx.filter(_mlp(), eqx.is_inexact_array)))
    for _ in range(4):
        eager, compiled = step(*eager[:2]), jitted(*compiled[:2])
        assert compiled[0].activation is jnp.tanh
        for a, b in zip(tree_leaves(compiled), tree_leaves(eager), strict=True):
            assert_bitwise(a, b)


# ---------------------------------------------------------------------------------------
# Training converges on an Equinox-style model, Adam under filter_jit.


def test_adam_under_filter_jit_trains_an_mlp():
    model = _mlp()
    x, y = _data()
    opt = optim.adam(0.01)
    state = opt.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(model, state, x, y):
        loss, grads = eqx.filter_value_and_grad(_loss)(model, x, y)
        updates, state = opt.update(grads, state, model)
        return optim.apply_updates(model, updates), state, loss

    first = float(_loss(model, x, y))
    for _ in range(300):
        model, state, loss = step(model, state, x, y)
    last = float(_loss(model, x, y))
    assert last * 10 <= first, (first, last)
    assert model.activation is jnp.tanh and model.steps_seen.dtype == np.int32
    assert_bitwise(state[0].count, np.int32(300))


# ---------------------------------------------------------------------------------------
# Bad input.


def test_negative_hyperparameters_are_rejected():
    with pytest.raises(ValueError, match=r"sgd: learning_rate must be non-negative, got -0.1"):
        optim.sgd(-0.1)
    with pytest.raises(ValueError, match="adam: learning_rate must be non-negative"):
        optim.adam(-1e-3)
    with pytest.raises(ValueError, match="clip_by_global_norm: max_norm must be non-negative, "
                                         "got -1.0"):
        optim.clip_by_global_norm(-1.0)
    with pytest.raises(ValueError, match="weight_decay must be non-negative"):
        optim.adamw(0.1, weight_decay=-0.5)
    with pytest.raises(TypeError, match="learning_rate must be a real number, got 'fast'"):
        optim.sgd("fast")
    with pytest.raises(ValueError, match="decay_steps must be positive, got 0"):
        optim.cosine_decay_schedule(0.1, 0)
    with pytest.raises(ValueError, match="2 schedules need 1 boundaries, got 2"):
        optim.join_schedules([optim.constant_schedule(1.0)] * 2, [1, 2])


def test_a_non_float_param_is_named_and_the_fix_shown():
    with pytest.raises(TypeError, match=r"the parameter at \['n'\] is an array of dtype "
                                        r"int32; .*invarax\.filter\(model, "
                                        r"invarax\.is_inexact_array\)"):
        optim.adam(0.1).init({"w": jnp.ones(2), "n": jnp.arange(2)})
    with pytest.raises(TypeError, match=r"init: the parameter at \['s'\] is 'relu' \(of type "
                                        r"str\); optimizers update float arrays only"):
        optim.sgd(0.1).init({"w": jnp.ones(2), "s": "relu"})
    with pytest.raises(TypeError, match=r"apply_updates: the parameter at \['n'\] is 'a' "
                                        r"\(of type str\)"):
        optim.apply_updates({"n": "a"}, {"n": jnp.ones(2)})


def test_mismatched_trees_say_which():
    params = _as_invarax(_params())
    state = optim.adam(0.1).init(params)
    other = {"w": params["w"], "c": params["b"]}
    with pytest.raises(ValueError, match=r"scale_by_adam\.update: the updates and the state's "
                                         r"mu have different tree structures.*keys"):
        optim.adam(0.1).update(other, state)
    with pytest.raises(ValueError, match=r"trace\.update: the updates and the momentum buffer"):
        opt = optim.sgd(0.1, momentum=0.9)
        opt.update({"w": params["w"]}, opt.init(params))
    with pytest.raises(ValueError, match=r"add_decayed_weights\.update: the updates and the "
                                         r"params have different tree structures"):
        opt = optim.adamw(0.1)
        opt.update(params, opt.init(params), other)
    with pytest.raises(ValueError, match=r"add_decayed_weights: the update needs the "
                                         r"parameters: call opt\.update\(grads, state, params\)"):
        opt.update(params, opt.init(params))
    with pytest.raises(ValueError, match=r"apply_updates: the updates and the params "
                                         r"have different tree structures: .*keys"):
        optim.apply_updates(params, other)
    with pytest.raises(ValueError, match=r"apply_updates: the update at \['b'\] has shape "
                                         r"\(3,\), its parameter \(4,\)"):
        optim.apply_updates(params, {"w": params["w"], "b": jnp.ones(3)})


def test_a_state_from_another_optimizer_is_rejected():
    params = _as_invarax(_params())
    with pytest.raises(TypeError, match=r"scale_by_adam\.update: expected a ScaleByAdamState "
                                        r"as the state, got TraceState"):
        optim.adam(0.1).update(params, optim.sgd(0.1, momentum=0.9).init(params))
    with pytest.raises(ValueError, match=r"chain: expected a tuple of 2 states \(one per "
                                         r"transformation\), got tuple of length 3"):
        optim.adam(0.1).update(params, optim.adamw(0.1).init(params), params)
    with pytest.raises(TypeError, match="chain: argument 1 is a function"):
        optim.chain(optim.scale(1.0), lambda g: g)


"""``jax.example_libraries``' ``optimizers`` and ``stax`` on invarax, against JAX's: the same
key gives the same parameters, the same steps the same values."""

import numpy as np
import pytest

import invarax
from invarax.example_libraries import optimizers, stax
from tests.helpers import assert_bitwise, data

jax = pytest.importorskip("jax")
jopt = pytest.importorskip("jax.example_libraries.optimizers")
jstax = pytest.importorskip("jax.example_libraries.stax")

OPTIMIZERS = [("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)),
              ("adagrad", (0.1,)), ("rmsprop", (0.01,)), ("rmsprop_momentum", (0.01,)),
              ("adam", (0.01,)), ("adamax", (0.01,))]


def _run(lib_opt, name, args, params, grads, schedule):
    step = getattr(lib_opt, schedule[0])(*schedule[1]) if schedule else args[0]
    init, update, get_params = getattr(lib_opt, name)(step, *args[1:])
    state = init(params)
    for i, g in enumerate(grads):
        state = update(i, g, state)
    return get_params(state), state


@pytest.mark.parametrize("name,args", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_optimizers_match_jax(name, args):
    params = {"w": data((3, 2)), "b": data(2, seed=1)}
    grads = [{"w": data((3, 2), seed=s), "b": data(2, seed=s + 9)} for s in range(2, 5)]
    schedule = ("exponential_decay", (0.1, 2, 0.5)) if name == "adam" else None
    ours, state = _run(optimizers, name, args, params, grads, schedule)
    theirs, _ = _run(jopt, name, args, params, grads, schedule)
    for key in params:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=2e-6, atol=1e-7)
    packed = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    assert invarax.tree_util.tree_structure(packed) == invarax.tree_util.tree_structure(state)


def test_schedules_and_clipping_match_jax():
    for name, args in [("inverse_time_decay", (1.0, 10, 0.5, True)),
                       ("polynomial_decay", (1.0, 10, 0.1, 2.0)),
                       ("piecewise_constant", ([2, 5], [1.0, 0.5, 0.1]))]:
        ours, theirs = getattr(optimizers, name)(*args), getattr(jopt, name)(*args)
        for i in (0, 3, 7, 12):
            assert float(ours(i)) == pytest.approx(float(theirs(i)), rel=1e-6)
    tree = {"a": data(4), "b": data((2, 2), seed=3)}
    for a, b in zip(invarax.tree_util.tree_leaves(optimizers.clip_grads(tree, 0.5)),
                    jax.tree_util.tree_leaves(jopt.clip_grads(tree, 0.5)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(TypeError, match="gradient tree"):
        optimizers.sgd(0.1).update_fn(0, [1.0], optimizers.sgd(0.1).init_fn({"w": 1.0}))


def _net(s):
    return s.serial(
        s.Conv(4, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu,
        s.FanOut(2), s.parallel(s.MaxPool((2, 2), strides=(2, 2)), s.AvgPool((2, 2), (2, 2))),
        s.FanInConcat(), s.Flatten, s.Dense(5), s.Gelu, s.Dropout(0.9, mode="test"),
        s.Dense(3), s.LogSoftmax)


def test_stax_network_matches_jax():
    x = data((2, 6, 6, 1))
    ours_init, ours_apply = _net(stax)
    theirs_init, theirs_apply = _net(jstax)
    shape, params = ours_init(invarax.random.key(0), (-1, 6, 6, 1))
    jshape, jparams = theirs_init(jax.random.key(0), (-1, 6, 6, 1))
    assert shape == (-1, 3) and jshape[1:] == (3,)  # (JAX's pooling turns the -1 into 0)
    for a, b in zip(invarax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(jparams),
                    strict=True):
        assert_bitwise(a, b)  # JAX's initialisers: JAX's bits
    key, jkey = invarax.random.key(1), jax.random.key(1)
    out = ours_apply(params, x, rng=key)
    np.testing.assert_allclose(out, theirs_apply(jparams, x, rng=jkey), rtol=1e-5, atol=2e-6)
    assert_bitwise(invarax.jit(lambda p, v: ours_apply(p, v, rng=key))(params, x), out)
    init, apply = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), x)

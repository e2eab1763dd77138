"""pmap and the devices: pmap(f) is bitwise vmap(f) (N1 across devices), collectives
included, for 1..8 devices; pmap under grad/jit/vmap; filter_pmap; devices and placement;
bad input. (The multi-process runs are in tests/test_distributed.py.)"""

import threading

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import lax, nn, random
from invarax.ops._device_axes import DeviceFailure, Exchange

COLLECTIVES = {
    "psum": lambda v: lax.psum(jnp.sin(v) * v, "i"),
    "pmean": lambda v: lax.pmean(v * 3.0, "i"),
    "pmax": lambda v: lax.pmax(v, "i"),
    "pmin": lambda v: lax.pmin(-v, "i"),
    "all_gather": lambda v: lax.all_gather(v, "i") + 1.0,
    "all_gather_tiled": lambda v: lax.all_gather(v, "i", axis=0, tiled=True),
    "axis_index": lambda v: v * lax.axis_index("i"),
    "ppermute": lambda v: lax.ppermute(v, "i", [(0, 0)]),
    "psum_then_local": lambda v: jnp.tanh(v) - lax.psum(v, "i") / 7.0,
}


@pytest.mark.parametrize("n", range(1, 9))
@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_pmap_is_bitwise_vmap(name, n):
    f = COLLECTIVES[name]
    xs = data((n, 5, 3))
    assert_bitwise(invarax.pmap(f, axis_name="i")(xs), invarax.vmap(f, axis_name="i")(xs))


def _ring(n):
    return [(i, (i + 1) % n) for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_movements_are_bitwise_vmap(n):
    xs = data((n, n, 2 * n), seed=n)
    programs = [
        lambda v: lax.ppermute(v, "i", _ring(n)),
        lambda v: lax.ppermute(v, "i", [(0, n - 1)]),
        lambda v: lax.psum_scatter(v, "i"),
        lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
        lambda v: lax.all_to_all(v, "i", 0, 1),
        lambda v: lax.all_to_all(v, "i", 0, 0),
        lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
    ]
    for f in programs:
        assert_bitwise(invarax.pmap(f, axis_name="i")(xs), invarax.vmap(f, axis_name="i")(xs))


def test_movements_against_jax_vmap():
    jax = pytest.importorskip("jax")
    n = 4
    xs = data((n, n, 8), seed=3)
    cases = [
        (lambda v: lax.ppermute(v, "i", _ring(n)), lambda v: jax.lax.ppermute(v, "i", _ring(n))),
        (lambda v: lax.psum_scatter(v, "i"), lambda v: jax.lax.psum_scatter(v, "i")),
        (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
         lambda v: jax.lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True)),
        (lambda v: lax.all_to_all(v, "i", 0, 1), lambda v: jax.lax.all_to_all(v, "i", 0, 1)),
        (lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
         lambda v: jax.lax.all_to_all(v, "i", 1, 0, tiled=True)),
        (lambda v: lax.all_gather(v, "i", axis=1), lambda v: jax.lax.all_gather(v, "i", axis=1)),
    ]
    for ours, theirs in cases:
        want = np.asarray(jax.vmap(theirs, axis_name="i")(xs))
        got = invarax.pmap(ours, axis_name="i")(xs)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_movements_are_linear_and_their_transposes_invert_them():
    n = 4
    xs = data((n, n, 8), seed=1)
    for f in [lambda v: lax.ppermute(v, "i", _ring(n)),
              lambda v: lax.all_to_all(v, "i", 0, 1),
              lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
              lambda v: lax.psum_scatter(v, "i")]:
        g = invarax.vmap(f, axis_name="i")
        out, pullback = invarax.vjp(g, xs)
        cts = data(out.shape, seed=2)
        (back,) = pullback(cts)
        # <f(x), ct> == <x, f^T(ct)>: the transpose is the adjoint.
        lhs = np.vdot(np.asarray(out, np.float64), np.asarray(cts, np.float64))
        rhs = np.vdot(np.asarray(xs, np.float64), np.asarray(back, np.float64))
        assert abs(lhs - rhs) < 1e-4 * max(1.0, abs(lhs))


def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


def _params(seed=0):
    k1, k2 = random.split(random.key(seed))
    return ((random.normal(k1, (3, 16)) / 2, jnp.zeros(16)),
            (random.normal(k2, (16, 2)) / 4, jnp.zeros(2)))


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_data_parallel_gradients_are_bitwise_vmap(n):
    params = _params()
    xs, ys = data((n, 8, 3), seed=5), data((n, 8, 2), seed=6)

    def step(p, x, y):
        return lax.pmean(invarax.grad(_mlp_loss)(p, x, y), "i")

    pm = invarax.pmap(step, axis_name="i", in_axes=(None, 0, 0))(params, xs, ys)
    vm = invarax.vmap(step, axis_name="i", in_axes=(None, 0, 0))(params, xs, ys)
    for a, b in zip(invarax.tree_leaves(pm), invarax.tree_leaves(vm), strict=True):
        assert_bitwise(a, b)


def test_thread_count_never_changes_a_bit(monkeypatch):
    params = _params()
    xs, ys = data((2, 64, 3), seed=5), data((2, 64, 2), seed=6)
    f = invarax.pmap(lambda p, x, y: invarax.grad(_mlp_loss)(p, x, y), in_axes=(None, 0, 0))
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append(invarax.tree_leaves(f(params, xs, ys)))
    for other in results[1:]:
        for a, b in zip(results[0], other, strict=True):
            assert_bitwise(a, b)


def test_nested_vmap_inside_pmap():
    xs = data((2, 3, 4))

    def f(v):
        inner = invarax.vmap(lambda r: lax.psum(r, "j") * lax.psum(r, "i"), axis_name="j")
        return inner(v)

    assert_bitwise(invarax.pmap(f, axis_name="i")(xs), invarax.vmap(f, axis_name="i")(xs))


def test_pmap_under_grad_jit_and_vmap_is_vmap():
    xs = data((4, 3))
    f = lambda v: lax.psum(jnp.sin(v) ** 2, "i")
    loss_p = lambda x: invarax.pmap(f, axis_name="i")(x).sum()
    loss_v = lambda x: invarax.vmap(f, axis_name="i")(x).sum()
    assert_bitwise(invarax.grad(loss_p)(xs), invarax.grad(loss_v)(xs))
    assert_bitwise(invarax.jit(loss_p)(xs), loss_p(xs))
    outer = data((2, 4, 3))
    assert_bitwise(invarax.vmap(invarax.pmap(f, axis_name="i"))(outer),
                   invarax.vmap(invarax.vmap(f, axis_name="i"))(outer))


def test_pmap_traces_once_and_compiles_the_body():
    traces = []

    def f(v):
        traces.append(1)
        return lax.psum(v, "i")

    g = invarax.pmap(f, axis_name="i")
    for _ in range(3):
        g(data((2, 3)))
    assert len(traces) == 1


def test_arguments_static_keyword_out_axes_and_donation():
    xs = data((3, 4))
    f = invarax.pmap(lambda x, k, scale: x * scale + k, static_broadcasted_argnums=(2,),
                     in_axes=(0, None, None))
    assert_bitwise(f(xs, 1.0, 2.0), xs * 2.0 + 1.0)
    g = invarax.pmap(lambda x, *, y: x + y)
    assert_bitwise(g(xs, y=xs), xs + xs)
    h = invarax.pmap(lambda x: (x.sum(), lax.psum(x.sum(), "i")), axis_name="i",
                     out_axes=(0, None))
    per, total = h(xs)
    assert per.shape == (3,) and total.shape == ()
    moved = invarax.pmap(lambda x: jnp.stack([x, x]), out_axes=1)(xs)
    assert moved.shape == (2, 3, 4)
    arr = jnp.asarray(xs)
    invarax.pmap(lambda x: x + 1, donate_argnums=0)(arr)
    assert arr.is_deleted()


def test_filter_pmap_builds_an_ensemble_with_its_activation():
    # Equinox issue 115: non-array outputs (the MLP's activation) come back intact.
    keys = random.split(random.key(0), 3)
    make = lambda k: nn.MLP(2, 2, 8, 2, activation=jnp.tanh, key=k)
    ensemble = invarax.filter_pmap(make)(keys)
    reference = invarax.filter_vmap(make)(keys)
    assert ensemble.layers[0].weight.shape == (3, 8, 2)
    assert ensemble.activation is jnp.tanh
    for a, b in zip(invarax.tree_leaves(ensemble), invarax.tree_leaves(reference), strict=True):
        assert_bitwise(a, b)
    x = data((3, 2))
    out = invarax.filter_pmap(lambda m, v: m(v))(ensemble, x)
    assert_bitwise(out, invarax.filter_vmap(lambda m, v: m(v))(ensemble, x))


def test_filter_shard_places_the_arrays_only():
    devs = invarax.devices()
    model = nn.Linear(2, 3, key=random.key(0))
    placed = invarax.filter_shard((model, "tag", 3), devs[1])
    assert placed[1:] == ("tag", 3)
    assert placed[0].weight.devices() == {devs[1]}
    assert_bitwise(placed[0].weight, model.weight)
    traced = invarax.jit(lambda x: invarax.filter_shard(x, devs[1]) * 2)(jnp.ones(2))
    assert_bitwise(traced, np.full(2, 2.0, np.float32))


def test_devices_and_placement():
    devs = invarax.devices()
    assert len(devs) == invarax.device_count() == invarax.local_device_count() == 8
    assert [d.id for d in devs] == list(range(8))
    assert invarax.local_devices() == devs
    assert invarax.process_index() == 0 and invarax.process_count() == 1
    assert repr(devs[0]) == "CpuDevice(id=0)" and devs[0].platform == "cpu"
    x = invarax.device_put(jnp.ones(3), devs[2])
    assert x.devices() == {devs[2]}
    assert jnp.ones(2).devices() == {devs[0]}
    rep = invarax.device_put_replicated(jnp.arange(3.0), devs[:4])
    assert rep.shape == (4, 3) and rep.sharding.device_set == set(devs[:4])
    shards = invarax.device_put_sharded([jnp.full(2, float(i)) for i in range(3)], devs[:3])
    assert_bitwise(shards, np.repeat(np.arange(3.0, dtype=np.float32), 2).reshape(3, 2))
    assert invarax.pmap(lambda v: v + 1)(jnp.ones((2, 2))).sharding.devices == tuple(devs[:2])


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match=r"size 9, but only 8 device\(s\)"):
        invarax.pmap(lambda v: v)(jnp.ones((9, 2)))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        invarax.pmap(lambda a, b: a + b)(jnp.ones((2, 3)), jnp.ones((3, 3)))
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        invarax.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1"):
        invarax.pmap(lambda a, b: a, in_axes=(0,))(jnp.ones(2), jnp.ones(2))
    with pytest.raises(RuntimeError, match="before devices are first used"):
        invarax.config.update("jax_num_cpu_devices", 2)
    with pytest.raises(ValueError, match="out of range"):
        invarax.pmap(lambda v: lax.ppermute(v, "i", [(0, 5)]), axis_name="i")(jnp.ones((2, 1)))
    with pytest.raises(ValueError, match="psum_scatter needs dimension 0"):
        invarax.pmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="all_to_all needs split_axis 1"):
        invarax.vmap(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), axis_name="i")(
            jnp.ones((2, 2, 3)))
    with pytest.raises(TypeError, match="one of invarax.devices"):
        invarax.device_put(jnp.ones(2), "gpu:0")
    with pytest.raises(ValueError, match="2 shards for 1 devices"):
        invarax.device_put_sharded([jnp.ones(2)] * 2, invarax.devices()[:1])
    with pytest.raises(RuntimeError, match="mpiexec -n 2"):
        invarax.distributed.initialize()


def test_a_failed_device_releases_the_others():
    exchange = Exchange(3, timeout=30)
    errors = []

    def arrive(i):
        try:
            exchange.gather(i, np.zeros(1))
        except DeviceFailure as err:
            errors.append(err)

    threads = [threading.Thread(target=arrive, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    exchange.abort()  # the third device failed before its collective
    for t in threads:
        t.join(timeout=10)
    assert len(errors) == 2 and "another device" in str(errors[0])


def test_an_error_on_a_device_is_raised_by_pmap():
    def f(v):
        return lax.psum(v, "i")

    g = invarax.pmap(f, axis_name="i")
    g(jnp.ones((2, 2)))
    # Device 1's program raises before the psum; device 0 waits there and is released.
    entry = next(iter(g.body._cache.values()))
    run = entry.call

    def flaky(leaves):
        if threading.current_thread().name.startswith("invarax-device-1"):
            raise FloatingPointError("device 1 failed")
        return run(leaves)

    entry.call = flaky
    try:
        with pytest.raises(FloatingPointError, match="device 1 failed"):
            g(jnp.ones((2, 2)))
    finally:
        entry.call = run


def test_a_finished_call_keeps_no_stack_of_its_collectives(monkeypatch):
    # The exchange's barrier refers back to it (a reference cycle): unless the call drops
    # its stack, the garbage collector alone frees it, and over MPI the pooled buffer of
    # the next gather could not be reused (a fresh 8 MB per psum of 10^6 float32).
    from invarax.ops import _device_axes

    made = []
    init = _device_axes.Exchange.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(_device_axes.Exchange, "__init__", record)
    out = invarax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.ones((2, 3)))
    assert np.array_equal(np.asarray(out), np.full((2, 3), 2.0, np.float32))
    assert len(made) == 1
    assert made[0]._gathered is None and all(v is None for v in made[0]._slots)

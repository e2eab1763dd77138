"""invarax on a GPU: devices, placement, and every covered operation giving the CPU's bits,
eagerly and under ``jit``, ``grad`` and ``vmap``, up to whole training steps.

With a GPU (CuPy, NVRTC and a CUDA device) these tests run there (``python -m pytest -m
gpu``). Without one they run against ``fake_cupy``, installed as CuPy with one GPU: the
device probe, placement, the runner, every GPU rule and launch run as they would, and the
kernels are host twins compiled from the same per-output sources (and the generated
fusion-group kernels from the same generated source), so everything but the device's
execution of the PTX is tested on every machine.

A NaN's sign and payload are outside the contract (a GPU's arithmetic makes canonical
NaNs), so values are compared bit for bit with NaNs free (``assert_bitwise_any_nan``).
"""

import warnings

import numpy as np
import pytest
from helpers import assert_bitwise_any_nan
from test_gpu_kernels import ON_GPU, cp

import invarax
import invarax.numpy as jnp
from invarax import lax, nn, optim
from invarax.core import backends
from invarax.ops.fused import fma

fake_cupy = None if ON_GPU else cp  # the stand-in (None without NVRTC to build kernels)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not ON_GPU and fake_cupy is None, reason="no GPU and no NVRTC to build the kernels")]


@pytest.fixture(autouse=True)
def gpu(monkeypatch):
    """The GPU (the stand-in's where there is none)."""
    if not ON_GPU:
        fake_cupy.install(monkeypatch)
    for flag, default in (("jax_platform_name", ""), ("jax_default_device", None)):
        monkeypatch.setitem(invarax.config._values, flag, default)  # (another test's)
    return invarax.devices("gpu")[0]


@pytest.fixture
def cpu():
    return invarax.devices("cpu")[0]


def on_cpu(f, *args):
    """``f(*args)`` computed on the CPU, as host arrays."""
    with invarax.default_device(invarax.devices("cpu")[0]):
        return invarax.tree_util.tree_map(np.asarray, f(*args))


def on_gpu(f, *args, host_ok=()):
    """``f(*args)`` computed on the GPU, as host arrays; fails if an operation other than
    those named in ``host_ok`` ran on the host."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(*args)
    fell_back = {str(w.message).split(" ")[0] for w in caught
                 if "runs on the host" in str(w.message)}
    assert fell_back <= set(host_ok), f"ran on the host: {sorted(fell_back - set(host_ok))}"
    return invarax.tree_util.tree_map(np.asarray, out)


def check(f, *args, host_ok=()):
    """``f`` and ``jit(f)`` on the GPU give ``f``'s bits on the CPU (the NumPy ``args`` made
    arrays on the device computing)."""
    def eager(*args):
        return f(*map(jnp.asarray, args))

    want = on_cpu(eager, *args)
    for g in (eager, invarax.jit(f)):
        got = on_gpu(g, *args, host_ok=host_ok)
        invarax.tree_util.tree_map(assert_bitwise_any_nan, got, want)


def spread(rng, shape, dtype):
    """Values over many magnitudes, with the special values mixed in."""
    x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-6, 6, shape)).astype(dtype)
    flat = x.reshape(-1)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39, 1.0], dtype)
    flat[:min(len(flat), len(specials))] = specials[:len(flat)]
    return x


# ---------------------------------------------------------------------------------------
# Devices and placement.


def test_the_gpu_is_listed_and_is_the_default(gpu, cpu):
    assert invarax.devices() == [gpu] and repr(gpu) == "CudaDevice(id=0)"
    assert gpu.platform == "gpu" and isinstance(gpu.device_kind, str)
    assert invarax.default_backend() == "gpu" and invarax.default_device() is gpu
    assert invarax.devices("cpu")[0] is cpu and repr(cpu) == "CpuDevice(id=0)"
    assert invarax.devices("cuda") == [gpu] and invarax.device_count("gpu") == 1
    x = jnp.arange(4.0) * 2
    assert x.devices() == {gpu} and x._on_accelerator()


def test_finding_the_gpus_leaves_the_cpu_devices_unmade(monkeypatch):
    """The probe on the first operation does not fix the CPU device count, which
    ``jax_num_cpu_devices`` may still set until devices are first used."""
    registry = invarax.distributed.devices._registry
    for name in ("local", "all", "gpus"):
        monkeypatch.setattr(registry, name, None)
    monkeypatch.setattr(backends, "_probed", False)
    assert backends.runner() is not None and registry.local is None


def test_jax_platforms_cpu_keeps_everything_on_the_cpu(monkeypatch, cpu):
    monkeypatch.setitem(invarax.config._values, "jax_platforms", "cpu")
    monkeypatch.setattr(invarax.distributed.devices._registry, "gpus", None)
    monkeypatch.setattr(backends, "_probed", False)
    assert invarax.devices()[0] is cpu and invarax.default_backend() == "cpu"
    assert not (jnp.ones(3) + 1)._on_accelerator()
    with pytest.raises(RuntimeError, match="no GPU"):
        invarax.devices("gpu")


def test_device_put_moves_and_commits(gpu, cpu):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = invarax.device_put(host, gpu)
    assert x.committed and x.devices() == {gpu} and x.sharding.device_set == {gpu}
    assert x._on_accelerator()  # no host copy until read
    assert np.array_equal(np.asarray(x), host) and x.block_until_ready() is x
    y = invarax.device_put(x * 2, cpu)
    assert y.devices() == {cpu} and not y._on_accelerator()
    assert np.array_equal(np.asarray(y), host * 2)
    assert (x + 1).committed and (x + 1).devices() == {gpu}  # follows its committed operand
    z = y + 1  # committed to the CPU: computed there
    assert z.devices() == {cpu} and not z._on_accelerator()


def test_operands_on_two_devices_are_an_error_naming_both(gpu, cpu):
    a = invarax.device_put(jnp.ones(3), gpu)
    b = invarax.device_put(jnp.ones(3), cpu)
    with pytest.raises(ValueError, match=r"CudaDevice\(id=0\).*the CPU.*device_put") as e:
        a + b
    assert "(3,)" in str(e.value)
    assert np.array_equal(np.asarray(a + jnp.ones(3)), [2, 2, 2])  # uncommitted: moves


def test_pmap_runs_and_a_mesh_of_gpus_is_a_clear_error(gpu):
    x = np.arange(6, dtype=np.float32).reshape(1, 6)
    assert np.array_equal(np.asarray(invarax.pmap(lambda v: jnp.sin(v) * 2)(x)),
                          on_cpu(invarax.pmap(lambda v: jnp.sin(v) * 2), x))
    with pytest.raises(NotImplementedError, match="mesh of GPUs.*devices=invarax.devices"):
        invarax.make_mesh((1,), ("x",))
    assert invarax.make_mesh((1,), ("x",), devices=invarax.devices("cpu")).size == 1


def test_an_uncovered_operation_runs_on_the_host_with_a_warning(gpu):
    x = invarax.device_put(jnp.asarray([7.5, -7.5, 5.0]), gpu)
    with pytest.warns(RuntimeWarning, match="rem runs on the host.*same bits"):
        r = lax.rem(x, 2.0)
    assert r.devices() == {gpu} and np.array_equal(np.asarray(r), [1.5, -1.5, 1.0])


# ---------------------------------------------------------------------------------------
# Every covered operation: the CPU's bits.

DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise(dtype, x64):
    rng = np.random.default_rng(0)
    x, y = spread(rng, (3, 37), dtype), spread(rng, (3, 37), dtype)[::-1]
    pos = np.abs(x) + dtype(0.5)

    def f(x, y, pos):
        return [x + y, x - y, x * y, x / y, lax.max(x, y), lax.min(x, y), -x, jnp.abs(x),
                jnp.exp(x / 1e5), jnp.log(pos), jnp.tanh(x), nn.sigmoid(x), jnp.sin(x),
                jnp.cos(y), jnp.sqrt(pos), lax.rsqrt(pos), jnp.floor(x), jnp.ceil(y), x < y,
                x == y, jnp.where(x > y, x, y), x.astype(jnp.int32), x ** 3, x * 2.5 + 1,
                jnp.expm1(x / 1e5), jnp.log1p(pos), fma(x, y, pos), jnp.sign(x),
                jnp.log2(pos), jnp.arctan(x), jnp.arcsinh(y), jax_erf(x), jnp.arctan2(x, y),
                jnp.power(pos, y / 1e5), x ** 0.5, lax.round(x * 3.0, 0), lax.round(y * 3.0, 1),
                lax.nextafter(x, y)]
    check(f, x, y, pos)


def test_integer_and_bool_elementwise():
    rng = np.random.default_rng(1)
    i = rng.integers(-2**31, 2**31, (50,), dtype=np.int64).astype(np.int32)
    j = rng.integers(-40, 40, (50,), dtype=np.int32)
    u = rng.integers(0, 2**32, (50,), dtype=np.uint64).astype(np.uint32)
    i[:2], j[:2] = -2**31, (-1, 0)  # integer division's overflow and division by zero

    def f(i, j, u):
        return [i + j, i * j, i - j, lax.max(i, j), i & j, i | j, i ^ j, ~i, i < j,
                lax.shift_left(u, j.astype(jnp.uint32)),
                lax.shift_right_logical(u, j.astype(jnp.uint32)),
                (i > 0) & (j > 0), i.astype(jnp.float32), u.astype(jnp.int32), i % j,
                lax.rem(i, j), jnp.sign(j), lax.div(i, j), lax.div(u, j.astype(jnp.uint32)),
                i.at[jnp.abs(j) % 50].add(i), u.at[jnp.abs(j) % 50].mul(u),
                (i > 0).at[jnp.abs(j) % 50].min(j > 0), (i > 0).at[jnp.abs(j) % 50].max(j > 0),
                j.astype(jnp.int8).at[i % 50].max(j.astype(jnp.int8) * 7),
                i.at[jnp.abs(j) % 50].set(j)]
    check(f, i, j, u)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_and_scans(dtype, x64):
    x = spread(np.random.default_rng(2), (5, 300), dtype)

    def f(x):
        finite = jnp.where(jnp.isfinite(x), x, 1.0)
        return [jnp.sum(finite, axis=1), jnp.sum(finite, axis=0), jnp.sum(finite),
                jnp.max(x, axis=1), jnp.min(x, axis=0), jnp.prod(finite[:, :20] / 1e3, axis=1),
                jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.mean(finite, axis=1),
                jnp.cumsum(finite, axis=1), lax.cumprod(finite[:, :30] / 100, axis=1),
                lax.cummax(x, axis=0, reverse=True), lax.cummin(x, axis=1),
                lax.cumlogsumexp(finite / 1e3, axis=1), jnp.sort(x, axis=1),
                jnp.argsort(x, axis=0), *lax.top_k(x, 3)]
    check(f, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_contractions(dtype, x64):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((7, 300)).astype(dtype)
    b = rng.standard_normal((300, 65)).astype(dtype)
    c = rng.standard_normal((2, 5, 9)).astype(dtype)
    v = rng.standard_normal(300).astype(dtype)

    def f(a, b, c, v):
        return [a @ b, a @ v, v @ v, jnp.einsum("bij,bkj->bik", c, c),
                jnp.einsum("bij,bjk->ik", c, c.transpose(0, 2, 1)), (a.T @ a)[:3, :3],
                lax.dot_general(a, b.T, (((1,), (1,)), ((), ())))]
    check(f, a, b, c, v)


@pytest.mark.parametrize("dtype", DTYPES)
def test_convolutions_and_pooling(dtype, x64):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 9, 8)).astype(dtype)
    w = rng.standard_normal((4, 3, 3, 3)).astype(dtype)
    g = rng.standard_normal((6, 1, 2, 2)).astype(dtype)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))

    def f(x, w, g, nhwc):
        conv = lax.conv_general_dilated
        return [conv(x, w, (1, 1), "SAME"), conv(x, w, (2, 1), "VALID", rhs_dilation=(1, 2)),
                conv(x, w, (1, 1), ((2, 1), (0, -1)), lhs_dilation=(2, 1)),
                conv(jnp.concatenate([x, x], 1), g, (1, 1), "VALID", feature_group_count=6),
                conv(nhwc, w.transpose(2, 3, 1, 0), (1, 1), "SAME",
                     dimension_numbers=("NHWC", "HWIO", "NHWC")),
                lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
                lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 2), "SAME")]
    check(f, x, w, g, nhwc)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_and_min_window_derivatives(dtype, x64):
    rng = np.random.default_rng(5)
    x, t = spread(rng, (2, 7, 6), dtype), spread(rng, (2, 7, 6), dtype)
    x[1, :3] = 1.0  # ties

    def pool(op, init, x):  # overlapping windows, padding
        return lax.reduce_window(x, init, op, (1, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 1)))

    def f(x, t):
        out, pullback = invarax.vjp(lambda x: pool(lax.max, -jnp.inf, x), x)
        return [pullback(out * 3.0)[0],
                invarax.jvp(lambda x: pool(lax.min, jnp.inf, x), (x,), (t,))[1]]
    check(f, x, t)


def test_indexing_and_data_movement():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    idx = np.array([4, 0, 4, 1, 9, -2], np.int32)

    def f(x, idx):
        return [x[idx % 6], x[:, ::-2], x[1:5:2, 1:], x.T, x.reshape(5, 6), x[None, :, 2],
                jnp.take(x, idx, axis=0, mode="fill", fill_value=-1.0),
                jnp.take_along_axis(x, jnp.abs(idx[:, None]) % 5, axis=1),
                x.at[idx % 6].add(1.5), x.at[idx % 6].set(2.0), x.at[idx % 6].max(0.0),
                x.at[idx].add(1.0, mode="drop"),
                jnp.pad(x, ((1, 2), (0, 3))), lax.pad(x, 0.5, ((1, -2, 1), (-1, 0, 2))),
                jnp.concatenate([x, x[:2]], 0), jnp.flip(x, 1), jnp.broadcast_to(x[0], (3, 5)),
                lax.dynamic_slice(x, (idx[0], 2), (2, 3)),
                lax.dynamic_update_slice(x, jnp.zeros((2, 2)), (idx[1], idx[2])),
                jnp.arange(7.0), jnp.eye(3), jnp.stack([x[0], x[1]])]
    check(f, x, idx)


def test_control_flow():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def f(x):
        loop = lax.fori_loop(0, 5, lambda i, c: jnp.tanh(c * 1.5 + i), x)
        count = lax.while_loop(lambda c: c[0] < 10.0, lambda c: c * 1.7 + 0.1, x[0] + 1.1)
        branch = lax.cond(x[0, 0] < 0, lambda v: jnp.exp(v), lambda v: -v, x)
        carry, ys = lax.scan(lambda c, r: (c * 0.5 + r, jnp.sin(c)), x[0], x)
        return [loop, count, branch, carry, ys]
    check(f, x)


def test_random_and_nn_functions():
    def f(seed):
        key = invarax.random.key(seed)
        k1, k2, k3 = invarax.random.split(key, 3)
        z = invarax.random.normal(k1, (4, 33))
        return [z, invarax.random.uniform(k2, (5,)), invarax.random.bernoulli(k3, 0.3, (6,)),
                nn.softmax(z), nn.log_softmax(z, axis=0), nn.gelu(z), nn.relu(z),
                jax_logsumexp(z)]
    check(f, 7)


def jax_erf(x):
    return invarax.scipy.special.erf(x)


def jax_logsumexp(z):
    return invarax.scipy.special.logsumexp(z, axis=1)


# ---------------------------------------------------------------------------------------
# Training steps and the motivating program.


def _train(model, loss, data, steps=2):
    """``steps`` jitted Adam steps of ``loss`` from ``model``, then an eager gradient: the
    losses and the final parameters."""
    opt = optim.adam(1e-2)
    state = opt.init(invarax.filter(model, invarax.is_array))

    @invarax.filter_jit
    def step(m, s, *data):
        value, grads = invarax.filter_value_and_grad(loss)(m, *data)
        updates, s = opt.update(grads, s, m)
        return invarax.apply_updates(m, updates), s, value

    values = []
    for _ in range(steps):
        model, state, value = step(model, state, *data)
        values.append(value)
    eager = invarax.filter_grad(loss)(model, *data)
    return values, invarax.filter(model, invarax.is_array), invarax.filter(eager,
                                                                           invarax.is_array)


def _xent(logits, y):
    return -jnp.mean(jnp.take_along_axis(nn.log_softmax(logits), y[:, None], axis=1))


def test_mlp_training_step():
    def run():
        k1, k2 = invarax.random.split(invarax.random.key(0))
        model = invarax.nn.MLP(20, 5, 16, 2, key=k1)
        x = invarax.random.normal(k2, (32, 20))
        y = jnp.arange(32) % 5
        return _train(model, lambda m, x, y: _xent(invarax.filter_vmap(m)(x), y), (x, y))
    got, want = on_gpu(run), on_cpu(run)
    invarax.tree_util.tree_map(assert_bitwise_any_nan, got, want)


def test_cnn_training_step():
    def run():
        k1, k2, k3, k4 = invarax.random.split(invarax.random.key(1), 4)
        model = [invarax.nn.Conv2d(2, 4, 3, key=k1), invarax.nn.MaxPool2d(2, 2),
                 invarax.nn.Conv2d(4, 3, 2, padding=1, key=k2),
                 invarax.nn.Linear(3 * 3 * 3, 3, key=k3)]

        def forward(model, img):
            h = jnp.tanh(model[0](img))
            h = model[2](model[1](h))
            return model[3](h.reshape(-1))

        x = invarax.random.normal(k4, (6, 2, 7, 7))
        y = jnp.arange(6) % 3
        return _train(model, lambda m, x, y: _xent(invarax.filter_vmap(
            forward, in_axes=(None, 0))(m, x), y), (x, y))
    got = on_gpu(run)
    invarax.tree_util.tree_map(assert_bitwise_any_nan, got, on_cpu(run))


def test_transformer_block_training_step():
    def run():
        k1, k2, k3, k4 = invarax.random.split(invarax.random.key(2), 4)
        attention = invarax.nn.MultiheadAttention(2, 8, key=k1)
        mlp = invarax.nn.MLP(8, 8, 16, 1, activation=nn.gelu, key=k2)
        ln1, ln2 = invarax.nn.LayerNorm(8), invarax.nn.LayerNorm(8)
        model = (ln1, attention, ln2, mlp)

        def block(model, x):
            ln1, attention, ln2, mlp = model
            y = invarax.vmap(ln1)(x)
            x = x + attention(y, y, y)
            return x + invarax.vmap(mlp)(invarax.vmap(ln2)(x))

        x = invarax.random.normal(k3, (3, 5, 8))
        target = invarax.random.normal(k4, (3, 5, 8))
        return _train(model, lambda m, x, t: jnp.mean(
            (invarax.filter_vmap(block, in_axes=(None, 0))(m, x) - t) ** 2), (x, target))
    got, want = on_gpu(run), on_cpu(run)
    invarax.tree_util.tree_map(assert_bitwise_any_nan, got, want)


def test_a_row_is_the_same_for_every_batch_size():
    """The program that motivates the project: ``filter_vmap(mlp)(x[:n])`` is bitwise
    ``filter_vmap(mlp)(x)[:n]`` on the GPU (it is not on other libraries' GPUs), and is the
    CPU's result."""
    def run():
        k1, k2 = invarax.random.split(invarax.random.key(3))
        mlp = invarax.nn.MLP(48, 10, 32, 3, key=k1)
        x = invarax.random.normal(k2, (300, 48))
        forward = invarax.filter_jit(invarax.filter_vmap(mlp))
        full = np.asarray(forward(x))
        return [full, *(np.asarray(forward(x[:n])) for n in (1, 10, 100, 299))]
    got = on_gpu(run)
    for part in got[1:]:
        assert np.array_equal(part, got[0][:len(part)])
    assert np.array_equal(got[0], on_cpu(run)[0])


BATCHES = [*range(1, 18), *([4096] if ON_GPU else [])]


def test_every_batch_size_gives_the_cpus_rows():
    """``vmap`` of a layer, a ``grad`` and a reduction over batches of 1 to 17 (and 4096 on
    a GPU): every batch on the GPU gives the CPU's bits, and each row is the row of the
    largest batch."""
    rng = np.random.default_rng(9)
    w = rng.standard_normal((37, 300)).astype(np.float32)
    xs = rng.standard_normal((max(BATCHES), 300)).astype(np.float32)

    def f(w, x):
        def one(row):
            h = jnp.tanh(w @ row)
            return h, invarax.grad(lambda r: jnp.sum(jnp.tanh(w @ r) ** 2))(row)[:5]
        return invarax.vmap(one)(x)

    full = on_gpu(invarax.jit(f), w, xs)
    for n in BATCHES:
        got = on_gpu(f, w, xs[:n])
        invarax.tree_util.tree_map(assert_bitwise_any_nan, got, on_cpu(f, w, xs[:n]))
        invarax.tree_util.tree_map(lambda a, b, n=n: assert_bitwise_any_nan(a, b[:n]),
                                   got, full)


def test_donated_arguments_are_deleted_as_on_the_cpu():
    x, y = jnp.ones(5), jnp.ones(5)
    out = invarax.jit(lambda v: v * 2, donate_argnums=0)(x)
    assert x.is_deleted() and np.array_equal(np.asarray(out), [2.0] * 5)
    same = invarax.jit(lambda v: v, donate_argnums=0)(y)  # returned as it is: kept
    assert np.array_equal(np.asarray(same), [1.0] * 5)


def test_jit_keeps_values_on_the_gpu(gpu):
    f = invarax.jit(lambda a, b: jnp.tanh(a @ b).sum(axis=0))
    a = invarax.device_put(np.ones((3, 4), np.float32), gpu)
    out = f(a, jnp.ones((4, 2)))
    assert out._on_accelerator() and out.devices() == {gpu} and out.committed
    assert backends.RUNNER is not None


def test_narrow_types_run_on_the_host():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.linspace(-3, 3, 20).astype(ml_dtypes.bfloat16)
    with pytest.warns(RuntimeWarning, match="narrow types"):
        placed = invarax.device_put(x, invarax.devices("gpu")[0])
        got = np.asarray(jnp.tanh(placed) * 2)
    assert placed.devices() == {invarax.devices("gpu")[0]}
    assert np.array_equal(got.view(np.uint16), on_cpu(lambda v: jnp.tanh(v) * 2, x)
                          .view(np.uint16))


def test_numpys_elementary_functions_stay_on_the_host():
    """With invarax's own elementary functions off, the CPU uses NumPy's, which the GPU
    does not have: those operations run on the host, so the bits are still the CPU's."""
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    with invarax.config.flag("invarax_exact_elementary", False):
        with pytest.warns(RuntimeWarning, match="tanh runs on the host.*exact_elementary"):
            got = np.asarray(jnp.tanh(jnp.asarray(x)))
        assert np.array_equal(got, on_cpu(jnp.tanh, x))


def test_the_verify_battery_gives_the_cpus_digests():
    """``invarax verify --device gpu``: the battery's digests on the GPU are the CPU's
    (here the families that run wholly on the GPU; the whole battery, about a minute
    against the stand-in, gives the CPU's overall digest too)."""
    only = ["elementary/exp", "elementary/tanh", "arithmetic", "contractions", "reductions",
            "convolutions", "windows", "activations", "fused", "mlp_train_jit/float32"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        gpu = invarax.verify(threads=[1], device="gpu", only=only)
    cpu = invarax.verify(threads=[1], device="cpu", only=only)
    assert gpu["digests"] == cpu["digests"] and len(cpu["digests"]) >= 15


def test_jit_runs_each_fusion_group_as_one_kernel(monkeypatch):
    """Under ``jit`` a chain of elementwise operations ending in a row reduction is one
    generated kernel (here two launches for the program: the chain with its sums, and the
    ``+ 1`` after), with the unfused operations' bits; softmax's row group, which the GPU
    does not fuse yet, runs operation by operation with the same bits."""
    from invarax.kernels import cuda

    launches = []
    original = cuda.group
    monkeypatch.setattr(cuda, "group", lambda *a, **k: launches.append(1) or original(*a, **k))
    x = np.random.default_rng(8).standard_normal((8, 300)).astype(np.float32)
    f = invarax.jit(lambda x, y: jnp.sum(jnp.tanh(x * 2 + y) * x, axis=1) + 1)
    want = on_cpu(f, x, x[::-1])
    launches.clear()
    assert_bitwise_any_nan(on_gpu(f, x, x[::-1]), want)
    assert len(launches) == 2
    check(lambda x: nn.softmax(x * 3.0, axis=1) - 1.0, x)

"""The contract under sharding (N7): jit with any in_shardings/out_shardings, and programs on
committed arrays, are bitwise the unsharded program (an MLP train step with the batch
split, the weights' contracted axis split, everything replicated); shard_map programs are
bitwise their nested-vmap equivalents, under grad, vmap and jit too; placement of outputs;
with_sharding_constraint under jit, vmap and grad; Equinox's data-parallel example."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.sharding import AxisType, NamedSharding
from invarax.sharding import PartitionSpec as P


def _mesh(sizes, names):
    return invarax.make_mesh(sizes, names, axis_types=(AxisType.Auto,) * len(names))


def _params():
    return {"w1": data((32, 64), seed=1) / 6, "b1": data((64,), seed=2),
            "w2": data((64, 10), seed=3) / 8, "b2": data((10,), seed=4)}


def _loss(params, x, y):
    h = _relu(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def _relu(v):
    return jnp.maximum(v, 0.0)


def _step(params, x, y):
    loss, grads = invarax.value_and_grad(_loss)(params, x, y)
    return {k: params[k] - 0.1 * grads[k] for k in params}, loss


# (mesh sizes, names, shardings of params, of x, of y): every way of splitting the step.
LAYOUTS = {
    "batch": ((8,), ("data",), {"w1": P(), "b1": P(), "w2": P(), "b2": P()}, P("data"),
              P("data")),
    "contracted": ((8,), ("model",), {"w1": P("model"), "b1": P(), "w2": P("model"),
                                      "b2": P()}, P(None, "model"), P()),
    "hidden": ((4,), ("model",), {"w1": P(None, "model"), "b1": P("model"), "w2": P(),
                                  "b2": P()}, P(), P()),
    "batch_and_model": ((2, 4), ("data", "model"), {"w1": P("model", None), "b1": P(),
                        "w2": P("model", None), "b2": P()}, P("data", "model"), P("data")),
    "model_and_batch_2x2": ((2, 2), ("model", "data"), {"w1": P(None, "model"),
                            "b1": P("model"), "w2": P("model"), "b2": P()}, P("data"),
                            P("data", None)),
    "replicated": ((8,), ("data",), {"w1": P(), "b1": P(), "w2": P(), "b2": P()}, P(), P()),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_sharded_train_step_is_bitwise_the_unsharded_step(layout):
    sizes, names, param_specs, x_spec, y_spec = LAYOUTS[layout]
    mesh = _mesh(sizes, names)
    params, x, y = _params(), data((64, 32), seed=5), data((64, 10), seed=6)
    want_params, want_loss = _step(params, x, y)  # eager, unsharded
    unsharded = invarax.jit(_step)(params, x, y)
    s = {k: NamedSharding(mesh, v) for k, v in param_specs.items()}
    sx, sy = NamedSharding(mesh, x_spec), NamedSharding(mesh, y_spec)
    by_in = invarax.jit(_step, in_shardings=(s, sx, sy),
                        out_shardings=(s, NamedSharding(mesh, P())))
    committed = invarax.device_put((params, x, y), (s, sx, sy))
    by_data = invarax.jit(_step)(*committed)  # the placement comes with the arrays
    for got_params, got_loss in [unsharded, by_in(params, x, y), by_data]:
        assert_bitwise(got_loss, want_loss)
        for k in params:
            assert_bitwise(got_params[k], want_params[k])
    assert all(by_in(params, x, y)[0][k].sharding == s[k] for k in params)
    # jit places its outputs on the arguments' mesh by the sharding rules (their specs
    # against JAX's: tests/test_sharding_types.py)
    assert all(by_data[0][k].sharding.mesh == mesh for k in params)
    assert by_data[1].sharding == NamedSharding(mesh, P())


def test_a_model_parallel_loop_stays_bitwise():
    mesh = _mesh((4,), ("model",))
    s = {"w1": NamedSharding(mesh, P("model")), "b1": NamedSharding(mesh, P()),
         "w2": NamedSharding(mesh, P("model")), "b2": NamedSharding(mesh, P())}
    step = invarax.jit(_step, in_shardings=(s, None, None), out_shardings=(s, None),
                       donate_argnums=0)
    params, sharded = _params(), invarax.device_put(_params(), s)
    for i in range(3):
        x, y = data((64, 32), seed=10 + i), data((64, 10), seed=20 + i)
        params, _ = _step(params, x, y)
        sharded, _ = step(sharded, x, y)
    for k in params:
        assert_bitwise(sharded[k], params[k])
        assert sharded[k].sharding == s[k]


def test_jit_placement_rules_and_errors():
    mesh = _mesh((2, 4), ("a", "b"))
    s = NamedSharding(mesh, P("a"))
    x = invarax.device_put(jnp.ones((8, 2)), s)
    # outputs are placed by the sharding rules (an Auto mesh's specs without trailing Nones,
    # as JAX's; an Explicit mesh's have one entry per dimension: tests/test_sharding_types.py)
    assert invarax.jit(lambda v: v * 2)(x).sharding == s
    assert invarax.jit(lambda v: v.sum(0))(x).sharding == NamedSharding(mesh, P())
    assert invarax.jit(lambda v: v.sum(1))(x).sharding == s
    assert invarax.jit(lambda v: v.T)(x).sharding == NamedSharding(mesh, P(None, "a"))
    assert invarax.jit(lambda v: v * 2)(jnp.ones(3)).sharding.device_set == {
        invarax.devices()[0]}
    with invarax.set_mesh(mesh):
        f = invarax.jit(lambda v: v + 1, in_shardings=P("b"))
        assert f(np.ones((8, 2), np.float32)).sharding == NamedSharding(mesh, P("b"))
    with pytest.raises(ValueError, match="no mesh is in context"):
        invarax.jit(lambda v: v, in_shardings=P("b"))(np.ones(8))
    with pytest.raises(ValueError, match="does not match the sharding on the respective arg"):
        invarax.jit(lambda v: v, in_shardings=NamedSharding(mesh, P("b")))(x)
    left = _mesh((4,), ("x",))
    right = invarax.make_mesh((4,), ("x",), devices=invarax.devices()[4:])
    a = invarax.device_put(jnp.ones(4), NamedSharding(left, P("x")))
    b = invarax.device_put(jnp.ones(4), NamedSharding(right, P("x")))
    with pytest.raises(ValueError, match=r"incompatible devices: u is on the devices \[0, 1, 2, "
                       r"3\].*and v on \[4, 5, 6, 7\]"):
        invarax.jit(lambda u, v: u + v)(a, b)
    with pytest.raises(ValueError, match="incompatible devices"):
        invarax.jit(lambda u: u, in_shardings=NamedSharding(left, P("x")),
                    out_shardings=NamedSharding(right, P("x")))(np.ones(4))
    with pytest.raises(ValueError, match=r"jit argument u\['w'\] has shape \(5,\).*into 4 "
                       "blocks"):
        invarax.jit(lambda u: u, in_shardings=NamedSharding(left, P("x")))({"w": np.ones(5)})
    with pytest.raises(ValueError, match="keyword arguments"):
        invarax.jit(lambda u: u, in_shardings=s)(u=x)
    with pytest.raises(ValueError, match="2 entries for 1"):
        invarax.jit(lambda u: u, in_shardings=(s, s))(x)


def test_donated_arguments_of_a_sharded_jit_are_deleted():
    s = NamedSharding(_mesh((2,), ("x",)), P("x"))
    f = invarax.jit(lambda v: v * 2, in_shardings=s, donate_argnums=0)
    x = jnp.arange(4.0)
    assert_bitwise(f(x), np.arange(4.0, dtype=np.float32) * 2)
    assert x.is_deleted()


def test_sharding_constraint_under_transformations():
    mesh = _mesh((2, 4), ("a", "b"))
    s = NamedSharding(mesh, P("b"))
    f = lambda v: lax.with_sharding_constraint(jnp.sin(v) * v, s)  # noqa: E731
    xs = data((3, 8))
    assert_bitwise(invarax.jit(f)(xs[0]), f(xs[0]))
    assert invarax.jit(f)(xs[0]).sharding == s and f(xs[0]).sharding == s
    batched = invarax.jit(invarax.vmap(f))(xs)
    assert batched.sharding == NamedSharding(mesh, P(None, "b"))
    for i in range(3):
        assert_bitwise(batched[i], f(xs[i]))
    grad = invarax.grad(lambda v: f(v).sum())
    assert_bitwise(invarax.jit(grad)(xs[0]), invarax.grad(lambda v: (jnp.sin(v) * v).sum())(xs[0]))
    assert "sharding_constraint" in str(invarax.make_jaxpr(f)(xs[0]))
    assert "sharding_constraint" not in invarax.jit(f).lower(xs[0]).as_text()
    with pytest.raises(ValueError, match="into 4 blocks"):
        invarax.jit(f)(jnp.ones(6))


# ---------------------------------------------------------------------------------------
# shard_map is nested vmap


def _blocks(x, n):
    """``x``'s leading axis cut into ``n`` blocks, stacked: (n, len // n, ...)."""
    return x.reshape(n, x.shape[0] // n, *x.shape[1:])


PROGRAMS = {
    "psum": lambda v: lax.psum(jnp.sin(v) * v, "i"),
    "pmean": lambda v: lax.pmean(v * 3.0, "i"),
    "pmax": lambda v: lax.pmax(v, "i"),
    "all_gather": lambda v: lax.all_gather(v, "i", tiled=True) + 1.0,
    "psum_scatter": lambda v: lax.psum_scatter(v, "i", tiled=True),
    "ppermute": lambda v: lax.ppermute(v, "i", [(j, (j + 1) % 4) for j in range(4)]),
    "all_to_all": lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True),
    "axis_index": lambda v: v * lax.axis_index("i") + lax.axis_size("i"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_shard_map_is_bitwise_vmap(name):
    f = PROGRAMS[name]
    mesh = _mesh((4,), ("i",))
    x = data((16, 3))
    got = invarax.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    want = invarax.vmap(f, axis_name="i")(_blocks(x, 4))
    assert_bitwise(got, want.reshape(-1, *want.shape[2:]))
    assert got.sharding == NamedSharding(mesh, P("i"))
    assert_bitwise(invarax.jit(invarax.shard_map(f, mesh=mesh, in_specs=P("i"),
                                                 out_specs=P("i")))(x), got)


def test_psum_of_matmul_partials_is_the_vmap_psum():
    mesh = _mesh((4,), ("k",))
    x, w = data((8, 64)), data((64, 16), seed=1)
    f = invarax.shard_map(lambda xb, wb: lax.psum(xb @ wb, "k"), mesh=mesh,
                          in_specs=(P(None, "k"), P("k")), out_specs=P())
    want = invarax.vmap(lambda xb, wb: lax.psum(xb @ wb, "k"), in_axes=(1, 0), axis_name="k")(
        x.reshape(8, 4, 16), w.reshape(4, 16, 16))
    assert_bitwise(f(x, w), want[0])


def test_shard_map_over_two_axes_is_nested_vmap():
    mesh = _mesh((2, 4), ("a", "b"))
    x = data((8, 12))

    def f(v):
        total = lax.psum(v, ("a", "b"))
        return total * lax.axis_index(("a", "b")) + lax.pmax(v, "b") - lax.all_gather(v, "a")[0]

    got = invarax.shard_map(f, mesh=mesh, in_specs=P("a", "b"), out_specs=P("a", "b"))(x)
    blocks = x.reshape(2, 4, 4, 3).transpose(0, 2, 1, 3)  # [a, b] -> the (4, 3) block
    want = invarax.vmap(invarax.vmap(f, axis_name="b"), axis_name="a")(blocks)
    assert_bitwise(got, want.transpose(0, 2, 1, 3).reshape(8, 12))


def test_shard_map_is_differentiable_and_batchable():
    mesh = _mesh((4,), ("i",))
    f = lambda v: lax.psum(jnp.tanh(v) * v, "i")  # noqa: E731
    sm = invarax.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P())
    x = data((8, 3))
    grad = invarax.grad(lambda v: sm(v).sum())(x)
    want = invarax.grad(lambda v: invarax.vmap(f, axis_name="i")(_blocks(v, 4))[0].sum())(x)
    assert_bitwise(grad, want)
    xs = data((5, 8, 3), seed=2)
    batched = invarax.vmap(sm)(xs)
    for k in range(5):
        assert_bitwise(batched[k], sm(xs[k]))


def test_shard_map_replication_checks_and_errors():
    mesh = _mesh((2, 4), ("a", "b"))
    x = jnp.arange(8.0)
    with pytest.raises(ValueError, match=r"out_specs P\(\).*varies along 'a'.*check_vma=False"):
        invarax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("a"), out_specs=P())(x)
    first = invarax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("a"), out_specs=P(),
                              check_vma=False)(x)
    assert_bitwise(first, np.arange(4.0, dtype=np.float32) * 2)
    with pytest.raises(ValueError, match=r"args\[0\] has shape \(7,\).*into 2 blocks"):
        invarax.shard_map(lambda v: v, mesh=mesh, in_specs=P("a"), out_specs=P("a"))(
            jnp.ones(7))
    with pytest.raises(ValueError, match="does not map over"):
        invarax.shard_map(lambda v: v, mesh=mesh, in_specs=P("b"), out_specs=P("b"),
                          axis_names={"a"})(x)
    with pytest.raises(NameError, match="unbound axis name: 'b'"):
        invarax.shard_map(lambda v: lax.psum(v, "b"), mesh=mesh, in_specs=P("a"),
                          out_specs=P("a"), axis_names={"a"})(x)
    with pytest.raises(ValueError, match="needs a mesh"):
        invarax.shard_map(lambda v: v, in_specs=P(), out_specs=P())(x)
    with mesh:  # the mesh in context, and in_specs inferred from placed arguments
        placed = invarax.device_put(x, P(("a", "b")))
        f = invarax.shard_map(lambda v: v + lax.axis_index(("a", "b")), out_specs=P(("a", "b")))
        assert_bitwise(f(placed), np.arange(8.0, dtype=np.float32) * 2)


def test_experimental_shard_map_path():
    from invarax.experimental.shard_map import shard_map as experimental_shard_map

    mesh = _mesh((2, 4), ("a", "b"))
    f = experimental_shard_map(lambda v: lax.psum(v, "a"), mesh, P("a"), P(), check_rep=True,
                               auto=frozenset({"b"}))
    assert_bitwise(f(jnp.arange(8.0)), np.array([4, 6, 8, 10], np.float32))


# ---------------------------------------------------------------------------------------
# Equinox's data-parallel example (docs/examples/parallelism.ipynb), unchanged but for its
# imports and the seed of its data; the hyperparameters are Equinox's.

EXAMPLE = '''
import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr
import jax.sharding as jshard
import numpy as np
import optax  # https://github.com/deepmind/optax

np.random.seed(0)
jax.config.update("jax_platform_name", "cpu")
jax.config.update("jax_num_cpu_devices", 8)

dataset_size = 64
channel_size = 4
hidden_size = 32
depth = 1
learning_rate = 3e-4
num_steps = 100
batch_size = 16  # must be a multiple of our number of devices.

xs = np.random.normal(size=(dataset_size, channel_size))
ys = np.sin(xs)

model = eqx.nn.MLP(channel_size, channel_size, hidden_size, depth, key=jr.PRNGKey(6789))
optim = optax.adam(learning_rate)
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))


def compute_loss(model, x, y):
    pred_y = jax.vmap(model)(x)
    return jnp.mean((y - pred_y) ** 2)


def train_dataloader(arrays, batch_size):
    dataset_size = arrays[0].shape[0]
    assert all(array.shape[0] == dataset_size for array in arrays)
    indices = np.arange(dataset_size)
    while True:
        perm = np.random.permutation(indices)
        start = 0
        end = batch_size
        while end <= dataset_size:
            batch_perm = perm[start:end]
            yield tuple(array[batch_perm] for array in arrays)
            start = end
            end = start + batch_size


num_devices = len(jax.devices())
mesh = jax.make_mesh(
    (num_devices,), ("batch",), axis_types=(jax.sharding.AxisType.Auto,)
)
data_sharding = jshard.NamedSharding(mesh, jshard.PartitionSpec("batch"))
model_sharding = jshard.NamedSharding(mesh, jshard.PartitionSpec())


@eqx.filter_jit(donate="all")
def train_step(model, opt_state, x, y):
    model, opt_state = eqx.filter_shard((model, opt_state), model_sharding)
    x, y = eqx.filter_shard((x, y), data_sharding)
    grads = eqx.filter_grad(compute_loss)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state)
    model = eqx.apply_updates(model, updates)
    return eqx.filter_shard((model, opt_state), model_sharding)


model, opt_state = eqx.filter_shard((model, opt_state), model_sharding)
for step, (x, y) in zip(
    range(1, num_steps + 1), train_dataloader((xs, ys), batch_size)
):
    x, y = eqx.filter_shard((x, y), data_sharding)
    model, opt_state = train_step(model, opt_state, x, y)


def eval_dataloader(arrays, batch_size):
    dataset_size = arrays[0].shape[0]
    assert all(array.shape[0] == dataset_size for array in arrays)
    start = 0
    end = batch_size
    while start < dataset_size:
        yield tuple(array[start:end] for array in arrays)
        start = end
        end = start + batch_size


@eqx.filter_jit(donate="all-except-first")
def evaluate(model, x, y):
    model = eqx.filter_shard(model, model_sharding)
    x, y = eqx.filter_shard((x, y), data_sharding)
    return compute_loss(model, x, y)


loss = 0
num_batches = 0
for x, y in eval_dataloader((xs, ys), batch_size):
    loss = loss + evaluate(model, x, y).item()
    num_batches = num_batches + 1
print(f"train loss={loss / num_batches}")
'''

IMPORTS = {
    "import equinox as eqx": "import invarax as eqx",
    "import jax\n": "import invarax as jax\n",
    "import jax.numpy as jnp": "import invarax.numpy as jnp",
    "import jax.random as jr": "import invarax.random as jr",
    "import jax.sharding as jshard": "import invarax.sharding as jshard",
    "import optax  #": "import invarax.optim as optax  #",
}


def _run_example(source):
    scope = {"__name__": "example"}
    exec(compile(source, "parallelism.py", "exec"), scope)  # noqa: S102
    return scope


def test_equinox_data_parallel_example_is_bitwise_unsharded(capsys):
    source = EXAMPLE
    for theirs, ours in IMPORTS.items():
        assert theirs in source
        source = source.replace(theirs, ours)
    sharded = _run_example(source)
    assert capsys.readouterr().out.startswith("train loss=")
    layer = sharded["model"].layers[0]
    assert layer.weight.sharding == sharded["model_sharding"]
    # The same program without any placement: every filter_shard the identity.
    unsharded = _run_example(source.replace("eqx.filter_shard(", "(lambda x, s: x)("))
    for a, b in zip(invarax.tree_leaves(invarax.filter(sharded["model"], invarax.is_array)),
                    invarax.tree_leaves(invarax.filter(unsharded["model"], invarax.is_array)),
                    strict=True):
        assert_bitwise(a, b)
    assert sharded["loss"] == unsharded["loss"]

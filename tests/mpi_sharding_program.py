"""A program for tests/test_distributed.py, started by mpiexec with DEVICES local devices:
sharded arrays, jit with in/out_shardings and shard_map over every device of the run.

An MLP train step with the batch split, the weights' contracted axis split, both on a 2x2
mesh, and everything replicated; the arguments built from each process's own part
(make_array_from_process_local_data, ..._from_callback, ..._from_single_device_arrays).
Process 0 prints a line per process: ``bitwise True`` when every result equals the
unsharded step, ``placement True`` when the shards and flags are JAX's, ``errors True`` when
the errors name the problem and the fix, and a digest of the results (the same for any
split into processes).
"""

import hashlib
import os

import numpy as np

import invarax

invarax.config.update("jax_num_cpu_devices", int(os.environ["DEVICES"]))
invarax.distributed.initialize()
import invarax.numpy as jnp  # noqa: E402
from invarax import lax  # noqa: E402
from invarax.sharding import NamedSharding  # noqa: E402
from invarax.sharding import PartitionSpec as P  # noqa: E402

PROCESSES = invarax.process_count()
rng = np.random.default_rng(0)
PARAMS = {"w1": rng.standard_normal((32, 64)).astype(np.float32) / 6,
          "b1": rng.standard_normal(64).astype(np.float32),
          "w2": rng.standard_normal((64, 10)).astype(np.float32) / 8,
          "b2": rng.standard_normal(10).astype(np.float32)}
X = rng.standard_normal((64, 32)).astype(np.float32)
Y = rng.standard_normal((64, 10)).astype(np.float32)
BIG_X = rng.standard_normal((1024, 32)).astype(np.float32)  # 256 rows per process of 4
BIG_Y = rng.standard_normal((1024, 10)).astype(np.float32)


def loss(params, x, y):
    h = jnp.maximum(x @ params["w1"] + params["b1"], 0.0)
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def step(params, x, y):
    value, grads = invarax.value_and_grad(loss)(params, x, y)
    return {k: params[k] - 0.1 * grads[k] for k in params}, value


def local_part(value, sharding):
    """This process's data of ``value``: its devices' blocks along each dimension."""
    index = sharding.addressable_devices_indices_map(value.shape).values()
    keep = [sorted({i for s in index for i in range(value.shape[d])[s[d]]})
            for d in range(value.ndim)]
    return value[np.ix_(*keep)]


def build(value, sharding, how):
    """``value`` as an array placed with ``sharding``, from this process's part only."""
    if how == "local":
        return invarax.make_array_from_process_local_data(sharding, local_part(value, sharding))
    if how == "callback":
        return invarax.make_array_from_callback(value.shape, sharding, lambda i: value[i])
    blocks = sharding.addressable_devices_indices_map(value.shape)
    return invarax.make_array_from_single_device_arrays(
        value.shape, sharding, [jnp.asarray(value[blocks[d]]) for d in blocks])


# (mesh shape, axis names, specs of the parameters, of x, of y). Across processes, the
# batch-split ones run per process (each its own rows; with 1024 rows, each process's rows
# are whole blocks of the canonical contraction, whose block sums are gathered and added).
LAYOUTS = {
    "batch": ((4,), ("data",), dict(w1=P(), b1=P(), w2=P(), b2=P()), P("data"), P("data")),
    "contracted": ((4,), ("model",), dict(w1=P("model"), b1=P(), w2=P("model"), b2=P()),
                   P(None, "model"), P()),
    "batch_and_model": ((2, 2), ("data", "model"), dict(w1=P("model"), b1=P(),
                        w2=P("model", None), b2=P()), P("data", "model"), P("data")),
    "replicated": ((4,), ("data",), dict(w1=P(), b1=P(), w2=P(), b2=P()), P(), P()),
}
RUNS = [(layout, X, Y) for layout in LAYOUTS.values()] + [
    (LAYOUTS[name], BIG_X, BIG_Y) for name in ("batch", "batch_and_model")]
bitwise, placement, outputs = True, True, []
for k, ((sizes, names, specs, x_spec, y_spec), X_, Y_) in enumerate(RUNS):
    want_params, want_loss = step(PARAMS, X_, Y_)
    mesh = invarax.make_mesh(sizes, names)
    s = {name: NamedSharding(mesh, spec) for name, spec in specs.items()}
    sx, sy = NamedSharding(mesh, x_spec), NamedSharding(mesh, y_spec)
    how = ("local", "callback", "single")
    params = {name: build(PARAMS[name], s[name], how[k % 3]) for name in PARAMS}
    x, y = build(X_, sx, how[(k + 1) % 3]), build(Y_, sy, how[(k + 2) % 3])
    sharded = invarax.jit(step, in_shardings=(s, sx, sy), out_shardings=(s, sx._replicated()))
    got_params, got_loss = sharded(params, x, y)
    by_data = invarax.jit(step)(params, x, y)  # the placement comes with the arrays
    for got in (got_params, by_data[0]):
        bitwise &= all(np.array_equal(np.asarray(got[n]), np.asarray(want_params[n]))
                       for n in PARAMS)
    bitwise &= np.array_equal(np.asarray(got_loss), np.asarray(want_loss))
    bitwise &= np.array_equal(np.asarray(by_data[1]), np.asarray(want_loss))
    outputs += [np.asarray(got_params[n]) for n in sorted(PARAMS)] + [np.asarray(got_loss)]
    mine = [d for d in mesh.devices.flat if d.process_index == invarax.process_index()]
    for name in PARAMS:
        out = got_params[name]
        placement &= out.sharding == s[name] and out.is_fully_addressable == (PROCESSES == 1)
        placement &= [shard.device for shard in out.addressable_shards] == mine
        placement &= all(np.array_equal(np.asarray(shard.data),
                                        np.asarray(want_params[name])[shard.index])
                         for shard in out.addressable_shards)

# shard_map over the 2x2 mesh: partial products of a split contraction psum'd over
# "model", gathered along "data"; equal to the nested vmap.
mesh = invarax.make_mesh((2, 2), ("data", "model"))


def block(a, b):
    return lax.psum(a @ b, "model"), lax.all_gather(jnp.sin(a), "data", tiled=True)


mapped = invarax.jit(invarax.shard_map(block, mesh=mesh, in_specs=(P("data", "model"),
                     P("model")), out_specs=(P("data"), P(None, "model"))))
a = build(X, NamedSharding(mesh, P("data", "model")), "local")
b = build(PARAMS["w1"], NamedSharding(mesh, P("model")), "callback")
got = mapped(a, b)
ref = invarax.vmap(invarax.vmap(block, in_axes=(1, 0), out_axes=(0, 1), axis_name="model"),
                   in_axes=(0, None), axis_name="data")(X.reshape(2, 32, 2, 16),
                                                        PARAMS["w1"].reshape(2, 16, 64))
bitwise &= np.array_equal(np.asarray(got[0]), np.asarray(ref[0])[:, 0].reshape(64, 64))
bitwise &= np.array_equal(np.asarray(got[1]), np.asarray(ref[1][0]).reshape(64, 32))
outputs += [np.asarray(v) for v in got]

# shard_map over every device (one axis), called eagerly: each process runs its devices'
# blocks, the collectives cross processes. A data-parallel step (gradients pmean'd) equals
# the nested vmap; an output that varies along the axis is an error unless check_vma=False.
row = invarax.make_mesh((invarax.device_count(),), ("batch",))


def dp_step(params, x, y):
    new, value = step(params, x, y)
    return lax.pmean(new, "batch"), lax.pmean(value, "batch"), x * 2


dp = invarax.shard_map(dp_step, mesh=row, in_specs=(P(), P("batch"), P("batch")),
                       out_specs=(P(), P(), P("batch")))
got = dp(PARAMS, build(X, NamedSharding(row, P("batch")), "local"), Y)
ref = invarax.vmap(dp_step, in_axes=(None, 0, 0), axis_name="batch")(
    PARAMS, X.reshape(4, 16, 32), Y.reshape(4, 16, 10))
bitwise &= all(np.array_equal(np.asarray(got[0][n]), np.asarray(ref[0][n])[0]) for n in PARAMS)
bitwise &= np.array_equal(np.asarray(got[1]), np.asarray(ref[1])[0])
bitwise &= np.array_equal(np.asarray(got[2]), np.asarray(ref[2]).reshape(64, 32))
placement &= got[2].sharding == NamedSharding(row, P("batch"))
placement &= bool(dp._per_process) == (PROCESSES > 1)  # ran per process (pmap) across them
outputs += [np.asarray(got[0][n]) for n in sorted(PARAMS)] + [np.asarray(got[1])]
first = invarax.shard_map(lambda v: v * 1, mesh=row, in_specs=P("batch"), out_specs=P(),
                          check_vma=False)(jnp.asarray(X))
bitwise &= np.array_equal(np.asarray(first), X[:16])
varying = invarax.shard_map(lambda v: v * 1, mesh=row, in_specs=P("batch"), out_specs=P())
try:
    varying(jnp.asarray(X))
    errors = False
except ValueError as error:
    errors = "varies along 'batch'" in str(error)

# Errors: a dimension the mesh does not divide, arguments on meshes of other devices (each
# naming the argument, the mesh and the fix); this process's data of the wrong shape; a
# value that differs between processes.
rows = NamedSharding(row, P("batch"))
for call, words in [
        (lambda: invarax.jit(step, in_shardings=(None, rows, None))(PARAMS, X[:6], Y[:6]),
         ["jit argument x", "(6, 32)", "Pad that dimension", "Mesh('batch': 4"]),
        (lambda: invarax.jit(step, in_shardings=(None, rows, NamedSharding(
            invarax.make_mesh((2,), ("batch",)), P("batch"))))(PARAMS, X, Y),
         ["incompatible devices", "jit argument y", "Use one mesh"])]:
    try:
        call()
        errors = False
    except ValueError as error:
        errors &= all(w in str(error) for w in words)
split = NamedSharding(mesh, P("data", "model"))
try:
    invarax.make_array_from_process_local_data(split, np.ones((64, 32), np.float32),
                                               (64, 32))
    errors &= PROCESSES == 1  # there, the local data is the whole array
except ValueError as error:
    errors &= "this process's data has shape (64, 32)" in str(error)
if PROCESSES > 1:
    try:
        invarax.device_put(jnp.full(4, float(invarax.process_index())),
                           NamedSharding(mesh, P("data")))
        errors = False
    except ValueError as error:
        errors &= "processes [1" in str(error) and "make_array_from_process_local_data" in str(
            error)

digest = hashlib.sha256(b"".join(o.tobytes() for o in outputs)).hexdigest()
from mpi4py import MPI  # noqa: E402

rows = MPI.COMM_WORLD.gather((bool(bitwise), bool(placement), bool(errors), digest))
for row in rows or ():  # process 0 prints every process's line
    print("bitwise {} placement {} errors {} digest {}".format(*row))

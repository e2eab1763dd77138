"""``python -m benchmarks.distributed``: data parallelism on devices and over MPI, against JAX.

Three figures, each a median over repeated steps, measured in subprocesses
(device counts are fixed per process):

1. the data-parallel MLP 784-512-512-10 SGD step, global batch 1024, on 2 invarax devices
   against the same step on 1 device with one kernel thread (one core: the speed-up from
   the second device's core), and against 1 device whose kernels use both cores;
2. the same step on 2 MPI processes x 1 device against JAX's ``pmap`` on 2 CPU devices;
3. ``psum`` of 10**6 float32 over 2 MPI processes against a raw mpi4py ``Allgather`` of
   the same data followed by NumPy's sum;
4. the step under ``jit`` with ``NamedSharding``s over 2 local devices (the batch split,
   the parameters replicated) against JAX's with ``--xla_force_host_platform_device_count=2``;
5. the same with the weights' contracted axis split over the 2 devices (model parallel);
6. the batch-split step of figure 4 on 2 MPI processes x 1 device against JAX's 2 devices;
7. the step as ``shard_map`` (the batch split, gradients ``pmean``'d) on 2 MPI processes x
   1 device (each process runs its own block) against JAX's ``jit`` of it on 2 devices.

Writes the table to ``benchmarks/distributed.md`` (``--out`` another folder). Needs the
``bench`` extra (JAX, mpi4py and MPICH). ``--only sharded`` measures figures 4-7 alone and
prints them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import problems, report

SIZES = (784, 512, 512, 10)
BATCH = 1024
STEPS = 15


def _data(devices: int):
    params, x, y = problems._classification(np.random.default_rng(1), SIZES, BATCH)
    per = BATCH // devices
    return params, x.reshape(devices, per, -1), y.reshape(devices, per, -1)


def _median_step(run, steps=STEPS, barrier=lambda: None) -> float:
    run()  # trace and compile
    times = []
    for _ in range(steps):
        barrier()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _invarax_step(devices: int, mpi: bool) -> float:
    import invarax

    invarax.config.update("jax_num_cpu_devices", devices)
    if mpi:
        invarax.distributed.initialize()
    import invarax.numpy as jnp
    from invarax import lax

    local = invarax.local_device_count()
    total = invarax.device_count()
    params, xs, ys = _data(total)
    first = invarax.process_index() * local
    xs, ys = jnp.asarray(xs[first:first + local]), jnp.asarray(ys[first:first + local])
    grad = invarax.grad(lambda p, x, y: problems.loss(jnp, p, x, y))
    step = invarax.pmap(
        lambda p, x, y: problems.sgd_step(lambda *a: lax.pmean(grad(*a), "d"), p, x, y),
        axis_name="d")
    state = {"p": invarax.device_put_replicated(
        [tuple(map(jnp.asarray, layer)) for layer in params], invarax.local_devices())}

    def run():
        state["p"] = invarax.block_until_ready(step(state["p"], xs, ys))

    barrier = _mpi_barrier() if mpi else (lambda: None)
    return _median_step(run, barrier=barrier)


def _sharded_step(jax_like: bool, layout: str = "batch", mpi: bool = False) -> float:
    """The step of figures 4-6 under ``jit`` over a 2-device mesh: ``layout`` "batch" splits
    the batch (the parameters replicated), "model" the weights' contracted axis (and the
    input's features); ``mpi`` puts the devices in 2 processes (1 device each)."""
    if jax_like:
        import jax
        import jax.numpy as jnp
    else:
        import invarax as jax
        import invarax.numpy as jnp

        jax.config.update("jax_num_cpu_devices", 1 if mpi else 2)
        if mpi:
            jax.distributed.initialize()
    from importlib import import_module

    sharding = import_module(f"{jax.__name__}.sharding")
    mesh = jax.make_mesh((2,), ("d",), axis_types=(sharding.AxisType.Auto,))

    def named(*spec):
        return sharding.NamedSharding(mesh, sharding.PartitionSpec(*spec))

    params, xs, ys = _data(1)
    if layout == "batch":
        s_params, s_x, s_y = named(), named("d"), named("d")
    else:
        s_params, s_x, s_y = [(named("d"), named()) for _ in params], named(None, "d"), named()
    grad = jax.grad(lambda p, x, y: problems.loss(jnp, p, x, y))
    step = jax.jit(lambda p, x, y: problems.sgd_step(grad, p, x, y),
                   in_shardings=(s_params, s_x, s_y), out_shardings=s_params)
    state = {"p": jax.device_put([tuple(layer) for layer in params], s_params)}
    if mpi:  # each process gives its own rows
        half = BATCH // 2 * jax.process_index()
        x, y = (jax.make_array_from_process_local_data(s, v[0][half:half + BATCH // 2])
                for s, v in ((s_x, xs), (s_y, ys)))
    else:
        x, y = jax.device_put(xs[0], s_x), jax.device_put(ys[0], s_y)

    def run():
        state["p"] = jax.block_until_ready(step(state["p"], x, y))

    return _median_step(run, barrier=_mpi_barrier() if mpi else (lambda: None))


def _shard_map_step(jax_like: bool) -> float:
    """The step of figure 7: ``shard_map`` over 2 devices (the batch split, the gradients
    ``pmean``'d); invarax's on 2 MPI processes x 1 device, JAX's (under ``jit``) on 2
    local devices."""
    if jax_like:
        import jax
        import jax.numpy as jnp
    else:
        import invarax as jax
        import invarax.numpy as jnp

        jax.config.update("jax_num_cpu_devices", 1)
        jax.distributed.initialize()
    from importlib import import_module

    sharding = import_module(f"{jax.__name__}.sharding")
    P = sharding.PartitionSpec
    mesh = jax.make_mesh((2,), ("d",), axis_types=(sharding.AxisType.Auto,))
    params, xs, ys = _data(1)
    grad = jax.grad(lambda p, x, y: problems.loss(jnp, p, x, y))
    step = jax.shard_map(
        lambda p, x, y: problems.sgd_step(lambda *a: jax.lax.pmean(grad(*a), "d"), p, x, y),
        mesh=mesh, in_specs=(P(), P("d"), P("d")), out_specs=P())
    step = jax.jit(step) if jax_like else step  # invarax's runs eagerly, per process
    state = {"p": [tuple(jnp.asarray(a) for a in layer) for layer in params]}
    x, y = jnp.asarray(xs[0]), jnp.asarray(ys[0])

    def run():
        state["p"] = jax.block_until_ready(step(state["p"], x, y))

    return _median_step(run, barrier=(lambda: None) if jax_like else _mpi_barrier())


def _mpi_barrier():
    from mpi4py import MPI

    return MPI.COMM_WORLD.Barrier


def _jax_step() -> float:
    import jax
    import jax.numpy as jnp

    params, xs, ys = _data(2)
    grad = jax.grad(lambda p, x, y: problems.loss(jnp, p, x, y))
    step = jax.pmap(
        lambda p, x, y: problems.sgd_step(lambda *a: jax.lax.pmean(grad(*a), "d"), p, x, y),
        axis_name="d")
    state = {"p": [tuple(np.stack([a, a]) for a in layer) for layer in params]}

    def run():
        state["p"] = jax.block_until_ready(step(state["p"], xs, ys))

    return _median_step(run)


def _psum_pair() -> tuple:
    """(invarax psum, raw Allgather + sum) of 10**6 float32 per process, in seconds."""
    import invarax

    invarax.distributed.initialize()
    from mpi4py import MPI

    from invarax import lax

    comm = MPI.COMM_WORLD
    x = np.random.default_rng(comm.rank).standard_normal((1, 10**6)).astype(np.float32)
    psum = invarax.pmap(lambda v: lax.psum(v, "d"), axis_name="d")
    xs = invarax.numpy.asarray(x)
    ours = _median_step(lambda: psum(xs), steps=30, barrier=comm.Barrier)
    buffer = np.empty((comm.size, 10**6), np.float32)

    def raw():
        comm.Allgather(x[0], buffer)
        return buffer.sum(axis=0)

    theirs = _median_step(raw, steps=30, barrier=comm.Barrier)
    return ours, theirs


def _role(role: str) -> dict:
    if role == "one-device":
        return {"one_device": _invarax_step(1, mpi=False)}
    if role == "one-device-one-thread":
        os.environ["INVARAX_NUM_THREADS"] = "1"
        return {"one_core": _invarax_step(1, mpi=False)}
    if role == "two-devices":
        return {"two_devices": _invarax_step(2, mpi=False)}
    if role == "jax":
        return {"jax_pmap": _jax_step()}
    if role == "sharded":
        return {"sharded": _sharded_step(jax_like=False),
                "model_sharded": _sharded_step(jax_like=False, layout="model")}
    if role == "jax-sharded":
        return {"jax_sharded": _sharded_step(jax_like=True),
                "jax_model_sharded": _sharded_step(jax_like=True, layout="model")}
    if role == "mpi-sharded":
        return {"mpi_sharded": _sharded_step(jax_like=False, mpi=True)}
    if role == "mpi-shard-map":
        return {"mpi_shard_map": _shard_map_step(jax_like=False)}
    if role == "jax-shard-map":
        return {"jax_shard_map": _shard_map_step(jax_like=True)}
    if role == "mpi-step":
        return {"mpi_step": _invarax_step(1, mpi=True)}
    if role == "mpi-psum":
        ours, theirs = _psum_pair()
        return {"psum": ours, "allgather_sum": theirs}
    raise ValueError(role)


def _spawn(role: str, processes: int = 1) -> dict:
    env = dict(os.environ)
    if role.startswith("jax"):  # JAX's CPU device count (invarax reads it too)
        env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    command = [sys.executable, "-m", "benchmarks.distributed", "--role", role]
    if processes > 1:
        command = [shutil.which("mpiexec") or "mpiexec", "-n", str(processes), *command]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600,
                         cwd=Path(__file__).resolve().parents[1])
    if out.returncode:
        raise RuntimeError(f"{role} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(Path(__file__).parent))
    parser.add_argument("--repeats", type=int, default=3, help="runs of each measurement")
    parser.add_argument("--only", choices=["sharded"], help="measure figure 4 alone")
    args = parser.parse_args(argv)
    if args.role:
        result = _role(args.role)
        if args.role.startswith("mpi"):
            from mpi4py import MPI

            if MPI.COMM_WORLD.rank:
                return
        print(json.dumps(result))
        return
    roles = [("one-device", 1), ("one-device-one-thread", 1), ("two-devices", 1), ("jax", 1),
             ("mpi-step", 2), ("mpi-psum", 2), ("sharded", 1), ("jax-sharded", 1),
             ("mpi-sharded", 2), ("mpi-shard-map", 2), ("jax-shard-map", 1)]
    if args.only:
        roles = [("sharded", 1), ("jax-sharded", 1), ("mpi-sharded", 2), ("mpi-shard-map", 2),
                 ("jax-shard-map", 1)]
    runs = []
    for _ in range(args.repeats):
        r = {}
        for role, processes in roles:
            r.update(_spawn(role, processes))
        runs.append(r)
    if args.only:
        print("\n".join(_sharded_rows(runs)))
        return
    _report(runs, Path(args.out))


def _median(runs: list, key: str) -> float:
    return float(np.median([r[key] for r in runs]))


def _sharded_rows(runs: list) -> list:
    """Figures 4-7: invarax's sharded step against JAX's 2-device one."""
    rows = []
    for ours, theirs, what, target in [
            ("sharded", "jax_sharded", "the step under jit with NamedSharding (batch split) "
             "over 2 local devices vs JAX's", "≤ 1.0"),
            ("model_sharded", "jax_model_sharded", "the same with the weights' contracted "
             "axis split (model parallel) vs JAX's", "≤ 1.5"),
            ("mpi_sharded", "jax_sharded", "the batch-split step on 2 MPI processes x 1 device "
             "vs JAX's on 2 local devices", "≤ 1.0"),
            ("mpi_shard_map", "jax_shard_map", "the step as shard_map (gradients pmean'd) on 2 "
             "MPI processes x 1 device vs JAX's jit of it on 2 local devices", "≤ 1.0")]:
        ratios = [r[ours] / r[theirs] for r in runs]
        rows.append(f"| {what} | {_median(runs, ours) * 1e3:.1f} / "
                    f"{_median(runs, theirs) * 1e3:.1f} ms | "
                    f"{_median(runs, ours) / _median(runs, theirs):.2f} | "
                    f"{min(ratios):.2f}–{max(ratios):.2f} | {target} |")
    return rows


def _report(runs: list, out: Path):
    def med(key):
        return float(np.median([r[key] for r in runs]))

    def rng(f):
        values = [f(r) for r in runs]
        return f"{min(values):.2f}–{max(values):.2f}"

    rows = [
        ("data-parallel MLP step, 2 devices vs 1 device on 1 core (speed-up)",
         f"{med('one_core') * 1e3:.1f} / {med('two_devices') * 1e3:.1f} ms",
         f"{med('one_core') / med('two_devices'):.2f}×",
         rng(lambda r: r["one_core"] / r["two_devices"]), "≥ 1.6×"),
        ("the same, against 1 device whose kernels use both cores",
         f"{med('one_device') * 1e3:.1f} / {med('two_devices') * 1e3:.1f} ms",
         f"{med('one_device') / med('two_devices'):.2f}×",
         rng(lambda r: r["one_device"] / r["two_devices"]), "≥ 1.6×"),
        ("the step, 2 MPI processes x 1 device vs JAX pmap on 2 devices",
         f"{med('mpi_step') * 1e3:.1f} / {med('jax_pmap') * 1e3:.1f} ms",
         f"{med('mpi_step') / med('jax_pmap'):.2f}",
         rng(lambda r: r["mpi_step"] / r["jax_pmap"]), "≤ 1.0"),
        ("psum of 1e6 float32 over 2 processes vs mpi4py Allgather + sum",
         f"{med('psum') * 1e3:.2f} / {med('allgather_sum') * 1e3:.2f} ms",
         f"{med('psum') / med('allgather_sum'):.2f}",
         rng(lambda r: r["psum"] / r["allgather_sum"]), "≤ 2.0"),
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Distributed benchmarks", "",
        f"Command: `python -m benchmarks.distributed`. Machine: {report.machine()}, "
        f"load average {load:.1f} at the end; medians of {STEPS} "
        f"steps per run, {len(runs)} runs (the range is over runs)."
        + (" The machine was shared with other jobs (load above half its cores), so the "
           "timings are noisier than on an idle machine." if load > 0.5 * os.cpu_count()
           else ""), "",
        "| workload | times | ratio | range | target |", "|---|---|---:|---|---|",
        *[f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows],
        *_sharded_rows(runs),
    ]
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "distributed.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

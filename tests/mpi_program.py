"""A program for tests/test_distributed.py, started by mpiexec: `python mpi_program.py MODE`.

MODE ``layout``: psum, all_gather, ppermute and all_to_all over every device of the run,
printing a digest of the results (the same for any split into processes). MODE ``die``:
process 1 exits before the first collective. MODE ``hang``: process 1 sleeps instead.
MODE ``threads``: each process prints its kernel thread count and the usable CPUs.
MODE ``transports``: the shared-memory and the MPI gathers give every process's bytes in
process order (several dtypes and sizes, growing the window, views intact while the
other processes run ahead to their next gather).
"""

import hashlib
import os
import sys
import time

import numpy as np

import invarax

invarax.config.update("jax_num_cpu_devices", int(os.environ["DEVICES"]))
invarax.distributed.initialize()
import invarax.numpy as jnp  # noqa: E402
from invarax import lax  # noqa: E402

mode = sys.argv[1]
n = invarax.device_count()
L = invarax.local_device_count()
first = invarax.process_index() * L
xs = np.random.default_rng(0).standard_normal((n, n, 5)).astype(np.float32)
local = jnp.asarray(xs[first:first + L])

if mode == "threads":
    from mpi4py import MPI

    from invarax.kernels import _support

    rows = MPI.COMM_WORLD.gather((_support.num_threads(), len(os.sched_getaffinity(0))))
    for threads, cpus in rows or ():  # process 0 prints every process's row
        print("threads", threads, cpus)
    sys.exit(0)
if mode == "transports":
    from invarax.distributed import _transport

    shared = _transport.current()
    plain = _transport.MpiTransport(shared.comm, shared.timeout)  # MPI's Iallgather
    rank, size = shared.comm.rank, shared.comm.size

    def value(r, count, dtype, call):
        data = np.random.default_rng([r, count, call]).standard_normal(count) * 100
        return data.astype(dtype).reshape(-1, 1) if count else np.zeros((0, 1), dtype)

    ok = shared.node is not None and shared.node.size == size
    for transport in (shared, plain):
        for call, (count, dtype) in enumerate([(5, np.float32), (0, np.float64),
                                               (1, np.bool_), (70000, np.float16),
                                               (40000, np.complex128), (3, np.int8)]):
            got = transport.allgather(value(rank, count, dtype, call))
            want = np.concatenate([value(r, count, dtype, call) for r in range(size)])
            ok &= got.dtype == want.dtype and np.array_equal(got.view(np.uint8),
                                                             want.view(np.uint8))
            mine = value(rank, count, dtype, call).view(np.uint8).reshape(-1)
            views = transport.allgather_views(mine.nbytes, lambda b, m=mine: b.__setitem__(
                slice(None), m))
            time.sleep(0.002 * rank)  # the others run ahead to their next gather's write
            ok &= [v.tobytes() for v in views] == [
                value(r, count, dtype, call).tobytes() for r in range(size)]
    if rank == 0:
        print("transports", bool(ok))
    sys.exit(0)
if mode == "die" and invarax.process_index() == 1:
    os._exit(3)
if mode == "hang" and invarax.process_index() == 1:
    time.sleep(60)


def body(v):
    ring = [(i, (i + 1) % n) for i in range(n)]
    return (lax.psum(jnp.sin(v), "d"), lax.all_gather(v, "d"), lax.ppermute(v, "d", ring),
            lax.all_to_all(v, "d", 0, 1), lax.pmax(v, "d"), lax.axis_index("d"))


outs = invarax.pmap(body, axis_name="d")(local)
gathered = invarax.pmap(lambda o: tuple(lax.all_gather(x, "d") for x in o),
                        axis_name="d")(outs)
digest = hashlib.sha256(b"".join(np.asarray(g)[0].tobytes() for g in gathered)).hexdigest()
if invarax.process_index() == 0:
    print("digest", digest)
    reference = invarax.vmap(body, axis_name="d")(jnp.asarray(xs))
    same = all(np.array_equal(np.asarray(g)[0], np.asarray(r))
               for g, r in zip(gathered, reference, strict=True))
    # The first call's outputs (all_gather's among them) are intact after the second call,
    # whose collectives gathered into the transport's buffers again.
    same &= all(np.array_equal(np.asarray(o), np.asarray(r)[first:first + L])
                for o, r in zip(outs, reference, strict=True))
    print("equals vmap", same)

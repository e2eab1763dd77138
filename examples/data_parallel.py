"""Data-parallel training with pmap: an MLP, gradients averaged over the devices, Adam.

One process with 4 devices:

    python examples/data_parallel.py --devices 4

Two processes with 2 devices each (the same 4 devices, the same bits):

    mpiexec -n 2 python examples/data_parallel.py --devices 2 --mpi

On a cluster, list the hosts: ``mpiexec -hosts node1,node2 -n 8 python ... --mpi``.
Every layout of the same number of devices ends with the same parameters, bit for bit
(N7): the gradients' mean over the devices is computed in device order by the canonical
kernels, never by MPI's own reduction. The script prints a digest of the final
parameters so that runs can be compared.
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

import invarax


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2, help="devices in each process")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64, help="global batch (all devices)")
    parser.add_argument("--mpi", action="store_true", help="join the processes of mpiexec")
    args = parser.parse_args(argv)

    invarax.config.update("jax_num_cpu_devices", args.devices)
    if args.mpi:
        invarax.distributed.initialize()
    import invarax.numpy as jnp
    from invarax import lax, nn, optim, random

    total = invarax.device_count()
    if args.batch % total:
        parser.error(f"--batch {args.batch} must be a multiple of the {total} devices")
    model = nn.MLP(8, 1, 32, 2, activation=jnp.tanh, key=random.key(0))
    opt = optim.adam(1e-2)
    state = opt.init(invarax.filter(model, invarax.is_inexact_array))

    # The global batch, the same in every process; each device takes its rows.
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((args.batch, 8)).astype(np.float32)
    ys = np.sin(xs.sum(axis=1)).astype(np.float32)
    per = args.batch // total
    first = invarax.process_index() * invarax.local_device_count()
    local = slice(first * per, (first + invarax.local_device_count()) * per)
    shards_x = xs[local].reshape(-1, per, 8)
    shards_y = ys[local].reshape(-1, per)

    def loss(m, x, y):
        return jnp.mean((invarax.vmap(m)(x) - y) ** 2)

    @invarax.filter_pmap(in_axes=(None, None, 0, 0), out_axes=None, axis_name="devices")
    def step(m, s, x, y):
        value, grads = invarax.filter_value_and_grad(loss)(m, x, y)
        grads = lax.pmean(grads, "devices")
        updates, s = opt.update(grads, s, m)
        return invarax.apply_updates(m, updates), s, lax.pmean(value, "devices")

    for _ in range(args.steps):
        model, state, value = step(model, state, shards_x, shards_y)
    leaves = invarax.tree_leaves(invarax.filter(model, invarax.is_inexact_array))
    digest = hashlib.sha256(b"".join(np.asarray(v).tobytes() for v in leaves)).hexdigest()
    if invarax.process_index() == 0:
        print(f"loss {float(value):.6f}")
        print(f"digest {digest}")


if __name__ == "__main__":
    main()

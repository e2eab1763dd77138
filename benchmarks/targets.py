"""``python -m benchmarks.targets``: the rows with speed targets, invarax against JAX.

Times the rows of ``python -m benchmarks`` that have speed targets (the MLP train
step, ``jacfwd``/``jacrev`` of the 1000-element product, the ResNet block, the 3x3
convolution's GFLOP/s beside invarax's gemm, the transformer block train step), invarax and
JAX alternating in one process (``timing.medians``), ``--runs`` times, and prints one line
per run with the ratio and the load average, so that the spread across runs shows.

``--one-thread`` runs both libraries on one thread each (``INVARAX_NUM_THREADS=1``, XLA
without its thread pool) and times the process's CPU time instead of the wall clock: other
jobs on the machine then disturb the figures least, and threading is taken out of the
comparison (compare with a run without it to see what the second core gives each library).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROWS = ("train", "jacfwd", "jacrev", "resnet", "conv", "transformer")


def _setup(one_thread: bool) -> None:
    if one_thread:  # before either library starts its threads
        os.environ["INVARAX_NUM_THREADS"] = "1"
        os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")


def _conv_line(cfg, m: dict) -> str:
    from . import cnn

    flops = cnn.conv_flops(cfg)
    conv, jax_, gemm = (flops / m[k] / 1e9 for k in ("invarax", "jax", "gemm"))
    square = 2.0 * cfg.matmul**3 / m["square"] / 1e9
    return (f"GFLOP/s invarax {conv:.1f} JAX {jax_:.1f}; invarax gemm of the conv's shape "
            f"{gemm:.1f}, square {cfg.matmul}^3 {square:.1f}: conv/square gemm "
            f"{conv / square:.2f}, invarax/JAX time {m['invarax'] / m['jax']:.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " +
                        ", ".join(ROWS))
    parser.add_argument("--runs", type=int, default=3, help="runs of each row")
    parser.add_argument("--one-thread", action="store_true",
                        help="one thread each, process CPU time")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes (a harness check)")
    args = parser.parse_args(argv)
    _setup(args.one_thread)
    import jax
    import jax.numpy as jnp

    import invarax
    import invarax.numpy as inp

    from . import cnn, jaxlike, problems, timing

    if args.one_thread:
        timing.CLOCK["clock"] = time.process_time
    cfg = problems.CONFIGS["tiny" if args.tiny else "full"]
    ours, theirs = jaxlike.workloads(invarax, inp, cfg), jaxlike.workloads(jax, jnp, cfg)
    mode = "one thread each, CPU time" if args.one_thread else "all threads, wall clock"
    print(f"# {mode}; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    for key in args.rows.split(","):
        fns = {"invarax": ours[key](), "jax": theirs[key]()}
        if key == "conv":
            n, c, side = cnn.sizes(cfg)[2]
            a, b = (inp.asarray(np.ones(s, np.float32)) for s in ((n * side * side, 9 * c),
                                                                   (9 * c, c)))
            sq = inp.asarray(problems.matmul_data(cfg)[0])
            fns["gemm"] = lambda a=a, b=b: (a @ b).block_until_ready()
            fns["square"] = lambda sq=sq: (sq @ sq).block_until_ready()
        repeats = 35 if key.startswith("jac") else 15
        for run in range(args.runs):
            m = timing.medians(fns, 1 if args.tiny else repeats, 1 if args.tiny else 5,
                               0.0 if args.tiny else 0.25)
            load = os.getloadavg()[0]
            if key == "conv":
                line = _conv_line(cfg, m)
            else:
                line = (f"invarax {m['invarax'] * 1e3:.3f} ms, JAX {m['jax'] * 1e3:.3f} ms, "
                        f"invarax/JAX {m['invarax'] / m['jax']:.3f}")
            print(f"{key} run {run}: {line}; load {load:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

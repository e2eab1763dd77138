"""Canonical kernels vs NumPy/OpenBLAS: matmul GFLOP/s and reduction times, in the same run.

Run ``python -m benchmarks.kernels`` from the repository root. Each case
times invarax's kernel and its NumPy counterpart ``--repeats`` times, alternating in
blocks of back-to-back calls, and reports medians of wall-clock time, so that both
see the same machine load.
Both use their default thread counts (``INVARAX_NUM_THREADS`` and
``OPENBLAS_NUM_THREADS`` override them). On a shared, busy machine, compare one
thread each by the CPU time of the calling thread, which other processes disturb
less: ``OPENBLAS_NUM_THREADS=1 INVARAX_NUM_THREADS=1 python -m benchmarks.kernels
--cpu-time``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from invarax import kernels

from .timing import CLOCK, medians

# (M, K, N) of the float matmuls, then the products of an MLP's training step (784-512-512-10,
# batch 256: a forward layer, a weight gradient x.T @ g whose A is a transposed view, the
# 10-class layer) and of a vmapped 2-10-10-2 MLP over 10000 points (narrow products).
MATMULS = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (8, 512, 512)]
MLP_MATMULS = [(256, 784, 512), (784, 256, 512, "A.T"), (256, 512, 10), (10000, 10, 10),
               (10000, 2, 10)]  # fmt: skip
PLAIN = (((1,), (0,)), ((), ()))


def bench_matmul(m: int, k: int, n: int, dtype, repeats: int, layout: str = "") -> dict:
    """GFLOP/s of ``kernels.dot_general`` and ``np.matmul`` for an (m, k) x (k, n) product.

    ``layout="A.T"`` stores A as the transpose of a C-contiguous (k, m) array (the
    backward pass's ``x.T @ g``).

    Example:
        >>> bench_matmul(4, 4, 4, np.float32, repeats=1)["shape"]
        '4x4x4'
    """
    rng = np.random.default_rng(0)
    if layout == "A.T":
        a = rng.standard_normal((k, m)).astype(dtype).T
    else:
        a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    t = medians(
        {
            "invarax": lambda: kernels.dot_general(a, b, PLAIN, a.dtype),
            "numpy": lambda: np.matmul(a, b),
        },
        repeats,
    )
    ours, theirs = t["invarax"], t["numpy"]
    flops = 2.0 * m * n * k
    return {
        "shape": f"{m}x{k}x{n}" + (f" {layout}" if layout else ""),
        "dtype": np.dtype(dtype).name,
        "invarax": flops / ours / 1e9,
        "numpy": flops / theirs / 1e9,
        "ratio": theirs / ours,
    }


def _reductions(x: np.ndarray) -> dict:
    """name: (invarax kernel call, NumPy call) over ``x``."""
    dt = x.dtype
    return {
        "sum(all)": (lambda: kernels.reduce_sum(x, (0, 1), dt), lambda: np.sum(x)),
        "sum(axis=0)": (lambda: kernels.reduce_sum(x, (0,), dt), lambda: np.sum(x, axis=0)),
        "sum(axis=1)": (lambda: kernels.reduce_sum(x, (1,), dt), lambda: np.sum(x, axis=1)),
        "max(axis=0)": (lambda: kernels.reduce_max(x, (0,), dt), lambda: np.max(x, axis=0)),
        "max(axis=1)": (lambda: kernels.reduce_max(x, (1,), dt), lambda: np.max(x, axis=1)),
        "argmax(axis=1)": (
            lambda: kernels.argmax(x, 1, np.int32),
            lambda: np.argmax(x, axis=1).astype(np.int32),
        ),
        "prod(axis=0)": (lambda: kernels.reduce_prod(x, (0,), dt), lambda: np.prod(x, axis=0)),
        "cumsum(axis=1)": (
            lambda: kernels.cumulative("sum", x, 1, False),
            lambda: np.cumsum(x, axis=1),
        ),
    }


def bench_reductions(shape, dtype, repeats: int) -> list[dict]:
    """Median microseconds of each reduction kernel and its NumPy counterpart.

    Example:
        >>> bench_reductions((4, 4), np.float32, repeats=1)[0]["op"]
        'sum(all)'
    """
    rng = np.random.default_rng(1)
    x = (1 + 1e-3 * rng.standard_normal(shape)).astype(dtype)
    rows = []
    for name, (ours, theirs) in _reductions(x).items():
        t = medians({"invarax": ours, "numpy": theirs}, repeats)
        t_ours, t_theirs = t["invarax"], t["numpy"]
        rows.append(
            {
                "op": name,
                "shape": "x".join(map(str, shape)),
                "dtype": np.dtype(dtype).name,
                "invarax_us": t_ours * 1e6,
                "numpy_us": t_theirs * 1e6,
                "ratio": t_theirs / t_ours,
            }
        )
    return rows


def main(argv=None) -> None:
    """Print the matmul and reduction tables (ratio > 1: invarax is faster)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="timed runs per case")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by the calling thread's CPU time (meaningful with one thread each)",
    )
    args = parser.parse_args(argv)
    CLOCK["clock"] = time.thread_time if args.cpu_time else time.perf_counter
    print(f"{'matmul':<20}{'dtype':<9}{'invarax GFLOP/s':>16}{'numpy GFLOP/s':>15}{'ratio':>8}")
    cases = [(np.float32, c) for c in MATMULS + MLP_MATMULS]
    cases += [(np.float64, c) for c in MATMULS]
    for dtype, (m, k, n, *layout) in cases:
        r = bench_matmul(m, k, n, dtype, args.repeats, *layout)
        print(
            f"{r['shape']:<20}{r['dtype']:<9}{r['invarax']:>16.1f}{r['numpy']:>15.1f}"
            f"{r['ratio']:>8.2f}"
        )
    header = f"{'reduction':<16}{'shape':<11}{'dtype':<9}{'invarax us':>11}{'numpy us':>10}"
    print(f"\n{header}{'ratio':>7}")
    for dtype in (np.float32, np.float64):
        for r in bench_reductions((1000, 1000), dtype, args.repeats):
            print(
                f"{r['op']:<16}{r['shape']:<11}{r['dtype']:<9}{r['invarax_us']:>11.0f}"
                f"{r['numpy_us']:>10.0f}{r['ratio']:>7.2f}"
            )


if __name__ == "__main__":
    main()

"""Canonical kernels vs NumPy/OpenBLAS: matmul GFLOP/s and reduction times, in the same run.

Run ``python -m benchmarks.kernels`` from the repository root. Each case
times invarax's kernel and its NumPy counterpart ``--repeats`` times, alternating in
blocks of back-to-back calls, and reports medians of wall-clock time, so that both
see the same machine load.
Both use their default thread counts (``INVARAX_NUM_THREADS`` and
``OPENBLAS_NUM_THREADS`` override them). On a shared, busy machine, compare one
thread each by the CPU time of the calling thread, which other processes disturb
less: ``OPENBLAS_NUM_THREADS=1 INVARAX_NUM_THREADS=1 python -m benchmarks.kernels
--cpu-time``. ``--levels`` times the 1024³ matmuls and a 3x3, 64-channel convolution at
each dispatch level above the baseline (``avx2``, and ``avx512`` where the CPU has it),
beside NumPy's matmul, in the same run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from invarax import kernels
from invarax.kernels import _native
from invarax.kernels.convolution import conv

from .timing import CLOCK, PAUSE, medians

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


def _at_level(level: str, fn):
    """fn, run with the kernels' dispatch at ``level``."""
    def run():
        _native.set_isa(level)
        return fn()
    return run


def bench_levels(dtype, repeats: int) -> dict:
    """GFLOP/s of the 1024³ matmul and of the ResNet block's convolution (32x64x32x32 input,
    64 3x3 filters, SAME) at each dispatch level above the baseline, and of ``np.matmul``:
    ``{name: (median, best)}``. The calls alternate one by one, in an order rotated at every
    repeat (a pause after NumPy's, whose idle threads spin), so that every level sees the
    same load; the best of the calls is the least disturbed by other jobs.

    Example:
        >>> sorted(bench_levels(np.float32, repeats=1))[-1]
        'numpy'
    """
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024)).astype(dtype) for _ in range(2))
    x = rng.standard_normal((32, 64, 32, 32)).astype(dtype)
    w = rng.standard_normal((64, 64, 3, 3)).astype(dtype)
    levels = _native.isas()[1:]
    fns = {"numpy": lambda: np.matmul(a, b)}
    for level in levels:
        fns[f"gemm {level}"] = _at_level(level, lambda: kernels.dot_general(a, b, PLAIN, dtype))
        fns[f"conv {level}"] = _at_level(level, lambda: conv(
            x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 1, 1, dtype))
    clock, times = CLOCK["clock"], {name: [] for name in fns}
    previous = _native.set_isa(levels[-1])
    try:
        for f in fns.values():  # warm-up
            f()
        names = list(fns)
        for r in range(repeats):
            for name in names[r % len(names):] + names[:r % len(names)]:  # rotated: no order bias
                f = fns[name]
                start = clock()
                f()
                times[name].append(clock() - start)
                if name == "numpy":
                    time.sleep(PAUSE)
    finally:
        _native.set_isa(previous)
    flops = {"gemm": 2.0 * 1024**3, "numpy": 2.0 * 1024**3, "conv": 2.0 * 64 * 64 * 9 * 32**3}
    gflops = {name: flops[name.split()[0]] / 1e9 for name in fns}
    return {name: (gflops[name] / np.median(t), gflops[name] / min(t)) for name, t in times.items()}


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
    parser.add_argument("--levels", action="store_true",
                        help="the 1024³ matmuls and a 3x3 convolution at each dispatch level")
    args = parser.parse_args(argv)
    CLOCK["clock"] = time.thread_time if args.cpu_time else time.perf_counter
    if args.levels:
        print("GFLOP/s, median (best) of the calls; conv/gemm: of the medians")
        print(f"{'':<10}{'level':<8}{'gemm 1024³':>15}{'conv 3x3x64':>15}{'conv/gemm':>10}"
              f"{'numpy 1024³':>15}")
        for dtype in (np.float32, np.float64):
            r = bench_levels(dtype, args.repeats)
            for level in _native.isas()[1:]:
                (gemm, gbest), (cnv, cbest) = r[f"gemm {level}"], r[f"conv {level}"]
                print(f"{np.dtype(dtype).name:<10}{level:<8}{gemm:>8.1f} ({gbest:>4.0f})"
                      f"{cnv:>8.1f} ({cbest:>4.0f}){cnv / gemm:>10.2f}"
                      f"{r['numpy'][0]:>8.1f} ({r['numpy'][1]:>4.0f})")
        return
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

"""``python -m benchmarks.fft_lengths [--cpu-time] [--tiny]``: invarax's FFT against JAX's
over row lengths.

For each length n, ``jit(jnp.fft.fft)`` of 2^20 / n rows of n complex64 values (2^20
points in all), in invarax and in JAX, timed in the same run by ``timing.medians``
(alternating blocks), inputs already converted to each library's arrays. Mixed radix
(4, 2, 3, 5), odd radix, the one-row and the lanes paths of the kernel, and a prime
(Bluestein). Prints a markdown table with the invarax/JAX ratios and the load average.
``--cpu-time`` times the process's CPU time (with one thread each, e.g. under
``taskset -c 1``, robust to a loaded machine). The issue's two workloads are in
``python -m benchmarks.linalg``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from .timing import CLOCK, medians

LENGTHS = (16, 64, 100, 243, 256, 625, 768, 1000, 1024, 4096, 65536, 1021)


def measure(lengths=LENGTHS, points: int = 1 << 20, repeats: int = 7) -> list:
    """``[(n, invarax ms, JAX ms)]`` for rows of each length."""
    import jax
    import jax.numpy as jn

    import invarax
    import invarax.numpy as jnp

    rng = np.random.default_rng(0)
    ours, theirs = invarax.jit(jnp.fft.fft), jax.jit(jn.fft.fft)
    rows = []
    for n in lengths:
        shape = (max(points // n, 1), n)
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        xi, xj = jnp.asarray(x), jax.device_put(x)
        np.testing.assert_allclose(np.asarray(ours(xi)), np.asarray(theirs(xj)), rtol=1e-4,
                                   atol=1e-4 * np.sqrt(n))
        times = medians({"invarax": lambda a=xi: np.asarray(ours(a)),
                         "jax": lambda a=xj: np.asarray(jax.block_until_ready(theirs(a)))},
                        repeats, block=3, pause=0.05)
        rows.append((n, times["invarax"] * 1e3, times["jax"] * 1e3))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the process's CPU time (all threads), not wall-clock time")
    parser.add_argument("--tiny", action="store_true", help="a check of the harness")
    args = parser.parse_args(argv)
    if args.cpu_time:
        CLOCK["clock"] = time.process_time
    start = os.getloadavg()[0]
    rows = measure((16, 37), 256, 1) if args.tiny else measure()
    print("| row length n (2^20 / n rows, complex64) | invarax (ms) | JAX (ms) | invarax / JAX |")
    print("|---|---|---|---|")
    for n, a, b in rows:
        print(f"| {n} | {a:.3g} | {b:.3g} | {a / b:.2f} |")
    clock = "process CPU time" if args.cpu_time else "wall-clock time"
    print(f"\n{clock}; load average (1 min) {start:.2f} at start, {os.getloadavg()[0]:.2f} at "
          f"end; INVARAX_NUM_THREADS={os.environ.get('INVARAX_NUM_THREADS', 'unset')}")


if __name__ == "__main__":
    main()

"""``python -m benchmarks.elementary_flag [--size N] [--repeats R] [--cpu-time]``: what the
default ``config.invarax_exact_elementary = True`` costs against NumPy's ufuncs (the
opt-out), on the same jitted functions, the flag alternated between calls (it is part of
jit's cache key, so each setting keeps its own compiled program): the fused expression of
workload 4 (10^7 float32) and the MLP train step of ``benchmarks.elementary``. Same-run
medians (``benchmarks/timing.py``); ratios are flag on / flag off.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from . import problems
from .elementary import _train_step
from .timing import CLOCK, medians


def fused_row(size: int, repeats: int) -> str:
    """The jitted fused expression of workload 4 with the flag on and off, alternating."""
    import invarax
    import invarax.numpy as jnp

    x1, x2 = problems.elementwise_data(problems.Config("elementary", elementwise=size))
    fused = invarax.jit(lambda a, b: problems.elementwise(jnp, a, b))

    def run(flag):
        invarax.config.update("invarax_exact_elementary", flag)
        np.asarray(fused(x1, x2))

    with invarax.config.flag("invarax_exact_elementary", True):  # restored after
        t = medians({"on": lambda: run(True), "off": lambda: run(False)}, repeats=repeats)
    return (f"fused expression of workload 4, {size:.0e} float32 (jit): invarax's functions "
            f"{t['on'] * 1e3:.1f} ms, NumPy's ufuncs {t['off'] * 1e3:.1f} ms, "
            f"ratio {t['on'] / t['off']:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by the process's CPU time instead of the wall clock")
    args = parser.parse_args()
    if args.cpu_time:
        CLOCK["clock"] = time.process_time
    print(f"load {os.getloadavg()[0]:.1f}, "
          + ("CPU time" if args.cpu_time else "wall clock"))
    print(fused_row(args.size, args.repeats))
    print(_train_step(args.repeats))


if __name__ == "__main__":
    main()

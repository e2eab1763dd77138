"""``python -m benchmarks.control_flow [--tiny] [--repeats N]``: rows 10-12 of
``python -m benchmarks`` (control flow) alone, invarax and JAX alternating in one process.

Prints each row's medians, the invarax/JAX ratio and the load average before and after.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os

import numpy as np

from . import jaxlike, problems
from .timing import medians

ROWS = ("fori", "rnn", "newton")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny sizes: a check of the harness")
    parser.add_argument("--repeats", type=int, default=7, help="timed calls per library")
    args = parser.parse_args(argv)
    cfg = problems.CONFIGS["tiny" if args.tiny else "full"]
    names = [n for n in ("invarax", "jax") if importlib.util.find_spec(n) is not None]
    libs = {n: jaxlike.workloads(importlib.import_module(n),
                                 importlib.import_module(f"{n}.numpy"), cfg) for n in names}
    start = os.getloadavg()[0]
    print("| workload | " + " | ".join(names) + " | invarax/JAX |")
    for key in ROWS:
        runs = {n: libs[n][key]() for n in names}
        results = {n: [np.asarray(x) for x in _leaves(run())] for n, run in runs.items()}
        for theirs in list(results.values())[1:]:
            for a, b in zip(results["invarax"], theirs, strict=True):
                np.testing.assert_allclose(b, a, rtol=2e-3, atol=1e-5)
        times = medians(runs, args.repeats, 1, 0.1 if args.tiny else 0.2)
        ratio = times["invarax"] / times["jax"] if "jax" in times else float("nan")
        cells = " | ".join(f"{times[n] * 1e3:.3g} ms" for n in names)
        print(f"| {key} | {cells} | {ratio:.3g} |", flush=True)
    print(f"load average: {start:.2f} before, {os.getloadavg()[0]:.2f} after")


def _leaves(tree) -> list:
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


if __name__ == "__main__":
    main()

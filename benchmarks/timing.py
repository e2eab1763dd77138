"""The benchmarks' one timing helper: medians of calls alternating between libraries."""

from __future__ import annotations

import time

import numpy as np

# The clock of medians: wall-clock time, or the calling thread's CPU time (kernels --cpu-time).
CLOCK = {"clock": time.perf_counter}
# Calls per block, and the pause before each block: idle BLAS threads spin for a while
# after a call (OpenBLAS's for about 0.1 s), and would steal a core from the next library.
BLOCK, PAUSE = 7, 0.25


def medians(fns: dict, repeats: int, block: int = BLOCK, pause: float = PAUSE) -> dict:
    """Median seconds of ``repeats`` calls of each ``fns[name]()``, by name.

    The functions alternate in blocks of ``block`` back-to-back calls, each block after
    a pause of ``pause`` seconds and an untimed warm-up call, so that all see the same
    machine load but none runs while another's idle threads still spin.

    Example:
        >>> sorted(medians({"a": lambda: None, "b": lambda: None}, repeats=1, block=1))
        ['a', 'b']
    """
    clock = CLOCK["clock"]
    times = {name: [] for name in fns}
    while any(len(out) < repeats for out in times.values()):
        for name, f in fns.items():
            out = times[name]
            time.sleep(pause)
            f()
            for _ in range(min(block, repeats - len(out))):
                start = clock()
                f()
                out.append(clock() - start)
    return {name: float(np.median(out)) for name, out in times.items()}

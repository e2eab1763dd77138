"""The long thread stress run: ``python tests/scripts/thread_stress.py [THREADS] [CALLS]``
(default 8 threads x 1000 calls) from the repository root; prints the figures."""

import pathlib
import sys
import time

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[2]),
                str(pathlib.Path(__file__).resolve().parents[1])]
import stress_threads  # noqa: E402

if __name__ == "__main__":
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    sys.setswitchinterval(1e-5)
    start = time.perf_counter()
    mismatches, errors, traces, serial = stress_threads.run(threads, calls)
    print(f"{threads} threads x {calls} calls: {len(mismatches)} mismatches, {len(errors)} "
          f"errors, traces {dict(traces)} (serial run: {dict(serial)}), "
          f"{time.perf_counter() - start:.0f} s")
    sys.exit(1 if mismatches or errors or traces != serial else 0)

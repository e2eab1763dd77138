"""``nn.MLP(scan=True)`` against ``scan=False``, in invarax and in Equinox: the first call of
a fresh ``filter_jit`` (trace and compile) and the steady per-call time, for a deep MLP
(32 -> 32 x depth -> 8) on a batch of 64. Configurations alternate within each repetition;
medians are printed. Run: ``python -m benchmarks.mlp_scan [depth] [reps]``.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np


def _time(f, model, x):
    t = time.perf_counter()
    out = f(model, x)
    getattr(out, "block_until_ready", lambda: None)()
    return time.perf_counter() - t


def _configs(depth):
    import invarax
    import invarax.nn as nn
    import invarax.numpy as jnp

    configs = {}
    for scan in (False, True):
        configs[f"invarax scan={scan}"] = (
            lambda r, scan=scan: nn.MLP(32, 8, 32, depth, scan=scan, key=invarax.random.key(r)),
            lambda: invarax.filter_jit(lambda m, x: m(jnp.asarray(x))))
    try:
        import equinox as eqx
        import jax
    except ImportError:
        return configs
    for scan in (False, True):
        configs[f"equinox scan={scan}"] = (
            lambda r, scan=scan: eqx.nn.MLP(32, 8, 32, depth, scan=scan, key=jax.random.key(r)),
            lambda: eqx.filter_jit(lambda m, x: jax.vmap(m)(x)))
    return configs


def main(depth=32, reps=5):
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    configs = _configs(depth)
    first = {name: [] for name in configs}
    steady = {name: [] for name in configs}
    for r in range(reps):
        for name, (make, compile_) in configs.items():
            model, f = make(r), compile_()
            first[name].append(_time(f, model, x))
            steady[name].append(statistics.median(_time(f, model, x) for _ in range(20)))
    print(f"MLP 32 -> 32 x {depth} -> 8, batch 64; medians of {reps}")
    for name in configs:
        print(f"{name:20s} first call {statistics.median(first[name]) * 1e3:8.1f} ms   "
              f"steady {statistics.median(steady[name]) * 1e3:7.3f} ms")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))

"""``python -m benchmarks.port_functions``: a few of the ported jax.numpy/scipy functions, jitted,
against JAX's, alternating invarax and JAX calls, median of 7 (prints the load average).

Not part of the main harness (``python -m benchmarks``): a spot check of the new code
paths (sorting-based quantile and unique, a contraction, elementwise statistics, the
float64-impl special functions), to show where they stand.
"""

from __future__ import annotations

import os
import time

import numpy as np


def _cases(jnp, stats, special):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((256, 256)).astype(np.float32)
    c = rng.standard_normal((64, 2000)).astype(np.float32)
    v = rng.standard_normal(1_000_000).astype(np.float32)
    p = (rng.random(100_000) * 10 + 0.1).astype(np.float32)
    return {
        "quantile(256x256, axis=1)": (lambda x: jnp.quantile(x, 0.3, axis=1), m),
        "cov(64x2000)": (lambda x: jnp.cov(x), c),
        "norm.logpdf(1e6)": (lambda x: stats.norm.logpdf(x), v),
        "gammaln(1e5)": (lambda x: special.gammaln(x), p),
        "gammainc(2.5, x) (1e5)": (lambda x: special.gammainc(2.5, x), p),
        "unique(size=64) (1e5)": (lambda x: jnp.unique(jnp.round(x), size=64, fill_value=0.0),
                                  p),
    }


def main(repeats: int = 7) -> None:
    import jax
    import jax.numpy as jjnp
    import jax.scipy.special as jspecial
    import jax.scipy.stats as jstats

    import invarax
    import invarax.numpy as jnp
    from invarax.scipy import special, stats

    ours_cases = _cases(jnp, stats, special)
    theirs_cases = _cases(jjnp, jstats, jspecial)
    for name, (f, x) in ours_cases.items():
        g = theirs_cases[name][0]
        ours, theirs = invarax.jit(f), jax.jit(g)
        xo, xt = jnp.asarray(x), jjnp.asarray(x)
        ours(xo).block_until_ready()
        theirs(xt).block_until_ready()
        to, tt = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            ours(xo).block_until_ready()
            to.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            theirs(xt).block_until_ready()
            tt.append(time.perf_counter() - t0)
        mo, mt = np.median(to), np.median(tt)
        print(f"{name:28s} invarax {mo * 1e3:8.2f} ms  jax {mt * 1e3:8.2f} ms  "
              f"ratio {mo / mt:5.2f}")
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main()

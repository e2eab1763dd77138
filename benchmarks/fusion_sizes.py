"""Small fusion groups: a jitted expression fused (one native pass) against the same program
equation by equation, from 2^15 to 2^18 float32 elements, on the default threads.

Both programs are compiled in one process (the second with the native groups' size limits
raised out of reach) and timed alternately through ``timing.medians``, in blocks of 20
back-to-back calls without a pause, as a training loop calls them (after an idle moment
the first calls of either take several times longer); the fused one first waits for its
native code. Run: ``python -m benchmarks.fusion_sizes [--repeats N]``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _expressions(jnp):
    def sgd(w, g):  # an SGD update
        return w - 0.01 * g

    def activation(w, g):  # tanh and the factor of its gradient
        y = jnp.tanh(w)
        return y, 1.0 - y * y

    def blend(w, g):  # five cheap members
        return w * 0.9 + g * 0.1 - w * g

    return {"w - 0.01 g": sgd, "tanh, 1 - y*y": activation, "w*0.9 + g*0.1 - w*g": blend}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100, help="timed calls per program")
    args = parser.parse_args(argv)
    import invarax
    import invarax.numpy as jnp
    from invarax.compiler import fusion, fusion_native

    from .timing import medians

    rng = np.random.default_rng(0)
    print("microseconds per call, median; fused / equation by equation")
    print(f"{'expression':<22}" + "".join(f"{f'2^{k}':>18}" for k in range(15, 19)))
    for name, f in _expressions(jnp).items():
        cells = []
        for k in range(15, 19):
            w, g = (jnp.asarray(rng.standard_normal(2**k).astype(np.float32)) for _ in "wg")
            fused = invarax.jit(lambda w, g, f=f: f(w, g))
            fused(w, g)
            with fusion._settings(min_native_size=2**62):  # compiled here: no small groups
                plain = invarax.jit(lambda w, g, f=f: f(w, g))
                plain(w, g)
            fusion_native.wait()
            calls = {name: lambda jf=jf, w=w, g=g: invarax.block_until_ready(jf(w, g))
                     for name, jf in (("fused", fused), ("plain", plain))}
            times = medians(calls, args.repeats, block=20, pause=0.0)
            cells.append(f"{times['fused'] * 1e6:.1f} / {times['plain'] * 1e6:.1f}")
        print(f"{name:<22}" + "".join(f"{c:>18}" for c in cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())

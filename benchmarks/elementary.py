"""``python -m benchmarks.elementary [--size N] [--repeats R]``: invarax's own elementary
functions (correctly rounded float32, docs/numerics.md "Elementary functions") against
NumPy's native ufuncs, on float32 arrays of 10^7 elements, and the fused expression of
workload 4 against JAX.

Columns: NumPy's ufunc (one thread, its best instruction set), invarax's kernel called
directly on one thread and on the default threads (``$INVARAX_NUM_THREADS`` or the usable
CPUs: the kernel splits large arrays between them), and ``invarax.jit`` of the same function
(default threads; it allocates its output each call, the others write into one buffer).
Same-run medians, the functions alternating (``benchmarks/timing.py``); ratios are
invarax / NumPy. invarax's own kernels are switched on for the run
(``config.invarax_exact_elementary``). ``--functions log2,pow,...`` times other functions
(``MORE``) instead of the default four; ``pow`` is ``x ** y`` (its kernel on one thread).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from . import problems
from .timing import CLOCK, medians

#: The functions timed by default, and the others ``--functions`` may name.
DEFAULT = ("exp", "log", "sin", "tanh")
MORE = ("log2", "log10", "asinh", "acosh", "atanh", "cbrt", "pow")
_SPANS = {"log": (0.01, 100), "log2": (0.01, 100), "log10": (0.01, 100), "acosh": (1, 100),
          "atanh": (-0.99, 0.99), "pow": (0.01, 10)}


def _inputs(name: str, size: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    lo, hi = _SPANS.get(name, (-10, 10))
    return rng.uniform(lo, hi, size).astype(np.float32)


def run(size: int, repeats: int, names: tuple[str, ...] = DEFAULT) -> list[str]:
    import invarax
    import invarax.numpy as jnp
    from invarax.kernels import _native
    from invarax.kernels._support import capped_threads, num_threads
    from invarax.kernels.elementary import elementary, elementary2

    funcs = {"exp": (np.exp, jnp.exp), "log": (np.log, jnp.log), "sin": (np.sin, jnp.sin),
             "tanh": (np.tanh, jnp.tanh), "log2": (np.log2, jnp.log2),
             "log10": (np.log10, jnp.log10), "asinh": (np.arcsinh, jnp.arcsinh),
             "acosh": (np.arccosh, jnp.arccosh), "atanh": (np.arctanh, jnp.arctanh),
             "cbrt": (np.cbrt, jnp.cbrt), "pow": (np.power, jnp.power)}
    funcs = {name: funcs[name] for name in names}
    lines = [f"float32, {size:.0e} elements, kernels at {_native.set_isa(_native.isas()[-1])}, "
             f"{num_threads()} default threads, load {os.getloadavg()[0]:.1f}, "
             + ("CPU time" if CLOCK["clock"] is time.process_time else "wall clock"),
             "| function | NumPy (ms) | invarax kernel, 1 thread (ms) | ratio | "
             "invarax kernel, default threads (ms) | ratio | invarax jit (ms) | ratio |",
             "|---|---|---|---|---|---|---|---|"]

    def one_thread(name, x, out):
        with capped_threads(1):
            return elementary(name, x, out)

    def timed(name, ufunc, jitted):
        x = _inputs(name, size)
        out = np.empty_like(x)
        if name == "pow":  # x ** y, y uniform in [-5, 5]; elementary2 runs on one thread
            y = np.random.default_rng(1).uniform(-5, 5, size).astype(np.float32)
            return medians({"numpy": lambda: ufunc(x, y, out=out),
                            "kernel": lambda: _native.elementary2(1, x, y, out),
                            "threads": lambda: elementary2("pow", x, y, out),
                            "jit": lambda: np.asarray(jitted(x, y))}, repeats=repeats)
        return medians({"numpy": lambda: ufunc(x, out=out),
                        "kernel": lambda: one_thread(name, x, out),
                        "threads": lambda: elementary(name, x, out),
                        "jit": lambda: np.asarray(jitted(x))}, repeats=repeats)

    previous = invarax.config.invarax_exact_elementary
    invarax.config.update("invarax_exact_elementary", True)
    try:
        for name, (ufunc, ours) in funcs.items():
            t = timed(name, ufunc, invarax.jit(ours))
            lines.append("| " + " | ".join(
                [name, f"{t['numpy'] * 1e3:.1f}"]
                + [f"{t[k] * 1e3:.1f} | {t[k] / t['numpy']:.2f}"
                   for k in ("kernel", "threads", "jit")]) + " |")
        lines.append(_fused(size, repeats))
    finally:
        invarax.config.update("invarax_exact_elementary", previous)
    lines.append(_train_step(repeats))
    return lines


def _train_step(repeats: int) -> str:
    """The jitted SGD step of the tanh MLP (workload 1) with invarax's elementary functions
    on and off (NumPy's ufuncs), alternating; the flag is part of jit's cache key."""
    import invarax
    import invarax.numpy as jnp

    cfg = problems.Config("elementary")
    params, x, y = problems.train_data(cfg)
    grad = invarax.grad(lambda p, a, b: problems.loss(jnp, p, a, b))
    step = invarax.jit(lambda p, a, b: problems.sgd_step(grad, p, a, b))
    previous = invarax.config.invarax_exact_elementary

    def run(flag):
        invarax.config.update("invarax_exact_elementary", flag)
        invarax.tree_util.tree_map(np.asarray, step(params, x, y))

    try:
        t = medians({"on": lambda: run(True), "off": lambda: run(False)}, repeats=3 * repeats)
    finally:
        invarax.config.update("invarax_exact_elementary", previous)
    return (f"MLP {'-'.join(map(str, cfg.mlp))} train step, batch {cfg.batch} (jit): "
            f"invarax's functions {t['on'] * 1e3:.2f} ms, NumPy's ufuncs {t['off'] * 1e3:.2f} ms, "
            f"ratio {t['on'] / t['off']:.2f}")


def _fused(size: int, repeats: int) -> str:
    import invarax
    import invarax.numpy as jnp

    x1, x2 = problems.elementwise_data(problems.Config("elementary", elementwise=size))
    fused = invarax.jit(lambda a, b: problems.elementwise(jnp, a, b))
    fns = {"invarax": lambda: np.asarray(fused(x1, x2))}
    try:
        import jax
        import jax.numpy as jjnp

        jfused = jax.jit(lambda a, b: problems.elementwise(jjnp, a, b))
        fns["jax"] = lambda: jfused(x1, x2).block_until_ready()
    except ImportError:
        pass
    t = medians(fns, repeats=repeats)
    row = f"fused expression of workload 4: invarax {t['invarax'] * 1e3:.1f} ms"
    if "jax" in t:
        row += f", JAX {t['jax'] * 1e3:.1f} ms, ratio {t['invarax'] / t['jax']:.2f}"
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by the process's CPU time (all threads) instead of the wall "
                        "clock: steadier on a loaded machine; threaded columns then show work")
    parser.add_argument("--functions", default=",".join(DEFAULT),
                        help=f"comma-separated, of {', '.join(DEFAULT + MORE)}")
    args = parser.parse_args()
    if args.cpu_time:
        CLOCK["clock"] = time.process_time
    names = tuple(args.functions.split(","))
    unknown = sorted(set(names) - set(DEFAULT + MORE))
    if unknown:
        parser.error(f"unknown functions {unknown}; choose from {DEFAULT + MORE}")
    print("\n".join(run(args.size, args.repeats, names)))


if __name__ == "__main__":
    main()

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
(``config.invarax_exact_elementary``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from . import problems
from .timing import CLOCK, medians


def _inputs(name: str, size: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    if name == "log":
        return rng.uniform(0.01, 100, size).astype(np.float32)
    return rng.uniform(-10, 10, size).astype(np.float32)


# --functions: invarax's name, its peer (NumPy's ufunc, or JAX's jitted function where NumPy
# has none), the input range; atan2 takes (x, reversed x).
MORE = {"atan": ("arctan", (-10, 10)), "asin": ("arcsin", (-1, 1)),
        "acos": ("arccos", (-1, 1)), "tan": ("tan", (-10, 10)), "atan2": ("arctan2", (-10, 10)),
        "erf": ("jax.scipy.special.erf", (-5, 5)), "erfc": ("jax.scipy.special.erfc", (-5, 5)),
        "erf_inv": ("jax.lax.erf_inv", (-1, 1))}


def _peer(name: str, x: np.ndarray, x2: np.ndarray, out: np.ndarray):
    """MORE's peer of function ``name`` as a call (JAX's jitted, waiting for its result)."""
    peer = MORE[name][0]
    if not peer.startswith("jax"):
        ufunc, args = getattr(np, peer), ((x, x2) if name == "atan2" else (x,))
        return lambda: ufunc(*args, out=out)
    import jax

    module, attr = peer.rsplit(".", 1)
    f, xj = jax.jit(getattr(__import__(module, fromlist=[attr]), attr)), jax.device_put(x)
    return lambda: f(xj).block_until_ready()


def _more_row(name: str, size: int, repeats: int) -> str:
    from invarax.kernels._support import capped_threads
    from invarax.kernels.elementary import elementary, elementary2

    lo, hi = MORE[name][1]
    x = np.random.default_rng(0).uniform(lo, hi, size).astype(np.float32)
    x2, out = x[::-1].copy(), np.empty_like(x)
    if name == "atan2":
        ours = lambda: elementary2("atan2", x, x2, out)  # noqa: E731
    else:
        ours = lambda: elementary(name, x, out)  # noqa: E731
    with capped_threads(1):
        t = medians({"peer": _peer(name, x, x2, out), "kernel": ours}, repeats=repeats)
    return (f"| {name} | {MORE[name][0]} | {t['peer'] * 1e3:.1f} | {t['kernel'] * 1e3:.1f} | "
            f"{t['kernel'] / t['peer']:.2f} |")


def run_functions(names: list[str], size: int, repeats: int) -> list[str]:
    """One row per function of MORE: its peer against invarax's kernel on the calling thread
    (JAX on one thread: XLA_FLAGS=--xla_cpu_multi_thread_eigen=false, set here before JAX is
    imported; pin the process, e.g. taskset -c 0, for one core)."""
    from invarax.kernels import _native

    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false").strip()
    return [f"float32, {size:.0e} elements, kernels at {_native.set_isa(_native.isas()[-1])}, "
            f"one thread, load {os.getloadavg()[0]:.1f}, "
            + ("CPU time" if CLOCK["clock"] is time.process_time else "wall clock"),
            "| function | peer | peer (ms) | invarax kernel (ms) | ratio |",
            "|---|---|---|---|---|", *(_more_row(name, size, repeats) for name in names)]


def run(size: int, repeats: int) -> list[str]:
    import invarax
    import invarax.numpy as jnp
    from invarax.kernels import _native
    from invarax.kernels._support import capped_threads, num_threads
    from invarax.kernels.elementary import elementary

    funcs = {"exp": (np.exp, jnp.exp), "log": (np.log, jnp.log), "sin": (np.sin, jnp.sin),
             "tanh": (np.tanh, jnp.tanh)}
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
    parser.add_argument("--functions", help="comma-separated names of " + ", ".join(MORE) +
                        ": only their rows, against NumPy's ufunc or JAX on one thread")
    args = parser.parse_args()
    if args.cpu_time:
        CLOCK["clock"] = time.process_time
    if args.functions:
        names = args.functions.split(",")
        unknown = sorted(set(names) - set(MORE))
        if unknown:
            parser.error(f"--functions: unknown {unknown}; choose from {', '.join(MORE)}")
        print("\n".join(run_functions(names, args.size, args.repeats)))
        return
    print("\n".join(run(args.size, args.repeats)))


if __name__ == "__main__":
    main()

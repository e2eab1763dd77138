"""``python -m benchmarks.elementary [--size N] [--repeats R] [--cpu-time] [--dtype D] [--levels]``:
invarax's own elementary functions (correctly rounded float32, docs/numerics.md "Elementary
functions") against NumPy's native ufuncs, on float32 arrays of 10^7 elements, and the fused
expression of workload 4 against JAX.

Columns: NumPy's ufunc writing into a preallocated output (one thread, its best instruction
set) and invarax's kernel doing the same on one thread; the kernel on the default threads
(``$INVARAX_NUM_THREADS`` or the usable CPUs: it splits large arrays between them), always
by the wall clock, against NumPy's wall-clock time of the same run, with the threads' CPU
time over the wall time (about 2 where two threads both work); NumPy's ufunc allocating its
output and ``invarax.jit`` of the function, which allocates its output too (both pay the
fresh memory's page faults), on an ``invarax`` array (a NumPy argument would be copied on
the way in, as JAX copies it to the device). Same-run medians, the functions alternating
(``benchmarks/timing.py``); ratios are invarax / NumPy. invarax's own kernels are switched
on for the run (``config.invarax_exact_elementary``). ``--cpu-time`` times the one-thread
and allocating columns by the process's CPU time (steadier on a loaded machine).
``--dtype float64``: instead, one row per function (all but lgamma and digamma) of float64
kernels on one thread against NumPy's (or SciPy's) float64 ufunc writing into a preallocated
output, by CPU time, ns per element; with ``--against SO`` the other build's kernel too, and
whether the two give the same bits. ``--levels``: instead, eight float32 functions on one
thread at each vector dispatch level (avx2, avx512) against NumPy's ufunc, by CPU time.
"""

from __future__ import annotations

import argparse
import functools
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
# has none), the input range; atan2 takes (x, reversed x), pow (x, y) with y in [-5, 5].
MORE = {"log2": ("log2", (0.01, 100)), "log10": ("log10", (0.01, 100)),
        "asinh": ("arcsinh", (-10, 10)), "acosh": ("arccosh", (1, 100)),
        "atanh": ("arctanh", (-0.99, 0.99)), "cbrt": ("cbrt", (-10, 10)),
        "pow": ("power", (0.01, 10)), "atan": ("arctan", (-10, 10)), "asin": ("arcsin", (-1, 1)),
        "acos": ("arccos", (-1, 1)), "tan": ("tan", (-10, 10)), "atan2": ("arctan2", (-10, 10)),
        "erf": ("jax.scipy.special.erf", (-5, 5)), "erfc": ("jax.scipy.special.erfc", (-5, 5)),
        "erf_inv": ("jax.lax.erf_inv", (-1, 1))}


_BINARY = ("atan2", "pow")


def _peer(name: str, x: np.ndarray, x2: np.ndarray, out: np.ndarray):
    """MORE's peer of function ``name`` as a call (JAX's jitted, waiting for its result)."""
    peer = MORE[name][0]
    if not peer.startswith("jax"):
        ufunc, args = getattr(np, peer), ((x, x2) if name in _BINARY else (x,))
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
    out = np.empty_like(x)
    x2 = (np.random.default_rng(1).uniform(-5, 5, size).astype(np.float32) if name == "pow"
          else x[::-1].copy())
    if name in _BINARY:
        ours = lambda: elementary2(name, x, x2, out)  # noqa: E731
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
             + ("CPU time" if CLOCK["clock"] is time.process_time else "wall clock")
             + " (the default-threads column: wall clock)",
             "| function | NumPy, out= (ms) | invarax kernel, 1 thread (ms) | ratio | "
             "invarax kernel, default threads, wall (ms) | ratio to NumPy's wall | "
             "threads' CPU / wall | NumPy allocating (ms) | invarax jit (ms) | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def one_thread(name, x, out):
        with capped_threads(1):
            return elementary(name, x, out)

    def timed(name, ufunc, jitted):
        x = _inputs(name, size)
        out = np.empty_like(x)
        xa = jnp.asarray(x)  # an invarax array, as a JAX program passes a device array
        logs = {key: [] for key in ("numpy", "kernel", "threads", "numpy_alloc", "jit")}
        calls = {"numpy": lambda: ufunc(x, out=out),
                 "kernel": lambda: one_thread(name, x, out),
                 "threads": lambda: elementary(name, x, out),
                 "numpy_alloc": lambda: ufunc(x),
                 "jit": lambda: np.asarray(jitted(xa))}
        medians({key: _logged(f, logs[key]) for key, f in calls.items()}, repeats=repeats)
        pick = 1 if CLOCK["clock"] is time.process_time else 0
        t = {key: float(np.median([entry[pick] for entry in log])) for key, log in logs.items()}
        wall = {key: float(np.median([entry[0] for entry in log])) for key, log in logs.items()}
        cpu = float(np.median([entry[1] for entry in logs["threads"]]))
        return t, wall, cpu / wall["threads"]

    with invarax.config.flag("invarax_exact_elementary", True):
        for name, (ufunc, ours) in funcs.items():
            t, wall, parallel = timed(name, ufunc, invarax.jit(ours))
            lines.append("| " + " | ".join([
                name, f"{t['numpy'] * 1e3:.1f}", f"{t['kernel'] * 1e3:.1f}",
                f"{t['kernel'] / t['numpy']:.2f}", f"{wall['threads'] * 1e3:.1f}",
                f"{wall['threads'] / wall['numpy']:.2f}", f"{parallel:.2f}",
                f"{t['numpy_alloc'] * 1e3:.1f}", f"{t['jit'] * 1e3:.1f}",
                f"{t['jit'] / t['numpy_alloc']:.2f}"]) + " |")
        lines.append(_fused(size, repeats))
    lines.append(_train_step(repeats))
    return lines


def _logged(f, log):
    """``f`` that appends each call's (wall-clock, process CPU) seconds to ``log``."""

    def call():
        wall, cpu = time.perf_counter(), time.process_time()
        f()
        log.append((time.perf_counter() - wall, time.process_time() - cpu))

    return call


def _train_step(repeats: int) -> str:
    """The jitted SGD step of the tanh MLP (workload 1) with invarax's elementary functions
    on and off (NumPy's ufuncs), alternating; the flag is part of jit's cache key."""
    import invarax
    import invarax.numpy as jnp

    cfg = problems.Config("elementary")
    params, x, y = problems.train_data(cfg)
    grad = invarax.grad(lambda p, a, b: problems.loss(jnp, p, a, b))
    step = invarax.jit(lambda p, a, b: problems.sgd_step(grad, p, a, b))

    def run(flag):
        invarax.config.update("invarax_exact_elementary", flag)
        invarax.tree_util.tree_map(np.asarray, step(params, x, y))

    with invarax.config.flag("invarax_exact_elementary", True):  # restored after
        t = medians({"on": lambda: run(True), "off": lambda: run(False)}, repeats=3 * repeats)
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


def against(path: str, size: int, repeats: int) -> list[str]:
    """The compiled kernel of another build (``path`` to its ``_native*.so``, e.g. an older
    commit built in a scratch copy) against this one, in one process: each called directly
    on one thread, alternating with NumPy's ufunc writing into a preallocated output, by
    CPU time. Both must give the same bits (correctly rounded float32)."""
    from invarax.kernels import _native

    other = _load_build(path)
    for module in (_native, other):
        module.set_isa(module.isas()[-1])
    lines = [f"float32, {size:.0e} elements, one thread, CPU time, load "
             f"{os.getloadavg()[0]:.1f}; other build: {path}",
             "| function | NumPy (ms) | other build (ms) | ratio | this build (ms) | ratio |",
             "|---|---|---|---|---|---|"]
    for name, ufunc in (("exp", np.exp), ("log", np.log), ("sin", np.sin), ("tanh", np.tanh)):
        t = _two_builds(name, ufunc, (other, _native), size, repeats)
        lines.append(f"| {name} | {t['numpy'] * 1e3:.2f} | {t['other'] * 1e3:.2f} | "
                     f"{t['other'] / t['numpy']:.2f} | {t['this'] * 1e3:.2f} | "
                     f"{t['this'] / t['numpy']:.2f} |")
    return lines


#: float64 peers: NumPy's ufunc, or SciPy's (``scipy.special.NAME``); the input range.
F64 = {"exp": ("exp", (-10, 10)), "log": ("log", (0.01, 100)), "expm1": ("expm1", (-10, 10)),
       "log1p": ("log1p", (-0.9, 100)), "tanh": ("tanh", (-10, 10)),
       "logistic": ("scipy.expit", (-10, 10)), "sin": ("sin", (-10, 10)),
       "cos": ("cos", (-10, 10)), "exp2": ("exp2", (-10, 10)), "sinh": ("sinh", (-10, 10)),
       "cosh": ("cosh", (-10, 10)), "log2": ("log2", (0.01, 100)),
       "log10": ("log10", (0.01, 100)), "asinh": ("arcsinh", (-10, 10)),
       "acosh": ("arccosh", (1, 100)), "atanh": ("arctanh", (-0.99, 0.99)),
       "atan": ("arctan", (-10, 10)), "asin": ("arcsin", (-1, 1)), "acos": ("arccos", (-1, 1)),
       "tan": ("tan", (-10, 10)), "cbrt": ("cbrt", (-10, 10)), "erf": ("scipy.erf", (-10, 10)),
       "erfc": ("scipy.erfc", (-10, 10)), "erf_inv": ("scipy.erfinv", (-0.99, 0.99))}


def float64_table(size: int, repeats: int, other_path: str | None = None) -> list[str]:
    """F64's rows: the float64 kernel (called directly, one thread) against its peer, and
    against another build's kernel where ``other_path`` names its ``_native*.so``."""
    from invarax.kernels import _native

    modules = {"this": _native}
    if other_path:
        modules["other"] = _load_build(other_path)
    for module in modules.values():
        module.set_isa(module.isas()[-1])
    other = " other build (ns) |" if other_path else ""
    return [f"float64, {size} elements, one thread, kernels at {_native.isas()[-1]}, CPU "
            f"time, median of {repeats}, load {os.getloadavg()[0]:.1f}"
            + (f"; other build: {other_path}" if other_path else ""),
            f"| function | peer | peer (ns) |{other} invarax kernel (ns) | ratio to peer |"
            + (" same bits |" if other_path else ""),
            "|---" * (5 + 2 * bool(other_path)) + "|",
            *(_f64_row(name, modules, size, repeats) for name in F64)]


def _f64_row(name: str, modules: dict, size: int, repeats: int) -> str:
    from invarax.kernels.elementary import _CODE

    peer, (lo, hi) = F64[name]
    if peer.startswith("scipy."):
        import scipy.special

        ufunc = getattr(scipy.special, peer[6:])
    else:
        ufunc = getattr(np, peer)
    x = np.random.default_rng(0).uniform(lo, hi, size)
    ys = {key: np.empty_like(x) for key in ("peer", *modules)}
    calls = {"peer": lambda: ufunc(x, out=ys["peer"])}
    for key, module in modules.items():
        calls[key] = functools.partial(module.elementary, _CODE[name], x, ys[key])
    previous, CLOCK["clock"] = CLOCK["clock"], time.process_time
    try:
        t = {key: v / size * 1e9 for key, v in medians(calls, repeats=repeats).items()}
    finally:
        CLOCK["clock"] = previous
    row = f"| {name} | {peer} | {t['peer']:.1f} |"
    if "other" in modules:
        row += f" {t['other']:.1f} |"
    row += f" {t['this']:.1f} | {t['this'] / t['peer']:.2f} |"
    if "other" in modules:
        same = np.array_equal(ys["this"].view(np.uint64), ys["other"].view(np.uint64))
        row += f" {'yes' if same else 'no'} |"
    return row


#: --levels: the float32 functions with fast paths timed at each dispatch level.
LEVELS = ("exp", "log", "sin", "cos", "tanh", "expm1", "log1p", "logistic")


def levels_table(size: int, repeats: int) -> list[str]:
    """One row per function of LEVELS: NumPy's (SciPy's ``expit`` for logistic) float32 ufunc
    writing into a preallocated output against invarax's kernel called directly on one thread
    at each dispatch level above the baseline (``_native.set_isa``, as ``INVARAX_MAX_ISA``
    caps it), all alternating in one process, by CPU time; F64's input ranges, float32.
    Each level's output must have the same bits."""
    import scipy.special

    from invarax.kernels import _native
    from invarax.kernels.elementary import _CODE

    levels = [isa for isa in _native.isas() if isa != "scalar"]
    top = _native.set_isa(_native.isas()[-1])
    head = " | ".join(f"{isa} (ms) | ratio" for isa in levels)
    lines = [f"float32, {size:.0e} elements, one thread, CPU time, median of {repeats}, "
             f"load {os.getloadavg()[0]:.1f}",
             f"| function | peer | peer (ms) | {head} |", "|---" * (3 + 2 * len(levels)) + "|"]
    previous, CLOCK["clock"] = CLOCK["clock"], time.process_time
    try:
        for name in LEVELS:
            peer, (lo, hi) = F64[name]
            ufunc = (getattr(scipy.special, peer[6:]) if peer.startswith("scipy.")
                     else getattr(np, peer))
            x = np.random.default_rng(0).uniform(lo, hi, size).astype(np.float32)
            ys = {key: np.empty_like(x) for key in ("peer", *levels)}

            def at(isa, y, x=x, code=_CODE[name]):
                def call():
                    _native.set_isa(isa)
                    _native.elementary(code, x, y)
                return call

            calls = {"peer": functools.partial(ufunc, x, out=ys["peer"])}
            calls.update({isa: at(isa, ys[isa]) for isa in levels})
            t = medians(calls, repeats=repeats)
            for isa in levels[1:]:
                if not np.array_equal(ys[isa].view(np.uint32), ys[levels[0]].view(np.uint32)):
                    raise AssertionError(f"{name}: {isa} and {levels[0]} differ")
            cells = " | ".join(f"{t[isa] * 1e3:.2f} | {t[isa] / t['peer']:.2f}" for isa in levels)
            lines.append(f"| {name} | {peer} | {t['peer'] * 1e3:.2f} | {cells} |")
    finally:
        CLOCK["clock"] = previous
        _native.set_isa(top)
    return lines


def _load_build(path: str):
    """The ``_native`` module of another build (``path`` to its ``_native*.so``)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("invarax.kernels._native", path)
    other = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location(loader.name, path, loader=loader))
    loader.exec_module(other)
    return other


def in_cache(size: int = 65536, rounds: int = 15, calls: int = 30) -> str:
    """ns per element of the kernel (called directly, one thread) and of NumPy's ufunc with
    ``out=`` on ``size`` float32 (in cache), each the best of ``rounds`` rounds of ``calls``
    calls by CPU time, the two alternating; ratio invarax / NumPy."""
    from invarax.kernels import _native
    from invarax.kernels.elementary import _CODE

    out = []
    for name in ("exp", "log", "sin", "cos", "tanh", "expm1", "log1p", "exp2", "sinh", "cosh"):
        x = _inputs("log" if name.startswith("log") else name, size)
        y = np.empty_like(x)
        best = _best_of(getattr(np, name), _native.elementary, _CODE[name], x, y, rounds, calls)
        out.append(f"{name} {best[1]:.2f} vs {best[0]:.2f} ({best[1] / best[0]:.2f})")
    return (f"in cache, {size} float32, ns per element, invarax vs NumPy (ratio), load "
            f"{os.getloadavg()[0]:.1f}: " + ", ".join(out))


def _best_of(ufunc, kernel, code, x, y, rounds, calls):
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for i, f in enumerate((lambda: ufunc(x, out=y), lambda: kernel(code, x, y))):
            start = time.process_time_ns()
            for _ in range(calls):
                f()
            best[i] = min(best[i], (time.process_time_ns() - start) / calls / x.size)
    return best


def _two_builds(name, ufunc, modules, size, repeats):
    from invarax.kernels.elementary import _CODE

    x = _inputs(name, size)
    ys = [np.empty_like(x) for _ in range(3)]
    code = _CODE[name]
    calls = {"numpy": lambda: ufunc(x, out=ys[0]),
             "other": lambda: modules[0].elementary(code, x, ys[1]),
             "this": lambda: modules[1].elementary(code, x, ys[2])}
    previous, CLOCK["clock"] = CLOCK["clock"], time.process_time
    try:
        t = medians(calls, repeats=repeats)
    finally:
        CLOCK["clock"] = previous
    if not np.array_equal(ys[1].view(np.uint32), ys[2].view(np.uint32)):
        raise AssertionError(f"{name}: the two builds give different bits")
    return t


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by the process's CPU time (all threads) instead of the wall "
                        "clock: steadier on a loaded machine; threaded columns then show work")
    parser.add_argument("--functions", help="comma-separated names of " + ", ".join(MORE) +
                        ": only their rows, against NumPy's ufunc or JAX on one thread")
    parser.add_argument("--against", metavar="SO",
                        help="compare this build's kernel with another build's _native*.so, "
                        "one thread, CPU time (instead of the tables)")
    parser.add_argument("--in-cache", action="store_true",
                        help="ns per element on 65,536 float32 (in cache), best of 15 x 30 "
                        "calls, for the eleven fast paths but logistic (instead of the tables)")
    parser.add_argument("--levels", action="store_true",
                        help="exp, log, sin, cos, tanh, expm1, log1p, logistic float32 on one "
                        "thread at each dispatch level against NumPy's (SciPy's) ufunc, CPU "
                        "time (instead of the tables)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                        help="float64: the float64 table of every function (one thread, CPU "
                        "time; with --against, the other build's kernel too)")
    args = parser.parse_args()
    if args.dtype == "float64":
        print("\n".join(float64_table(args.size, args.repeats, args.against)))
        return
    if args.levels:
        print("\n".join(levels_table(args.size, args.repeats)))
        return
    if args.in_cache:
        print(in_cache())
        return
    if args.against:
        print("\n".join(against(args.against, args.size, args.repeats)))
        return
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

"""``python -m benchmarks.linalg [--quick | --tiny] [--accuracy]``: linalg and FFT vs JAX, NumPy.

The workloads (solve 512, cholesky 1024 float32, 10^4 batched 3x3 solves under
vmap, eigh 256, svd 256 x 128, rfft of 2^20 float32, batched fft of 1024 x 1024), each
in invarax (jit), JAX (jit) and NumPy/SciPy, timed in the same run by ``timing.medians``
(alternating blocks); each result is checked against NumPy's first. Prints a markdown
table with the invarax/JAX ratios and the load average. ``--cpu-time`` times the
process's CPU time instead of wall-clock time (robust to a loaded machine when every
library runs one thread, e.g. under ``taskset -c 1`` with one thread each).
``--accuracy`` prints the backward errors of docs/numerics.md instead (``--x64``: in
float64, against NumPy).
``python -m benchmarks --linalg`` runs it.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from .timing import CLOCK, medians

SIZES = {  # name: (solve n, cholesky n, batch of 3x3, eigh n, svd (m, n), rfft n, fft (b, n))
    "full": (512, 1024, 10_000, 256, (256, 128), 2**20, (1024, 1024)),
    "quick": (512, 1024, 10_000, 256, (256, 128), 2**20, (1024, 1024)),
    "tiny": (16, 16, 10, 8, (8, 4), 2**6, (4, 8)),
}
REPEATS = {"full": 15, "quick": 7, "tiny": 1}


def _data(size):
    n_solve, n_chol, batch, n_eigh, svd_shape, n_rfft, fft_shape = size
    rng = np.random.default_rng(0)
    f32 = np.float32
    a = rng.standard_normal((n_solve, n_solve)).astype(f32)
    g = rng.standard_normal((n_chol, n_chol))
    spd = (g @ g.T + n_chol * np.eye(n_chol)).astype(f32)
    small = rng.standard_normal((batch, 3, 3)).astype(f32) + 3 * np.eye(3, dtype=f32)
    sym = rng.standard_normal((n_eigh, n_eigh))
    fft_in = rng.standard_normal(fft_shape) + 1j * rng.standard_normal(fft_shape)
    return {
        "solve": (a, rng.standard_normal(n_solve).astype(f32)),
        "cholesky": (spd,),
        "batched_solve": (small, rng.standard_normal((batch, 3)).astype(f32)),
        "eigh": ((sym + sym.T).astype(f32),),
        "svd": (rng.standard_normal(svd_shape).astype(f32),),
        "rfft": (rng.standard_normal(n_rfft).astype(f32),),
        "fft": (fft_in.astype(np.complex64),),
    }


def _labels(size) -> dict:
    n_solve, n_chol, batch, n_eigh, (m, n), n_rfft, (b, k) = size
    return {
        "solve": f"solve {n_solve}x{n_solve} float32 (ms)",
        "cholesky": f"cholesky {n_chol}x{n_chol} float32 (ms)",
        "batched_solve": f"vmap(solve) of {batch} 3x3 systems (ms)",
        "eigh": f"eigh {n_eigh}x{n_eigh} float32 (ms)",
        "svd": f"svd {m}x{n} float32, reduced (ms)",
        "rfft": f"rfft of {n_rfft} float32 (ms)",
        "fft": f"fft along rows of {b}x{k} complex64 (ms)",
    }


def _workloads(m, jit, vmap) -> dict:
    """The workloads in the jnp-like namespace ``m``, jitted with ``jit``."""
    return {
        "solve": jit(m.linalg.solve),
        "cholesky": jit(m.linalg.cholesky),
        "batched_solve": jit(vmap(m.linalg.solve)),
        "eigh": jit(lambda x: tuple(m.linalg.eigh(x))),
        "svd": jit(lambda x: tuple(m.linalg.svd(x, full_matrices=False))),
        "rfft": jit(m.fft.rfft),
        "fft": jit(m.fft.fft),
    }


def _numpy_workloads() -> dict:
    import scipy.linalg as sl

    return {
        "solve": np.linalg.solve,
        "cholesky": lambda x: sl.cholesky(x, lower=True),
        "batched_solve": lambda a, b: np.linalg.solve(a, b[..., None])[..., 0],
        "eigh": np.linalg.eigh,
        "svd": lambda x: np.linalg.svd(x, full_matrices=False),
        "rfft": np.fft.rfft,
        "fft": np.fft.fft,
    }


def _libraries() -> dict:
    import invarax
    import invarax.numpy as jnp

    libs = {"invarax": (_workloads(jnp, invarax.jit, invarax.vmap), np.asarray)}
    try:
        import jax

        libs["jax"] = (_workloads(jax.numpy, jax.jit, jax.vmap),
                       lambda x: np.asarray(jax.block_until_ready(x)))
    except ImportError:
        pass
    libs["numpy"] = (_numpy_workloads(), np.asarray)
    return libs


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _check(key, results):
    """Factorisations agree up to signs: compare values (and |vectors| where unique)."""
    ref = results["numpy"]
    for name, got in results.items():
        for ours, theirs in zip(_leaves(got), _leaves(ref), strict=True):
            ours, theirs = np.asarray(ours), np.asarray(theirs)
            if key in ("eigh", "svd") and ours.ndim == 2:
                continue  # eigen/singular vectors are unique only up to sign
            scale = max(float(np.abs(theirs).max(initial=0)), 1e-30)
            np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=2e-3 * scale,
                                       err_msg=f"{name}'s {key}")


def measure(config: str = "quick") -> list:
    """``[(label, {library: ms}, invarax/JAX ratio)]`` for every workload."""
    size = SIZES[config]
    data, libs = _data(size), _libraries()
    rows = []
    for key, label in _labels(size).items():
        args = data[key]
        calls = {name: (lambda f=w[key], c=conv, a=args: [c(x) for x in _leaves(f(*a))])
                 for name, (w, conv) in libs.items()}
        _check(key, {name: call() for name, call in calls.items()})
        times = medians(calls, REPEATS[config], block=3 if config != "tiny" else 1,
                        pause=0.1 if config != "tiny" else 0)
        ms = {name: t * 1e3 for name, t in times.items()}
        ratio = ms["invarax"] / ms["jax"] if "jax" in ms else None
        rows.append((label, ms, ratio))
        print(f"  {label}: done", flush=True)
    return rows


def table(rows) -> str:
    names = list(rows[0][1])
    lines = ["| workload | " + " | ".join(names) + " | invarax / JAX |",
             "|---" * (len(names) + 2) + "|"]
    for label, ms, ratio in rows:
        cells = [f"{ms[n]:.3g}" for n in names]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {ratio:.2f} |"
                     if ratio is not None else f"| {label} | " + " | ".join(cells) + " | - |")
    return "\n".join(lines)


def _backward(residual, *scales) -> float:
    return float(np.abs(residual).max() / np.prod([np.abs(s).max() for s in scales]))


def accuracy(n: int = 256, x64: bool = False) -> str:
    """Backward errors and orthogonality (docs/numerics.md) of invarax and JAX in float32, or
    (``x64``, which switches ``jax_enable_x64`` on) of invarax and NumPy in float64."""
    import invarax
    import invarax.numpy as jnp

    mods = {"invarax": jnp}
    dtype = np.float64 if x64 else np.float32
    if x64:
        invarax.config.update("jax_enable_x64", True)
        mods["numpy"] = np
    else:
        try:
            import jax.numpy

            mods["jax"] = jax.numpy
        except ImportError:
            pass
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, 1)).astype(dtype)
    spd = (a @ a.T + n * np.eye(n)).astype(dtype)
    sym = (a + a.T).astype(dtype)
    g = rng.standard_normal((n, n // 2)).astype(dtype)
    f64 = lambda x: np.asarray(x, np.float64)  # noqa: E731
    lines = ["| library | solve | cholesky | qr (orth.) | eigh (orth.) | svd (orth.) |",
             "|---|---|---|---|---|---|"]
    for name, m in mods.items():
        x = f64(m.linalg.solve(a, b))
        L = f64(m.linalg.cholesky(spd))
        q, r = map(f64, m.linalg.qr(a))
        w, v = map(f64, m.linalg.eigh(sym))
        u, s, vh = map(f64, m.linalg.svd(g, full_matrices=False))
        eye = np.eye(n)
        cells = [
            _backward(f64(a) @ x - b, a, x), _backward(L @ L.T - spd, spd),
            f"{_backward(q @ r - a, a):.1e} ({np.abs(q.T @ q - eye).max():.1e})",
            f"{_backward(v * w @ v.T - sym, sym):.1e} ({np.abs(v.T @ v - eye).max():.1e})",
            f"{_backward((u * s) @ vh - g, g):.1e} "
            f"({np.abs(u.T @ u - np.eye(n // 2)).max():.1e})",
        ]
        cells = [c if isinstance(c, str) else f"{c:.1e}" for c in cells]
        lines.append(f"| {name} {np.dtype(dtype).name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repeats")
    size.add_argument("--tiny", action="store_true", help="tiny sizes: a check of the harness")
    parser.add_argument("--accuracy", action="store_true", help="backward errors instead")
    parser.add_argument("--x64", action="store_true",
                        help="with --accuracy: float64, against NumPy")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the process's CPU time (all threads), not wall-clock time")
    args = parser.parse_args(argv)
    if args.cpu_time:
        CLOCK["clock"] = time.process_time
    if args.accuracy:
        import invarax

        x64 = invarax.config.read("jax_enable_x64")
        try:
            print(accuracy(8 if args.tiny else 256, x64=args.x64))
        finally:
            invarax.config.update("jax_enable_x64", x64)
        return
    config = "tiny" if args.tiny else "quick" if args.quick else "full"
    start = os.getloadavg()[0]
    rows = measure(config)
    print(table(rows))
    clock = "process CPU time" if args.cpu_time else "wall-clock time"
    print(f"\n{clock}; load average (1 min) {start:.2f} at start, {os.getloadavg()[0]:.2f} at "
          f"end; INVARAX_NUM_THREADS={os.environ.get('INVARAX_NUM_THREADS', 'unset')}")


if __name__ == "__main__":
    main()

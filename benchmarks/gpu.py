"""``python -m benchmarks.gpu``: the GPU checks and timings in one short run (for a machine
with an NVIDIA GPU, CuPy and JAX; at most a few minutes on one H100).

1. runs ``tests/test_gpu_kernels.py``, ``tests/test_gpu_sort.py`` and
   ``tests/test_gpu_backend.py`` (the GPU's kernels against the CPU's, bit for bit; every
   covered operation, training steps and the batch-size program on the GPU against the
   CPU);
2. times, same run, median of ``--repeats`` calls after a warm-up (CUDA events):
   - float32 gemm 4096^3: invarax's kernel against cuBLAS float32 through CuPy with TF32
     off (``CUPY_TF32=0``), in TFLOP/s;
   - ``exp``, ``log``, ``tanh`` of 10^8 float32: invarax's kernels against JAX's jitted
     ``jnp.exp`` (and ``log``, ``tanh``) on the same GPU, in ms;
   - a 3x3 convolution, 64 channels, batch 32 of 32x32 float32 (the CPU benchmarks' conv):
     invarax's kernel against JAX's ``lax.conv`` (cuDNN) on the same GPU, in ms;
   - sorting 1000 rows of 1000 float32, and one row of 10^6, and ``cumlogsumexp`` along
     the rows of 1000 x 1000 float32: invarax's kernels against JAX's ``jnp.sort`` and
     ``lax.cumlogsumexp``, in ms;
   - the MLP 784-512-512-10 train step (batch 1024, Adam, jitted, the same program for
     both libraries) on invarax's GPU against JAX's, in ms;
3. prints one table (markdown), and the GPU's name.

Without CuPy or a GPU it says so and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys

import numpy as np

os.environ.setdefault("CUPY_TF32", "0")  # cuBLAS float32 without TF32: the fair peer


def _gpu():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception as e:  # no CuPy, no driver
        print(f"no GPU: {type(e).__name__}: {e}")
        return None
    print("no GPU: CuPy sees no CUDA device")
    return None


def _median_ms(cp, fn, repeats: int) -> float:
    fn()  # warm-up: compiles and loads the kernels
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return sorted(times)[len(times) // 2]


def _jax_ms(f, args, repeats: int):
    """The median time of JAX's jitted ``f(*args)`` on its first GPU, or None."""
    try:
        import jax
    except ImportError:
        return None
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        return None
    import time

    f = jax.jit(f)
    x = [jax.device_put(a, gpus[0]) for a in args]
    f(*x).block_until_ready()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f(*x).block_until_ready()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def _jnp(name):
    """JAX's ``jnp.<name>``, imported when called (``_jax_ms`` checks that JAX is there)."""
    return lambda x: getattr(importlib.import_module("jax.numpy"), name)(x)


def _jax_conv(x, w):
    from jax import lax

    return lax.conv_general_dilated(x, w, (1, 1), [(1, 1), (1, 1)],
                                    precision=lax.Precision.HIGHEST)


def _jax_cumlogsumexp(x):
    from jax import lax

    return lax.cumlogsumexp(x, axis=1)


def _mlp_step(lib):
    """A jitted Adam train step of a tanh MLP written with ``lib`` (invarax or jax)."""
    jnp = lib.numpy

    def loss(params, x, y):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        logits = x @ w + b
        logp = logits - lib.nn.logsumexp(logits, axis=1, keepdims=True)
        return -jnp.mean(jnp.sum(logp * y, axis=1))

    def step(params, m, v, x, y):
        grads = lib.grad(loss)(params, x, y)
        tree = lib.tree_util.tree_map
        m = tree(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = tree(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        params = tree(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v)
        return params, m, v

    return lib.jit(step)


def _mlp_row(rng, repeats: int):
    """The MLP train step's time on invarax's GPU and on JAX's (ms)."""
    import time

    import invarax

    sizes, batch = (784, 512, 512, 10), 1024
    params = [((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32),
               np.zeros(o, np.float32)) for i, o in zip(sizes[:-1], sizes[1:], strict=True)]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    times = {}
    libs = [("invarax", invarax)]
    try:
        libs.append(("jax", importlib.import_module("jax")))
    except ImportError:
        pass
    for name, lib in libs:
        step = _mlp_step(lib)
        put = lambda t, lib=lib: lib.tree_util.tree_map(  # noqa: E731
            lambda a: lib.device_put(a, lib.devices("gpu")[0]), t)
        state = put((params, [(0 * w, 0 * b) for w, b in params],
                     [(0 * w, 0 * b) for w, b in params]))
        data = put((x, y))
        lib.block_until_ready(step(*state, *data))
        samples = []
        for _ in range(repeats):
            t = time.perf_counter()
            state = step(*state, *data)
            lib.block_until_ready(state)
            samples.append((time.perf_counter() - t) * 1e3)
        times[name] = sorted(samples)[len(samples) // 2]
    ours, peer = times["invarax"], times.get("jax")
    return ("MLP 784-512-512-10 Adam step, batch 1024, jitted, ms (invarax / JAX)",
            f"{ours:.2f} / {'-' if peer is None else f'{peer:.2f}'}",
            "" if peer is None else f"{ours / peer:.2f}x JAX's time")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--no-tests", action="store_true", help="timings only")
    args = parser.parse_args(argv)
    cp = _gpu()
    if cp is None:
        return 2
    from invarax.kernels import cuda

    rows = []
    if not args.no_tests:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                               "-m", "gpu", "tests/test_gpu_kernels.py",
                               "tests/test_gpu_sort.py", "tests/test_gpu_backend.py"],
                              timeout=300)
        rows.append(("GPU vs CPU, bitwise (tests/test_gpu_kernels.py, _sort.py, _backend.py)",
                     "passed" if done.returncode == 0 else f"FAILED ({done.returncode})", ""))
    n = 4096
    rng = np.random.default_rng(0)
    a = cp.asarray(rng.standard_normal((1, n, n), np.float32))
    b = cp.asarray(rng.standard_normal((1, n, n), np.float32))
    flops = 2.0 * n**3
    ours = _median_ms(cp, lambda: cuda.matmul(a, b), args.repeats)
    peer = _median_ms(cp, lambda: cp.matmul(a[0], b[0]), args.repeats)
    rows.append(("float32 gemm 4096^3, TFLOP/s (invarax / cuBLAS, TF32 off)",
                 f"{flops / ours / 1e9:.1f} / {flops / peer / 1e9:.1f}", f"{peer / ours:.2f}x"))
    x_host = rng.uniform(0.1, 4.0, 10**8).astype(np.float32)
    x = cp.asarray(x_host)
    for name in ("exp", "log", "tanh"):
        ours = _median_ms(cp, lambda name=name: cuda.elementary(name, x), args.repeats)
        peer = _jax_ms(_jnp(name), (x_host,), args.repeats)
        rows.append((f"{name} of 10^8 float32, ms (invarax / JAX)",
                     f"{ours:.2f} / {'-' if peer is None else f'{peer:.2f}'}",
                     "" if peer is None else f"{ours / peer:.2f}x JAX's time"))
    x_conv = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
    w_conv = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    params = ((1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), 1, 1)
    xc, wc = cp.asarray(x_conv), cp.asarray(w_conv)
    ours = _median_ms(cp, lambda: cuda.conv(xc, wc, *params), args.repeats)
    peer = _jax_ms(_jax_conv, (x_conv, w_conv), args.repeats)
    rows.append(("conv 3x3, 64 channels, 32x64x32x32 float32, ms (invarax / JAX)",
                 f"{ours:.2f} / {'-' if peer is None else f'{peer:.2f}'}",
                 "" if peer is None else f"{ours / peer:.2f}x JAX's time"))
    from invarax.kernels import cuda_sort

    for label, shape, ours_fn, peer_fn in (
            ("sort 1000 rows of 1000 float32", (1000, 1000), cuda_sort.sort_rows, _jnp("sort")),
            ("sort one row of 10^6 float32", (10**6,), cuda_sort.sort_rows, _jnp("sort")),
            ("cumlogsumexp 1000 x 1000 float32 along rows", (1000, 1000),
             lambda x: cuda_sort.cumlogsumexp(x, 1), _jax_cumlogsumexp)):
        x_host = rng.standard_normal(shape).astype(np.float32)
        x = cp.asarray(x_host)
        ours = _median_ms(cp, lambda f=ours_fn, x=x: f(x), args.repeats)
        peer = _jax_ms(peer_fn, (x_host,), args.repeats)
        rows.append((f"{label}, ms (invarax / JAX)",
                     f"{ours:.2f} / {'-' if peer is None else f'{peer:.2f}'}",
                     "" if peer is None else f"{ours / peer:.2f}x JAX's time"))
    rows.append(_mlp_row(rng, args.repeats))
    print(f"GPU: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("| check | result | ratio |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0 if all("FAILED" not in r[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

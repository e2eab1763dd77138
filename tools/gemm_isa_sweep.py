"""The contraction and convolution kernels at every dispatch level, compared bit for bit.

    python tools/gemm_isa_sweep.py             # the exhaustive sweep (minutes)
    python tools/gemm_isa_sweep.py --quick     # a sample of it (seconds)
    python tools/gemm_isa_sweep.py --digest    # one SHA-256 per level of every result

Every case is computed at each level this CPU runs (``_native.isas()``: scalar, avx2,
avx512) in one process and must give the same bits at all of them; the sweep prints the
cases per family and exits 1 at the first difference. The cases: every M, N of 1..40
with K of 1..40 and 255, 256, 257, 511, 512, 513 (each microkernel's row and column
edges, and one, two and three K blocks), A and B row- or column-major; M past the cache
blocks' and the in-place path's edges and N past the column block's, in every layout
(strided views too); thread counts 1 and 2 on products large enough to be split;
batched products; kept packings (``gemm_pack``); and convolutions of several kernel
sizes, strides, dilations, paddings and groups. ``--digest`` hashes the same results
level by level, so that a build can be checked against another (e.g. before and after a
kernel change): the digests of all levels must be equal, and equal across the builds.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from invarax.kernels import _native  # noqa: E402
from invarax.kernels.convolution import conv  # noqa: E402

K_EDGES = [255, 256, 257, 511, 512, 513]
# (x shape, w shape, strides, padding, lhs dilation, rhs dilation, feature groups)
CONVS = [
    ((2, 3, 9, 11), (5, 3, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 1),
    ((2, 64, 12, 12), (64, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 1),
    ((3, 8, 17, 13), (40, 8, 5, 5), (2, 1), ((2, 2), (0, 3)), (1, 1), (1, 1), 1),
    ((2, 6, 15, 15), (12, 2, 3, 3), (1, 2), ((0, 0), (1, 1)), (1, 1), (2, 2), 3),
    ((1, 33, 20, 9), (33, 1, 1, 7), (1, 1), ((0, 0), (3, 3)), (1, 1), (1, 1), 33),
    ((2, 16, 7, 7), (24, 16, 2, 2), (1, 1), ((1, 1), (1, 1)), (2, 2), (1, 1), 1),
    ((2, 300, 13), (17, 300, 1), (1,), ((0, 0),), (1,), (1,), 1),  # K = 300, two blocks
    ((1, 4, 8, 8, 8), (7, 4, 3, 3, 3), (1, 1, 1), ((1, 1),) * 3, (1, 1, 1), (1, 1, 1), 1),
    ((4, 40, 30, 30), (33, 40, 1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1),
]


def data(shape, dtype, seed):
    """Values of varied magnitudes: each order of operations rounds differently."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)).astype(dtype)


def gemm(a, b, threads=1):
    """The kernel's (B, M, K) @ (B, K, N) (2-d operands get a batch axis of 1)."""
    a3, b3 = (a[None] if a.ndim == 2 else a), (b[None] if b.ndim == 2 else b)
    out = np.empty((a3.shape[0], a3.shape[1], b3.shape[2]), a.dtype)
    _native.gemm(a3, b3, out, threads)
    return out


def layouts(x):
    """A matrix as a row-major view, a column-major view, and a strided view."""
    return {"C": x, "F": np.asfortranarray(x), "S": np.repeat(x, 2, axis=1)[:, ::2]}


def gemm_cases(dtype, quick):
    """(family, thunk) of every product of the sweep."""
    sizes = range(1, 41, 7) if quick else range(1, 41)
    ks = ([1, 2, 7, 16, 33] if quick else list(range(1, 41))) + K_EDGES
    big_a, big_b = data((300, 513), dtype, 1), data((513, 1100), dtype, 2)
    views_a, views_b = layouts(big_a), layouts(big_b)
    for k in ks:  # row-major and column-major operands, every M, N of 1..40
        for la in "CF":
            for lb in "CF":
                for m in sizes:
                    for n in sizes:
                        yield "edges", lambda a=views_a[la][:m, :k], b=views_b[lb][:k, :n]: \
                            gemm(a, b)
    # more rows than read B in place (48) and than one block of A (144), more columns than
    # one block of B (1024), in every layout, strided views included
    rows = [41, 48, 49, 97, 143, 144, 145, 289] if not quick else [49, 145]
    cols = [*range(1, 41, 1 if not quick else 13), 63, 64, 65, 1025]
    for k in K_EDGES if not quick else [257]:
        for va in views_a.values():
            for vb in views_b.values():
                for m in rows:
                    for n in cols:
                        yield "large", lambda a=va[:m, :k], b=vb[:k, :n]: gemm(a, b)
    # products large enough for two threads (>= 2M multiply-adds each): rows split, columns
    # split, and both operands transposed
    for m, k, n in [(300, 513, 40), (37, 257, 1100), (500, 511, 33), (129, 512, 131)]:
        a, b = data((m, k), dtype, m), data((k, n), dtype, n)
        for threads in (1, 2):
            yield "threads", lambda a=a, b=b, t=threads: gemm(a, b, t)
            yield "threads", lambda a=b.T, b=a.T, t=threads: gemm(a, b, t)
    a, b = data((3, 50, 257), dtype, 3), data((3, 257, 70), dtype, 4)
    for threads in (1, 2):
        yield "batched", lambda t=threads: gemm(a, b, t)
    for m, n in [(13, 45), (24, 96), (100, 33)]:  # kept packings of B
        a, b = data((m, 300), dtype, 5), data((300, n), dtype, 6)
        yield "packed", lambda a=a, b=b: packed_gemm(a, b)


def packed_gemm(a, b):
    """a @ b through a kept packing of b (gemm_pack, then gemm_packed)."""
    out = np.empty((1, a.shape[0], b.shape[1]), a.dtype)
    packing = _native.gemm_pack(b[None], a.shape[0])
    if packing is None:
        return gemm(a, b)
    _native.gemm_packed(a[None], packing, out, 1)
    return out


def conv_cases(dtype):
    """(family, thunk) of every convolution of the sweep, at one and two threads."""
    for i, (xs, ws, strides, pads, ld, rd, fg) in enumerate(CONVS):
        x, w = data(xs, dtype, 10 + i), data(ws, dtype, 20 + i)
        yield "conv", lambda x=x, w=w, s=strides, p=pads, ld=ld, rd=rd, fg=fg: conv(
            x, w, s, p, ld, rd, fg, 1, x.dtype)
    x, w = data((8, 64, 16, 16), dtype, 30), data((64, 64, 3, 3), dtype, 31)
    for threads in ("1", "2"):
        def threaded(x=x, w=w, t=threads):
            with kernel_threads(t):
                return conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 1, 1, x.dtype)
        yield "conv", threaded


@contextmanager
def kernel_threads(count: str):
    """``$INVARAX_NUM_THREADS`` = count while the block runs (the kernels read it per call)."""
    saved = os.environ.get("INVARAX_NUM_THREADS")
    os.environ["INVARAX_NUM_THREADS"] = count
    try:
        yield
    finally:
        if saved is None:
            del os.environ["INVARAX_NUM_THREADS"]
        else:
            os.environ["INVARAX_NUM_THREADS"] = saved


def cases(quick):
    """(family, thunk) of every case, float32 then float64."""
    for dtype in (np.float32, np.float64):
        for family, thunk in gemm_cases(dtype, quick):
            yield f"{family} {np.dtype(dtype).name}", thunk
        for family, thunk in conv_cases(dtype):
            yield f"{family} {np.dtype(dtype).name}", thunk


def at_level(level, thunk):
    """thunk() computed with the kernels at dispatch level ``level``."""
    previous = _native.set_isa(level)
    try:
        return np.ascontiguousarray(thunk())
    finally:
        _native.set_isa(previous)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a sample of the cases")
    parser.add_argument("--digest", action="store_true", help="print one digest per level")
    args = parser.parse_args(argv)
    levels = _native.isas()
    start = time.perf_counter()
    counts: dict[str, int] = {}
    digests = {level: hashlib.sha256() for level in levels}
    for family, thunk in cases(args.quick):
        results = {level: at_level(level, thunk) for level in levels}
        first = results[levels[0]]
        for level, got in results.items():
            digests[level].update(got.tobytes())
            if not args.digest and got.tobytes() != first.tobytes():
                print(f"DIFFER: {family} case {counts.get(family, 0)}: {level} vs {levels[0]}")
                return 1
        counts[family] = counts.get(family, 0) + 1
    if args.digest:
        for level in levels:
            print(level, digests[level].hexdigest())
    else:
        for family, count in counts.items():
            print(f"{family:<18}{count:>8} cases, the same bits at {', '.join(levels)}")
    print(f"{sum(counts.values())} cases, {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

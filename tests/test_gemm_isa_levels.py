"""N6 for the contraction kernel: every dispatch level this CPU runs (scalar, AVX2, AVX-512)
gives the same bits for products cut anywhere by the microkernels' tiles (4 x 8 scalar,
6 x 16 / 6 x 8 AVX2, 12 x 32 / 12 x 16 AVX-512, the narrow and one-row kernels), by the K
blocks of 256, by the in-place and cache blocks, and split between threads.
``tools/gemm_isa_sweep.py`` runs the exhaustive version of these tests (every M, N, K of
1..40 and more); a level the CPU lacks is not in ``_native.isas()`` and is not run."""

import numpy as np
import pytest
from helpers import assert_bitwise

from invarax.kernels import _native

ROWS = [1, 2, 5, 6, 7, 11, 12, 13, 24, 25, 40]  # tiles of 4, 6 and 12 rows
COLS = [1, 7, 8, 9, 16, 17, 31, 32, 33, 40]  # narrow products, panels of 8, 16 and 32
DEPTHS = [1, 7, 40, 255, 256, 257, 511, 512, 513]  # one, two and three K blocks


def data(shape, dtype, seed):
    """Values of varied magnitudes: each order of operations rounds differently."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)).astype(dtype)


def gemm(a, b, threads=1):
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype)
    _native.gemm(a, b, out, threads)
    return out


def at_every_level(thunk):
    """thunk() at each dispatch level, lowest first."""
    results = []
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            results.append(thunk())
        finally:
            _native.set_isa(previous)
    return results


def assert_levels_agree(thunk):
    first, *others = at_every_level(thunk)
    for got in others:
        assert_bitwise(got, first)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["CC", "FF", "CF", "FC"])
def test_tile_and_block_edges(layout, dtype):
    """Every M x N of ROWS x COLS and K of DEPTHS, A and B row- or column-major: the
    rows of one product run through every level's full and ragged tiles at once."""
    big_a, big_b = data((40, 513), dtype, 1), data((513, 40), dtype, 2)
    a = big_a if layout[0] == "C" else np.asfortranarray(big_a)
    b = big_b if layout[1] == "C" else np.asfortranarray(big_b)

    def products():
        return [gemm(a[None, :m, :k], b[None, :k, :n]) for k in DEPTHS for m in ROWS
                for n in COLS]

    first, *others = at_every_level(products)
    for got in others:
        for g, f in zip(got, first, strict=True):
            assert_bitwise(g, f)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(145, 513, 70), (37, 257, 1100), (300, 511, 33)])
def test_large_and_threaded_products(m, k, n, dtype):
    """Past the cache blocks (144 rows, 1024 columns) and the in-place path (48 rows), one
    and two threads, a transposed A and B, a batch: the same bits at every level."""
    a, b = data((m, k), dtype, m), data((k, n), dtype, n)
    for threads in (1, 2):
        assert_levels_agree(lambda t=threads: gemm(a[None], b[None], t))
        assert_levels_agree(lambda t=threads: gemm(b.T[None], a.T[None], t))
    batch_a, batch_b = data((3, 50, k), dtype, 3), data((3, k, 40), dtype, 4)
    assert_levels_agree(lambda: gemm(batch_a, batch_b, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kept_packings_agree_across_levels(dtype):
    """A packing kept for a loop (gemm_pack) is laid out for its level's tiles; the product
    from it has the same bits at every level."""
    a, b = data((1, 30, 300), dtype, 5), data((1, 300, 45), dtype, 6)

    def packed():
        out = np.empty((1, 30, 45), dtype)
        _native.gemm_packed(a, _native.gemm_pack(b, 30), out, 1)
        return out

    results = at_every_level(packed)
    for got in results:
        assert_bitwise(got, results[0])
    assert_bitwise(results[0], gemm(a, b))


def _assert_in_place_gives(a, b, want):
    """``_native.gemm(a, b)`` into a fresh output, read in place, is ``want`` bitwise at
    every level on one and two threads."""

    def in_place(threads):
        out = np.empty(want.shape, want.dtype)
        _native.gemm(a, b, out, threads)
        return out

    for threads in (1, 2):
        for got in at_every_level(lambda t=threads: in_place(t)):
            assert_bitwise(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(37, 257, 40), (13, 64, 1), (1, 40, 7), (25, 300, 16)])
def test_batch_of_two_axes_read_in_place(m, k, n, dtype):
    """A batch on two axes that do not merge into one stride (attention's heads: the
    operands ``(batch, seq, heads, d)`` batched over ``(batch, heads)``), read in place as
    ``(B1, B2, M, K)``, gives the bits of the product of contiguous copies, at every level,
    on one and two threads (the matrix-vector, narrow and one-row kernels included)."""
    x, y = data((3, m, 4, k), dtype, 7), data((3, n, 4, k), dtype, 8)
    a, b = x.transpose(0, 2, 1, 3), y.transpose(0, 2, 3, 1)  # (3, 4, m, k), (3, 4, k, n)
    want = gemm(np.ascontiguousarray(a).reshape(12, m, k), np.ascontiguousarray(b).reshape(
        12, k, n)).reshape(3, 4, m, n)

    _assert_in_place_gives(a, b, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(37, 257, 40), (60, 300, 70), (20, 40, 9)])
def test_repeated_b_packed_once(m, k, n, dtype):
    """The row blocks of an A whose rows do not merge into one stride (a transposed
    ``(batch, seq, d)``), batched over a B repeated with stride 0 (packed once for all of
    them), give the bits of the product of the contiguous A, at every level, on one and two
    threads."""
    x, w = data((3, k, m), dtype, 9), data((k, n), dtype, 10)
    a = x.transpose(0, 2, 1)[None]  # (1, 3, m, k): rows (3, m) that do not merge
    b = np.broadcast_to(w, (1, 3, k, n))
    want = gemm(np.ascontiguousarray(a).reshape(1, 3 * m, k), w[None]).reshape(1, 3, m, n)

    _assert_in_place_gives(a, b, want)

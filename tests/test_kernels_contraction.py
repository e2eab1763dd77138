"""The contraction kernel's numerics contract, tested bitwise (never with a tolerance).

One contraction has one order of operations (docs/numerics.md, "Contractions"): the
bits of ``C[i, j]`` depend on row ``i`` of A, column ``j`` of B and ``K`` alone, so
every formulation (N4), every number of rows (N2), every layout, tiling, dispatch
level and thread count (N5) gives the same bits. A pure-Python reference of the
documented order pins the documentation to the code.
"""

import os
import subprocess
import sys
import threading
from fractions import Fraction

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import kernels, lax
from invarax.kernels import _native

DTYPES = [np.float32, np.float64]
PLAIN = (((1,), (0,)), ((), ()))  # dot_general dimension numbers of A @ B


def data(shape, dtype=np.float32, seed=0):
    """Standard normal values of varied magnitudes: each order of operations rounds differently."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)).astype(dtype)


def matmul(a, b):
    """The kernel's ``a @ b`` of two float arrays (2-d, or 3-d with a batch axis)."""
    dims = PLAIN if a.ndim == 2 else (((2,), (1,)), ((0,), (0,)))
    return kernels.dot_general(a, b, dims, a.dtype)


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request):
    """float32, and float64 with the x64 flag on (else invarax.numpy would narrow it)."""
    if request.param == np.float64:
        invarax.config.update("jax_enable_x64", True)
    return request.param


# --- the documented order, in Python -------------------------------------------------------


def round_to(value: Fraction, dtype):
    """``value`` rounded to the nearest ``dtype`` (ties to even), subnormals included."""
    info = np.finfo(dtype)
    if value == 0:
        return dtype(0)
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, info.minexp)
    ulp = Fraction(2) ** (exponent - info.nmant)
    units, rest = divmod(magnitude / ulp, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and units % 2):
        units += 1
    return dtype(float(units * ulp) * (1 if value > 0 else -1))


def fma(x, y, z):
    """``x * y + z`` rounded once in the dtype of ``z`` (IEEE fusedMultiplyAdd)."""
    dtype = type(z)
    exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
    if exact == 0:  # x*y == -z exactly: IEEE's sign of an exact zero sum
        return dtype(dtype(x) * dtype(y) + z)
    return round_to(exact, dtype)


def fma_float32(x, y, z):
    """``fma`` of float32 arrays, elementwise and fast: the float64 product is exact (24 + 24
    bits); the float64 sum, rounded to odd (TwoSum gives its error), then rounded to float32
    is the correctly rounded ``x * y + z`` (Boldo and Melquiond: round to odd with 53 >= 24 +
    2 bits, then to nearest). An exact zero gets IEEE's sign, as float64 gives it."""
    p, z = np.asarray(x, np.float64) * np.asarray(y, np.float64), np.asarray(z, np.float64)
    s = p + z
    z_part = s - p
    err = (p - (s - z_part)) + (z - z_part)
    odd = (s.view(np.uint64) & 1) == 1
    s = np.where((err == 0) | odd, s, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)))
    return s.astype(np.float32)


def fma_float64(x, y, z):
    """``fma`` of float64 scalars, fast: ``x * y + z`` exactly as a ratio of Python integers
    (powers of two below), whose true division CPython rounds correctly (to nearest even,
    subnormals included). An exact zero gets IEEE's sign, as in ``fma``."""
    (nx, dx), (ny, dy), (nz, dz) = (float(v).as_integer_ratio() for v in (x, y, z))
    d = max(dx * dy, dz)
    n = nx * ny * (d // (dx * dy)) + nz * (d // dz)
    if n == 0:
        return np.float64(np.float64(x) * y + z)
    return np.float64(n / d)


def reference_matmul(a, b, block=256):
    """docs/numerics.md: FMA chains over blocks of 256 terms, block sums added in order
    (float32 or float64: the fast fmas, checked against ``fma`` below)."""
    dtype = a.dtype.type
    (m, k), n = a.shape, b.shape[1]
    if dtype is np.float32:  # the same order, every (i, j) at once
        total = np.zeros((m, n), np.float32)
        for start in range(0, k, block):
            s = np.zeros((m, n), np.float32)
            for p in range(start, min(start + block, k)):
                s = fma_float32(a[:, p : p + 1], b[p : p + 1, :], s)
            total = s if start == 0 else total + s
        return total
    out = np.zeros((m, n), a.dtype)
    for i in range(m):
        for j in range(n):
            total = None
            for start in range(0, k, block):
                s = dtype(0)
                for p in range(start, min(start + block, k)):
                    s = fma_float64(a[i, p], b[p, j], s)
                total = s if total is None else dtype(total + s)
            out[i, j] = dtype(0) if total is None else total
    return out


def test_round_to_and_fma_are_exact():
    """The reference's rounding: ties to even, subnormals, and a single rounding in fma."""
    f32 = np.float32
    assert round_to(Fraction(1) + Fraction(1, 2**24), f32) == f32(1)  # tie: to even
    assert round_to(Fraction(1) + Fraction(3, 2**24), f32) == f32(1) + f32(2.0**-22)
    assert round_to(Fraction(1, 2**149), f32) == np.nextafter(f32(0), f32(1))
    assert round_to(Fraction(-3, 2**150), f32) == -2 * np.nextafter(f32(0), f32(1))
    x = f32(1) + f32(2.0**-12)  # x*x = 1 + 2**-11 + 2**-24: fused keeps the last term
    assert fma(x, x, f32(-1)) == f32(2.0**-11 + 2.0**-24) != x * x - f32(1)
    assert np.signbit(fma(f32(1), f32(-0.0), f32(-0.0)))


def test_fast_fmas_are_the_exact_one():
    """The reference's fmas, fma_float32 and fma_float64, are ``fma`` (exact rationals), on
    few-bit operands (ties and near-ties of the final rounding are common), cancellations,
    signed zeros, subnormal and large values."""
    rng = np.random.default_rng(5)
    n = 3000
    x = (rng.integers(1, 2**12, n) * 2.0 ** rng.integers(-30, 10, n)).astype(np.float32)
    y = (rng.integers(-(2**13), 2**13, n) * 2.0 ** rng.integers(-30, 10, n)).astype(np.float32)
    z = (rng.integers(-(2**24), 2**24, n) * 2.0 ** rng.integers(-80, 0, n)).astype(np.float32)
    z[::7] = -(x[::7].astype(np.float64) * y[::7]).astype(np.float32)  # exact or near cancel
    special = np.float32([0.0, -0.0, 1e-45, -1e-45, 1e-38, 3e38, -3e38, 1.0])
    x, y, z = (np.concatenate([v, np.repeat(special, 64), np.tile(special, 64)[::-1]])
               for v in (x, y, z))
    y[n: n + 512] = np.tile(special, 64)
    with np.errstate(over="ignore"):  # 3e38 * 3e38: inf in both
        want = np.array([fma(a, b, c) for a, b, c in zip(x, y, z, strict=True)], np.float32)
        assert_bitwise(fma_float32(x, y, z), want)
    n = 2000
    x = rng.integers(1, 2**26, n) * 2.0 ** rng.integers(-560, 480, n)
    y = rng.integers(-(2**27), 2**27, n) * 2.0 ** rng.integers(-560, 480, n)
    x[::2] *= 1 + rng.random(n // 2)  # full 53-bit significands: inexact products
    y[::2] *= 1 + rng.random(n // 2)
    z = rng.integers(-(2**53), 2**53, n) * 2.0 ** rng.integers(-1100, 300, n)
    z[::5] = -(x[::5] * y[::5])
    z[1::9], z[2::9], x[3::11] = 0.0, -0.0, -0.0
    x[4::13], y[4::13], z[4::13] = 2.0**-540, 2.0**-540, 2.0**-1074  # a subnormal result
    want = np.array([fma(a, b, c) for a, b, c in zip(x, y, z, strict=True)], np.float64)
    got = np.array([fma_float64(a, b, c) for a, b, c in zip(x, y, z, strict=True)], np.float64)
    assert_bitwise(got, want)


@pytest.mark.parametrize("k", [0, 1, 7, 255, 256, 257, 600])
def test_kernel_is_the_documented_order(k, dtype):
    """Every dispatch level computes the order of docs/numerics.md, bit for bit."""
    a, b = data((3, k), dtype, seed=k), data((k, 5), dtype, seed=k + 1)
    expected = reference_matmul(a, b)
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            assert_bitwise(matmul(a, b), expected)
            assert_bitwise(matmul(np.asfortranarray(a), np.asfortranarray(b)), expected)
        finally:
            _native.set_isa(previous)


@pytest.mark.parametrize("m, n", [(1, 70), (70, 1), (2, 17)])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_thin_products_are_the_documented_order(m, n, layout, dtype):
    """Vector-matrix, matrix-vector and two-row products (their own kernel paths)."""
    order = layout.lower()
    a = np.asarray(data((m, 300), dtype, seed=m), order=order)
    b = np.asarray(data((300, n), dtype, seed=n), order=order)
    expected = reference_matmul(a, b)
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            assert_bitwise(matmul(a, b), expected)
        finally:
            _native.set_isa(previous)


def test_wide_tiles_are_the_documented_order(dtype):
    """Products that fill every level's blocked tiles and cut them (13 rows: 12 + 1, 6 + 6 +
    1; 33 columns: 32 + 1, 16 + 16 + 1), over two K blocks, compute the documented order
    (checked at the first and last row and column of each tile)."""
    a, b = data((13, 257), dtype, seed=13), data((257, 33), dtype, seed=33)
    rows, cols = [0, 5, 6, 11, 12], [0, 7, 8, 15, 16, 31, 32]
    expected = reference_matmul(a[rows], b[:, cols])
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            assert_bitwise(matmul(a, b)[np.ix_(rows, cols)], expected)
            got = matmul(np.asfortranarray(a), np.asfortranarray(b))
            assert_bitwise(got[np.ix_(rows, cols)], expected)
        finally:
            _native.set_isa(previous)


NARROW = [(k, n) for k in (2, 10) for n in (1, 2, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17)]


@pytest.mark.parametrize("k, n", NARROW + [(257, 3), (257, 10), (300, 16)])  # two K blocks
def test_narrow_products_are_the_documented_order(n, k, dtype):
    """Products of at most two vectors of columns (the vmap MLP's 10 x 10 and 10 x 2
    weights) have their own kernel: A read in place, whole-vector stores whose spill into
    the next rows is overwritten; every row count (blocks of 6 and the rest), layout and
    dispatch level gives each element the documented order."""
    a, b = data((13, k), dtype, seed=n), data((k, n), dtype, seed=k)
    expected = reference_matmul(a, b)
    layouts = {
        "C": lambda t: t,
        "F": np.asfortranarray,
        "strided": lambda t: np.repeat(np.repeat(t, 2, 0), 3, 1)[::2, ::3],
    }
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            for la in layouts.values():
                for lb in layouts.values():
                    assert_bitwise(matmul(la(a), lb(b)), expected)
            for m in (1, 5, 6, 7, 12):
                assert_bitwise(matmul(a[:m], b), expected[:m])
        finally:
            _native.set_isa(previous)


def test_dispatch_levels_agree_on_the_workloads_shapes(dtype):
    """The shapes of an MLP's training step and of a vmapped small MLP, in every layout of
    its forward and backward products, give the same bits at every dispatch level."""
    shapes = [(256, 784, 64), (256, 64, 10), (10, 256, 64), (64, 256, 10), (1000, 2, 10)]
    for m, k, n in shapes:
        a, b = data((m, k), dtype, seed=m), data((k, n), dtype, seed=n)
        forms = [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b))]
        results = {}
        for isa in _native.isas():
            previous = _native.set_isa(isa)
            try:
                results[isa] = [matmul(x, y) for x, y in forms]
            finally:
                _native.set_isa(previous)
        first = results.pop(_native.isas()[0])
        for got in results.values():
            for g, f in zip(got, first, strict=True):
                assert_bitwise(g, f)
        for g in first[1:]:
            assert_bitwise(g, first[0])


def test_the_reference_tells_orders_apart():
    """The data make other orders round differently, so the test above has teeth."""
    a, b = data((3, 600), seed=600), data((600, 5), seed=601)
    assert not np.array_equal(reference_matmul(a, b), reference_matmul(a, b, block=600))
    assert not np.array_equal(reference_matmul(a, b), reference_matmul(a, b, block=128))


# --- N4: one contraction, one kernel ------------------------------------------------------


def test_formulations_agree_bitwise(dtype):
    """``x @ W.T + b`` equals every other way to write it, bit for bit (the issue's list)."""
    x, w, b = data((33, 300), dtype), data((200, 300), dtype, seed=1), data(200, dtype, seed=2)
    x, w, b = jnp.asarray(x), jnp.asarray(w), jnp.asarray(b)
    expected = np.asarray(x @ w.T + b)
    contract_k = (((1,), (1,)), ((), ()))
    formulations = {
        "jnp.dot": lambda: jnp.dot(x, w.T) + b,
        "einsum": lambda: jnp.einsum("nk,mk->nm", x, w) + b,
        "tensordot": lambda: jnp.tensordot(x, w, axes=([1], [1])) + b,
        "dot_general": lambda: lax.dot_general(x, w, contract_k) + b,
        "dot_general, operands swapped": lambda: lax.dot_general(w, x, contract_k).T + b,
        "(W @ x.T).T": lambda: (w @ x.T).T + b,
        "contiguous W.T": lambda: x @ jnp.asarray(np.ascontiguousarray(np.asarray(w).T)) + b,
        "jit": lambda: eager_and_jit(lambda p, q: p @ q.T, x, w) + b,
    }
    for name, f in formulations.items():
        got = np.asarray(f())
        assert (got.dtype, got.tobytes()) == (expected.dtype, expected.tobytes()), name
    for i in (0, 17, 32):
        assert_bitwise(x[i] @ w.T + b, expected[i])  # a vector-matrix product is a row
        assert_bitwise(w @ x[i] + b, expected[i])  # a matrix-vector product too


def test_layouts_and_operand_order_agree(dtype):
    """Every memory layout of A and B, and ``(B.T @ A.T).T``, gives the bits of ``A @ B``."""
    a, b = data((37, 300), dtype, seed=3), data((300, 45), dtype, seed=4)
    expected = matmul(a, b)
    layouts = {
        "C": lambda t: t,
        "F": np.asfortranarray,
        "strided": lambda t: np.repeat(np.repeat(t, 2, 0), 3, 1)[::2, ::3],
        "reversed": lambda t: np.ascontiguousarray(t[::-1, ::-1])[::-1, ::-1],
    }
    for la in layouts.values():
        for lb in layouts.values():
            assert_bitwise(matmul(la(a), lb(b)), expected)
            assert_bitwise(matmul(lb(b.T), la(a.T)).T, expected)


def test_batched_and_einsum_forms_agree(dtype):
    """A batched product is the stack of its matrix products, however it is written."""
    a, b = data((4, 9, 270), dtype, seed=5), data((4, 270, 11), dtype, seed=6)
    expected = np.stack([matmul(a[i], b[i]) for i in range(4)])
    assert_bitwise(jnp.matmul(a, b), expected)
    assert_bitwise(jnp.einsum("bik,bkj->bij", a, b), expected)
    assert_bitwise(jnp.einsum("bkj,bik->bji", b, a), np.swapaxes(expected, 1, 2))
    spec = (((2,), (1,)), ((0,), (0,)))  # (B.T @ A.T).T, batched
    swapped = lax.dot_general(np.swapaxes(b, 1, 2), np.swapaxes(a, 1, 2), spec)
    assert_bitwise(swapped, np.swapaxes(expected, 1, 2))


def test_attention_heads_layouts_agree(dtype):
    """Products batched over axes that do not merge into one stride (the heads of an
    attention: ``(batch, seq, heads, d)`` batched over ``(batch, heads)``), and of rows that
    do not (a transposed ``(batch, seq, d)``), which the kernel reads in place, give the bits
    of the stack of their matrix products, eager and jitted."""
    q, k = data((3, 20, 4, 70), dtype, seed=7), data((3, 30, 4, 70), dtype, seed=8)
    expected = np.stack([np.stack([matmul(q[b, :, h], k[b, :, h].T) for h in range(4)])
                         for b in range(3)])  # (batch, heads, 20, 30)
    scores = (((3,), (3,)), ((0, 2), (0, 2)))
    assert_bitwise(eager_and_jit(lambda q, k: lax.dot_general(q, k, scores), q, k), expected)
    mixed = (((2,), (3,)), ((0, 1), (0, 2)))  # one operand's batch merges, the other's not
    kt = np.ascontiguousarray(k.transpose(0, 2, 3, 1))  # (batch, heads, d, seq)
    swapped = eager_and_jit(lambda kt, q: lax.dot_general(kt, q, mixed), kt, q)
    assert_bitwise(swapped, np.swapaxes(expected, 2, 3))
    x = np.ascontiguousarray(data((3, 40, 70), dtype, seed=9).transpose(0, 2, 1)).transpose(
        0, 2, 1)  # (batch, seq, d) whose rows (batch, seq) do not merge into one stride
    w = data((70, 45), dtype, seed=10)
    want = matmul(np.ascontiguousarray(x).reshape(120, 70), w).reshape(3, 40, 45)
    assert_bitwise(eager_and_jit(jnp.matmul, x, w), want)


def test_other_dtypes_reduce_to_the_canonical_product():
    """complex: four real products; float16: computed in float32, rounded once."""
    ar, ai, br, bi = (data((6, 300), seed=s) for s in range(4))
    br, bi = br.T, bi.T
    z = matmul(ar + 1j * ai, br + 1j * bi)  # complex64
    assert z.dtype == np.complex64
    assert_bitwise(z.real, matmul(ar, br) - matmul(ai, bi))
    assert_bitwise(z.imag, matmul(ar, bi) + matmul(ai, br))
    assert_bitwise(matmul((br + 1j * bi).T, (ar + 1j * ai).T).T, z)
    h, g = data((5, 300), np.float16, seed=7), data((300, 4), np.float16, seed=8)
    assert_bitwise(
        matmul(h, g), matmul(h.astype(np.float32), g.astype(np.float32)).astype(np.float16)
    )


def test_integer_and_bool_products_are_exact(x64):
    rng = np.random.default_rng(9)
    a = rng.integers(-(2**40), 2**40, (7, 300))
    b = rng.integers(-(2**20), 2**20, (300, 5))
    exact = [[sum(int(p) * int(q) for p, q in zip(r, c, strict=True)) for c in b.T] for r in a]
    wrapped = [[(v + 2**63) % 2**64 - 2**63 for v in row] for row in exact]  # int64 wraps
    assert_bitwise(jnp.matmul(a, b), np.array(wrapped, np.int64))
    ba, bb = a % 3 == 0, b % 5 == 0
    assert_bitwise(jnp.matmul(ba, bb), (ba.astype(int) @ bb.astype(int)) > 0)


# --- N2: rows are invariant -----------------------------------------------------------------


@pytest.mark.parametrize("k, n", [(300, 200), (64, 33), (1000, 7)])
def test_row_invariance(k, n, dtype):
    """``(x[:m] @ W)[:j] == (x @ W)[:j]`` for every m, vector-matrix products included."""
    x, w = data((40, k), dtype, seed=10), data((k, n), dtype, seed=11)
    full = np.asarray(jnp.asarray(x) @ w)
    for m in range(1, 41):
        assert_bitwise(jnp.asarray(x[:m]) @ w, full[:m])
    assert_bitwise(jnp.asarray(x[0]) @ w, full[0])
    assert_bitwise(jnp.asarray(w.T) @ x[3], full[3])  # as a column: operand order swapped


def test_numpy_is_not_row_invariant_here():
    """Documents the bug the kernel fixes: OpenBLAS takes another path for few rows.

    Skips where the BLAS that NumPy links happens to be row-invariant for this shape.
    """
    x, w = data((64, 300), seed=12), data((300, 200), seed=13)
    full = np.matmul(x, w)
    differ = [m for m in range(1, 65) if not np.array_equal(np.matmul(x[:m], w), full[:m])]
    if not differ:
        pytest.skip("NumPy's BLAS is row-invariant for this shape on this machine")
    ours = matmul(x, w)
    for m in differ:
        assert_bitwise(matmul(x[:m], w), ours[:m])


def test_batched_row_invariance(dtype):
    """Rows and batch entries of a batched product do not depend on the batch or row count."""
    x, w = data((6, 20, 300), dtype, seed=14), data((6, 300, 50), dtype, seed=15)
    full = np.asarray(jnp.matmul(x, w))
    for m in (1, 2, 5, 16, 20):
        assert_bitwise(jnp.matmul(x[:, :m], w), full[:, :m])
    for nb in (1, 3):
        assert_bitwise(jnp.matmul(x[:nb], w[:nb]), full[:nb])
    shared = data((300, 50), dtype, seed=16)  # one weight matrix broadcast over the batch
    flat = np.asarray(jnp.asarray(x.reshape(-1, 300)) @ shared)
    assert_bitwise(jnp.matmul(x, shared), flat.reshape(6, 20, 50))


@pytest.mark.parametrize("m, n", [(1, 1), (5, 15), (7, 17), (13, 31), (150, 9), (3, 1030)])
def test_tile_edges(m, n, dtype):
    """Shapes that cut the register and cache tiles anywhere give each element its order."""
    a, b = data((m, 300), dtype, seed=m), data((300, n), dtype, seed=n)
    full = matmul(a, b)
    for i in sorted({0, m // 2, m - 1}):
        for j in sorted({0, n // 2, n - 1}):
            assert_bitwise(matmul(a[i : i + 1], b[:, j : j + 1]), full[i : i + 1, j : j + 1])


# --- N5: threads and runs -------------------------------------------------------------------


@pytest.mark.parametrize(
    "nb, m, k, n",
    [
        (3, 130, 300, 70),
        (1, 400, 600, 200),
        (1, 30, 300, 900),
        (1, 20000, 40, 10),
        (1, 9000, 300, 3),
    ],
)
def test_thread_counts_agree(nb, m, k, n, dtype):
    """Any thread count splits the outputs differently and gives the same bits: batches,
    row ranges sharing one packed B, column ranges, narrow products."""
    a, b = data((nb, m, k), dtype, seed=17), data((nb, k, n), dtype, seed=18)
    outs = []
    for threads in (1, 2, 3, 5, 8):
        out = np.empty((nb, m, n), dtype)
        _native.gemm(a, b, out, threads)
        outs.append(out)
    for out in outs[1:]:
        assert_bitwise(out, outs[0])
    assert_bitwise(outs[0][0, 7:9], matmul(a[0, 7:9], b[0]))


SCRIPT = """
import hashlib, numpy as np, invarax.numpy as jnp
rng = np.random.default_rng(0)
h = hashlib.sha256()
for shape in [(512, 300, 200), (1, 300, 200), (8, 512, 512), (3, 700, 129)]:
    m, k, n = shape
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((m, k)).astype(dtype)
        w = rng.standard_normal((k, n)).astype(dtype)
        h.update(np.asarray(jnp.asarray(x) @ w).tobytes())
        h.update(np.asarray(jnp.sum(jnp.asarray(x), axis=0)).tobytes())
        h.update(np.asarray(jnp.var(jnp.asarray(x), axis=1)).tobytes())
b = rng.standard_normal((4, 64, 300)).astype(np.float32)
h.update(np.asarray(jnp.matmul(b, np.swapaxes(b, 1, 2))).tobytes())
print(h.hexdigest())
"""


def test_threads_and_runs_agree_in_subprocesses():
    """N5: the same bits with INVARAX_NUM_THREADS=1, 2, 3 and unset, and from run to run."""
    digests = {}
    for threads in ("1", "2", "3", None, None):
        env = {k: v for k, v in os.environ.items() if k != "INVARAX_NUM_THREADS"}
        if threads:
            env["INVARAX_NUM_THREADS"] = threads
        run = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        digests.setdefault(run.stdout.strip(), []).append(threads)
    assert len(digests) == 1, digests


def test_concurrent_calls_give_the_same_bits():
    """Calls from several Python threads share the worker pool (or run alone)."""
    a, b = data((4, 64, 300), seed=23), data((4, 300, 80), seed=24)
    expected = np.empty((4, 64, 80), np.float32)
    _native.gemm(a, b, expected, 1)

    def product(out):
        _native.gemm(a, b, out, 3)

    outs = [np.empty_like(expected) for _ in range(6)]
    threads = [threading.Thread(target=product, args=(out,)) for out in outs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for out in outs:
        assert_bitwise(out, expected)


FORK_SCRIPT = """
import os, numpy as np
from invarax.kernels import _native
rng = np.random.default_rng(0)
a = rng.standard_normal((4, 64, 300)).astype(np.float32)
b = rng.standard_normal((4, 300, 80)).astype(np.float32)
parent, child = np.empty((4, 64, 80), np.float32), np.empty((4, 64, 80), np.float32)
_native.gemm(a, b, parent, 3)  # starts the worker pool
pid = os.fork()
if pid == 0:  # the child inherits no workers: it starts its own
    _native.gemm(a, b, child, 3)
    os._exit(0 if child.tobytes() == parent.tobytes() else 1)
print(os.waitpid(pid, 0)[1])
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_gets_the_same_bits():
    run = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", FORK_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert run.stdout.strip() == "0"


def test_thread_count_must_be_positive(monkeypatch):
    monkeypatch.setenv("INVARAX_NUM_THREADS", "0")
    with pytest.raises(ValueError, match="INVARAX_NUM_THREADS must be a positive integer"):
        matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))


# --- accuracy -------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [256, 1000, 4096])
def test_accuracy_against_float64(k):
    """Within the documented bound, and about as accurate as NumPy's BLAS (root mean square):
    within 20% of it, since OpenBLAS's kernel, and so its order, differs by CPU (our error's
    ratio to it: at most 1.1 on a Zen 4; 0.96-1.13 on a Zen 2's AVX2 kernel over 8 seeds and
    K = 64 ... 4096, the largest at K = 256)."""
    a, b = data((48, k), seed=19), data((k, 48), seed=20)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    u = 2.0**-24
    ours = np.abs(matmul(a, b) - exact) / scale
    theirs = np.abs(np.matmul(a, b) - exact) / scale
    assert np.all(ours <= (256 + k / 256 + 1) * u)
    assert np.sqrt(np.mean(ours**2)) <= 1.2 * np.sqrt(np.mean(theirs**2))


def test_nan_and_inf_propagate():
    a, b = data((4, 300), seed=21), data((300, 3), seed=22)
    a[1, 5], b[7, 2] = np.nan, np.inf
    out = matmul(a, b)
    assert np.isnan(out[1]).all() and np.isinf(out[[0, 2, 3], 2]).all()
    assert np.isfinite(out[[0, 2, 3]][:, :2]).all()

"""The reduction kernels' numerics contract, tested bitwise (never with a tolerance).

The bits of each output element depend on the reduction length and the reduced
values only: not on the layout, the position of the reduced axis, the other
dimensions or the number of rows (N2, N4), and not on jit (N3).
"""

import numpy as np
import pytest
from helpers import assert_bitwise, assert_bitwise_any_nan, eager_and_jit

import invarax.numpy as jnp
from invarax import kernels, lax
from invarax.kernels import _native
from invarax.scipy.special import logsumexp

# Lengths around NumPy's pairwise blocks (8 accumulators, blocks of 128, recursive split).
KS = [1, 2, 7, 8, 9, 16, 127, 128, 129, 255, 256, 257, 1000, 4099]

# name: f(x, axis) of an invarax array, reducing one axis.
REDUCTIONS = {
    "sum": lambda x, axis: jnp.sum(x, axis=axis),
    "prod": lambda x, axis: jnp.prod(x, axis=axis),
    "max": lambda x, axis: jnp.max(x, axis=axis),
    "min": lambda x, axis: jnp.min(x, axis=axis),
    "mean": lambda x, axis: jnp.mean(x, axis=axis),
    "var": lambda x, axis: jnp.var(x, axis=axis),
    "std": lambda x, axis: jnp.std(x, axis=axis, ddof=1),
    "argmax": lambda x, axis: jnp.argmax(x, axis=axis),
    "argmin": lambda x, axis: jnp.argmin(x, axis=axis),
    "logsumexp": lambda x, axis: logsumexp(x, axis=axis),
    "lax.reduce_sum": lambda x, axis: lax.reduce_sum(x, (axis,)),
}
SCANS = {
    "cumsum": lambda x, axis: jnp.cumsum(x, axis=axis),
    "cumprod": lambda x, axis: jnp.cumprod(x, axis=axis),
    "cummax": lambda x, axis: lax.cummax(x, axis),
    "cummin": lambda x, axis: lax.cummin(x, axis, reverse=True),
    "cumlogsumexp": lambda x, axis: lax.cumlogsumexp(x, axis),
    "cumsum_reverse": lambda x, axis: lax.cumsum(x, axis, reverse=True),
}


def data(shape, seed=0, dtype=np.float32):
    """Values near 1 of varied magnitudes: each order of operations rounds differently."""
    rng = np.random.default_rng(seed)
    x = 1 + 0.01 * rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 2, shape)
    return x.astype(dtype)


ALL = {**REDUCTIONS, **SCANS}


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("name", ALL)
def test_axis_position_and_layout(name, k):
    """Reducing axis 0 of x is bitwise reducing axis 1 of x.T, whatever the layout of x.T."""
    f = ALL[name]
    x = data((k, 5))
    ref = np.asarray(eager_and_jit(lambda a: f(a, 0), jnp.asarray(x)))
    reduced_last = lambda a: f(a, 1)
    views = {
        "F-ordered copy": jnp.asarray(x.T),  # np.array keeps the transposed (F) layout
        "C-contiguous copy": jnp.asarray(np.ascontiguousarray(x.T)),
        "lax.transpose view": lax.transpose(jnp.asarray(x), (1, 0)),
    }
    assert views["F-ordered copy"]._value.flags.f_contiguous  # (np.asarray gives C order)
    expected = ref.T if name in SCANS else ref
    for view in views.values():
        assert_bitwise(eager_and_jit(reduced_last, view), expected)


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_each_column_alone(name, k):
    """Reducing a whole (K, N) array over axis 0 gives column j the bits of column j alone."""
    f = REDUCTIONS[name]
    x = data((k, 4), seed=1)
    full = np.asarray(f(jnp.asarray(x), 0))
    for j in range(4):
        assert_bitwise(eager_and_jit(lambda a: f(a, 0), jnp.asarray(x[:, j].copy())), full[j])


@pytest.mark.parametrize("k", [1, 9, 129, 1000])
@pytest.mark.parametrize("name", ALL)
def test_row_invariance(name, k):
    """N2: ``f(x[:m])[:j] == f(x)[:j]`` for a reduction over the other axis."""
    f = ALL[name]
    x = data((33, k), seed=2)
    full = np.asarray(f(jnp.asarray(x), 1))
    for m in (1, 2, 5, 16, 32):
        part = eager_and_jit(lambda a: f(a, 1), jnp.asarray(x[:m]))
        assert_bitwise(np.asarray(part)[: m // 2 + 1], full[: m // 2 + 1])


@pytest.mark.parametrize("name", ALL)
def test_middle_axis(name):
    """Reducing the middle axis of (3, K, 4) is bitwise reducing the last axis of (3, 4, K)."""
    f = ALL[name]
    x = data((3, 300, 4), seed=3)
    ref = np.asarray(eager_and_jit(lambda a: f(a, 1), jnp.asarray(x)))
    moved = jnp.asarray(np.ascontiguousarray(np.moveaxis(x, 1, 2)))
    last = np.asarray(eager_and_jit(lambda a: f(a, 2), moved))
    assert_bitwise(np.moveaxis(last, 2, 1) if name in SCANS else last, ref)
    if name not in SCANS:
        assert_bitwise(f(jnp.asarray(x[2, :, 1].copy()), 0), ref[2, 1])


def test_strided_and_offset_inputs():
    """A sliced (strided, offset) operand gives the bits of a fresh copy of it."""
    x = data((40, 301), seed=4)
    for view in (x[3:, 1:], x[::3, ::2], x[5:9, 17:]):
        assert_bitwise(jnp.sum(jnp.asarray(view), axis=1), jnp.sum(jnp.asarray(view.copy()), 1))
    assert_bitwise(
        lax.reduce_sum(lax.slice(jnp.asarray(x), (1, 3), (40, 301), (2, 1)), (1,)),
        np.asarray(jnp.sum(jnp.asarray(x[1::2, 3:].copy()), axis=1)),
    )


def test_multi_axis_reduction_is_one_row_per_output():
    """Reducing axes (0, 2) of (A, B, C) sums each x[:, b, :] as one row of A*C elements."""
    x = data((6, 3, 50), seed=5)
    out = np.asarray(eager_and_jit(lambda a: jnp.sum(a, axis=(0, 2)), jnp.asarray(x)))
    for b in range(3):
        row = jnp.asarray(x[:, b, :].reshape(-1).copy())
        assert_bitwise(jnp.sum(row), out[b])
    assert_bitwise(jnp.sum(jnp.asarray(x), axis=(2, 0)), out)


def _pairwise(a):
    """NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h), in ``a``'s dtype."""
    f, n = a.dtype.type, len(a)
    if n < 8:
        res = f(0)
        for v in a:
            res = f(res + v)
        return res
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - n % 8:
            r = [f(r[j] + a[i + j]) for j in range(8)]
            i += 8
        res = f(f(f(r[0] + r[1]) + f(r[2] + r[3])) + f(f(r[4] + r[5]) + f(r[6] + r[7])))
        for v in a[i:]:
            res = f(res + v)
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return f(_pairwise(a[:n2]) + _pairwise(a[n2:]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_order_is_the_documented_pairwise_order(dtype):
    """The order written in the kernel's docstring: ``0 + pairwise(row)``."""
    rng = np.random.default_rng(6)
    for k in [*range(0, 140), 255, 256, 257, 1000, 4099]:
        x = (rng.standard_normal(k) * 10.0 ** rng.uniform(-4, 4, k)).astype(dtype)
        expected = dtype(dtype(0) + _pairwise(x))
        assert_bitwise(kernels.reduce_sum(x, (0,), np.dtype(dtype)), np.asarray(expected))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_order_holds_for_leading_axes(dtype):
    """Reducing axis 0 of (K, 70) computes many columns at once, each in the documented order."""
    rng = np.random.default_rng(8)
    for k in [0, 1, 7, 8, 9, 127, 128, 129, 256, 257, 1000, 4099]:
        x = (rng.standard_normal((k, 70)) * 10.0 ** rng.uniform(-4, 4, (k, 70))).astype(dtype)
        out = kernels.reduce_sum(x, (0,), np.dtype(dtype))
        for j in (0, 63, 64, 69):
            assert_bitwise(out[j], dtype(dtype(0) + _pairwise(x[:, j])))


def _first_extremum(row, is_max):
    """docs/numerics.md: the index of the first NaN, else of the first extremum (-0 == +0)."""
    nans = [i for i, v in enumerate(row) if v != v]
    if nans:
        return nans[0]
    best = max(row) if is_max else min(row)
    return next(i for i, v in enumerate(row) if v == best)


EXTREMA_ROWS = [
    [1.0, 3.0, 3.0, -2.0],
    [-0.0, 0.0, -1.0, 0.0],
    [0.0, -0.0, 1.0, -0.0],
    [-np.inf, -np.inf, -np.inf],
    [np.inf, 2.0, np.inf, -np.inf],
    [2.0, np.nan, 5.0, -np.nan],
    [-np.nan, 1.0, np.nan],
    [7.0],
    [float(i % 13) - 6.0 for i in range(300)] + [-0.0, 6.0, -6.0, 0.0],
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_extrema_follow_the_documented_rule(dtype):
    """argmax/argmin: first extremum, first NaN; max/min: that element, with its sign and payload.

    Each row is checked alone, and as a column of a wide array (computed many at once).
    """
    for row in EXTREMA_ROWS:
        x = np.array(row, dtype)
        wide = np.repeat(x[:, None], 70, axis=1)
        wide[:, 5:] = dtype(0.5)  # other columns: distinct values
        for kernel, arg, is_max in (
            (kernels.reduce_max, kernels.argmax, True),
            (kernels.reduce_min, kernels.argmin, False),
        ):
            i = _first_extremum(list(x), is_max)
            assert_bitwise(arg(x, 0, np.int32), np.asarray(i, np.int32))
            assert_bitwise(kernel(x, (0,), np.dtype(dtype)), x[i])
            assert_bitwise(arg(wide, 0, np.int32)[:5], np.full(5, i, np.int32))
            assert_bitwise(kernel(wide, (0,), np.dtype(dtype))[:5], np.repeat(x[i], 5))


# Layouts that take each path of the compiled kernel: rows; narrow, wide (two chunks) and
# strided columns; a single row; with NaNs, zeros of both signs and infinities mixed in.
DISPATCH_CASES = {
    "rows": lambda x: x,
    "narrow columns": lambda x: x[:, :43].T,
    "wide columns": lambda x: np.ascontiguousarray(np.tile(x, (1, 19))).T,
    "strided": lambda x: x[::2, ::3].T,
    "one row": lambda x: x[3],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dispatch_levels_agree(dtype):
    """Every dispatch level (scalar, AVX2, ...) of every reduction gives the same bits."""
    x = data((300, 260), seed=13, dtype=dtype)
    x[5, 7] = x[9, 7] = np.nan
    x[1, 3], x[2, 3], x[4, 11] = -0.0, 0.0, np.inf
    x[:, 20] = -0.0
    x[::7, 21] = 0.0
    ops = {
        "sum": lambda a: kernels.reduce_sum(a, (a.ndim - 1,), a.dtype),
        "prod": lambda a: kernels.reduce_prod(a, (a.ndim - 1,), a.dtype),
        "max": lambda a: kernels.reduce_max(a, (a.ndim - 1,), a.dtype),
        "min": lambda a: kernels.reduce_min(a, (a.ndim - 1,), a.dtype),
        "argmax": lambda a: kernels.argmax(a, a.ndim - 1, np.int64),
        "argmin": lambda a: kernels.argmin(a, a.ndim - 1, np.int64),
    }
    levels = _native.isas()
    for layout in DISPATCH_CASES.values():
        a = layout(x)
        results = []
        for isa in levels:
            previous = _native.set_isa(isa)
            try:
                results.append([op(a) for op in ops.values()])
            finally:
                _native.set_isa(previous)
        for other in results[1:]:
            for got, expected in zip(other, results[0], strict=True):
                assert_bitwise(got, expected)
        for j in (0, 3, 7, 20, 21, a.shape[0] - 1) if a.ndim == 2 else ():
            for op, full in zip(ops.values(), results[0], strict=True):
                assert_bitwise(op(np.ascontiguousarray(a[j])), full[j])


def test_float16_is_reduced_in_float32():
    """float16 rows are converted exactly, reduced in float32 and rounded once."""
    x = data((3, 1000), seed=9, dtype=np.float16)
    wide = x.astype(np.float32)
    for kernel in (kernels.reduce_sum, kernels.reduce_prod, kernels.reduce_max):
        expected = kernel(wide, (1,), np.dtype(np.float32)).astype(np.float16)
        assert_bitwise(kernel(x, (1,), np.dtype(np.float16)), expected)
    assert_bitwise(kernels.argmin(x, 1, np.int32), kernels.argmin(wide, 1, np.int32))


def test_complex_sum_adds_the_parts_separately():
    re, im = data((4, 300), seed=10), data((4, 300), seed=11)
    z = kernels.reduce_sum(re + 1j * im, (1,), np.dtype(np.complex64))
    assert_bitwise(z.real, kernels.reduce_sum(re, (1,), np.dtype(np.float32)))
    assert_bitwise(z.imag, kernels.reduce_sum(im, (1,), np.dtype(np.float32)))


@pytest.mark.parametrize("axis", [0, 1])
def test_sum_accuracy_against_float64(axis):
    """Within the pairwise bound, and no worse than NumPy (which sums leading axes in order)."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4096, 64) if axis == 0 else (64, 4096)).astype(np.float32)
    exact = x.astype(np.float64).sum(axis)
    scale = np.abs(x).astype(np.float64).sum(axis)
    ours = np.abs(kernels.reduce_sum(x, (axis,), np.dtype(np.float32)) - exact) / scale
    theirs = np.abs(np.add.reduce(x, axis=axis) - exact) / scale
    u = 2.0**-24
    assert np.all(ours <= (16 + 3 + np.log2(4096 / 128) + 1) * u)
    assert ours.max() <= theirs.max()


def test_prod_and_scans_are_sequential():
    """Products and scans fold left to right: ``((x0 * x1) * x2) ...``."""
    x = data((1000,), seed=7)
    acc, running = x[0], [x[0]]
    for v in x[1:]:
        acc = np.float32(acc * v)
        running.append(acc)
    assert_bitwise(kernels.reduce_prod(x, (0,), np.dtype(np.float32)), np.asarray(acc))
    assert_bitwise(kernels.cumulative("prod", x, 0, reverse=False), np.array(running))


def _accumulate(kind, x, axis, reverse):
    """NumPy's ufunc.accumulate in x's dtype, from the end if ``reverse``."""
    op = {"sum": np.add, "prod": np.multiply}[kind]
    flip = (slice(None),) * axis + (slice(None, None, -1),)
    with np.errstate(all="ignore"):
        out = op.accumulate(x[flip] if reverse else x, axis=axis, dtype=x.dtype)
    return np.ascontiguousarray(out[flip] if reverse else out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (1000,), (4, 0, 3), (129, 3), (2, 3, 4, 5)])
def test_compiled_scans_are_numpy_accumulate(shape, dtype):
    """The compiled cumulative sums and products give NumPy's accumulate, step for step, along
    every axis, both directions, for C-ordered, transposed and strided operands, with
    infinities, NaN and signed zeros among the terms (a NaN's sign and payload are free)."""
    x = data(shape, seed=3, dtype=dtype)
    if x.size >= 6:
        x.flat[[1, 3, 5]] = [np.inf, -0.0, np.nan]
    for view in (x, x.T, x[..., ::2]):
        for axis in range(view.ndim):
            for reverse in (False, True):
                for kind in ("sum", "prod"):
                    ours = kernels.cumulative(kind, view, axis, reverse)
                    assert ours.flags.c_contiguous
                    assert_bitwise_any_nan(ours, _accumulate(kind, view, axis, reverse))


def test_sum_casts_before_reducing():
    """A bool sum is an int32 count; narrow ints are widened before the sum, never wrapped."""
    x = np.ones((3, 300), np.int8)
    assert_bitwise(kernels.reduce_sum(x, (1,), np.dtype(np.int32)), np.full(3, 300, np.int32))
    b = np.arange(600).reshape(2, 300) % 3 == 0
    assert_bitwise(kernels.reduce_sum(b, (1,), np.dtype(np.int32)), np.array([100, 100], np.int32))


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "and", "or"])
def test_empty_reductions_give_the_identity(op):
    kernel = getattr(kernels, f"reduce_{op}")
    for dtype in (np.int8, np.uint8, np.int32, np.float32, np.bool_):
        if op in ("sum", "prod") and dtype == np.bool_:
            continue
        if op in ("and", "or") and dtype == np.float32:
            continue
        out = kernel(np.zeros((2, 0, 3), dtype), (1,), np.dtype(dtype))
        assert_bitwise(out, np.full((2, 3), kernels.reductions.identity(op, dtype)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_one_term_rows_are_the_documented_order(op, dtype):
    """A row of one element reduces to ``+0 + x`` (sum) or ``x`` (prod, max, min): -0, NaN
    payloads and infinities as the compiled loop gives them, for any layout."""
    from invarax.kernels import reductions as kr

    values = np.array([-0.0, 0.0, 1.5, -np.inf, np.inf, np.nan, -np.nan, 3e-45], dtype)
    x = np.stack([values, values[::-1]])  # reduce axis 0 of a (1, n) slice, and axis 1
    kernel = getattr(kr, f"reduce_{op}")
    want = {"sum": lambda v: v + dtype(0), "prod": np.copy, "max": np.copy,
            "min": np.copy}[op]
    for got, ref in [(kernel(x[:1], (0,), dtype), x[0]),
                     (kernel(x[:, :1].T.copy(), (0,), dtype), x[:, 0]),
                     (kernel(x[:, 2:3], (1,), dtype), x[:, 2])]:
        assert got.tobytes() == want(ref).tobytes()
    if dtype != np.float16:  # and the compiled loop itself agrees
        code = {"sum": kr._SUM, "prod": kr._PROD, "max": kr._MAX, "min": kr._MIN}[op]
        compiled = kr._native_rows(code, np.ascontiguousarray(values[:, None]), dtype)
        assert compiled.tobytes() == kernel(values[:, None], (1,), dtype).tobytes()


@pytest.mark.parametrize("axis", [0, 1])
def test_threads_split_the_rows_without_changing_a_bit(axis, monkeypatch):
    """Large reductions split their rows (outputs) between threads: every count, at every
    layout (a leading-axis reduction reads its rows side by side), gives the same bits."""
    from invarax.kernels import reductions as module

    rng = np.random.default_rng(9)
    x = (rng.standard_normal((301, 257)) * 10.0 ** rng.uniform(-4, 4, (301, 257))).astype(
        np.float32)
    x[5, 7] = np.nan
    ops = {"sum": kernels.reduce_sum, "max": kernels.reduce_max, "min": kernels.reduce_min,
           "prod": kernels.reduce_prod}
    monkeypatch.setenv("INVARAX_NUM_THREADS", "1")
    one = {name: f(x, (axis,), np.dtype(np.float32)) for name, f in ops.items()}
    argmax = kernels.argmax(x, axis, np.int64)
    monkeypatch.setattr(module, "PER_THREAD", 1000)
    for threads in ("2", "3", "7"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        for name, f in ops.items():
            assert_bitwise(f(x, (axis,), np.dtype(np.float32)), one[name])
        assert_bitwise(kernels.argmax(x, axis, np.int64), argmax)


def test_threaded_reductions_inside_threaded_fusion_groups(monkeypatch):
    """A row group's chunks run on threads and reduce their rows by the kernel that splits
    rows between threads (the inner split runs on the chunk's thread): eager's bits."""
    import invarax
    from invarax.compiler import fusion
    from invarax.kernels import reductions as module

    monkeypatch.setattr(module, "PER_THREAD", 64)
    monkeypatch.setenv("INVARAX_NUM_THREADS", "2")
    x = np.random.default_rng(10).standard_normal((256, 512)).astype(np.float32)

    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
        return e / jnp.sum(e, axis=1, keepdims=True)

    invarax.config.update("invarax_native_fusion", False)  # the Python path's chunks
    try:
        with fusion._settings(min_size=0, min_work=0, min_row_size=0, threads=2,
                              min_per_thread=1, chunk=2 * 512):
            assert_bitwise(invarax.jit(softmax)(x), softmax(jnp.asarray(x)))
    finally:
        invarax.config.update("invarax_native_fusion", True)

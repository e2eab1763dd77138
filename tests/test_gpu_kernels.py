"""The GPU's canonical kernels give the CPU's bits.

With a GPU (CuPy and a CUDA device) the kernels run there: ``python -m pytest -m gpu``, or
``python -m benchmarks.gpu``. Without one, the same tests run the launch code of
``invarax.kernels.cuda`` against ``fake_cupy`` (host memory, each kernel's host twin from
the same per-output functions; the PTX is still compiled by NVRTC), so CI checks
everything but the device's execution of the PTX.

Shapes cross every boundary of the documented orders (the pairwise sum's 8 and 128, the
contraction's blocks of 256, the kernels' 64-output tiles) and operands are read through
strided views, in float32 and float64.
"""

import numpy as np
import pytest
from helpers import assert_bitwise, assert_bitwise_any_nan

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import cuda, nvrtc


def _gpu():
    try:
        import cupy
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # no CuPy, no driver, or no device
        return None


cp = _gpu()
ON_GPU = cp is not None
if not ON_GPU and nvrtc.available():
    import fake_cupy as cp

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(cp is None, reason="no GPU and no NVRTC to build the kernels")]


@pytest.fixture(autouse=True)
def _device(monkeypatch):
    if not ON_GPU:
        cp.install(monkeypatch, gpu=False)
    cuda._module.cache_clear()
    with invarax.default_device(invarax.devices("cpu")[0]):  # the references: the CPU's
        yield
    cuda._module.cache_clear()


LENGTHS = [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 257, 513, 1000, 4097]
DTYPES = [np.float32, np.float64]


def spread(rng, shape, dtype):
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4, shape)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_row_reductions_are_the_cpus(dtype, x64):
    rng = np.random.default_rng(0)
    for k in LENGTHS:
        x = spread(rng, (5, k), dtype)
        x[1, : k // 2] = -0.0
        if k > 3:
            x[2, 3] = np.nan
        on_gpu = cp.asarray(x)
        for sl in [(slice(None), slice(None)), (slice(None), slice(None, None, 2)),
                   (slice(None, None, -1), slice(None))]:  # strided rows and columns
            view = x[sl]
            for op in ("sum", "prod", "max", "min", "argmax", "argmin"):
                got = cuda.reduce_rows(op, on_gpu[sl]).get() if not (
                    op.startswith("arg") and k == 0) else None
                if k == 0 and op != "sum" and op != "prod":  # lax's identities
                    if op in ("max", "min"):
                        reduce = lax.reduce_max if op == "max" else lax.reduce_min
                        assert_bitwise(got, np.asarray(reduce(view, (1,))))
                    continue
                want = np.asarray(getattr(jnp, op)(view, axis=1))
                if op.startswith("arg"):
                    np.testing.assert_array_equal(got, want)
                else:
                    assert_bitwise_any_nan(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (1, 3, 0, 2), (2, 67, 300, 45),
                                   (1, 130, 513, 129), (3, 64, 256, 64), (1, 1, 4097, 1)])
def test_contractions_are_the_cpus(shape, dtype, x64):
    batch, m, k, n = shape
    rng = np.random.default_rng(1)
    a, b = spread(rng, (batch, m, k), dtype), spread(rng, (batch, k, n), dtype)
    want = np.asarray(jnp.matmul(a, b))
    assert_bitwise(cuda.matmul(cp.asarray(a), cp.asarray(b)).get(), want)
    # the same product from transposed storage: strided reads, the same bits
    at = cp.asarray(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(0, 2, 1)
    bt = cp.asarray(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(0, 2, 1)
    assert_bitwise(cuda.matmul(at, bt).get(), want)


#: Every how many float32 bit patterns the elementary functions are checked: densely on a GPU
#: (its execution of the PTX is what is tested); on the host stand-in, whose kernels are
#: test_gpu_sources.py's element functions (checked there at every 1021st), the launch code.
STEP = 1021 if ON_GPU else 16381
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 2.0, -7.5, 1e30]


def elementary_inputs(dtype):
    """Every ``STEP``-th float32 bit pattern (subnormals, infinities, NaNs), or float64 values
    of magnitudes 2^-60 to 2^60, with the special values."""
    if dtype == np.float32:
        x = np.arange(0, 2**32, STEP, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        rng = np.random.default_rng(3)
        n = 400_000 if ON_GPU else 20_000
        x = rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)
        x = np.concatenate([x, [1e300, 5e-324]])
    return np.concatenate([x, np.array(SPECIALS, dtype)])


def cpu_function(name):
    """invarax's op of the elementary function ``name`` (lax's, or jnp's log2 and log10)."""
    return getattr(lax, name, None) or getattr(jnp, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementary_functions_are_the_cpus(dtype, x64):
    x = elementary_inputs(dtype)
    on_gpu = cp.asarray(x)
    for name in cuda.ELEMENTARY:
        got = cuda.elementary(name, on_gpu).get()
        with np.errstate(all="ignore"):
            want = np.asarray(cpu_function(name)(x))
        assert_bitwise_any_nan(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_operand_functions_are_the_cpus(dtype, x64):
    x = elementary_inputs(dtype)
    y = np.random.default_rng(9).permutation(x)
    specials = np.array(SPECIALS, dtype)
    gx, gy = (g.ravel() for g in np.meshgrid(specials, specials))
    x, y = np.concatenate([x, gx]), np.concatenate([y, gy])
    for name in cuda.ELEMENTARY2:
        # strided operands: the launch makes them contiguous
        got = cuda.elementary2(name, cp.asarray(np.repeat(x, 2))[::2], cp.asarray(y)).get()
        with np.errstate(all="ignore"):
            want = np.asarray(getattr(lax, name)(x, y))
        assert_bitwise_any_nan(got, want)


def test_bad_operands_are_named():
    with pytest.raises(ValueError, match=r"\(B, M, K\) by \(B, K, N\).*\(1, 2, 3\)"):
        cuda.matmul(cp.ones((1, 2, 3), np.float32), cp.ones((1, 2, 3), np.float32))
    with pytest.raises(TypeError, match="float32 and float64, got int32"):
        cuda.reduce_rows("sum", cp.ones((2, 3), np.int32))
    with pytest.raises(ValueError, match="not 'erfcx'"):
        cuda.elementary("erfcx", cp.ones(3, np.float32))
    with pytest.raises(ValueError, match="not 'hypot'"):
        cuda.elementary2("hypot", cp.ones(3, np.float32), cp.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"one shape, got \(3,\) and \(1,\); broadcast"):
        cuda.elementary2("pow", cp.ones(3, np.float32), cp.ones(1, np.float32))
    with pytest.raises(TypeError, match="one dtype, got float32 and float64"):
        cuda.elementary2("atan2", cp.ones(3, np.float32), cp.ones(3, np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_convolutions_are_the_cpus(dtype, x64):
    from test_gpu_sources import CONVS

    from invarax.kernels.convolution import conv

    rng = np.random.default_rng(4)
    for lhs_shape, rhs_shape, *params in CONVS:
        x, w = spread(rng, lhs_shape, dtype), spread(rng, rhs_shape, dtype)
        want = conv(x, w, *params, dtype)
        assert_bitwise(cuda.conv(cp.asarray(x), cp.asarray(w), *params).get(), want)


# (shape, window, strides, padding, base dilation, window dilation): pooling, dilations,
# negative padding, windows of 3 to 400 elements (each branch of the pairwise sum).
WINDOWS = [((2, 3, 7, 8), (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0), (0, 0), (1, 1), (1, 1)],
            (1, 1, 1, 1), (1, 1, 1, 1)),
           ((2, 2, 5, 6), (1, 2, 2, 3), (1, 1, 1, 2), [(0, 0), (0, 1), (2, -1), (1, 0)],
            (1, 1, 2, 1), (1, 1, 1, 2)),
           ((1, 2, 20, 20), (1, 1, 20, 20), (1, 1, 1, 1), [(0, 0)] * 4, (1,) * 4, (1,) * 4),
           ((30,), (9,), (2,), [(4, 4)], (1,), (1,))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_window_reductions_are_the_cpus(dtype):
    from invarax.kernels.windows import window_reduce

    rng = np.random.default_rng(5)
    for shape, *params in WINDOWS:
        x = spread(rng, shape, dtype)
        x.reshape(-1)[[1, 7]] = [np.nan, -0.0]
        for op in ("sum", "max", "min"):
            want = window_reduce(op, x, *params)
            got = cuda.window_reduce(op, cp.asarray(x), *params).get()
            assert_bitwise_any_nan(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative_ops_are_the_cpus(dtype):
    from invarax.kernels.reductions import cumulative

    rng = np.random.default_rng(6)
    x = spread(rng, (4, 37, 5), dtype)
    x[1, 3, 2], x[2, 5, 0], x[0, 1, 1] = np.nan, -0.0, 0.0
    on_gpu = cp.asarray(x)
    for kind in ("sum", "prod", "max", "min"):
        for axis in range(3):
            for reverse in (False, True):
                want = cumulative(kind, x, axis, reverse)
                got = cuda.cumulative(kind, on_gpu, axis, reverse).get()
                assert_bitwise_any_nan(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_is_the_cpus(dtype):
    from invarax.kernels.scatter import scatter_rows

    rng = np.random.default_rng(7)
    target = spread(rng, (6, 3, 4), dtype)
    rows = rng.integers(0, 6, 40)  # every row receives several updates
    updates = spread(rng, (40, 3, 4), dtype)
    updates[5, 1, 2], updates[9, 0, 0] = np.nan, -0.0
    for combine in ("set", "add", "mul", "min", "max"):
        want = target.copy()
        scatter_rows(want, rows, updates, combine)
        got = cp.asarray(target)
        cuda.scatter_rows(got, cp.asarray(rows), cp.asarray(updates), combine)
        got = got.get()
        assert_bitwise_any_nan(got, want)

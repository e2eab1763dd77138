"""The GPU kernels' sources, checked without a GPU.

- ``csrc/device/order.h``, the per-output order the GPU kernels compute, compiled for the
  host: bit for bit the CPU kernels' sums, products, extrema and contractions, over lengths
  around every boundary of the documented orders (8, 128, the 256-term blocks).
- ``csrc/elementary_scalar.h``'s and ``csrc/elementary_scalar_more.h``'s per-element
  functions, which the GPU's elementary kernels call, compiled for the host: bit for bit the
  CPU's vectorised loops, for every elementary function of one and of two operands.
- Every device source compiles to PTX with NVRTC (skipped when NVRTC is not installed),
  and the PTX holds no approximate or flushing instruction, no float add or multiply that
  ptxas could contract, no tensor-core product, no atomic; FMAs only where the source
  writes them.
"""

import ctypes
import re

import numpy as np
import pytest
from helpers import assert_bitwise, assert_bitwise_any_nan
from test_elementary import bits

import invarax.numpy as jnp
from invarax.compiler.native_build import load
from invarax.kernels import cuda, elementary, nvrtc

OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "argmax": 4, "argmin": 5, "dot": 6}

# One C entry over order.h's functions, so the test calls them through ctypes.
WRAPPER = r"""
int order_run(int op, int f64, const void *a, int64_t n, int64_t s, const void *b,
              int64_t sb, void *out) {
#define RUN(T, SFX)                                                                     \
    {                                                                                   \
        const T *x = a, *y = b;                                                         \
        switch (op) {                                                                   \
        case 0: *(T *)out = ord_sum_##SFX(x, n, s); break;                              \
        case 1: *(T *)out = ord_prod_##SFX(x, n, s); break;                             \
        case 2: *(T *)out = x[ord_extremum_##SFX(x, n, s, 1) * s]; break;               \
        case 3: *(T *)out = x[ord_extremum_##SFX(x, n, s, 0) * s]; break;               \
        case 4: *(int64_t *)out = ord_extremum_##SFX(x, n, s, 1); break;                \
        case 5: *(int64_t *)out = ord_extremum_##SFX(x, n, s, 0); break;                \
        case 6: *(T *)out = ord_dot_##SFX(x, s, y, sb, n); break;                       \
        default: return -1;                                                             \
        }                                                                               \
    }
    if (f64) RUN(double, f64) else RUN(float, f32)
    return 0;
}
void conv_run(int f64, const void *x, const void *w, void *y, const int64_t *d, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (f64) ((double *)y)[i] = ord_conv_f64(x, w, d, i);
        else ((float *)y)[i] = ord_conv_f32(x, w, d, i);
    }
}
"""


@pytest.fixture(scope="module")
def order_run():
    source = (nvrtc.DEVICE / "order.h").read_text() + WRAPPER
    fn = load(source, "order_run")
    if fn is None:
        pytest.skip("no C compiler runs here")
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
                   ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
    fn.conv_run = load(source, "conv_run")
    fn.conv_run.restype = None
    fn.conv_run.argtypes = [ctypes.c_int, *[ctypes.c_void_p] * 4, ctypes.c_int64]
    return fn


# (lhs shape, rhs shape, strides, padding, lhs dilation, rhs dilation, G, B): 1-3 spatial
# axes, K across the 256-term blocks, negative padding, both dilations, both group counts.
CONVS = [((2, 3, 9), (4, 3, 3), (1,), [(1, 1)], (1,), (1,), 1, 1),
         ((1, 30, 7, 6), (5, 30, 3, 3), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), 1, 1),
         ((2, 4, 8, 9), (6, 2, 3, 2), (2, 1), [(2, -1), (0, 3)], (1, 2), (2, 1), 2, 1),
         ((4, 3, 6, 5), (6, 3, 2, 2), (1, 2), [(0, 0), (1, 0)], (2, 1), (1, 2), 1, 2),
         ((1, 2, 4, 3, 5), (3, 2, 2, 3, 2), (1, 2, 1), [(1, 0), (0, 1), (1, 1)], (1, 1, 2),
          (1, 1, 1), 1, 1),
         ((1, 60, 5), (2, 60, 5), (1,), [(2, 2)], (1,), (1,), 1, 1)]  # K = 300


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolutions_are_the_cpu_kernel(order_run, dtype):
    from invarax.kernels.convolution import conv

    conv_run = order_run.conv_run
    rng = np.random.default_rng(4)
    for lhs_shape, rhs_shape, *params in CONVS:
        x, w = spread(rng, lhs_shape, dtype), spread(rng, rhs_shape, dtype)
        w.reshape(-1)[3] = np.inf  # an infinite weight: a padding zero times it is a NaN
        want = conv(x, w, *params, dtype)
        desc, shape = cuda.conv_desc(lhs_shape, rhs_shape, *params)
        assert shape == want.shape
        got = np.empty(shape, dtype)
        conv_run(dtype == np.float64, x.ctypes.data, w.ctypes.data, got.ctypes.data,
                 desc.ctypes.data, got.size)
        assert_bitwise_any_nan(got, want)


def run(order_run, op, x, stride=1, y=None, y_stride=1):
    """order.h's result of ``op`` on the elements ``x[::stride]`` (and ``y[::y_stride]``)."""
    n = len(range(0, len(x), stride))
    out = np.zeros((), np.int64 if op.startswith("arg") else x.dtype)  # jnp's with x64
    y = x if y is None else y
    assert order_run(OPS[op], x.dtype == np.float64, x.ctypes.data, n, stride, y.ctypes.data,
                     y_stride, out.ctypes.data) == 0
    return out


def spread(rng, n, dtype):
    """Values of wide range and both signs: their sum depends on the order."""
    return (rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)).astype(dtype)


LENGTHS = [0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 300, 511, 512, 513,
           1000, 4097]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_products_and_extrema_are_the_cpu_kernels(order_run, dtype, x64):
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        for stride in (1, 3):
            x = spread(rng, n * stride, dtype)
            row = x[::stride]
            assert_bitwise(run(order_run, "sum", x, stride), np.asarray(jnp.sum(row)))
            small = (1 + rng.uniform(-0.01, 0.01, n * stride)).astype(dtype)
            assert_bitwise(run(order_run, "prod", small, stride),
                           np.asarray(jnp.prod(small[::stride])))
            if n == 0:
                continue
            for op in ("max", "min", "argmax", "argmin"):
                want = np.asarray(getattr(jnp, op)(row))
                assert_bitwise(run(order_run, op, x, stride), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signed_zeros_nans_and_infinities_as_the_cpu_kernels(order_run, dtype, x64):
    rows = [[-0.0], [-0.0, -0.0], [-0.0, 0.0, -0.0], [0.0, -0.0], [1.0, np.nan, 2.0, np.nan],
            [np.inf, -np.inf, 1.0], [-np.inf] * 3, [3.0, 3.0, -1.0, -1.0]]
    for values in rows:
        x = np.array(values, dtype)
        for op in ("sum", "prod", "max", "min", "argmax", "argmin"):
            want = np.asarray(getattr(jnp, op)(x))
            assert_bitwise_any_nan(run(order_run, op, x), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_contractions_are_the_cpu_kernels(order_run, dtype, x64):
    rng = np.random.default_rng(1)
    for k in LENGTHS:
        a = spread(rng, (3, k), dtype)
        b = spread(rng, (k, 2), dtype)
        want = np.asarray(jnp.asarray(a) @ jnp.asarray(b))
        for i in range(3):
            for j in range(2):
                col = np.ascontiguousarray(b[:, j])
                got = run(order_run, "dot", np.ascontiguousarray(a[i]), 1, col)
                assert_bitwise(got, want[i, j])
                # the same output read with a stride (b's column in place)
                got = run(order_run, "dot", np.ascontiguousarray(a[i]), 1, b.ravel()[j:], 2)
                assert_bitwise(got, want[i, j])


def test_the_order_decides_the_bits(order_run):
    """The comparisons above can fail: a sequential sum and a single FMA chain give other
    bits on the same data."""
    rng = np.random.default_rng(2)
    x = spread(rng, 1000, np.float32)
    sequential = np.float32(0)
    for v in x:
        sequential = np.float32(sequential + v)
    assert run(order_run, "sum", x) != sequential
    chain = np.float32(0)
    for v, w in zip(x.astype(np.float64), x[::-1].astype(np.float64), strict=True):
        chain = np.float32(v * w + float(chain))  # exact product, sum in float64, rounded
    assert run(order_run, "dot", x, 1, x[::-1].copy()) != chain


# ---- the elementary functions, element by element --------------------------------------

ELEMENT_WRAPPER = r"""
#include "elementary_scalar_more.h"
#define VALUE(F64, F32)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                   \
        if (f64) ((double *)y)[i] = F64(fn, ((const double *)x)[i]);                    \
        else ((float *)y)[i] = F32(fn, ((const float *)x)[i]);                          \
    }
void element_run(int fn, int f64, const void *x, void *y, int64_t n) {
    if (fn < ELEM_LOG2) VALUE(elem_f64_scalar, elem_f32_value)
    else VALUE(elem_more_f64, elem_more_f32_value)
}
void pair_run(int fn, int f64, const void *a, const void *b, void *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (f64) ((double *)y)[i] = elem2_f64(fn, ((const double *)a)[i], ((const double *)b)[i]);
        else ((float *)y)[i] = elem2_f32_value(fn, ((const float *)a)[i], ((const float *)b)[i]);
    }
}
"""


@pytest.fixture(scope="module")
def element_run():
    fn = load(ELEMENT_WRAPPER, "element_run", includes=(str(nvrtc.CSRC),))
    if fn is None:
        pytest.skip("no C compiler runs here")
    fn.restype = None
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn.pair_run = load(ELEMENT_WRAPPER, "pair_run", includes=(str(nvrtc.CSRC),))
    fn.pair_run.restype = None
    fn.pair_run.argtypes = [ctypes.c_int, ctypes.c_int, *[ctypes.c_void_p] * 3, ctypes.c_int64]
    return fn


def inputs(dtype):
    """float32: every 1021st bit pattern (4.2 million, subnormals, infinities and NaNs among
    them); float64: a spread over magnitudes 2^-1074 to 2^1023, both signs, with the large
    arguments of sin and cos and the specials."""
    if dtype == np.float32:
        return np.arange(0, 2**32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(400_000) * 2.0 ** rng.integers(-60, 60, 400_000)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e300, -1e300, 1e22, 7e5, 710.0,
                1.0, -1.0, 0.5, -2.0, -7.5]
    return np.concatenate([x, np.ldexp(rng.uniform(0.5, 1, 1000), rng.integers(-1074, 1024,
                                                                               1000)),
                           rng.uniform(-1, 1, 20_000), rng.uniform(-20, 20, 20_000),
                           specials])


def pairs(dtype):
    """(x, y) pairs for atan2 and pow: every 1021st float32 bit pattern against the same
    patterns reversed, and the hard families of the CPU's tests (integers, powers of two,
    y = +-x, exact powers and midpoints, the overflow edges, special values); float64: random
    magnitudes and a grid of special values."""
    if dtype == np.float32:
        from test_elementary_binary import hard_grid, pow_grid

        x = inputs(np.float32)
        (ay, ax), (px, py) = hard_grid(), pow_grid()
        return np.concatenate([x, ay, px]), np.concatenate([x[::-1], ax, py])
    rng = np.random.default_rng(8)
    x, y = (rng.standard_normal(200_000) * 2.0 ** rng.integers(-40, 40, 200_000)
            for _ in range(2))
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, -3.0, 2.5,
                         5e-324, 1e300])
    gx, gy = (g.ravel() for g in np.meshgrid(specials, specials))
    return np.concatenate([x, rng.uniform(0, 20, 50_000), gx]), \
        np.concatenate([y, rng.uniform(-30, 30, 50_000), gy])


def assert_same(got, want, inputs_, name):
    """Bitwise equal but for NaN payloads, naming the first inputs that differ."""
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), name
    bad = np.flatnonzero(bits(got[~nan]) != bits(want[~nan]))
    assert bad.size == 0, (name, [x[~nan][bad[:5]] for x in inputs_], got[~nan][bad[:5]],
                           want[~nan][bad[:5]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementary_functions_element_by_element_are_the_cpu_loops(element_run, dtype):
    x = inputs(dtype)
    assert cuda.ELEMENTARY == elementary.NAMES  # every function of the CPU's kernels
    with np.errstate(all="ignore"):
        for fn, name in enumerate(elementary.NAMES):  # the kernels' numbers (elementary_ids.h)
            got = np.empty_like(x)
            element_run(fn, dtype == np.float64, x.ctypes.data, got.ctypes.data, x.size)
            assert_same(got, elementary.elementary(name, x), (x,), name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_operand_functions_element_by_element_are_the_cpu_loops(element_run, dtype):
    x, y = pairs(dtype)
    assert cuda.ELEMENTARY2 == elementary.NAMES2
    with np.errstate(all="ignore"):
        for fn, name in enumerate(elementary.NAMES2):
            got = np.empty_like(x)
            element_run.pair_run(fn, dtype == np.float64, x.ctypes.data, y.ctypes.data,
                                 got.ctypes.data, x.size)
            assert_same(got, elementary.elementary2(name, x, y), (x, y), name)


# ---- NVRTC -----------------------------------------------------------------------------

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(),
                                 reason="NVRTC absent (pip install 'invarax[cuda13]')")

KERNELS = {"kernels.cu": {f"{kind}_{t}" for t in ("f32", "f64")
                          for kind in ("reduce_sum", "reduce_prod", "reduce_extremum",
                                       "reduce_argextremum", "gemm", "conv", "window",
                                       "scan", "scatter")}
           | {f"scatter_{t}" for t in ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
                                       "b8")},
           "elementary.cu": {f"{kind}_{t}" for t in ("f32", "f64")
                             for kind in ("elementary", "elementary_more", "elementary2")},
           "sort.cu": {*(f"argsort_{t}" for t in ("f32", "f64", "i8", "u8", "i16", "u16", "i32",
                                                   "u32", "i64", "u64")),
                       "cumlogsumexp_f32", "cumlogsumexp_f64"},
           "index.cu": {*(f"index_rows_{t}" for t in ("i8", "u8", "i16", "u16", "i32", "u32",
                                                      "i64", "u64")),
                        *(f"index_{k}_u{b}" for k in ("take", "window") for b in (8, 16, 32, 64))},
           "windows_grad.cu": {f"wgrad_{kind}_{t}" for t in ("f32", "f64")
                               for kind in ("argselect", "gather", "scatter")}}


def entries(ptx: str) -> dict:
    """``name -> body`` of each kernel of ``ptx``."""
    parts = re.split(r"^\.visible \.entry (\w+)", ptx, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@needs_nvrtc
@pytest.mark.parametrize("arch", ["compute_90", "compute_80"])
@pytest.mark.parametrize("name", nvrtc.sources())
def test_device_sources_compile_to_exact_ptx(name, arch, tmp_path, monkeypatch):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    ptx = nvrtc.compile_ptx(name, arch=arch)
    assert f".target {arch.replace('compute', 'sm')}" in ptx
    assert nvrtc.forbidden(ptx) == []
    kernels = entries(ptx)
    assert set(kernels) == KERNELS[name]
    if name == "kernels.cu":
        # no calls (order.h inlines into each kernel, nothing recursive): a static stack
        assert not re.search(r"\bcall(\.uni)?\b", ptx)
        for kernel, body in kernels.items():
            fmas = len(re.findall(r"\bfma\.rn\.f(32|64)\b", body))
            # FMAs are the contractions' chains; no reduction writes one
            assert (fmas > 0) == kernel.startswith(("gemm", "conv")), (kernel, fmas)
    assert nvrtc.compile_ptx(name, arch=arch) == ptx  # from the cache
    assert len(list((tmp_path / "ptx").glob("*.ptx"))) == 1


@needs_nvrtc
def test_forbidden_instructions_are_found():
    ptx = "add.rn.f32 %f1, %f2, %f3;\nadd.f32 %f1, %f2, %f3;\nex2.approx.ftz.f32 %f4, %f5;\n" \
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1}, {%r1}, {%r2}, {%f2};\n" \
          "atom.global.add.f32 %f1, [%rd1], %f2;\n// add.f32 in a comment\n"
    assert len(nvrtc.forbidden(ptx)) == 4


@needs_nvrtc
def test_a_source_that_does_not_compile_names_the_error(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="no device source 'missing.cu'"):
        nvrtc.compile_ptx("missing.cu")
    monkeypatch.setattr(nvrtc, "DEVICE", tmp_path)
    (tmp_path / "broken.cu").write_text("extern \"C\" __global__ void k() { undefined_name; }")
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    with pytest.raises(nvrtc.NvrtcError, match="(?s)broken.cu did not compile.*undefined_name"):
        nvrtc.compile_ptx("broken.cu")


@needs_nvrtc
def test_compiling_leaves_python_objects_alone(tmp_path, monkeypatch):
    """NVRTC writes its (empty) log and the PTX into buffers: never into a shared object."""
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    nvrtc.compile_ptx("tiny.cu", source='extern "C" __global__ void k(float *x) { x[0] = 1; }')
    assert b" " * 3 == bytes([32, 32, 32]) and b" " == bytes([32])

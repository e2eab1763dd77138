"""Sorting and ``cumlogsumexp`` on the GPU give the CPU's bits.

- ``csrc/device/sort.h`` (the order relations and the phased stable merge sort) and
  ``csrc/device/logsumexp.h`` (cumlogsumexp's step), compiled for the host as the GPU
  kernels' host twins: the CPU's permutations for every thread count a block may have, and
  the CPU's ``logaddexp`` on every pair of special values.
- ``sort.cu``'s PTX: a sort computes no float value, its threads meet at barriers.
- ``invarax.kernels.cuda_sort`` launched on the GPU where CuPy sees one, else through
  ``fake_cupy`` (the host twins): the CPU's ``lax.sort``, ``jnp.sort``, ``jnp.argsort``,
  ``lax.cumlogsumexp`` and ``lax.top_k`` (and JAX's), bit for bit, with NaNs, signed zeros,
  ties, rows of 0 to 5000 keys and strided operands.
"""

import numpy as np
import pytest
from helpers import assert_bitwise, assert_bitwise_any_nan
from test_gpu_kernels import _device, cp  # noqa: F401  (_device: autouse fixture)
from test_gpu_sources import entries, needs_nvrtc

import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import cuda_sort, nvrtc


def launches(test):
    """A test of the launch code: on the GPU, else on fake_cupy (which needs NVRTC)."""
    skip = pytest.mark.skipif(cp is None, reason="no GPU and no NVRTC to build the kernels")
    return pytest.mark.gpu(skip(test))


LENGTHS = [0, 1, 7, 16, 17, 255, 256, 1000, 5000]
KEY_DTYPES = [np.float32, np.float64, np.float16, np.int32, np.uint32, np.int8, np.int64,
              np.uint64, np.bool_]
ASC, DESC, TOTAL = cuda_sort._ASCENDING, cuda_sort._DESCENDING, cuda_sort._TOTAL_DESC


def keys(rng, shape, dtype):
    """Keys with many ties; floats with NaNs of both signs, both zeros and infinities."""
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(-4, 4, shape).astype(dtype)
        x.reshape(-1)[::11] = info.max
        x.reshape(-1)[5::13] = info.min
        return x
    specials = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-40, -1.5], dtype)
    x = rng.integers(-3, 3, shape).astype(dtype)
    flat = x.reshape(-1)
    flat[::3] = rng.choice(specials, flat[::3].size)
    return x


def cpu_top_k(x, k, axis=-1):
    return tuple(np.asarray(a) for a in lax.top_k(x, k, axis=axis))


def cpu_argsort(x, mode):
    if mode == TOTAL:
        return cpu_top_k(x, x.shape[-1])[1]
    return np.asarray(jnp.argsort(x, axis=-1, descending=mode == DESC))


# ---- sort.h and logsumexp.h on the host -------------------------------------------------

def host_kernel(name):
    """The host twin of the kernel ``name`` (compiled from the headers the device code
    includes), called with fake_cupy's arguments."""
    import fake_cupy

    try:
        fn = fake_cupy._library(name)
    except RuntimeError:
        pytest.skip("no C compiler runs here")
    fn.restype = None
    return lambda *args: fn(*map(fake_cupy._c, args))


def host_argsort(x, mode, threads):
    """sort.h's phases for the rows of the 2-d ``x``, by ``threads`` threads (the kernel's
    host twin: each phase's threads run one after the other)."""
    fn = host_kernel(f"argsort_{cuda_sort._KEYS[x.dtype]}")
    m, k = x.shape
    perm, scratch = np.empty((m, k), np.int64), np.empty((m, k), np.int64)
    args = (x, perm, scratch, np.int64(m), np.int64(k), np.int64(x.strides[0] // x.itemsize),
            np.int64(x.strides[1] // x.itemsize), np.int32(mode), np.int32(1),
            np.int64(threads))
    fn(*args)
    return perm


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8])
def test_sort_h_is_the_cpus_permutation_for_any_thread_count(dtype, x64):
    rng = np.random.default_rng(0)
    for k in [0, 1, 2, 15, 16, 17, 33, 100, 257, 1000, 2049]:
        x = keys(rng, (3, k), dtype)
        for mode in (ASC, DESC, TOTAL):
            want = cpu_argsort(x, mode)
            for threads in (1, 2, 3, 7, 32, 256):
                got = host_argsort(x, mode, threads)
                np.testing.assert_array_equal(got, want, err_msg=f"{k=} {mode=} {threads=}")


def test_the_relations_differ_on_the_test_keys():
    """The comparisons above can fail: on these keys NumPy's order, its reverse and the
    total order give three other permutations, and a sort that is not stable another."""
    x = keys(np.random.default_rng(0), (1, 1000), np.float32)
    asc, desc, total = (cpu_argsort(x, mode) for mode in (ASC, DESC, TOTAL))
    assert not np.array_equal(asc[:, ::-1], desc) and not np.array_equal(desc, total)
    assert not np.array_equal(np.argsort(x, kind="quicksort"), asc)


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-40, 5e-324, 3.4e38, -88.5, 1e300,
            0.5, 2.0, 1e-8, -1e-8, 30.0, 100.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_step_is_the_cpus_on_special_pairs(dtype, x64):
    """A row [a, b] scans to [a, logaddexp(a, b)]: every ordered pair of specials, and
    random pairs near each other (where exp(-|a - b|) matters)."""
    with np.errstate(all="ignore"):
        s = np.array(SPECIALS, dtype)
    rng = np.random.default_rng(1)
    near = rng.standard_normal((2000, 1)) * 10.0 ** rng.uniform(-3, 3, (2000, 1))
    pairs = np.concatenate([np.stack(np.meshgrid(s, s), -1).reshape(-1, 2),
                            np.concatenate([near, near + rng.standard_normal((2000, 1))], 1)
                            .astype(dtype)])
    got = np.empty_like(pairs)
    host_kernel(f"cumlogsumexp_{cuda_sort._SUFFIX[np.dtype(dtype)]}")(
        pairs, got, np.int64(len(pairs)), np.int64(2), np.int64(2), np.int64(1), np.int32(0))
    assert_bitwise_any_nan(got, np.asarray(lax.cumlogsumexp(pairs, axis=1)))


# ---- PTX ---------------------------------------------------------------------------------

@needs_nvrtc
def test_sort_ptx_computes_no_float_and_meets_at_barriers():
    kernels = entries(nvrtc.compile_ptx("sort.cu"))
    sorts = {f"argsort_{s}" for s in set(cuda_sort._KEYS.values())}
    assert set(kernels) == sorts | {"cumlogsumexp_f32", "cumlogsumexp_f64"}
    for name in sorts:
        body = kernels[name]
        assert "bar.sync" in body, name  # the phases' barrier
        # comparisons only: no float arithmetic or conversion (a permutation's bits are
        # the operands' own)
        assert not [line for line in body.splitlines()
                    if ".f32" in line or ".f64" in line
                    if not line.lstrip().startswith(("setp", "ld.", "mov.", ".reg", "selp"))
                    ], name


# ---- the launches: cuda_sort against the CPU -----------------------------------------------

def views(x):
    """``x`` as given, with every other column, and with its rows reversed."""
    on_gpu = cp.asarray(x)
    for sl in [(..., slice(None)), (..., slice(None, None, 2)), (slice(None, None, -1),)]:
        yield x[sl], on_gpu[sl]


@launches
@pytest.mark.parametrize("dtype", KEY_DTYPES)
def test_sort_and_argsort_are_the_cpus(dtype, x64):
    rng = np.random.default_rng(2)
    for k in LENGTHS:
        for x, on_gpu in views(keys(rng, (3, k), dtype)):
            assert_bitwise(cuda_sort.sort_rows(on_gpu).get(), np.asarray(jnp.sort(x)))
            assert_bitwise(cuda_sort.sort_rows(on_gpu, descending=True).get(),
                           np.asarray(jnp.sort(x, descending=True)))
            for descending in (False, True):
                want = np.asarray(jnp.argsort(x, descending=descending))
                got = cuda_sort.argsort(on_gpu, descending=descending, dtype=want.dtype)
                assert_bitwise(got.get(), want)


@launches
def test_lax_sort_of_several_operands_along_any_axis_is_the_cpus(x64):
    rng = np.random.default_rng(3)
    first = keys(rng, (4, 300, 3), np.float32)
    second = keys(rng, (4, 300, 3), np.int32)
    values = rng.standard_normal((4, 300, 3))
    on_gpu = [cp.asarray(a) for a in (first, second, values)]
    for axis in (0, 1, 2, -1):
        for num_keys in (1, 2, 3):
            want = lax.sort((first, second, values), dimension=axis, num_keys=num_keys)
            got = cuda_sort.sort(on_gpu, axis, num_keys)
            for g, w in zip(got, want, strict=True):
                assert_bitwise(g.get(), np.asarray(w))


@launches
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint32,
                                   np.bool_])
def test_top_k_is_the_cpus(dtype, x64):
    rng = np.random.default_rng(4)
    for k in LENGTHS:
        for x, on_gpu in views(keys(rng, (2, k), dtype)):
            for axis in (-1, 0):
                n = x.shape[axis]
                for j in sorted({0, min(1, n), n // 2, n}):
                    values, indices = cuda_sort.top_k(on_gpu, j, axis)
                    want_values, want_indices = cpu_top_k(x, j, axis)
                    assert_bitwise(values.get(), want_values)
                    assert_bitwise(indices.get(), want_indices)


@launches
def test_top_k_is_jaxs():
    jax = pytest.importorskip("jax")
    x = keys(np.random.default_rng(5), (3, 1000), np.float32)
    values, indices = jax.lax.top_k(x, 40)
    got_values, got_indices = cuda_sort.top_k(cp.asarray(x), 40)
    assert_bitwise(got_values.get(), np.asarray(values))
    assert_bitwise(got_indices.get(), np.asarray(indices))


@launches
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cumlogsumexp_is_the_cpus(dtype, x64):
    rng = np.random.default_rng(6)
    with np.errstate(all="ignore"):
        specials = np.array(SPECIALS, dtype)
    for k in [0, 1, 7, 255, 1000]:
        x = (rng.standard_normal((3, k, 2)) * 30).astype(dtype)
        x.reshape(-1)[::7] = rng.choice(specials, x.reshape(-1)[::7].size)
        for xv, on_gpu in views(x):
            for axis in range(3):
                for reverse in (False, True):
                    want = np.asarray(lax.cumlogsumexp(xv, axis=axis, reverse=reverse))
                    got = cuda_sort.cumlogsumexp(on_gpu, axis, reverse).get()
                    assert_bitwise_any_nan(got, want)


@launches
def test_bad_operands_are_named():
    with pytest.raises(TypeError, match="bool, got complex64"):
        cuda_sort.sort_rows(cp.ones((2, 3), np.complex64))
    with pytest.raises(TypeError, match="float32 and float64, got int32"):
        cuda_sort.cumlogsumexp(cp.ones((2, 3), np.int32), 1)
    with pytest.raises(ValueError, match=r"0 <= k <= 3 \(axis 1 of \(2, 3\)\), got k=4"):
        cuda_sort.top_k(cp.ones((2, 3), np.float32), 4)
    with pytest.raises(ValueError, match="one shape"):
        cuda_sort.sort([cp.ones((2, 3), np.float32), cp.ones((3, 2), np.float32)])
    with pytest.raises(ValueError, match="num_keys=3"):
        cuda_sort.sort([cp.ones(3, np.float32)] * 2, num_keys=3)
    with pytest.raises(ValueError, match="0-d"):
        cuda_sort.argsort(cp.ones((), np.float32))

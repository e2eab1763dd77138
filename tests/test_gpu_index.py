"""Gathers, scatters and dynamic slices on the GPU compute their indices on the device and
give the CPU's bits.

- ``csrc/device/index.h`` compiled for the host (the kernels' host twins): each index
  vector's row and bounds as ``gather_rows``, for every integer index dtype and the extreme
  values of each; a dynamic slice's clamped starts as ``clamped_starts``.
- ``index.cu``'s PTX: no float instruction at all (these kernels only move values).
- ``invarax.kernels.cuda_index`` launched on the GPU where CuPy sees one, else through
  ``fake_cupy``: values of any dtype moved bit for bit, strided operands, empty shapes.
- The operations on the GPU (eagerly and under ``jit``) against the CPU, bit for bit:
  negative and out-of-range indices, every mode, duplicate scatter indices, batched gathers
  with several index columns, start indices of every integer dtype; and a jitted program of
  them reads nothing back from the device.
"""

import types

import numpy as np
import pytest
from helpers import assert_bitwise
from test_gpu_backend import ON_GPU, check, fake_cupy, gpu, on_cpu  # noqa: F401 (gpu: autouse)
from test_gpu_sort import host_kernel
from test_gpu_sources import entries, needs_nvrtc

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import cuda_index, nvrtc
from invarax.ops import dynamic_slicing as ds
from invarax.ops import gather as ga

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not ON_GPU and fake_cupy is None, reason="no GPU and no NVRTC to build the kernels")]

INDEX_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                np.uint64]
CLIP, FILL, PROMISE = (ga.GatherScatterMode.CLIP, ga.GatherScatterMode.FILL_OR_DROP,
                       ga.GatherScatterMode.PROMISE_IN_BOUNDS)


def cp():
    """CuPy, or the stand-in the autouse fixture installed."""
    from invarax.kernels import cuda

    return cuda._cupy()


def wild_indices(rng, shape, dtype):
    """Indices in and around small axes, with the dtype's extremes."""
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -4), 9, shape).astype(dtype)
    flat = x.reshape(-1)
    flat[::7] = info.max
    flat[3::11] = info.min
    return x


# ---- index.h on the host ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", INDEX_DTYPES)
def test_rows_are_the_cpus_gather_rows(dtype):
    rng = np.random.default_rng(0)
    fn = host_kernel(f"index_rows_{cuda_index._INDICES[np.dtype(dtype)]}")
    for dims in ([], [5], [1], [0], [3, 4], [6, 1, 2], [2, 3, 4, 5]):
        idx = wild_indices(rng, (40, len(dims)), dtype)
        want_rows, valid = ga.gather_rows(idx, dims)
        for drop in (0, 1):
            got = np.empty(40, np.int64)
            fn(np.int64(40), idx, np.asarray(dims, np.int64), np.int64(len(dims)), got,
               np.int32(drop))
            np.testing.assert_array_equal(got, np.where(valid | (not drop), want_rows, -1),
                                          err_msg=f"{dims=} {drop=}")
        if dims == [3, 4]:  # the comparison can fail: clamping and dropping happen
            assert not valid.all() and valid.any()


def test_clamped_starts_are_the_cpus():
    """A window of each size at starts of every sign and size, uint64 ones above 2**63
    among them, read by the host twin of ``index_window`` from a (7, 5) operand."""
    fn = host_kernel("index_window_u32")
    big = np.arange(35, dtype=np.uint32).reshape(7, 5)
    starts = [-2**63, -9, -1, 0, 1, 3, 6, 7, 40, 2**63 - 1]
    for sizes in [(0, 2), (1, 1), (3, 5), (7, 2), (2, 0)]:
        for s0 in starts:
            for s1, unsigned in [(-1, 0), (2, 0), (-1, 2), (-3, 2)]:  # -1 as uint64: 2**64-1
                want_starts = ds.clamped_starts(
                    [s0, s1 % 2**64 if unsigned else s1], big.shape, sizes)
                want = big[ds.window(want_starts, sizes)]
                desc = np.array([2, 7, 5, *[1] * 6, *sizes, *[1] * 6, 5, 1, *[1] * 6,
                                 unsigned], np.int64)
                got = np.zeros(sizes, np.uint32)
                fn(np.int64(got.size), big, got, desc, np.array([s0, s1], np.int64),
                   np.int64(1), np.int32(0))
                assert_bitwise(got, want)


@needs_nvrtc
def test_index_kernels_compute_no_float_value(tmp_path, monkeypatch):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    ptx = nvrtc.compile_ptx("index.cu")
    kernels = entries(ptx)
    assert len(kernels) == 16  # their names: test_gpu_sources.KERNELS
    assert nvrtc.forbidden(ptx) == []
    for name, body in kernels.items():
        assert not [line for line in body.splitlines() if ".f32" in line or ".f64" in line], \
            name
        assert "call" not in body and "bar.sync" not in body, name


# ---- the launch code -------------------------------------------------------------------

# dtypes of every size, as their bytes: NaN payloads, -0.0 and odd bit patterns move as is
MOVED = [np.float32, np.float64, np.float16, np.int8, np.bool_, np.uint16, np.complex64,
         np.complex128]


def values(rng, shape, dtype):
    raw = rng.integers(0, 256, (*shape, np.dtype(dtype).itemsize), dtype=np.uint8)
    if dtype == np.bool_:
        raw &= 1
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", MOVED)
def test_take_rows_moves_bits_and_fills(dtype):
    rng = np.random.default_rng(1)
    for shape in [(6, 3, 2), (4,), (5, 0), (0, 3)]:
        source = values(rng, shape, dtype)
        idx = rng.integers(-2, shape[0] + 2, (9, 1)) if shape[0] else np.zeros((0, 1), int)
        for fill in (None, values(rng, (), dtype)):
            rows = cuda_index.rows(cp().asarray(idx), [shape[0]], drop=fill is not None)
            got = cuda_index.take_rows(cp().asarray(source), rows, fill).get()
            want_rows, valid = ga.gather_rows(idx, [shape[0]])
            want = source[want_rows]
            if fill is not None:
                want[~valid] = fill
            assert_bitwise(got, want)


@pytest.mark.parametrize("dtype", MOVED)
def test_dynamic_slices_move_bits_from_strided_operands(dtype):
    rng = np.random.default_rng(2)
    x = values(rng, (9, 8, 7), dtype)
    for view in [(slice(None),) * 3, (slice(None, None, 2), slice(None, None, -1), slice(1, 6))]:
        operand = x[view]
        for sizes in [(2, 3, 4), (operand.shape[0], 1, 0), (1, 1, 1)]:
            starts = [np.int32(-1), np.int64(2), np.uint8(200)]
            where = ds.window(ds.clamped_starts(starts, operand.shape, sizes), sizes)
            dev = [cp().asarray(s) for s in starts]
            got = cuda_index.dynamic_slice(cp().asarray(x)[view], dev, sizes).get()
            assert_bitwise(got, operand[where])
            update = values(rng, sizes, dtype)
            got = cuda_index.dynamic_update_slice(cp().asarray(operand), cp().asarray(update),
                                                  dev).get()
            want = operand.copy()
            want[where] = update
            assert_bitwise(got, want)


def test_rank_0_and_rank_8_slices_and_the_errors():
    x = np.arange(2 ** 8, dtype=np.float32).reshape((2,) * 8)
    starts = [np.int16(i % 3 - 1) for i in range(8)]
    dev = [cp().asarray(s) for s in starts]
    got = cuda_index.dynamic_slice(cp().asarray(x), dev, (1,) * 8).get()
    assert_bitwise(got, x[ds.window(ds.clamped_starts(starts, x.shape, (1,) * 8), (1,) * 8)])
    scalar = np.float64(-0.0)
    assert_bitwise(cuda_index.dynamic_slice(cp().asarray(scalar), [], ()).get(), scalar)
    with pytest.raises(ValueError, match="at most 8 axes"):
        cuda_index.dynamic_slice(cp().asarray(x[..., None]), dev + dev[:1], (1,) * 9)
    with pytest.raises(ValueError, match="one start index per axis"):
        cuda_index.dynamic_slice(cp().asarray(x), dev[:2], (1,) * 8)
    with pytest.raises(ValueError, match="C-contiguous"):
        cuda_index.take_rows(cp().asarray(x.T.reshape(16, 16).T), cp().asarray(np.zeros(1, int)))
    with pytest.raises(ValueError, match="must end in an axis of 2"):
        cuda_index.rows(cp().asarray(np.zeros((3, 1), int)), [4, 5])
    at = [types.SimpleNamespace(data=types.SimpleNamespace(ptr=p)) for p in (256, 260, 3)]
    assert [cuda_index._unit(16, a) for a in at] == [np.dtype(t) for t in ("u8", "u4", "u1")]
    assert cuda_index._unit(6, at[0]) == np.dtype("u2")  # units that divide the item
    with pytest.raises(TypeError, match="compute int8"):
        cuda_index.rows(cp().asarray(np.zeros((3, 1), np.float32)), [4])


# ---- the operations on the GPU against the CPU -----------------------------------------

def test_gathers_in_every_mode_and_index_dtype(x64):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4, 3)).astype(np.float32)
    x[0, 0, 0] = -0.0

    def f(x, *idxs):
        outs = []
        for idx in idxs:
            for mode in (CLIP, FILL, PROMISE):
                outs.append(ga.gather_p.bind(x, idx, axes=(0, 2), mode=mode, fill_value=None))
                outs.append(ga.gather_p.bind(x, idx[..., :1], axes=(1,), mode=mode,
                                             fill_value=-2.5))
        return outs
    check(f, x, *(wild_indices(rng, (3, 2, 2), dtype) for dtype in INDEX_DTYPES))


def test_numpy_style_indexing_and_batched_gathers():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5, 4)).astype(np.float32)
    i, j = rng.integers(-6, 6, (3, 2)).astype(np.int32), rng.integers(0, 5, (2,)).astype(np.int8)
    ints = rng.integers(-100, 100, (6, 5)).astype(np.int32)

    def f(x, i, j, ints):
        return [x[i, j], x[:, j, i[0, :2]], jnp.take(x, i, axis=1, mode="fill"),
                jnp.take(x, i + 7, axis=0, mode="clip"), ints[i[0]], (ints > 0)[j],
                jnp.take_along_axis(x[:3], jnp.abs(i[:, :1, None]) % 4, axis=2),
                invarax.vmap(lambda r, k: r[k, 1:3])(x[:3], i[:, 0]),  # operand and indices
                invarax.vmap(lambda r: r[i, j])(x.transpose(2, 0, 1)),  # the operand alone
                x[i[:0]], x[i[:0, 0], j[:0]], x[:, :0][i]]
    check(f, x, i, j, ints)


def test_scatters_with_duplicates_in_every_mode():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 3, 4)).astype(np.float32)
    idx = np.array([[4, 0], [0, 2], [4, 0], [-1, 1], [9, 0], [4, 0], [0, 3], [2, -7]], np.int32)
    updates = rng.standard_normal((8, 4)).astype(np.float32)
    updates[2] = -0.0

    def f(x, idx, updates):
        outs = []
        for prim in (ga.scatter_p, ga.scatter_add_p, ga.scatter_mul_p, ga.scatter_min_p,
                     ga.scatter_max_p):
            for mode in (CLIP, FILL, PROMISE):
                outs.append(prim.bind(x, idx, updates, axes=(0, 1), mode=mode))
        outs.append(ga.scatter_add_p.bind(x, idx[:0], updates[:0], axes=(0, 1), mode=FILL))
        outs.append(x.at[idx[:, 0] % 6, 1].add(updates, mode="drop"))
        ks = (idx[:6, :1] + idx[:6]) % 3  # (6, 2): duplicates within examples
        outs.append(invarax.vmap(lambda r, u: r.at[ks[0]].set(u))(x, x[:, 1:3] * 2))
        outs.append(invarax.vmap(lambda r, k, u: r.at[k].add(u))(x, ks, x[:, ::-1][:, :2]))
        outs.append(invarax.vmap(lambda r, k: r.at[k, 1].min(-1.0, mode="drop"))(x, ks - 1))
        return outs
    check(f, x, idx, updates)


def test_dynamic_slices_of_every_start_dtype(x64):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 6, 4)).astype(np.float64)
    ints = rng.integers(-9, 9, (4, 7)).astype(np.int16)
    starts = [np.array(v).astype(dtype) for v in (-3, 2, 200) for dtype in (np.int8, np.uint8)] + [
        np.array(2**64 - 1, np.uint64), np.array(-2**63, np.int64), np.array(3, np.uint32)]

    def f(x, ints, batched, *starts):
        outs = []
        for a, b, c in zip(starts, starts[1:] + starts[:1], starts[2:] + starts[:2],
                           strict=True):
            outs.append(lax.dynamic_slice(x, (a, b, c), (2, 3, 4)))
            outs.append(lax.dynamic_update_slice(x, -x[:3, :1, :2], (a, b, c)))
            outs.append(lax.dynamic_slice(ints > 0, (b, c), (4, 0)))
            outs.append(lax.dynamic_update_slice(ints, ints[:2, :3] * 2, (c, a)))
        outs.append(invarax.vmap(lambda r: lax.dynamic_slice(r, (starts[0], starts[3]),
                                                             (2, 2)))(x))
        outs.append(invarax.vmap(lambda r, s: lax.dynamic_slice(r, (s, 1), (4, 3)))(x, batched))
        outs.append(invarax.vmap(lambda r, s: lax.dynamic_update_slice(
            r, r[:2, :1] + 1, (starts[1], s)))(x, batched))
        return outs
    check(f, x, ints, np.array([-3, 0, 2, 9, 4], np.int32), *starts)


def test_a_slice_of_nine_axes_runs_on_the_host():
    x = np.arange(2 ** 9, dtype=np.float32).reshape((2,) * 9)

    def f(x):
        return lax.dynamic_slice(x, (1,) * 9, (1,) * 9)
    check(f, x, host_ok=("dynamic_slice",))


@pytest.mark.skipif(ON_GPU, reason="counts the stand-in's reads")
def test_a_jitted_program_reads_no_index_back(monkeypatch):
    reads = []
    get = fake_cupy.ndarray.get
    monkeypatch.setattr(fake_cupy.ndarray, "get", lambda self: reads.append(self.shape)
                        or get(self))
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.standard_normal((6, 5)).astype(np.float32))
    idx = jnp.asarray(np.array([4, -1, 9, 4], np.int32))

    @invarax.jit
    def f(x, idx):
        g = x[idx] + jnp.take(x, idx, axis=1, mode="fill", fill_value=0.5)[:5].T
        s = x.at[idx].add(g[:, 0, None], mode="drop").at[idx % 6].max(1.0)
        d = lax.dynamic_slice(s, (idx[0], idx[1]), (3, 2))
        return lax.dynamic_update_slice(s, d * 2, (idx[2], idx[3])), g

    out = f(x, idx)
    assert reads == []
    want = on_cpu(f, np.asarray(x), np.asarray(idx))
    for o, w in zip(out, want, strict=True):
        assert_bitwise(np.asarray(o), w)
    # the counter counts: reading the results, and an operation run on the host
    assert len(reads) == 2
    reads.clear()
    with pytest.warns(RuntimeWarning, match="dynamic_slice runs on the host"):
        lax.dynamic_slice(x.reshape((1,) * 8 + (30,)), (idx[0],) * 9, (1,) * 9)
    assert reads

"""The gradient of max (min) windows on the GPU gives the CPU's bits.

- ``csrc/device/windows.h`` compiled for the host (the kernels' host twins): each window's
  selected position, the gathered tangent and the scatter's sums are the CPU's
  (``kernels.windows``: the compiled ``window.c``), bit for bit, over overlapping windows
  (stride below the window), padding (negative too), both dilations, NaNs, ties, signed
  zeros and infinities.
- ``windows_grad.cu``'s PTX: no atomics, no FMA, nothing approximate.
- ``invarax.kernels.cuda_windows`` launched on the GPU where CuPy sees one, else through
  ``fake_cupy``: the CPU's results again, and its errors.
"""

import numpy as np
import pytest
from helpers import assert_bitwise, assert_bitwise_any_nan
from test_gpu_kernels import _device, cp  # noqa: F401  (_device: autouse fixture)
from test_gpu_sort import host_kernel, launches
from test_gpu_sources import entries, needs_nvrtc

from invarax.kernels import cuda, cuda_windows, nvrtc, windows

# (operand shape, window, strides, padding, base dilation, window dilation)
CASES = [
    ((9,), (3,), (1,), [(0, 0)], (1,), (1,)),  # overlapping: up to 3 windows an element
    ((6, 7), (3, 2), (2, 1), [(1, 2), (0, 1)], (1, 1), (1, 1)),
    ((5, 6), (2, 3), (1, 2), [(1, 0), (2, -1)], (2, 1), (1, 2)),  # dilations, a crop
    ((4,), (2,), (3,), [(-1, 2)], (1,), (1,)),  # stride above the window, crop and pad
    ((2, 3, 8, 7), (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0), (0, 0), (1, 1), (1, 1)],
     (1, 1, 1, 1), (1, 1, 1, 1)),  # pooling with padding
    ((3, 4, 5), (2, 2, 2), (1, 1, 1), [(0, 0), (1, 1), (0, 0)], (1, 1, 2), (1, 2, 1)),
    ((2, 1, 2, 1, 3, 4), (1, 1, 2, 1, 2, 3), (1, 1, 1, 1, 1, 2), [(0, 0)] * 5 + [(1, 1)],
     (1,) * 6, (1,) * 6),  # six axes
    ((5,), (0,), (1,), [(0, 0)], (1,), (1,)),  # empty windows
    ((3,), (4,), (1,), [(0, 0)], (1,), (1,)),  # no window
]
IDS = [f"{len(c[0])}d-{k}" for k, c in enumerate(CASES)]


def operand(rng, shape, dtype):
    """Few distinct values (ties), with NaNs, infinities and both zeros."""
    values = np.array([-1.0, 0.0, -0.0, 1.0, 2.0, np.inf, -np.inf, np.nan], dtype)
    x = rng.choice(values[:5], shape).astype(dtype)
    flat = x.reshape(-1)
    flat[::7] = rng.choice(values, flat[::7].shape)
    return x


def cotangent(rng, shape, dtype):
    """Magnitudes far apart, so that a sum's order shows in its bits."""
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape)).astype(dtype)


def cpu(op, x, s, case):
    """The CPU's selection, gather (of ``x`` as the tangent) and scatter of ``s``."""
    shape, *params = case
    idx = windows.window_argselect(op, x, *params)
    return (idx, windows.window_gather(x, idx, *params),
            windows.window_scatter_add(s, idx, shape, *params))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_windows_h_is_the_cpus_kernel(case, dtype):
    shape, *params = case
    sfx = cuda._SUFFIX[np.dtype(dtype)]
    argselect, gather, scatter = (host_kernel(f"wgrad_{k}_{sfx}")
                                  for k in ("argselect", "gather", "scatter"))
    desc, out_shape = cuda.window_desc(shape, *params)
    if 0 in params[0] or 0 in out_shape:
        pytest.skip("nothing to select (the launch code's zeros: test_launches_...)")
    rng = np.random.default_rng(len(shape))
    for op in ("max", "min"):
        for _ in range(3):
            x, s = operand(rng, shape, dtype), cotangent(rng, out_shape, dtype)
            idx, gathered, scattered = cpu(op, x, s, case)
            got_idx = np.empty(out_shape, np.int32)
            argselect(x, got_idx, desc, np.int32(op == "max"), np.int64(got_idx.size))
            assert_bitwise(got_idx, idx)
            got = np.empty(out_shape, dtype)
            gather(x, idx, got, desc, np.int64(got.size))
            assert_bitwise(got, gathered)
            got = np.empty(shape, dtype)
            scatter(s, idx, got, desc, np.int64(got.size))
            assert_bitwise(got, scattered)


def test_the_scatter_adds_in_output_order():
    """Three windows send values to one element: (1e8 + 1) - 1e8 in float32 is 0, any other
    order of the three gives 1 or 2."""
    x = np.array([0.0, 0.0, 5.0, 0.0, 0.0], np.float32)
    s = np.array([1e8, 1.0, -1e8], np.float32)
    params = ((3,), (1,), [(0, 0)], (1,), (1,))
    idx = windows.window_argselect("max", x, *params)
    scatter = host_kernel("wgrad_scatter_f32")
    desc, _ = cuda.window_desc(x.shape, *params)
    got = np.empty(5, np.float32)
    scatter(s, idx, got, desc, np.int64(5))
    assert_bitwise(got, windows.window_scatter_add(s, idx, x.shape, *params))
    assert got.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]


@needs_nvrtc
def test_windows_grad_ptx_is_exact():
    kernels = entries(nvrtc.compile_ptx("windows_grad.cu"))
    assert set(kernels) == {f"wgrad_{k}_{s}" for k in ("argselect", "gather", "scatter")
                            for s in ("f32", "f64")}
    for name, body in kernels.items():
        assert nvrtc.forbidden(body) == [], name
        assert "fma." not in body and "atom" not in body, name
        # the scatter's only float arithmetic is its sum; the others compute no float
        adds = [line for line in body.splitlines() if "add.rn.f" in line]
        assert bool(adds) == name.startswith("wgrad_scatter"), name


@launches
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_launches_are_the_cpus(case, dtype):
    shape, *params = case
    rng = np.random.default_rng(7)
    out_shape = cuda.window_desc(shape, *params)[1]
    for op in ("max", "min"):
        x = operand(rng, shape, dtype)
        x_gpu = cp.asarray(x)
        t = cotangent(rng, shape, dtype)
        s = cotangent(rng, out_shape, dtype)
        idx = windows.window_argselect(op, x, *params)
        got_idx = cuda_windows.window_argselect(op, x_gpu, *params)
        assert_bitwise(got_idx.get(), idx)
        got = cuda_windows.window_gather(cp.asarray(t), got_idx, *params)
        assert_bitwise_any_nan(got.get(), windows.window_gather(t, idx, *params))
        got = cuda_windows.window_scatter_add(cp.asarray(s), got_idx, shape, *params)
        assert_bitwise(got.get(), windows.window_scatter_add(s, idx, shape, *params))
    if x.ndim == 2:  # a strided operand is read in place of a copy
        view = cp.asarray(np.ascontiguousarray(x.T)).T
        assert_bitwise(cuda_windows.window_argselect("max", view, *params).get(),
                       windows.window_argselect("max", x, *params))


@launches
def test_bad_arguments_are_named():
    x = cp.asarray(np.zeros((4,), np.float32))
    params = ((2,), (2,), [(0, 0)], (1,), (1,))
    with pytest.raises(ValueError, match="'max' or 'min'"):
        cuda_windows.window_argselect("sum", x, *params)
    with pytest.raises(ValueError, match=r"idx has shape \(3,\).*\(2,\)"):
        cuda_windows.window_gather(x, cp.asarray(np.zeros(3, np.int32)), *params)
    with pytest.raises(ValueError, match="windows' shape"):
        cuda_windows.window_scatter_add(x, cp.asarray(np.zeros(2, np.int32)), (4,), *params)
    with pytest.raises(TypeError, match="float32 and float64, got int32"):
        cuda_windows.window_argselect("max", cp.asarray(np.zeros(4, np.int32)), *params)

"""Crash-free kernels: every compiled kernel entry, reached through the public API with odd
shapes (zero-size and size-1 dimensions), odd layouts (negative, zero and large strides
from slicing, ``transpose`` and ``broadcast_to``; offsets into a buffer), every dtype and
large reductions, never crashes and matches a float64 reference; and the entries
themselves reject what they cannot read (``_native``'s argument checks).

``INVARAX_FUZZ_EXAMPLES=N`` sets the number of examples per test (CI: a few dozen);
``INVARAX_FUZZ_LARGE=27`` makes the large-reduction test go up to 2**27 elements.
"""

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import invarax
import invarax.numpy as jnp
from invarax.kernels import _native

EXAMPLES = int(os.environ.get("INVARAX_FUZZ_EXAMPLES", "40"))
LARGE = int(os.environ.get("INVARAX_FUZZ_LARGE", "22"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 100,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DTYPES = ["float32", "float64", "float16", "int32", "int8", "uint8", "bool", "int64",
          "complex64"]
DIMS = [0, 1, 1, 2, 3, 5, 17]


@st.composite
def views(draw, dtype=None, min_ndim=0, max_ndim=4):
    """``(invarax array, NumPy array of the same values and layout)``: a strided view made by
    invarax ops (slicing with steps and offsets, transpose, broadcast_to) of a random base."""
    dtype = np.dtype(dtype or draw(st.sampled_from(DTYPES)))
    shape = tuple(draw(st.sampled_from(DIMS)) for _ in range(draw(st.integers(min_ndim,
                                                                              max_ndim))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -3])) for _ in shape]
    offsets = [draw(st.integers(0, 2)) for _ in shape]
    base_shape = tuple(d * abs(s) + o for d, s, o in zip(shape, steps, offsets, strict=True))
    base = _random(rng, base_shape, dtype)
    index = tuple(slice(o, o + d * abs(s), abs(s)) for d, s, o in
                  zip(shape, steps, offsets, strict=True))
    flip = tuple(slice(None, None, -1 if s < 0 else 1) for s in steps)
    x = jnp.asarray(base)
    base = np.array(x)  # 64-bit types narrow unless x64 is on
    x, ref = x[index][flip], base[index][flip]
    if ref.ndim > 1 and draw(st.booleans()):
        perm = draw(st.permutations(range(ref.ndim)))
        x, ref = jnp.transpose(x, perm), np.transpose(ref, perm)
    if draw(st.booleans()) and ref.ndim < max_ndim:
        lead = draw(st.sampled_from([0, 1, 3]))
        x = jnp.broadcast_to(x, (lead, *ref.shape))
        ref = np.broadcast_to(ref, (lead, *ref.shape))
    return x, ref


def _random(rng, shape, dtype):
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True
                            ).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _eps(dtype):
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind in "fc" else 0.0


def _close(got, ref64, scale, terms, dtype):
    """``|got - ref| <= bound``: ``terms`` roundings of ``eps * scale`` each (a blocked or
    pairwise sum does fewer), plus the rounding of the result."""
    got = np.asarray(got)
    assert got.shape == np.shape(ref64), (got.shape, np.shape(ref64))
    if np.dtype(dtype).kind not in "fc":
        assert np.array_equal(got, ref64), (got, ref64)
        return
    eps = _eps(got.dtype)
    bound = eps * (terms + 2) * scale + eps * np.abs(ref64) + np.finfo(got.dtype).tiny
    err = np.abs(got.astype(np.complex128) - ref64)
    assert np.all(err <= bound), (float(np.max(err - bound)), got, ref64)


def _axes(draw, ndim):
    kind = draw(st.sampled_from(["none", "one", "many"]))
    if kind == "none" or ndim == 0:
        return None
    if kind == "one":
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=1))))


def _count(shape, axes):
    if axes is None:
        return math.prod(shape)
    axes = (axes,) if isinstance(axes, int) else axes
    return math.prod(shape[a] for a in axes)


@SETTINGS
@given(st.data())
def test_reductions_of_any_layout_and_dtype(data):
    x, ref = data.draw(views())
    axis = _axes(data.draw, ref.ndim)
    n = _count(ref.shape, axis)
    wide = ref.astype(np.complex128 if ref.dtype.kind == "c" else np.float64)
    got = jnp.sum(x, axis=axis)
    if ref.dtype.kind in "biu":  # exact, wrapping in the result's dtype
        expected = np.sum(ref.astype(np.int64), axis=axis).astype(np.asarray(got).dtype)
        assert np.array_equal(got, expected)
    else:
        _close(got, np.sum(wide, axis=axis), np.sum(np.abs(wide), axis=axis), n, ref.dtype)
    if ref.dtype.kind == "c":
        return
    if ref.dtype.kind == "f":
        _close(jnp.prod(x, axis=axis), np.prod(wide, axis=axis),
               np.abs(np.prod(wide, axis=axis)) * n, n, ref.dtype)
        _close(jnp.mean(x, axis=axis) if n else jnp.zeros(()), np.mean(wide, axis=axis)
               if n else np.zeros(()), np.mean(np.abs(wide), axis=axis) if n else 0, n + 1,
               ref.dtype)
    if n == 0:
        with pytest.raises(ValueError):
            jnp.max(x, axis=axis)
        return
    assert np.array_equal(jnp.max(x, axis=axis), np.max(ref, axis=axis))
    assert np.array_equal(jnp.min(x, axis=axis), np.min(ref, axis=axis))
    if axis is None or isinstance(axis, int):
        assert np.array_equal(jnp.argmax(x, axis=axis), np.argmax(ref, axis=axis))
        assert np.array_equal(jnp.argmin(x, axis=axis), np.argmin(ref, axis=axis))


@SETTINGS
@given(st.data())
def test_contractions_of_any_layout(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "float16", "int32", "complex64"]))
    with _x64(dtype == "float64"):
        a, ra = data.draw(views(dtype, min_ndim=2, max_ndim=3))
        k = ra.shape[-1]
        b, rb = data.draw(views(dtype, min_ndim=2, max_ndim=2))
        if rb.shape[0] != k:  # make b's rows match: a slice or a broadcast of b
            b = jnp.broadcast_to(b[:1], (k, rb.shape[1])) if rb.shape[0] else jnp.zeros(
                (k, rb.shape[1]), dtype)
            rb = np.asarray(b)
        got = jnp.matmul(a, b)
        wide = np.complex128 if ra.dtype.kind == "c" else np.float64
        ref = np.matmul(ra.astype(wide), rb.astype(wide))
        scale = np.matmul(np.abs(ra.astype(wide)), np.abs(rb.astype(wide)))
        if ra.dtype.kind == "i":
            assert np.array_equal(got, np.matmul(ra.astype(np.int64), rb.astype(np.int64))
                                  .astype(np.int32))
        else:
            _close(got, ref, scale, k, got.dtype)
        e = jnp.einsum("...k,kn->...n", a, b)
        assert np.asarray(e).tobytes() == np.asarray(got).tobytes()


class _x64:
    def __init__(self, on):
        self.on = on

    def __enter__(self):
        invarax.config.update("jax_enable_x64", self.on)

    def __exit__(self, *exc):
        invarax.config.update("jax_enable_x64", False)


@SETTINGS
@given(st.data())
def test_scatter_add_cumsum_and_fma_users(data):
    x, ref = data.draw(views("float32", min_ndim=1, max_ndim=3))
    n = ref.shape[0]
    if n:
        idx = data.draw(st.lists(st.integers(0, n - 1), max_size=6))
        upd = np.ones((len(idx), *ref.shape[1:]), np.float32)
        got = x.at[jnp.asarray(np.array(idx, np.int32))].add(jnp.asarray(upd))
        expected = ref.astype(np.float64).copy()
        np.add.at(expected, np.array(idx, np.intp), upd.astype(np.float64))
        _close(got, expected, np.abs(expected) + len(idx), len(idx) + 1, np.float32)
    axis = data.draw(st.integers(0, ref.ndim - 1))
    wide = ref.astype(np.float64)
    _close(jnp.cumsum(x, axis=axis), np.cumsum(wide, axis=axis),
           np.cumsum(np.abs(wide), axis=axis), ref.shape[axis], np.float32)
    p = np.clip(ref, -0.99, 0.99)  # erf_inv runs the fma kernel
    got = invarax.scipy.special.erfinv(jnp.clip(x, -0.99, 0.99))
    assert got.shape == p.shape
    if p.size:
        back = np.vectorize(math.erf)(np.asarray(got, np.float64))
        assert np.all(np.abs(back - p) <= 1e-5)


def test_large_reductions():
    """Reductions of up to 2**LARGE elements (reversed, and reduced along a strided axis)
    against float64."""
    rng = np.random.default_rng(0)
    for log2 in range(20, LARGE + 1, 2 if LARGE < 26 else 1):
        n = 2**log2
        base = rng.standard_normal(n, dtype=np.float32)
        x = jnp.asarray(base)[::-1]  # a negative stride
        scale = float(np.sum(np.abs(base), dtype=np.float64))
        _close(jnp.sum(x), np.sum(base, dtype=np.float64), scale, n, np.float32)
        assert int(jnp.argmax(x)) == int(np.argmax(base[::-1]))
        cols = jnp.reshape(jnp.asarray(base), (1024, -1)).T  # rows of stride n / 1024
        ref = np.sum(base.reshape(1024, -1), axis=0, dtype=np.float64)
        _close(jnp.sum(cols, axis=1), ref, np.sum(np.abs(base.reshape(1024, -1)), axis=0,
                                                  dtype=np.float64), 1024, np.float32)
        del base, x, cols


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_entries_reject_what_they_cannot_read(dtype):
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(8 * itemsize + 1, np.uint8)
    unaligned = raw[1:].view(dtype)[:4].reshape(1, 4)
    a = np.ones((1, 2, 3), dtype)
    b = np.ones((1, 3, 4), dtype)
    out = np.empty((1, 2, 4), dtype)
    cases = [
        (ValueError, lambda: _native.gemm(a, np.ones((1, 2, 4), dtype), out, 1)),  # K differs
        (ValueError, lambda: _native.gemm(a, b, np.empty((1, 2, 5), dtype), 1)),  # out shape
        (ValueError, lambda: _native.gemm(a[0], b, out, 1)),  # ndim
        (ValueError, lambda: _native.gemm(a[None], b, out, 1)),  # ndim differs
        (ValueError, lambda: _native.gemm(a[None, None], b[None, None], out[None, None], 1)),
        (ValueError, lambda: _native.gemm(a[None], b[None][[0, 0]], out[None], 1)),  # batch
        (TypeError, lambda: _native.gemm(a.astype(np.int32), b, out, 1)),  # dtype
        (TypeError, lambda: _native.gemm(a, b.astype(np.float16), out, 1)),
        (ValueError, lambda: _native.gemm(a, b, out[:, :, ::2], 1)),  # out not contiguous
        (ValueError, lambda: _native.gemm(a, b, out[:, ::-1], 1)),  # negative out stride
        (ValueError, lambda: _native.reduce(9, a[0], np.empty(2, dtype))),  # op
        (ValueError, lambda: _native.reduce(0, a[0], np.empty(3, dtype))),  # out rows
        (ValueError, lambda: _native.reduce(4, a[0], np.empty(2, np.float64))),  # argmax out
        (ValueError, lambda: _native.reduce(4, np.ones((2, 0), dtype), np.empty(2, np.int64))),
        (ValueError, lambda: _native.reduce(0, unaligned, np.empty(1, dtype))),  # alignment
        (ValueError, lambda: _native.fma(*(np.ones(3, dtype),) * 3, np.empty(4, dtype))),
        (ValueError, lambda: _native.fma(np.ones(3, dtype)[None], *(np.ones(3, dtype),) * 3)),
        (ValueError, lambda: _native.fma(unaligned[0], *(np.ones(4, dtype),) * 3)),
    ]
    for error, call in cases:
        with pytest.raises(error):
            call()
    readonly = np.empty((1, 2, 4), dtype)
    readonly.flags.writeable = False
    with pytest.raises((BufferError, ValueError)):
        _native.gemm(a, b, readonly, 1)

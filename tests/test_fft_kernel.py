"""invarax's own FFT kernel (kernels/fft.py, csrc/fft.c): accuracy against a complex128
reference with an explicit bound, for every kind, lengths 1..64, primes, powers of 2, 3, 5
and 2^20; and the contract bitwise: a line's bits are the same alone, in a batch of any
size, in any block of lanes, along another axis, for any thread count and at every
dispatch level."""

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax.kernels import _native
from invarax.kernels import fft as kfft

KINDS = ["FFT", "IFFT", "RFFT", "IRFFT"]
LENGTHS = sorted(set(range(1, 65)) | {67, 97, 101, 127, 128, 131, 243, 256, 625, 729, 1000,
                                      1024, 2048, 3125, 4096, 6561, 1021, 4099})


def _operand(rng, kind, shape, dtype):
    """The input of ``kind`` for transforms of length shape[-1] (IRFFT: shape[-1] // 2 + 1
    bins), dtype the real type."""
    n = shape[-1]
    if kind == "RFFT":
        return rng.standard_normal(shape).astype(dtype)
    if kind == "IRFFT":
        shape = (*shape[:-1], n // 2 + 1)
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return x.astype(kfft.COMPLEX[np.dtype(dtype)])


def _reference(kind, x, n):
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    return {"FFT": np.fft.fft, "IFFT": np.fft.ifft, "RFFT": np.fft.rfft,
            "IRFFT": lambda a, n: np.fft.irfft(a, n)}[kind](wide, n=n)


def _check_accuracy(kind, n, dtype, rng, batch=3):
    x = _operand(rng, kind, (batch, n), dtype)
    got = kfft.fft_1d(x, kind, n, 1)
    ref = _reference(kind, x, n)
    assert got.shape == ref.shape
    assert got.dtype == (np.dtype(dtype) if kind == "IRFFT" else kfft.COMPLEX[np.dtype(dtype)])
    # the relative L2 error of each transform is at most log2(n) eps
    bound = max(np.log2(n), 1.0) * np.finfo(dtype).eps
    err = np.linalg.norm(got - ref, axis=-1)
    scale = np.linalg.norm(ref, axis=-1)
    assert np.all(err <= bound * scale), (kind, n, (err / scale).max() / bound)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", KINDS)
def test_accuracy_against_complex128(kind, dtype, rng):
    for n in LENGTHS:
        _check_accuracy(kind, n, dtype, rng)


@pytest.mark.parametrize("kind", ["RFFT", "FFT", "IRFFT"])
def test_accuracy_2_to_the_20(kind, rng):
    _check_accuracy(kind, 1 << 20, np.float32, rng, batch=1)


def test_exact_cases():
    """The impulse's transform is exactly ones for every mixed-radix length (Bluestein's,
    e.g. 37, multiplies by chirps and rounds); a constant's spectrum is one spike."""
    for n in (1, 2, 3, 8, 12, 30, 64, 29 * 31):
        impulse = np.zeros(n, np.complex64)
        impulse[0] = 1
        assert_bitwise(kfft.fft_1d(impulse, "FFT", n, 0), np.ones(n, np.complex64))
        ones = np.ones(n, np.float64)
        spectrum = kfft.fft_1d(ones, "RFFT", n, 0)
        np.testing.assert_allclose(spectrum, np.eye(1, n // 2 + 1)[0] * n, atol=1e-13 * n)
        back = kfft.fft_1d(spectrum, "IRFFT", n, 0)
        np.testing.assert_allclose(back, ones, rtol=1e-14)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_norm_modes_against_numpy(name, norm, rng):
    for n in (5, 16, 37, 60):
        kind = name.upper()
        x = _operand(rng, kind, (2, n), np.float32)
        got = getattr(jnp.fft, name)(x, n=n, norm=norm)
        ref = getattr(np.fft, name)(x.astype(np.complex128 if np.iscomplexobj(x) else
                                             np.float64), n=n, norm=norm)
        bound = 2 * max(np.log2(n), 1.0) * np.finfo(np.float32).eps
        assert np.linalg.norm(got - ref) <= bound * np.linalg.norm(ref), (name, norm, n)


# ---------------------------------------------------------------------------------------
# The contract, bitwise.


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", KINDS)
def test_n1_any_batch_size_and_lane_block(kind, dtype, rng, monkeypatch):
    """Rows alone, in batches of 1..17 (every fill of a block of lanes), with any number of
    lanes, and as columns of a transposed operand: the same bits."""
    for n in (1, 6, 16, 37, 64, 96, 128, 243):
        x = _operand(rng, kind, (17, n), dtype)
        alone = [kfft.fft_1d(x[i : i + 1], kind, n, 1)[0] for i in range(17)]
        for lanes in (1, 3, 16):
            monkeypatch.setattr(kfft, "LANES", lanes)
            for size in range(1, 18):
                out = kfft.fft_1d(x[:size], kind, n, 1)
                for i in range(size):
                    assert_bitwise(out[i], alone[i])
            columns = kfft.fft_1d(np.ascontiguousarray(x.T), kind, n, 0)
            assert_bitwise(np.ascontiguousarray(columns.T), np.stack(alone))
            middle = kfft.fft_1d(np.ascontiguousarray(x.T[None]), kind, n, 1)[0]
            assert_bitwise(np.ascontiguousarray(middle.T), np.stack(alone))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "fft2", "irfftn"])
def test_n1_vmap_and_n3_jit_for_every_kind_of_length(name, rng):
    """vmap row i is the row alone, and jit is eager, for mixed-radix, odd-radix, Bluestein
    and fused power-of-two lengths."""
    f = getattr(jnp.fft, name)
    for n in (12, 37, 64, 243, 1024):
        kind = "IRFFT" if name.startswith("irfft") else name.upper().rstrip("2")
        shape = (5, 3, n) if name in ("fft2", "irfftn") else (5, n)
        x = _operand(rng, kind, shape, np.float32)
        batched = eager_and_jit(invarax.vmap(f), x)
        for i in range(5):
            assert_bitwise(batched[i], eager_and_jit(f, x[i]))


@pytest.mark.parametrize("kind", KINDS)
def test_n5_thread_count_does_not_change_bits(kind, rng, monkeypatch):
    x = _operand(rng, kind, (3, 64, 1024), np.float32)
    y = _operand(rng, kind, (200, 60), np.float64)
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append((kfft.fft_1d(x, kind, 1024, 2), kfft.fft_1d(y, kind, 60, 1),
                        kfft.fft_1d(x, "FFT" if kind != "RFFT" else kind, 64, 1)
                        if kind != "IRFFT" else None))
    for other in results[1:]:
        for a, b in zip(other, results[0], strict=True):
            if a is not None:
                assert_bitwise(a, b)


def test_every_dispatch_level_gives_the_same_bits(rng):
    levels = _native.isas()
    if len(levels) < 2:
        pytest.skip("this CPU runs one dispatch level only")
    cases = []
    for kind in KINDS:
        for n in (7, 16, 45, 61, 64, 96, 1024, 4096):
            for dtype in (np.float32, np.float64):
                cases.append((kind, n, _operand(rng, kind, (5, n), dtype)))
    previous = _native.set_isa(levels[-1])
    try:
        digests = {}
        for level in levels:
            _native.set_isa(level)
            digests[level] = [kfft.fft_1d(x, kind, n, 1).tobytes() for kind, n, x in cases]
    finally:
        _native.set_isa(previous)
    for level in levels[1:]:
        differ = [cases[i][:2] for i, (a, b) in
                  enumerate(zip(digests[level], digests[levels[0]], strict=True)) if a != b]
        assert not differ, f"{level} differs from {levels[0]} in {differ}"


def test_twiddles_are_exact_where_the_value_is():
    """The plan's twiddles at multiples of pi/4: the FFT of length 8 of e_1 is W_8^k."""
    e1 = np.zeros(8, np.complex128)
    e1[1] = 1
    w = kfft.fft_1d(e1, "FFT", 8, 0)
    h = np.sqrt(0.5)
    expected = np.array([1, h - 1j * h, -1j, -h - 1j * h, -1, -h + 1j * h, 1j, h + 1j * h])
    np.testing.assert_array_equal(w.real, expected.real)
    np.testing.assert_array_equal(w.imag, expected.imag)


def test_length_zero():
    """Length 0: an empty result, as JAX's (NumPy raises); an RFFT of length 0, which JAX
    cannot compile, is a clear error."""
    assert kfft.fft_1d(np.zeros((2, 0), np.complex64), "FFT", 0, 1).shape == (2, 0)
    assert jnp.fft.irfft(jnp.ones(1)).shape == (0,)
    with pytest.raises(ValueError, match="an RFFT needs a length of at least 1, got 0"):
        kfft.fft_1d(np.zeros((2, 0), np.float32), "RFFT", 0, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_n1_with_infinities_and_nans(kind, rng):
    """Rows against columns (the fused one-row path against the lanes): the same bits,
    except that a NaN's sign and payload are outside the contract (docs/numerics.md)."""
    for n in (64, 256, 60):
        x = _operand(rng, kind, (5, n), np.float32)
        x[1, 3], x[2, 5], x[4, 7] = np.nan, np.inf, -0.0
        if np.iscomplexobj(x):
            x[3, 0] = complex(-np.inf, np.nan)
        rows = kfft.fft_1d(x, kind, n, 1)
        cols = np.ascontiguousarray(kfft.fft_1d(np.ascontiguousarray(x.T), kind, n, 0).T)
        real = rows.view(kfft.REAL.get(rows.dtype, rows.dtype))
        other = cols.view(real.dtype)
        nan = np.isnan(real)
        np.testing.assert_array_equal(nan, np.isnan(other))
        assert_bitwise(np.where(nan, 0, real), np.where(nan, 0, other))


def test_benchmark_of_row_lengths_runs(capsys):
    """benchmarks/fft_lengths.py end to end on tiny sizes (no timing asserted)."""
    pytest.importorskip("jax")
    from benchmarks import fft_lengths

    fft_lengths.main(["--tiny"])
    out = capsys.readouterr().out
    assert out.count("\n| 16 |") + out.count("\n| 37 |") == 2 and "load average" in out

"""jnp.fft and lax.fft: values against NumPy (float64 reference), n/s/axes/norm, derivatives
(check_grads: the JVP and JAX's transposes), the contract bitwise (N1, N2, N3, N5; the
kernel's own tests are in test_fft_kernel.py), JAX differential tests and errors."""

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import lax

ONE_AXIS = ["fft", "ifft", "rfft", "irfft"]
MANY_AXES = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


def _input(rng, name, shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if name.startswith("irfft") or (name.startswith(("fft", "ifft")) and name != "fftfreq"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype if np.isrealobj(x) else np.result_type(dtype, np.complex64))


def _tol(dtype, n):
    eps = np.finfo(dtype).eps
    return dict(rtol=0, atol=8 * eps * np.log2(max(n, 2)))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 6, 11])
@pytest.mark.parametrize("name", ONE_AXIS)
def test_one_axis_against_numpy(name, n, norm, rng):
    x = _input(rng, name, (3, 8, 5))
    got = eager_and_jit(lambda a: getattr(jnp.fft, name)(a, n=n, axis=1, norm=norm), x)
    ref = getattr(np.fft, name)(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64),
                                n=n, axis=1, norm=norm)
    assert got.shape == ref.shape
    assert got.dtype == (np.float32 if name == "irfft" else np.complex64)
    scale = max(1.0, np.abs(ref).max())
    np.testing.assert_allclose(np.asarray(got) / scale, ref / scale, **_tol(np.float32, 11))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("s, axes", [(None, None), ((4, 6), (0, 2)), (None, (2, 0)),
                                     ((3, 5, 4), None)])
@pytest.mark.parametrize("name", MANY_AXES)
def test_many_axes_against_numpy(name, s, axes, norm, rng, x64):
    if name.endswith("2") and (axes is None and s is not None and len(s) == 3):
        pytest.skip("2-d transforms take two axes")
    x = _input(rng, name, (4, 3, 6), np.float64)
    kwargs = {"s": s, "norm": norm}
    if axes is not None or name.endswith("2"):
        kwargs["axes"] = axes if axes is not None else (-2, -1)
    got = eager_and_jit(lambda a: getattr(jnp.fft, name)(a, **kwargs), x)
    if s is not None and "axes" not in kwargs:  # NumPy 2 deprecates s without axes
        kwargs["axes"] = tuple(range(-len(s), 0))
    ref = getattr(np.fft, name)(x, **kwargs)
    assert got.shape == ref.shape
    assert got.dtype == (np.float64 if name.startswith("irfft") else np.complex128)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * max(1, np.abs(ref).max()))


def test_freqs_and_shifts(x64):
    for n, d in [(5, 1.0), (8, 0.1)]:
        np.testing.assert_allclose(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=1e-15)
        np.testing.assert_allclose(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), rtol=1e-15)
    invarax.config.update("jax_enable_x64", False)
    assert jnp.fft.fftfreq(4).dtype == np.float32
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


def test_lax_fft():
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    got = lax.fft(x, lax.FftType.RFFT, (4,))
    np.testing.assert_allclose(got, np.fft.rfft(x), rtol=1e-6)
    back = lax.fft(got, "IRFFT", (4,))
    np.testing.assert_allclose(back, x, atol=1e-6)
    assert lax.fft(x, "FFT", (2, 4)).dtype == np.complex64


# ---------------------------------------------------------------------------------------
# Derivatives: real-valued views of each transform, forward and reverse mode (the reverse
# mode runs the transpose rules).


def _parts(z):
    return jnp.real(z), jnp.imag(z)


def _complex(x, y):
    return jnp.real(x) + 1j * y


GRAD_CASES = {
    "fft": (lambda x, y: _parts(jnp.fft.fft(_complex(x, y), n=7)), (3, 6)),
    "ifft_ortho": (lambda x, y: _parts(jnp.fft.ifft(_complex(x, y), norm="ortho")), (3, 6)),
    "rfft_even": (lambda x, y: _parts(jnp.fft.rfft(x * y)), (2, 8)),
    "rfft_odd": (lambda x, y: _parts(jnp.fft.rfft(x + y, n=7)), (2, 7)),
    "irfft_even": (lambda x, y: jnp.fft.irfft(_complex(x, y)), (2, 5)),
    "irfft_odd": (lambda x, y: jnp.fft.irfft(_complex(x, y), n=9), (2, 5)),
    "fft2": (lambda x, y: _parts(jnp.fft.fft2(_complex(x, y))), (3, 4)),
    "rfftn": (lambda x, y: _parts(jnp.fft.rfftn(x - y, axes=(0, 1))), (4, 5)),
    "irfftn": (lambda x, y: jnp.fft.irfftn(_complex(x, y), s=(3, 6), norm="forward"), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_check_grads(name, x64):
    f, shape = GRAD_CASES[name]
    rng = np.random.default_rng(1)
    check_grads(f, (rng.standard_normal(shape), rng.standard_normal(shape)), order=1)


# ---------------------------------------------------------------------------------------
# The contract.


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "irfftn"])
def test_n1_vmap_and_n2_rows(name, rng):
    f = getattr(jnp.fft, name)
    if name == "irfftn":
        f = lambda a: jnp.fft.irfftn(a, axes=(-2, -1))  # noqa: E731
    xs = _input(rng, name, (6, 4, 10))
    full = np.asarray(f(xs))
    batched = np.asarray(invarax.vmap(f)(xs))
    for i in range(6):
        alone = f(xs[i])
        assert_bitwise(batched[i], alone)
        assert_bitwise(full[i], alone)
    assert_bitwise(f(xs[:2]), full[:2])


def test_n3_jit_is_eager_for_grads(rng):
    x = rng.standard_normal((3, 16)).astype(np.float32)

    def loss(a):
        return jnp.sum(jnp.abs(jnp.fft.rfft(a)) ** 2) + jnp.sum(jnp.fft.irfft(jnp.fft.fft(a)))

    eager_and_jit(invarax.grad(loss), x)


# ---------------------------------------------------------------------------------------
# Errors and JAX.


def test_errors():
    with pytest.raises(TypeError, match="RFFT takes real input, got complex64"):
        jnp.fft.rfft(jnp.ones(4) * 1j)
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fft2(jnp.ones((2, 2)), axes=(0, 0))
    with pytest.raises(ValueError, match="norm must be one of"):
        jnp.fft.fft(jnp.ones(4), norm="unitary")
    with pytest.raises(ValueError, match=r"s=\(3,\) and axes=\(0, 1\) have different lengths"):
        jnp.fft.fftn(jnp.ones((2, 2)), s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match="1 to 3 axes"):
        jnp.fft.fftn(jnp.ones((2, 2, 2, 2)))


def test_names_port_from_jax():
    jax = pytest.importorskip("jax")
    assert not [n for n in jnp.fft.__all__ if not hasattr(jax.numpy.fft, n)]


@pytest.mark.parametrize("name", ONE_AXIS + MANY_AXES)
def test_against_jax(name, rng):
    jax = pytest.importorskip("jax")
    x = _input(rng, name, (3, 4, 6))
    ours, theirs = getattr(jnp.fft, name)(x), getattr(jax.numpy.fft, name)(x)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4)


def test_gradients_against_jax(rng):
    jax = pytest.importorskip("jax")
    x = rng.standard_normal((2, 9)).astype(np.float32)

    def loss(m):
        def f(a):
            spec = m.fft.rfft(a, n=12)
            return m.sum(m.fft.irfft(spec * spec, n=11) ** 2) + m.sum(m.abs(m.fft.fft(a)))
        return f

    np.testing.assert_allclose(invarax.grad(loss(jnp))(x), jax.grad(loss(jax.numpy))(x),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2"])
def test_n5_thread_count_does_not_change_bits(name, monkeypatch, rng):
    x = _input(rng, name, (7, 48, 128))
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append(np.asarray(getattr(jnp.fft, name)(x)))
    for other in results[1:]:
        assert_bitwise(other, results[0])

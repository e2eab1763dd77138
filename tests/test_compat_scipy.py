"""The ``jax.scipy`` functions real code imports, against JAX (and SciPy in float64 for
accuracy): ``special.i1e``/``i1``/``multigammaln``, ``linalg.toeplitz``, ``fft.dct`` and
its family, ``stats.gaussian_kde``, ``optimize.minimize``; each bitwise under jit and vmap."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax.scipy import fft, linalg, optimize, special, stats
from tests.helpers import assert_bitwise, data

jax = pytest.importorskip("jax")
pytest.importorskip("jax.scipy.optimize")
scipy_special = pytest.importorskip("scipy.special")

X = np.concatenate([np.linspace(-30, 30, 241), [0.0, 7.999, 8.0, 8.001, 1e3, -1e4]])


@pytest.mark.parametrize("name", ["i1e", "i1"])
def test_bessel_i1_accuracy_and_jax(name):
    x = np.clip(X, -80, 80) if name == "i1" else X
    exact = getattr(scipy_special, name)(x)
    with invarax.config.flag("jax_enable_x64", True):
        ours64 = np.asarray(getattr(special, name)(x))
    assert np.max(np.abs(ours64 - exact) / np.maximum(np.abs(exact), 1e-300)) < 1e-14
    x32 = x.astype(np.float32)
    ours = np.asarray(getattr(special, name)(x32))
    theirs = np.asarray(getattr(jax.scipy.special, name)(x32))
    scale = np.maximum(np.abs(exact), 1e-30)
    assert np.max(np.abs(ours - exact) / scale) < 6e-7  # exp(|x|) amplifies the tail's
    assert np.max(np.abs(theirs - exact) / scale) < 2e-6  # JAX's own error, for scale
    grads = invarax.vmap(invarax.grad(getattr(special, name)))(x32[:50])
    np.testing.assert_allclose(grads, jax.vmap(jax.grad(getattr(jax.scipy.special, name)))(
        x32[:50]), rtol=2e-5, atol=1e-7)
    assert_bitwise(invarax.jit(getattr(special, name))(x32), ours)
    assert_bitwise(invarax.vmap(getattr(special, name))(x32[:, None])[:, 0], ours)


def test_multigammaln_matches_jax():
    a = np.array([[2.5, 3.0], [10.0, 7.25]], np.float32)
    np.testing.assert_allclose(special.multigammaln(a, 3),
                               jax.jit(jax.scipy.special.multigammaln, static_argnums=1)(a, 3),
                               rtol=2e-6)
    with pytest.raises(invarax.errors.ConcretizationTypeError, match="static"):
        invarax.jit(special.multigammaln)(a, 2)


def test_toeplitz_is_jaxs():
    for c, r in [(np.array([1 + 2j, 3j, 2], np.complex64), None),
                 (np.ones((2, 3), np.float32), np.arange(4.0, dtype=np.float32))]:
        ours, theirs = linalg.toeplitz(c, r), jax.jit(jax.scipy.linalg.toeplitz)(c, r)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)  # (JAX's conj(2+0j) is 2+0j there)
    assert linalg.toeplitz(np.float32(2.0)).shape == (1, 1)


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_dct_matches_jax(name):
    x = data((6, 5))
    for kwargs in ({}, {"norm": "ortho", "n": 7, "axis": 0}, {"n": 3}):  # padded, cut
        ours = getattr(fft, name)(x, **kwargs)
        theirs = jax.jit(lambda v, kw=kwargs: getattr(jax.scipy.fft, name)(v, **kw))(x)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=2e-6)
        assert_bitwise(invarax.jit(lambda v, kw=kwargs: getattr(fft, name)(v, **kw))(x), ours)
    rows = invarax.vmap(getattr(fft, name))(x)
    assert_bitwise(rows, getattr(fft, name)(x))


def test_dctn_and_roundtrip():
    x = data((4, 5, 3))
    for kwargs in ({}, {"s": (6, 4), "norm": "ortho"}):
        for name in ("dctn", "idctn"):
            theirs = jax.jit(lambda v, kw=kwargs, n=name: getattr(jax.scipy.fft, n)(v, **kw))(x)
            np.testing.assert_allclose(getattr(fft, name)(x, **kwargs), theirs, rtol=1e-5,
                                       atol=2e-5)
    np.testing.assert_allclose(fft.idctn(fft.dctn(x)), x, atol=2e-6)
    with pytest.raises(NotImplementedError, match="type 2"):
        fft.dct(x, type=3)


def test_gaussian_kde_matches_jax():
    rng = np.random.default_rng(0)
    d2 = rng.standard_normal((2, 30)).astype(np.float32)
    w = rng.uniform(size=30).astype(np.float32)
    pts = rng.standard_normal((2, 5)).astype(np.float32)
    both = jax.jit(lambda k, p: (k.evaluate(p), k.logpdf(p)))
    for args in [(d2, "silverman", w), (d2[:1], 0.3)]:
        ours, theirs = stats.gaussian_kde(*args), jax.scipy.stats.gaussian_kde(*args)
        p = pts[: ours.d]
        evaluate, logpdf = both(theirs, p)
        np.testing.assert_allclose(ours.evaluate(p), evaluate, rtol=2e-6)
        np.testing.assert_allclose(ours.logpdf(p), logpdf, rtol=2e-6, atol=1e-6)
        assert_bitwise(invarax.jit(lambda k, x: k.pdf(x))(ours, p), ours.pdf(p))
    one, their_one = stats.gaussian_kde(d2[0]), jax.scipy.stats.gaussian_kde(d2[0])
    np.testing.assert_allclose(one.integrate_box_1d(-1.0, 0.5),
                               their_one.integrate_box_1d(-1.0, 0.5), rtol=1e-6)
    np.testing.assert_allclose(one.resample(invarax.random.key(0), (4,)),
                               their_one.resample(jax.random.key(0), (4,)), rtol=1e-6)


def _quadratic(lib):
    a = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], np.float32)
    return lambda x, c: 0.5 * x @ (a @ x) - lib.numpy.sum(c * x) + lib.numpy.sum(x ** 4) / 8


def test_minimize_matches_jax():
    c = np.array([1.0, -2.0, 0.5], np.float32)
    ours = optimize.minimize(_quadratic(invarax), np.zeros(3, np.float32), args=(c,),
                             method="BFGS")
    theirs = jax.jit(lambda c: jax.scipy.optimize.minimize(
        _quadratic(jax), np.zeros(3, np.float32), args=(c,), method="BFGS"))(c)
    # (in float32 both stop at the same iterate, the line search unable to go further)
    assert (int(ours.status), int(ours.nit)) == (int(theirs.status), int(theirs.nit))
    np.testing.assert_allclose(ours.x, theirs.x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.fun, theirs.fun, rtol=1e-6)
    easy = optimize.minimize(_quadratic(invarax), np.zeros(3, np.float32), args=(c,),
                             method="BFGS", options={"gtol": 1e-3})
    assert bool(easy.success) and int(easy.status) == 0
    jitted = invarax.jit(lambda c: optimize.minimize(_quadratic(invarax), jnp.zeros(3),
                                                     args=(c,), method="BFGS").x)
    assert_bitwise(jitted(c), ours.x)
    with pytest.raises(ValueError, match="not recognized"):
        optimize.minimize(_quadratic(invarax), np.zeros(3), args=(c,), method="nelder-mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        optimize.minimize(_quadratic(invarax), np.zeros(3), args=c, method="BFGS")

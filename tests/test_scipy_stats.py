"""``invarax.scipy.stats`` and the special functions under it: values against JAX (float32)
and SciPy (float64, with explicit bounds), derivatives by ``check_grads``, jit == eager and
vmap rows bitwise."""

import numpy as np
import pytest
from helpers import jax_jit_call

import invarax
import invarax.numpy as jnp
from invarax.scipy import special, stats
from invarax.test_util import check_grads

R = np.random.default_rng(0)
X = np.linspace(-3, 3, 13).astype(np.float32)
POS = np.linspace(0.05, 6, 13).astype(np.float32)
UNIT = np.linspace(0.01, 0.99, 13).astype(np.float32)
K = np.array([0, 1, 2, 3, 5, 8, -1, 2.5, 0, 1, 4, 7, 10], np.float32)
B01 = np.array([0, 1, 0, 1, 2, -1, 0, 1, 1, 0, 0.5, 1, 0], np.float32)

CASES = [
    ("norm", "logpdf", (X, 0.5, 2.0)), ("norm", "pdf", (X,)), ("norm", "cdf", (X, 0.5, 2.0)),
    ("norm", "logcdf", (X * 4,)), ("norm", "sf", (X,)), ("norm", "logsf", (X * 4,)),
    ("norm", "ppf", (UNIT, 1.0, 3.0)), ("norm", "isf", (UNIT,)),
    ("beta", "logpdf", (UNIT, 2.0, 3.5)), ("beta", "pdf", (UNIT * 2, 0.7, 1.5, 0.0, 2.0)),
    ("beta", "cdf", (UNIT, 2.0, 3.5)), ("beta", "logcdf", (UNIT, 0.5, 0.5)),
    ("beta", "sf", (UNIT, 2.0, 3.5)), ("beta", "logsf", (UNIT, 5.0, 1.5)),
    ("gamma", "logpdf", (POS, 2.5)), ("gamma", "pdf", (POS, 0.8, 0.0, 2.0)),
    ("gamma", "cdf", (POS, 2.5)), ("gamma", "logcdf", (POS, 1.5)),
    ("gamma", "sf", (POS, 2.5)), ("gamma", "logsf", (POS, 3.0, 0.1, 1.5)),
    ("poisson", "entropy", (np.array([0, 0.5, 1, 5, 9.9, 10, 50, 99, 100, 200], np.float32),)),
    ("poisson", "logpmf", (K, 3.5)), ("poisson", "pmf", (K, 0.5)), ("poisson", "cdf", (K, 3.5)),
    ("bernoulli", "logpmf", (B01, 0.3)), ("bernoulli", "pmf", (B01, 0.3)),
    ("bernoulli", "cdf", (B01, 0.3)), ("bernoulli", "ppf", (UNIT, 0.3)),
    ("t", "logpdf", (X, 3.0)), ("t", "pdf", (X, 7.5, 0.5, 2.0)),
    ("uniform", "logpdf", (X, -1.0, 2.0)), ("uniform", "pdf", (X, -1.0, 2.0)),
    ("uniform", "cdf", (X, -1.0, 2.0)), ("uniform", "ppf", (UNIT, -1.0, 2.0)),
    ("logistic", "logpdf", (X, 0.5, 2.0)), ("logistic", "pdf", (X,)),
    ("logistic", "cdf", (X,)), ("logistic", "sf", (X,)), ("logistic", "ppf", (UNIT,)),
    ("logistic", "isf", (UNIT, 1.0, 2.0)),
    ("laplace", "logpdf", (X, 0.5, 2.0)), ("laplace", "pdf", (X,)), ("laplace", "cdf", (X,)),
    ("expon", "logpdf", (X,)), ("expon", "pdf", (X, -1.0, 2.0)), ("expon", "cdf", (X,)),
    ("expon", "logcdf", (POS,)), ("expon", "sf", (X,)), ("expon", "logsf", (X,)),
    ("expon", "ppf", (UNIT,)),
]


@pytest.mark.parametrize("dist, fn, args", CASES, ids=[f"{d}.{f}-{i}" for i, (d, f, _)
                                                       in enumerate(CASES)])
def test_matches_jax(dist, fn, args):
    jax = pytest.importorskip("jax")
    import jax.scipy.stats as jax_stats

    ours = np.asarray(getattr(getattr(stats, dist), fn)(*args))
    theirs = np.asarray(jax_jit_call(jax, getattr(getattr(jax_stats, dist), fn), args))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    # float32: lgamma-based normalisers cancel to values near 0 (beta.logpdf), hence atol
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=5e-6, equal_nan=True)


SPECIAL = [
    ("gammaln", (np.concatenate([POS, -POS - 0.5, [30.0, 1e3]]),)),
    ("digamma", (np.concatenate([POS, -POS - 0.5, [30.0]]),)),
    ("betaln", (POS, POS[::-1])),
    ("gammainc", (POS, POS[::-1] * 2)), ("gammaincc", (POS, POS[::-1] * 2)),
    ("betainc", (POS, POS[::-1], UNIT)), ("xlogy", (X, POS)), ("xlog1py", (X, UNIT)),
    ("ndtr", (X * 3,)), ("log_ndtr", (np.concatenate([X * 3, [-25.0, -40.0]]),)),
    ("ndtri", (UNIT,)), ("expit", (X,)), ("logit", (UNIT,)), ("entr", (X,)),
    ("i0", (X * 4,)), ("i0e", (X * 30,)),
]


@pytest.mark.parametrize("name, args", SPECIAL, ids=[n for n, _ in SPECIAL])
def test_special_matches_jax(name, args):
    jax = pytest.importorskip("jax")
    import jax.scipy.special as jax_special

    args = tuple(np.asarray(a, np.float32) for a in args)
    ours = np.asarray(getattr(special, name)(*args))
    theirs = np.asarray(jax.jit(getattr(jax_special, name))(*args))  # one program, not per op
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6, equal_nan=True)


# name, float64 arguments, bound on the error relative to SciPy's float64 value
ACCURACY = [
    ("gammaln", (np.linspace(0.01, 50, 40),), 1e-14),
    ("gammainc", (np.linspace(0.1, 40, 40), np.linspace(0.05, 60, 40)[::-1]), 1e-12),
    ("gammaincc", (np.linspace(0.1, 40, 40), np.linspace(0.05, 60, 40)[::-1]), 1e-11),
    ("betainc", (np.linspace(0.2, 30, 40), np.linspace(0.3, 20, 40)[::-1],
                 np.linspace(0.01, 0.99, 40)), 1e-11),
    ("digamma", (np.linspace(0.1, 40, 40),), 1e-13),
    ("ndtr", (np.linspace(-30, 8, 40),), 1e-12),  # erfc(-x/sqrt 2): x/sqrt(2) rounds
    ("log_ndtr", (np.linspace(-60, 5, 40),), 1e-12),
]


@pytest.mark.parametrize("name, args, bound", ACCURACY, ids=[n for n, _, _ in ACCURACY])
def test_float64_accuracy(name, args, bound, x64):
    sp = pytest.importorskip("scipy.special")
    ours = np.asarray(getattr(special, name)(*args))
    want = getattr(sp, name)(*args)
    assert np.all(np.abs(ours - want) <= bound * np.maximum(np.abs(want), 1e-300)), \
        np.max(np.abs(ours - want) / np.abs(want))


DIFFERENTIABLE = {
    "norm.logpdf": lambda x: stats.norm.logpdf(x, x[0], 1.5 + x[1] ** 2),
    "norm.logcdf": lambda x: stats.norm.logcdf(x * 3.0),
    "t.logpdf": lambda x: stats.t.logpdf(x, 3.0 + x[2] ** 2),
    "beta.logpdf": lambda x: stats.beta.logpdf(jnp.abs(x) / 3.0 + 0.05, 2.0 + x[0] ** 2, 3.0),
    "gamma.logpdf": lambda x: stats.gamma.logpdf(jnp.abs(x) + 0.5, 2.0 + x[1] ** 2),
    "gamma.cdf": lambda x: stats.gamma.cdf(jnp.abs(x) + 0.5, 2.5),
    "beta.cdf": lambda x: stats.beta.cdf(jnp.abs(x) / 3.0 + 0.05, 2.0, 3.0),
    "poisson.logpmf": lambda x: stats.poisson.logpmf(jnp.array([0.0, 1.0, 3.0, 2.0, 5.0]),
                                                     2.0 + x ** 2),
    "logistic.logpdf": lambda x: stats.logistic.logpdf(x, 0.3, 1.0 + x[0] ** 2),
    "laplace.logpdf": lambda x: stats.laplace.logpdf(x, 0.05, 2.0),
    "expon.logpdf": lambda x: stats.expon.logpdf(jnp.abs(x), -0.5, 1.0 + x[0] ** 2),
    "norm.ppf": lambda x: stats.norm.ppf(jnp.abs(x) / 3.0 + 0.05),
    "gammaln": lambda x: special.gammaln(jnp.abs(x) + 0.3),
    "digamma": lambda x: special.digamma(jnp.abs(x) + 0.3),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives(name):
    x = np.array([0.3, -1.2, 0.8, 2.1, -0.4])
    check_grads(DIFFERENTIABLE[name], (x,), order=2 if name in ("gammaln", "norm.logpdf")
                else 1)


def test_parameter_derivatives_not_written_say_so():
    with pytest.raises(NotImplementedError, match="with respect to b"):
        invarax.grad(lambda b: special.betainc(2.0, b, 0.5))(1.5)
    with pytest.raises(NotImplementedError, match="igamma_grad_a with respect to a"):
        invarax.grad(invarax.grad(lambda a: special.gammainc(a, 2.0)))(1.5)


A_SHAPES = np.array([0.5, 1.0, 2.5, 10.0, 30.0, 0.1, 3.0, 50.0, 200.0, 1.0, 2.0, 0.7])
X_POINTS = np.array([0.2, 3.0, 2.5, 12.0, 25.0, 5.0, 0.01, 80.0, 190.0, 10.0, 30.0, 50.0])


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_derivative_in_a_matches_jax(name, x64):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        want = np.asarray(jax.jit(jax.vmap(jax.grad(getattr(jax.scipy.special, name))))(
            A_SHAPES, X_POINTS))  # one compiled program; eagerly, one per operation
    finally:
        jax.config.update("jax_enable_x64", False)
    got = np.asarray(invarax.vmap(invarax.grad(getattr(special, name)))(A_SHAPES, X_POINTS))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    a32, x32 = A_SHAPES.astype(np.float32), X_POINTS.astype(np.float32)
    invarax.config.update("jax_enable_x64", False)
    got32 = invarax.vmap(invarax.grad(getattr(special, name)))(a32, x32)
    np.testing.assert_allclose(np.asarray(got32), want, rtol=2e-5, atol=1e-30)


def test_gamma_cdf_is_differentiable_in_its_shape():
    check_grads(lambda a: stats.gamma.cdf(jnp.array([0.5, 2.0, 7.0]), 1.5 + a ** 2),
                (np.array(0.8),), order=1)


ROWWISE = {
    "norm.logpdf": stats.norm.logpdf, "beta.cdf": lambda x: stats.beta.cdf(
        jnp.abs(x) / 4.0, 2.0, 3.0), "gamma.sf": lambda x: stats.gamma.sf(jnp.abs(x), 1.5),
    "poisson.cdf": lambda x: stats.poisson.cdf(jnp.round(jnp.abs(x) * 3), 2.0),
    "t.logpdf": lambda x: stats.t.logpdf(x, 4.0), "gammaln": special.gammaln,
    "digamma": special.digamma, "log_ndtr": lambda x: special.log_ndtr(x * 10),
}


@pytest.mark.parametrize("name", sorted(ROWWISE))
def test_jit_is_eager_and_vmap_rows_are_unbatched_bitwise(name):
    f = ROWWISE[name]
    xs = jnp.asarray(R.standard_normal((6, 5)).astype(np.float32))
    for n in (1, 4, 6):
        out = invarax.vmap(f)(xs[:n])
        for i in range(n):
            assert np.array_equal(out[i], f(xs[i]), equal_nan=True)
    assert np.array_equal(invarax.jit(f)(xs), f(xs), equal_nan=True)

"""invarax's own lgamma and digamma (csrc/elementary_gamma.c, docs/numerics.md "lgamma and
digamma"): float32 correctly rounded, float64 within 1 ulp (relative accuracy kept next to
the zeros, tabulated or not), JAX's values at the poles, the same bits at every dispatch
level, eager, under jit and under vmap; the primitives lgamma and digamma and their
derivatives."""

import math
from pathlib import Path

import numpy as np
import pytest
from test_elementary import bits, same

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import _native
from invarax.kernels.elementary import elementary
from invarax.scipy import special as jsp

mpmath = pytest.importorskip("mpmath")
from mp_reference import EXACT  # noqa: E402  (it imports mpmath)

NAMES = ("lgamma", "digamma")


def exact(name, x):
    """name(x) with mpmath at 200 bits; None at the poles."""
    x = float(x)
    if x <= 0 and x == math.floor(x):
        return None
    with mpmath.workprec(200):
        v = mpmath.mpf(x)
        return +EXACT[name](v)


def nearest_f32(value):
    """The float32 nearest an mpmath value (ties to even), from the float32 rounding of its
    double and that float's two neighbours, measured exactly."""
    with np.errstate(over="ignore"):  # above the largest float32 (+ half an ulp): inf
        guess = np.float32(float(value))
    if not np.isfinite(guess):
        return guess
    neighbours = (np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf)))
    with mpmath.workprec(200):
        return min((c for c in neighbours if np.isfinite(c)),
                   key=lambda c: (abs(value - mpmath.mpf(float(c))),
                                  int(np.float32(c).view(np.uint32)) & 1))




# Zeros: lgamma's at 1, 2 and in (-3, -2), (-4, -3); digamma's at 1.46... and in (-1, 0),
# (-2, -1) (all in the kernel's Taylor tables), and one beyond them each.
ZEROS = {"lgamma": (1.0, 2.0, -2.457024738220800623, -2.7476826467274126014,
                    -3.1435808883499800587, -3.9552942848585979285, -9.0000027557319224),
         "digamma": (1.4616321449683623413, -0.50408300826445540926, -1.5734984731623904588,
                     -9.7026725400018637)}


def around(points, dtype, width):
    """The floats within ``width`` ulps of each point."""
    out = []
    for p in points:
        c = dtype(p)
        out.append(c + np.arange(-width, width + 1) * np.spacing(c, dtype=dtype))
    return np.concatenate(out).astype(dtype)


def samples(name, dtype, n=1500, seed=0):
    """Dense inputs: uniform over (-10, 10), both signs of every magnitude from 2^-60 to
    2^60, the zeros' and the poles' neighbourhoods, subnormals, huge values."""
    rng = np.random.default_rng(seed + NAMES.index(name))
    mags = np.exp2(rng.uniform(-60, 60, n // 3))
    poles = [float(-k) for k in range(0, 8)] + [1.0, 2.0, 3.0]
    tiny = np.finfo(dtype).smallest_subnormal
    special = [tiny, 3 * tiny, 1000 * tiny, np.finfo(dtype).tiny, 1e30, np.finfo(dtype).max,
               -1e6 + 0.5, -(2.0**22) - 0.5, 0.5, -0.5, 1e-3, -1e-3]
    x = np.concatenate([rng.uniform(-10, 10, n), mags, -mags, around(ZEROS[name], dtype, 8),
                        around([p + 0.0 for p in poles], dtype, 3), special, -np.array(special)])
    return x.astype(dtype)


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_correctly_rounded(name):
    x = samples(name, np.float32)
    got = elementary(name, x)
    for xi, g in zip(x, got, strict=True):
        value = exact(name, xi)
        if value is None:
            continue
        want = nearest_f32(value)
        assert same(g, want), (name, xi, g, want)


@pytest.mark.parametrize("name", NAMES)
def test_float64_is_within_one_ulp(name):
    x = samples(name, np.float64, n=1000)  # the zeros beyond the tables included
    got = elementary(name, x)
    worst = 0.0
    for xi, g in zip(x, got, strict=True):
        value = exact(name, xi)
        if value is None or not math.isfinite(float(value)) or float(value) == 0:
            continue
        worst = max(worst, float(abs(mpmath.mpf(float(g)) - value) / math.ulp(float(value))))
    assert worst <= 1.0, (name, worst)


def _gamma_ulp():
    """tools/gamma_ulp.py, the float64 error measurement (its samples and ulp errors)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "tools" / "gamma_ulp.py"
    spec = importlib.util.spec_from_file_location("gamma_ulp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# float64 next to the zeros: digamma's every zero above -41 and four out to -2^52 (the
# triple-double sum below -8: 18 ulp at -27.7598 before it), lgamma's 1, 2 and the two in
# each interval down to -18 (the zeros' third parts: 1.08 ulp at -7.000198 before them),
# 8 doubles on each side of the double nearest each; tools/gamma_ulp.py runs the long
# sample (docs/numerics.md gives its figures).
ZERO_ULP_BOUND = 0.51


def test_float64_next_to_every_zero_is_within_the_bound():
    g = _gamma_ulp()
    with mpmath.workprec(g.PREC):
        dz = [mpmath.findroot(mpmath.digamma, mpmath.mpf(1.46))]
    dz += [g.digamma_zero(n) for n in [*range(0, 41), 1000, 10**6, 10**12, 2**52 - 3]]
    for name, zeros in (("digamma", dz), ("lgamma", g.lgamma_zero_list())):
        x, ref = g.zero_sample(name, zeros, 8)
        err = g.ulp_errors(elementary(name, x), ref)
        assert err.max() <= ZERO_ULP_BOUND, (name, err.max(), x[np.argmax(err)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_poles_and_special_values_are_jax_s(dtype):
    x = np.array([0.0, -0.0, -1.0, -7.0, -1e10, np.inf, -np.inf, np.nan, 1.0, 2.0], dtype)
    lg = elementary("lgamma", x)
    assert same(lg[:7], np.full(7, np.inf, dtype)) and np.isnan(lg[7])
    assert same(lg[8:], np.zeros(2, dtype))  # lgamma(1) = lgamma(2) = +0 exactly
    dg = elementary("digamma", x)
    assert np.isnan(dg[[0, 1, 2, 3, 4, 6, 7]]).all() and dg[5] == np.inf
    # digamma(x) -> -1/x next to 0; float32 subnormals overflow to -inf (exactly rounded)
    assert elementary("digamma", np.float32(2.0**-100)) == -(np.float32(2.0**100))
    assert elementary("digamma", np.array(1e-45, np.float32)) == -np.inf


@pytest.mark.parametrize("name", NAMES)
def test_saved_hard_cases_are_correctly_rounded_at_every_level(name):
    # tools/exhaustive_f32.py's finds over all 2^32 inputs (input bits, correct result bits)
    path = Path(__file__).resolve().parents[1] / "tools" / "exhaustive_f32" / f"{name}.txt"
    rows = [line.split() for line in path.read_text().splitlines()] if path.exists() else []
    if not rows:
        pytest.skip(f"no hard cases saved for {name}")
    x = np.array([int(a, 16) for a, _ in rows], np.uint32).view(np.float32)
    want = np.array([int(b, 16) for _, b in rows], np.uint32)
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            assert np.array_equal(bits(elementary(name, x)), want), isa
        finally:
            _native.set_isa(previous)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_dispatch_level_gives_the_same_bits(dtype):
    x = np.concatenate([samples("lgamma", dtype, 3000, seed=5),
                        samples("digamma", dtype, 3000, seed=6)])
    results = {}
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            results[isa] = [elementary(name, x) for name in NAMES]
        finally:
            _native.set_isa(previous)
    first = results.pop(_native.isas()[0])
    for isa, got in results.items():
        for name, a, b in zip(NAMES, got, first, strict=True):
            assert same(a, b), (isa, name)


FUNCTIONS = {"lax.lgamma": lax.lgamma, "lax.digamma": lax.digamma,
             "gammaln": jsp.gammaln, "digamma": jsp.digamma}


@pytest.mark.parametrize("fname", sorted(FUNCTIONS))
def test_jit_vmap_and_grad_give_eager_bits(fname):
    f = FUNCTIONS[fname]
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.uniform(-4.5, 6, (6, 7)).astype(np.float32))
    eager = f(x)
    assert same(invarax.jit(f)(x), eager)  # N3
    for b in (1, 2, 6):  # N1: every row of vmap is the unbatched call's
        rows = invarax.vmap(f)(x[:b])
        for i in range(b):
            assert same(rows[i], f(x[i]))
    g = invarax.grad(lambda v: jnp.sum(f(v)))
    assert same(invarax.jit(g)(x), g(x))


def test_derivatives_are_digamma_and_trigamma(x64):
    x = np.array([0.3, 1.0, 1.4616, 2.5, 7.0, 30.0, -0.5, -2.3, -3.7], np.float64)
    d_lgamma = invarax.vmap(invarax.grad(lax.lgamma))(x)
    assert same(d_lgamma, lax.digamma(x))
    d_digamma = invarax.vmap(invarax.grad(lax.digamma))(x)
    want = [float(mpmath.polygamma(1, v)) for v in x]
    np.testing.assert_allclose(np.asarray(d_digamma), want, rtol=1e-13)
    second = invarax.vmap(invarax.grad(invarax.grad(lax.digamma)))(x)  # the composition's
    np.testing.assert_allclose(np.asarray(second), [float(mpmath.polygamma(2, v)) for v in x],
                               rtol=1e-10)


def test_the_flag_off_keeps_libm_and_the_composition(x64):
    x = np.array([0.5, 3.0, -2.5, 0.0], np.float64)
    with invarax.config.flag("invarax_exact_elementary", False):
        assert same(lax.lgamma(x), np.array([math.lgamma(0.5), math.lgamma(3.0),
                                             math.lgamma(-2.5), np.inf]))
        np.testing.assert_allclose(np.asarray(lax.digamma(x[:3])),
                                   [float(mpmath.digamma(v)) for v in x[:3]], rtol=1e-13)


def test_matches_jax():
    jax = pytest.importorskip("jax")
    jss = pytest.importorskip("jax.scipy.special")
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(0.01, 40, 500), rng.uniform(-6, 0, 500),
                        [0.0, -1.0, -3.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    for ours, theirs in ((jsp.gammaln, jss.gammaln), (jsp.digamma, jss.digamma)):
        a, b = np.asarray(ours(x)), np.asarray(theirs(x))
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-4)  # JAX's float32 formulas
    grads = np.asarray(invarax.vmap(invarax.grad(jsp.digamma))(x[:500]))
    np.testing.assert_allclose(grads, np.asarray(jax.vmap(jax.grad(jss.digamma))(x[:500])),
                               rtol=1e-4)

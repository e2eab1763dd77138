"""invarax's own elementary functions (invarax/kernels/elementary.py, docs/numerics.md N6):
float32 correctly rounded, float64 within 1 ulp, the same bits at every dispatch level, and
the same bits eager, under jit, under vmap and in a fused chunked loop."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
import invarax.scipy.special
from invarax import lax
from invarax.kernels import _native
from invarax.kernels.elementary import NAMES as ALL_NAMES
from invarax.kernels.elementary import elementary

# lgamma and digamma have their own tests (tests/test_elementary_gamma.py: mpmath reference)
NAMES = tuple(name for name in ALL_NAMES if name not in ("lgamma", "digamma"))

mpmath = pytest.importorskip("mpmath")
from mp_reference import EXACT  # noqa: E402  (it imports mpmath)

# 80-bit x87 long double (64-bit significand) is the fast reference: its libm functions are
# accurate to about 2^-63, far below float32's and float64's rounding steps.
LONG = np.finfo(np.longdouble).nmant >= 63
needs_long = pytest.mark.skipif(not LONG, reason="needs an 80-bit long double reference")


def _logistic_ld(x):
    one = np.longdouble(1)
    with np.errstate(over="ignore"):
        return one / (one + np.exp(-x))


def _libm_double(fn):
    """libm's double-precision fn (erf, erfc: NumPy has no long double ones), within 1 ulp of
    float64: the reference only where the tests widen their window to 2^-50 (DOUBLE_REF)."""
    return lambda x: np.frompyfunc(fn, 1, 1)(x.astype(np.float64)).astype(np.longdouble)


def _erfinv_double(x):
    special = pytest.importorskip("scipy.special")  # Boost's erf_inv, within a few ulp
    x = x.astype(np.float64)
    # NaN outside [-1, 1], where scipy's domain-error path takes 60 us an input
    inside = np.abs(x) <= 1
    out = np.full(x.shape, np.nan)
    out[inside] = special.erfinv(x[inside])
    return np.copysign(out, x).astype(np.longdouble)  # erf_inv(-0) = -0


DOUBLE_REF = {"erf", "erfc", "erf_inv"}
REF_LD = {"exp": np.exp, "log": np.log, "expm1": np.expm1, "log1p": np.log1p,
          "tanh": np.tanh, "logistic": _logistic_ld, "sin": np.sin, "cos": np.cos,
          "exp2": np.exp2, "sinh": np.sinh, "cosh": np.cosh, "log2": np.log2,
          "log10": np.log10, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
          "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "tan": np.tan,
          "cbrt": np.cbrt, "erf": _libm_double(math.erf), "erfc": _libm_double(math.erfc),
          "erf_inv": _erfinv_double}
DOMAIN = {"log": (0.0, np.inf), "log1p": (-1.0, np.inf)}


def reference_ld(name, x):
    with np.errstate(all="ignore"):
        return REF_LD[name](x.astype(np.longdouble))


def correctly_rounded_f32(name, x):
    """The float32 nearest the exact value of name(x), for float32 x."""
    ref = reference_ld(name, x)
    with np.errstate(over="ignore"):  # exp(100) is inf in float32, as it should be
        out = ref.astype(np.float32)
        # long double -> float32 rounds twice: where ref is within 2^-58 (2^-50 for a
        # double reference) of a float32 midpoint, settle the rounding with mpmath
        window = np.longdouble(2.0**-50 if name in DOUBLE_REF else 2.0**-58)
        lo = (ref * (1 - window)).astype(np.float32)
        hi = (ref * (1 + window)).astype(np.float32)
    for i in np.flatnonzero((lo != hi) & np.isfinite(ref)):
        with mpmath.workprec(200):
            exact = EXACT[name](mpmath.mpf(float(x[i])))
            below, above = lo[i], hi[i]  # adjacent floats
            mid = (mpmath.mpf(float(below)) + mpmath.mpf(float(above))) / 2
            if exact == mid:  # ties to even (never happens for these functions)
                out[i] = below if (below.view(np.uint32) & 1) == 0 else above
            else:
                out[i] = below if abs(exact - mpmath.mpf(float(below))) < abs(
                    exact - mpmath.mpf(float(above))) else above
    return out


def bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(bits(a), bits(b))


def random_f32(name, n, seed):
    """n float32 inputs: half random bit patterns (every binade, NaN and inf included),
    half uniform over the range where the function is neither constant nor overflowing."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    span = {"log": (0, 10), "log1p": (-1, 10), "sin": (-100, 100), "cos": (-100, 100),
            "log2": (0, 10), "log10": (0, 10), "acosh": (1, 30), "atanh": (-1, 1),
            "asin": (-1, 1), "acos": (-1, 1), "tan": (-100, 100), "erf": (-5, 5),
            "erf_inv": (-1, 1),
            "erfc": (-5, 11)}
    lo, hi = span.get(name, (-30, 30))
    dense = rng.uniform(lo, hi, n - n // 2).astype(np.float32)
    return np.concatenate([raw, dense])


@needs_long
@pytest.mark.parametrize("name", NAMES)
def test_float32_is_correctly_rounded(name):
    x = random_f32(name, 1_000_000, seed=NAMES.index(name))
    got = elementary(name, x)
    want = correctly_rounded_f32(name, x)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(bits(got)[~nan] != bits(want)[~nan])
    assert bad.size == 0, f"{bad.size} misrounded, e.g. x={x[~nan][bad[:5]]!r}"


#: Inputs checked against mpmath at 100 bits where the long double reference is a double's
#: (mpmath's erfinv, a root search, takes ~0.4 ms an input: 5,000 of them take ~2 s).
MP_SAMPLES = {"erf": 20_000, "erfc": 20_000, "erf_inv": 5_000}


def ulp_errors(name, x, got):
    if name in DOUBLE_REF:  # mpmath at 100 bits, on MP_SAMPLES[name] of the inputs
        step = max(1, x.size // MP_SAMPLES[name])
        x, got = x[::step], got[::step]
        with mpmath.workprec(100):
            exact = [EXACT[name](mpmath.mpf(float(v))) for v in x]
            ref = np.array([float(e) for e in exact], np.longdouble)
            ref += np.array([float(e - mpmath.mpf(float(e))) for e in exact], np.longdouble)
    else:
        ref = reference_ld(name, x)
    got = np.asarray(got)
    big = np.longdouble(np.finfo(np.float64).max)
    finite = np.isfinite(ref) & (ref != 0) & (np.abs(ref) <= big)  # float64 results only
    r = ref[finite]
    mag = np.abs(r).astype(np.float64)
    exponent = np.maximum(np.floor(np.log2(mag)), -1022)
    # the ulp of float64 at |r| (a power of two above r would be the binade's ulp too)
    ulp = np.ldexp(np.longdouble(1), (exponent - 52).astype(int))
    err = np.abs(got[finite].astype(np.longdouble) - r) / ulp
    return err.astype(np.float64), x[finite]


@needs_long
@pytest.mark.parametrize("name", NAMES)
def test_float64_is_within_one_ulp(name):
    rng = np.random.default_rng(100 + NAMES.index(name))
    lo, hi = {"log": (-700, 700), "log1p": (-40, 40), "erf": (-20, 2),
              "erfc": (-20, 3.3)}.get(name, (-40, 40))
    magnitude = np.exp(rng.uniform(lo, hi, 500_000))
    sign = 1 if name == "log" else rng.choice([-1.0, 1.0], 500_000)
    x = np.concatenate([magnitude * sign, rng.uniform(-1, 1, 500_000)])
    if name == "log1p":
        x = np.where(x < -1, -x, x)
    if name in ("log", "log2", "log10"):
        x = np.abs(x)
    if name == "acosh":  # 1 + 2^-40 ... 1 + 2^58
        x = 1 + np.abs(x)
    if name in ("atanh", "asin", "acos", "erf_inv"):  # near +-1 too
        x = np.concatenate([x, np.sign(x) * (1 - np.abs(x) * 2.0**-40)])
    with np.errstate(all="ignore"):
        err, where = ulp_errors(name, x, elementary(name, x))
    assert err.max() <= 1.0, f"{err.max():.3f} ulp at x={where[err.argmax()]!r}"


def test_float64_erf_inv_against_mpmath():
    """float64 erf_inv (a fitted start and one Newton step) within 1 ulp of mpmath at 120
    bits where the double reference of test_float64_is_within_one_ulp is too coarse: near 1,
    around the residual's switch at y = 1/2 (a = 0.52), tiny and subnormal inputs."""
    rng = np.random.default_rng(7)
    a = np.concatenate([rng.uniform(0, 1, 800), 1 - 2.0 ** -rng.uniform(1, 53, 600),
                        rng.uniform(0.51, 0.53, 300), 2.0 ** -rng.uniform(0, 1074, 600),
                        [2.0**-32, np.nextafter(2.0**-32, 0), 5e-324, 1 - 2.0**-53]])
    a = a[(a > 0) & (a < 1)]
    a = np.concatenate([a, -a])
    y = elementary("erf_inv", a)
    with mpmath.workprec(120):
        exact = [mpmath.erfinv(mpmath.mpf(float(v))) for v in a]
        err = [abs(float((mpmath.mpf(float(got)) - r) / np.spacing(abs(float(r)))))
               for got, r in zip(y, exact, strict=True)]
    worst = int(np.argmax(err))
    assert err[worst] <= 1.0, f"{err[worst]:.3f} ulp at a={a[worst]!r}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values(name, dtype):
    info = np.finfo(dtype)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, info.tiny, -info.tiny,
                  info.smallest_subnormal, -info.smallest_subnormal, info.tiny / 3,
                  info.max, -info.max, 0.5, 2.0, 88.72283, 88.72284, -87.33655, -103.97208,
                  -104.0, 709.782712893384, 709.7827128933841, -745.1332191019412,
                  -745.1332191019413, 1e30, -1e30, 2.0**30, 3 * 2.0**29, 1e-30],
                 dtype)
    with np.errstate(all="ignore"):
        got = elementary(name, x)
        if name == "logistic":
            want = (1 / (1 + np.exp(-x.astype(np.longdouble)))).astype(dtype)
        else:
            want = REF_LD[name](x.astype(np.longdouble)).astype(dtype)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        inf_or_zero = ok & (np.isinf(want) | (want == 0))
        # infinities and zeros exactly, signs included
        assert same(got[inf_or_zero], want[inf_or_zero]), (x[inf_or_zero], got[inf_or_zero])
        ok &= ~inf_or_zero
        rel = np.abs(got[ok] - want[ok]) <= np.spacing(np.abs(want[ok]).astype(dtype))
    assert rel.all(), (x[ok][~rel], got[ok][~rel], want[ok][~rel])


def test_every_saved_hard_case_is_correctly_rounded():
    # tools/exhaustive_f32.py's finds (inputs the double algorithm rounds the wrong way, with
    # the right result): the table in elementary_hard.h must give each of them, at every level
    saved = Path(__file__).resolve().parents[1] / "tools" / "exhaustive_f32"
    checked = 0
    for name in NAMES:
        path = saved / f"{name}.txt"
        rows = [line.split() for line in path.read_text().splitlines()] if path.exists() else []
        if not rows:
            continue
        x = np.array([int(a, 16) for a, _ in rows], np.uint32).view(np.float32)
        want = np.array([int(b, 16) for _, b in rows], np.uint32)
        for isa in _native.isas():
            previous = _native.set_isa(isa)
            try:
                got = bits(elementary(name, x))
            finally:
                _native.set_isa(previous)
            assert np.array_equal(got, want), (name, isa, x[got != want])
        checked += x.size
    assert checked > 100


def test_nan_propagates_and_hard_blocks_fall_back():
    # a NaN in a block sends the block through the element-by-element path: same results
    x = random_f32("exp", 4096, seed=7)
    x = x[np.isfinite(x)][:1000]
    for name in NAMES:
        clean = elementary(name, x)
        poisoned = x.copy()
        poisoned[500] = np.nan
        got = elementary(name, poisoned)
        assert np.isnan(got[500])
        keep = np.arange(x.size) != 500
        assert same(got[keep], clean[keep])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_dispatch_level_gives_the_same_bits(dtype):
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 2**32, 3000).astype(np.uint32).view(np.float32)
    raw = raw[np.isfinite(raw)].astype(np.float64)
    with np.errstate(over="ignore"):
        x = np.concatenate([rng.uniform(-50, 50, 3000), np.exp(rng.uniform(-80, 80, 3000)),
                            raw, [np.nan, np.inf, -np.inf]]).astype(dtype)
    if dtype == np.float64:  # the float64 loops' selects: each side of every bound
        edges = np.array([0.35, 0.5, 1.0, 6.0, 27.3, 40.0, 709.8, 711.0, 746.0, 1024.5, 1076.0,
                          2.0**-32, 2.0**-28, 2.0**-26, 2.0**28, 2.0**30, 2.0**-1022])
        edges = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
        x = np.concatenate([x, edges, -edges, 1 - 2.0 ** -rng.uniform(1, 53, 1000),
                            rng.integers(0, 2**64, 3000, dtype=np.uint64).view(np.float64),
                            rng.uniform(-1, 1, 1000) * 2.0**-1022])  # subnormals
    results = {}
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            results[isa] = {name: elementary(name, x) for name in NAMES}
        finally:
            _native.set_isa(previous)
    first = results.pop(_native.isas()[0])
    for isa, got in results.items():
        for name in NAMES:
            assert same(got[name], first[name]), (isa, name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_may_be_the_input(dtype):
    x = np.random.default_rng(4).uniform(-5e9, 5e9, 5000).astype(dtype)  # sin's slow path too
    for name in NAMES:
        buffer = x.copy()
        elementary(name, buffer, out=buffer)
        assert same(buffer, elementary(name, x)), name


def _around(points, width=40):
    """float32 values within `width` ulps of each point, and their negatives."""
    out = []
    for p in np.asarray(points, np.float32):
        v = p
        for _ in range(width):
            v = np.nextafter(v, np.float32(-np.inf))
        for _ in range(2 * width + 1):
            out.append(v)
            v = np.nextafter(v, np.float32(np.inf))
    out = np.array(out, np.float32)
    return np.concatenate([out, -out])


# where the float32 fast paths (csrc/elementary_f32.h) change regime or hand elements over
# to the exact path: range limits, reduction boundaries, subnormals, near-zeros of sin/cos
FAST_EDGES = {
    "exp": [87.34, 88.72, 88.7228, 89.0, 104.0, 103.97, 87.3365, 0.3466, 0.6931, 1e-8],
    "log": [0.69921875, 1.3984375, 1.0, 0.99609375, 1.0078125, 2.0**-126, 2.0**-127,
            3.4e38, 0.5, 2.0],
    "sin": [2.0**20, 2.0**-12, 2.0**-26, np.pi / 4, np.pi / 2, np.pi, 3 * np.pi / 2,
            1e5 * np.pi, 2.0**-126, 2.0**-140],
    # tanh: and where 2|x| = (N + 1/2) ln2/16 changes the table's entry (N = 0 -> 1, j = 15
    # -> k = 1), i.e. |x| = (2N + 1) ln2/64
    "tanh": [43.5, 9.01, 0.1733, 0.25, 2.0**-12, 2.0**-126, 2.0**-140, 0.5493, 0.010830425,
             0.032491275, 0.33574, 0.3574, 21.6],
}
FAST_EDGES["cos"] = FAST_EDGES["sin"]
FAST_EDGES.update({
    "expm1": [87.33, 87.34, 18.0, 17.33, 0.3466, 0.6931, 1e-8, 2.0**-126, 2.0**-140],
    "log1p": [2.0**-29, 2.0**29, 1.0, 0.99999994, 0.5, 2.0**-24, 1e-8],
    "logistic": [87.33, 87.3366, 104.0, 18.0, 17.33, 1e-8, 2.0**-24, 2.0**-140],
    "exp2": [126.0, 125.5, 0.5, 1.5, 127.99, 128.0, 149.0, 150.0, 151.0, 1e-8],
    "sinh": [87.33, 87.34, 89.4, 90.0, 0.3466, 1e-8, 2.0**-126, 2.0**-140],
})
FAST_EDGES["cosh"] = FAST_EDGES["sinh"]


@needs_long
@pytest.mark.parametrize("name", sorted(FAST_EDGES))
def test_fast_path_edges_are_correctly_rounded_at_every_level(name):
    x = np.concatenate([_around(FAST_EDGES[name]),
                        np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)])
    want = correctly_rounded_f32(name, x)
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            got = elementary(name, x)
        finally:
            _native.set_isa(previous)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        bad = np.flatnonzero(bits(got)[~nan] != bits(want)[~nan])
        assert bad.size == 0, (isa, x[~nan][bad[:5]], got[~nan][bad[:5]])


def test_threads_split_large_arrays_without_changing_a_bit(monkeypatch):
    from invarax.kernels import elementary as module

    x = random_f32("sin", 50_001, seed=10)
    monkeypatch.setenv("INVARAX_NUM_THREADS", "1")
    one = {name: elementary(name, x) for name in NAMES}
    monkeypatch.setattr(module, "POOL_PER_THREAD", 1000)  # the kernels' pool's runs
    monkeypatch.setenv("INVARAX_NUM_THREADS", "3")
    for name in NAMES:
        assert same(elementary(name, x), one[name]), name
        buffer = x.copy()
        elementary(name, buffer, out=buffer)
        assert same(buffer, one[name]), name


FAST_NAMES = ("exp", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "exp2",
              "sinh", "cosh")


@pytest.mark.parametrize("name", FAST_NAMES)
def test_scanned_blocks_give_each_elements_own_bits(name):
    # the float32 loops scan blocks of 256 without per-element flags and redo a block that
    # has an element out of range, near a rounding boundary or NaN (and the next block
    # directly): lone such elements at block edges, runs of them, and lengths that are not
    # multiples of the vector width must leave every other element's bits as computed alone
    rng = np.random.default_rng(NAMES.index(name))
    lo, hi = (0.01, 100.0) if name.startswith("log") else (-10.0, 10.0)
    x = rng.uniform(lo, hi, 2000).astype(np.float32)
    odd = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -2.0, 2.0**-140], np.float32)
    for i, at in enumerate([0, 255, 256, 257, 511, 700, 701, 702, 1023, 1999]):
        x[at] = odd[i % odd.size]
    x[1200:1500] = odd[np.arange(300) % odd.size]  # a run of flagged blocks, then clean ones
    alone = np.concatenate([elementary(name, x[i:i + 1]) for i in range(x.size)])
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            for n in (2000, 1999, 263, 48, 40, 17, 8, 7, 1):
                assert same(elementary(name, x[:n]), alone[:n]), (isa, n)
            buffer = x.copy()
            elementary(name, buffer, out=buffer)
            assert same(buffer, alone), isa
        finally:
            _native.set_isa(previous)


def test_out_may_overlap_the_input_shifted():
    base = np.random.default_rng(8).uniform(-5, 5, 3001).astype(np.float32)
    for name in ("exp", "sin"):
        buffer = base.copy()
        elementary(name, buffer[1:], out=buffer[:-1])
        assert same(buffer[:-1], elementary(name, base[1:])), name
        buffer = base.copy()
        elementary(name, buffer[:-1], out=buffer[1:])
        assert same(buffer[1:], elementary(name, base[:-1])), name


OPS = {"exp": jnp.exp, "log": jnp.log, "expm1": jnp.expm1, "log1p": jnp.log1p,
       "tanh": jnp.tanh, "logistic": lax.logistic, "sin": jnp.sin, "cos": jnp.cos,
       "exp2": jnp.exp2, "sinh": jnp.sinh, "cosh": jnp.cosh, "log2": jnp.log2,
       "log10": jnp.log10, "asinh": jnp.arcsinh, "acosh": jnp.arccosh, "atanh": jnp.arctanh,
       "atan": jnp.arctan, "asin": jnp.arcsin, "acos": jnp.arccos, "tan": jnp.tan,
       "cbrt": jnp.cbrt, "erf": invarax.scipy.special.erf, "erfc": invarax.scipy.special.erfc,
       "erf_inv": lax.erf_inv}


@pytest.mark.parametrize("name", NAMES)
def test_public_ops_use_the_kernels(name):
    x = random_f32(name, 2000, seed=9)
    with np.errstate(all="ignore"):
        assert same(OPS[name](x), elementary(name, x))


@pytest.mark.parametrize("name", NAMES)
def test_jit_vmap_and_grad_give_eager_bits(name):
    f = OPS[name]
    x = np.random.default_rng(5).uniform(0.1, 3, (7, 33)).astype(np.float32)
    if name in ("atanh", "asin", "acos", "erf_inv"):
        x = x / 3.5
    if name == "acosh":
        x = x + 1
    eager = f(x)
    assert same(invarax.jit(f)(x), eager)
    for rows in (1, 3, 7):
        batched = invarax.vmap(f)(x[:rows])
        for i in range(rows):
            assert same(batched[i], f(x[i]))
    g = invarax.grad(lambda v: jnp.sum(f(v)))
    assert same(invarax.jit(g)(x), g(x))


def test_fused_chunks_give_eager_bits():
    # a long elementwise chain is fused and evaluated in chunks (invarax/compiler/fusion.py)
    def f(x):
        return jnp.tanh(jnp.exp(x) * jnp.sin(x) + jnp.log1p(jnp.abs(x))) + lax.logistic(
            jnp.cos(x)) - jnp.expm1(x * 0.1) * jnp.log(x * x + 1.0)

    x = np.random.default_rng(6).uniform(-4, 4, 300_000).astype(np.float32)
    assert same(invarax.jit(f)(x), f(x))


def test_float16_goes_through_float32_and_errors_are_clear():
    x = np.array([0.5, 1.0, 2.0], np.float16)
    assert same(elementary("exp", x), elementary("exp", x.astype(np.float32)).astype(np.float16))
    with pytest.raises(ValueError, match="unknown function 'expp'"):
        elementary("expp", x)
    with pytest.raises(TypeError, match="float array, got int64"):
        elementary("exp", np.arange(3))


def test_the_flag_chooses_the_functions_and_jit_follows_it():
    assert invarax.config.invarax_exact_elementary  # invarax's own functions by default
    x = np.linspace(-20, 20, 1001).astype(np.float32)
    f = invarax.jit(lambda v: jnp.sin(v) + jnp.exp(v * 0.1))
    exact = np.asarray(f(x))
    assert exact.tobytes() == np.asarray(jnp.sin(x) + jnp.exp(x * 0.1)).tobytes()
    assert np.asarray(jnp.sin(x)).tobytes() == elementary("sin", x).tobytes()
    with invarax.config.flag("invarax_exact_elementary", False):
        with np.errstate(all="ignore"):
            assert np.asarray(jnp.sin(x)).tobytes() == np.sin(x).tobytes()
        numpy_f = np.asarray(f(x))
        assert numpy_f.tobytes() == np.asarray(jnp.sin(x) + jnp.exp(x * 0.1)).tobytes()
    assert invarax.config.invarax_exact_elementary
    assert np.asarray(f(x)).tobytes() == exact.tobytes()


def test_the_environment_variable_switches_the_default_off():
    code = ("import numpy as np, invarax, invarax.numpy as jnp\n"
            "from invarax.kernels.elementary import elementary\n"
            "x = np.linspace(-20, 20, 1001).astype(np.float32)\n"
            "y = np.asarray(jnp.sin(x)).tobytes()\n"
            "print(invarax.config.invarax_exact_elementary, y == np.sin(x).tobytes(),"
            " y == elementary('sin', x).tobytes())\n")
    root = Path(__file__).resolve().parents[1]
    # the flag, then whether jnp.sin gave NumPy's bits (column 1) or invarax's own (column 2)
    for value, flag, column in (("0", "False", 1), ("1", "True", 2)):
        env = dict(os.environ, INVARAX_EXACT_ELEMENTARY=value)
        words = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, check=True,
                               capture_output=True, text=True, timeout=120).stdout.split()
        assert words[0] == flag and words[column] == "True", (value, words)
    env = dict(os.environ, INVARAX_EXACT_ELEMENTARY="maybe")
    failed = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                            capture_output=True, text=True, timeout=120)
    assert failed.returncode != 0 and "INVARAX_EXACT_ELEMENTARY='maybe'" in failed.stderr

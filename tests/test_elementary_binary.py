"""invarax's own atan2 and pow (invarax/kernels/elementary.py ``elementary2``, docs/numerics.md
N6): a function of two float32 operands has 2^64 inputs, too many to check exhaustively, so
float32 correct rounding is checked on dense grids with the known hard families (atan2: y =
+-x, exact ratios, powers of two, integers, tiny and huge ratios; pow: exact powers and
midpoints, y = 0.5, integer y, x = 1, the overflow and underflow edges; the special values);
float64 within 1 ulp; the same bits eager, under jit, vmap and fusion, and at every dispatch
level."""

import itertools

import numpy as np
import pytest
from test_elementary import bits

import invarax
import invarax.numpy as jnp
from invarax.kernels import _native
from invarax.kernels.elementary import elementary2

mpmath = pytest.importorskip("mpmath")
LONG = np.finfo(np.longdouble).nmant >= 63
needs_long = pytest.mark.skipif(not LONG, reason="needs an 80-bit long double reference")



REFERENCE = {"atan2": (np.arctan2, mpmath.atan2), "pow": (np.power, mpmath.power)}


def correctly_rounded(name, y, x):
    """The float32 nearest name(y, x): long double, mpmath within 2^-58 of a midpoint (ties,
    which pow has, to even)."""
    ld, mp = REFERENCE[name]
    with np.errstate(all="ignore"):
        ref = ld(y.astype(np.longdouble), x.astype(np.longdouble))
        out = ref.astype(np.float32)
        lo = (ref * (1 - np.longdouble(2.0**-58))).astype(np.float32)
        hi = (ref * (1 + np.longdouble(2.0**-58))).astype(np.float32)
    for i in np.flatnonzero((lo != hi) & np.isfinite(ref)):
        with mpmath.workprec(1200):  # atan z = z - z^3/3 for z down to 2^-277
            exact = mp(mpmath.mpf(float(y[i])), mpmath.mpf(float(x[i])))
            a, b = sorted((lo[i], hi[i]))
            da, db = abs(exact - mpmath.mpf(float(a))), abs(exact - mpmath.mpf(float(b)))
            if da == db:
                assert name == "pow", "an exact tie: cannot happen for atan2 of floats"
                out[i] = a if (a.view(np.uint32) & 1) == 0 else b
            else:
                out[i] = a if da < db else b
    return out


def hard_grid():
    """Pairs from the hard families, float32."""
    rng = np.random.default_rng(0)
    ints = np.arange(-64, 65, dtype=np.float32)
    powers = np.float32(2.0) ** np.arange(-149, 128, 3).astype(np.float32)
    powers = np.concatenate([powers, -powers])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0,
                         np.finfo(np.float32).max, np.finfo(np.float32).tiny, 1e-45, -1e-45],
                        np.float32)
    pairs = [*itertools.product(ints, ints), *itertools.product(powers, powers),
             *itertools.product(specials, np.concatenate([specials, ints]))]
    y, x = (np.array(v, np.float32) for v in zip(*pairs, strict=True))
    # y = +-x (+-pi/4, +-3pi/4), y = x (1 +- ulp), tiny and huge ratios
    r = rng.uniform(-100, 100, 20_000).astype(np.float32)
    near = np.nextafter(r, np.float32(np.inf))
    raw = rng.integers(0, 2**32, (2, 200_000), dtype=np.uint64).astype(np.uint32)
    raw = raw.view(np.float32)
    y = np.concatenate([y, r, -r, r, near, raw[0], r * np.float32(1e-30)])
    x = np.concatenate([x, r, r, near, r, raw[1], r[::-1]])
    return y, x


@needs_long
def test_float32_is_correctly_rounded_on_dense_grids():
    rng = np.random.default_rng(1)
    gy, gx = hard_grid()
    dense = rng.uniform(-30, 30, (2, 500_000)).astype(np.float32)
    y, x = np.concatenate([gy, dense[0]]), np.concatenate([gx, dense[1]])
    got, want = elementary2("atan2", y, x), correctly_rounded("atan2", y, x)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(bits(got)[~nan] != bits(want)[~nan])
    example = (y[~nan][bad[:3]], x[~nan][bad[:3]])
    assert bad.size == 0, f"{bad.size} misrounded, e.g. (y, x) = {example!r}"


@needs_long
def test_float64_is_within_one_ulp():
    rng = np.random.default_rng(2)
    n = 300_000
    mag = np.exp(rng.uniform(-30, 30, (2, n))) * rng.choice([-1.0, 1.0], (2, n))
    y, x = np.concatenate([mag[0], rng.uniform(-1, 1, n)]), np.concatenate([mag[1],
                                                                         rng.uniform(-1, 1, n)])
    got = elementary2("atan2", y, x)
    ref = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble))
    ulp = np.ldexp(np.longdouble(1), (np.floor(np.log2(np.abs(ref.astype(np.float64)))) - 52)
                   .astype(int))
    err = np.abs(got.astype(np.longdouble) - ref) / ulp
    assert err.max() <= 1.0, f"{float(err.max()):.3f} ulp at y={y[err.argmax()]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_are_numpys(dtype):
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -3.5,
                  np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max], dtype)
    y, x = (np.array(c, dtype) for c in zip(*itertools.product(v, v), strict=True))
    got = elementary2("atan2", y, x)
    with np.errstate(all="ignore"):
        want = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble)).astype(dtype)
    exact = np.isnan(want) | np.isinf(want) | (want == 0) | (np.abs(want) == np.float32(np.pi))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(bits(got[exact & ~np.isnan(want)]), bits(want[exact & ~np.isnan(want)]))
    close = np.abs(got - want) <= np.spacing(np.abs(want))
    assert close[~np.isnan(want)].all()


def test_every_level_jit_vmap_and_fusion_give_the_same_bits():
    rng = np.random.default_rng(3)
    y, x = rng.uniform(-5, 5, (2, 6, 50)).astype(np.float32)
    eager = jnp.arctan2(y, x)
    assert np.array_equal(bits(eager), bits(elementary2("atan2", y, x)))
    assert np.array_equal(bits(invarax.jit(jnp.arctan2)(y, x)), bits(eager))
    for rows in (1, 4, 6):
        batched = invarax.vmap(jnp.arctan2)(y[:rows], x[:rows])
        for i in range(rows):
            assert np.array_equal(bits(batched[i]), bits(jnp.arctan2(y[i], x[i])))
    big_y, big_x = rng.uniform(-5, 5, (2, 300_000)).astype(np.float32)

    def chain(a, b):  # a fused elementwise group, evaluated in chunks
        return jnp.arctan2(a * 2.0 + 1.0, jnp.abs(b) - 0.5) * 3.0

    assert np.array_equal(bits(invarax.jit(chain)(big_y, big_x)), bits(chain(big_y, big_x)))
    assert np.array_equal(bits(jnp.arctan2(y[0], np.float32(2.0))),
                          bits(elementary2("atan2", y[0], np.full(50, 2, np.float32))))
    g = invarax.grad(lambda a: jnp.sum(jnp.arctan2(a, x)))
    assert np.array_equal(bits(invarax.jit(g)(y)), bits(g(y)))
    for dtype in (np.float32, np.float64):
        a, b = y.astype(dtype), x.astype(dtype)
        results = []
        for isa in _native.isas():
            previous = _native.set_isa(isa)
            try:
                results.append(elementary2("atan2", a, b))
            finally:
                _native.set_isa(previous)
        assert all(np.array_equal(bits(r), bits(results[0])) for r in results)


def test_float64_every_level_gives_the_same_bits():
    """The float64 loops of atan2 and pow (vectorised, every special case a select) at every
    dispatch level: special values against each other, random bit patterns, ordinary pairs."""
    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0, np.inf, -np.inf, np.nan,
                        5e-324, 2.0**-1022, 2.0**52 + 1, 2.0**53, 1e308, 0.75, -2.5])
    a, b = np.array(list(itertools.product(special, special))).T
    with np.errstate(all="ignore"):
        a = np.concatenate([a, rng.integers(0, 2**64, 4000, dtype=np.uint64).view(np.float64),
                            rng.uniform(-10, 10, 4000), rng.uniform(0, 10, 4000)])
        b = np.concatenate([b, rng.integers(0, 2**64, 4000, dtype=np.uint64).view(np.float64),
                            np.round(rng.uniform(-20, 20, 4000)), rng.uniform(-30, 30, 4000)])
    for name in ("atan2", "pow"):
        results = []
        for isa in _native.isas():
            previous = _native.set_isa(isa)
            try:
                results.append(elementary2(name, a, b))
            finally:
                _native.set_isa(previous)
        assert all(np.array_equal(bits(r), bits(results[0])) for r in results), name


def test_errors_are_clear():
    assert elementary2("atan2", np.float32(1.0), np.float32(-1.0)).shape == ()  # 0-d stays 0-d
    with pytest.raises(ValueError, match="unknown function 'atan3'"):
        elementary2("atan3", np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="two float arrays of one dtype, got float32 and float64"):
        elementary2("atan2", np.ones(2, np.float32), np.ones(2))


def pow_grid():
    """(x, y) float32 pairs from pow's hard families."""
    rng = np.random.default_rng(5)
    f = np.float32
    # exact powers and float32 midpoints: x with few significant bits, integer y
    few_bits = np.concatenate([1 + np.arange(1, 4097, dtype=f) * f(2.0**-12),
                               np.arange(1, 2049, dtype=f), f(1) / np.arange(1, 257, dtype=f)])
    ints = np.arange(-12, 13, dtype=f)
    pairs = [*itertools.product(few_bits, ints)]
    # y = 0.5, 1.5, -0.5 of squares and non-squares; x = 1 +- ulp with large y
    sq = np.concatenate([np.arange(1, 3000, dtype=f) ** 2, rng.uniform(0, 100, 5000).astype(f)])
    pairs += [*itertools.product(sq, f([0.5, 1.5, -0.5, 2.5, 0.25]))]
    near_one = f([1.0, np.nextafter(f(1), f(2)), np.nextafter(f(1), f(0)), 1 + 2.0**-20])
    pairs += [*itertools.product(near_one, rng.uniform(-3e7, 3e7, 3000).astype(f))]
    # overflow and underflow edges: 2^y, 10^y, e^y near float32's limits
    edge = np.concatenate([rng.uniform(126, 128.1, 3000), rng.uniform(-150, -125, 3000)]).astype(f)
    pairs += [(f(2), e) for e in edge] + [(f(10), e / f(3.3)) for e in edge]
    pairs += [(f(np.e), e * f(0.69)) for e in edge]
    specials = f([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -3.0, 2.5])
    pairs += [*itertools.product(specials, specials)]
    x, y = (np.array(v, f) for v in zip(*pairs, strict=True))
    raw = rng.integers(0, 2**32, (2, 200_000), dtype=np.uint64).astype(np.uint32).view(f)
    dense_x = rng.uniform(0, 20, 300_000).astype(f)
    dense_y = rng.uniform(-30, 30, 300_000).astype(f)
    return np.concatenate([x, raw[0], dense_x]), np.concatenate([y, raw[1], dense_y])


@needs_long
def test_pow_float32_is_correctly_rounded_on_dense_grids():
    x, y = pow_grid()
    got, want = elementary2("pow", x, y), correctly_rounded("pow", x, y)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(bits(got)[~nan] != bits(want)[~nan])
    example = (x[~nan][bad[:3]], y[~nan][bad[:3]])
    assert bad.size == 0, f"{bad.size} misrounded, e.g. (x, y) = {example!r}"


@needs_long
def test_pow_float64_is_within_one_ulp():
    rng = np.random.default_rng(6)
    n = 200_000
    x = np.concatenate([np.exp(rng.uniform(-50, 50, n)), rng.uniform(0, 3, n)])
    y = np.concatenate([rng.uniform(-15, 15, n), rng.uniform(-300, 300, n)])
    with np.errstate(all="ignore"):
        got = elementary2("pow", x, y)
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
    big = np.longdouble(np.finfo(np.float64).max)
    ok = np.isfinite(ref) & (np.abs(ref) <= big) & (np.abs(ref) >= np.finfo(np.float64).tiny)
    ulp = np.ldexp(np.longdouble(1), (np.floor(np.log2(ref[ok].astype(np.float64))) - 52)
                   .astype(int))
    err = np.abs(got[ok].astype(np.longdouble) - ref[ok]) / ulp
    assert err.max() <= 1.0, f"{float(err.max()):.3f} ulp at x={x[ok][err.argmax()]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_special_values_are_numpys(dtype):
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5, 3.0,
                  -3.0, 2.5, np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max], dtype)
    x, y = (np.array(c, dtype) for c in zip(*itertools.product(v, v), strict=True))
    got = elementary2("pow", x, y)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.longdouble), y.astype(np.longdouble)).astype(dtype)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    exact = ~nan & (np.isinf(want) | (want == 0) | (np.abs(want) == 1))
    assert np.array_equal(bits(got[exact]), bits(want[exact])), (x[exact], y[exact])
    rest = ~nan & ~exact
    with np.errstate(over="ignore"):  # the spacing at float32's largest value is inf
        assert (np.abs(got[rest] - want[rest]) <= np.spacing(np.abs(want[rest]))).all()


def test_pow_jit_vmap_grad_and_broadcast_give_the_same_bits():
    rng = np.random.default_rng(7)
    x = rng.uniform(0.1, 4, (5, 40)).astype(np.float32)
    y = rng.uniform(-3, 3, (5, 40)).astype(np.float32)
    eager = jnp.asarray(x) ** y
    assert np.array_equal(bits(eager), bits(elementary2("pow", x, y)))
    assert np.array_equal(bits(invarax.jit(lambda a, b: a ** b)(x, y)), bits(eager))
    batched = invarax.vmap(jnp.power)(x, y)
    for i in range(5):
        assert np.array_equal(bits(batched[i]), bits(jnp.power(x[i], y[i])))
    # a broadcast exponent of 0.5 or 2 is the general algorithm, not sqrt or a square
    half = jnp.power(jnp.asarray(x), np.float32(0.5))
    assert np.array_equal(bits(half), bits(elementary2("pow", x, np.full_like(x, 0.5))))
    g = invarax.grad(lambda a: jnp.sum(jnp.power(a, y)))
    assert np.array_equal(bits(invarax.jit(g)(x)), bits(g(x)))
    c = np.array([1 + 2j, 0.5 - 1j], np.complex64)  # complex stays NumPy's
    assert np.array_equal(np.asarray(jnp.power(c, c)), np.power(c, c))


def test_threads_split_large_arrays_without_changing_a_bit(monkeypatch):
    from invarax.kernels import elementary as module

    rng = np.random.default_rng(11)
    for dtype in (np.float32, np.float64):
        a = (rng.standard_normal(50_001) * 30).astype(dtype)
        b = (rng.uniform(-6, 6, 50_001)).astype(dtype)
        base = np.abs(a)
        monkeypatch.setenv("INVARAX_NUM_THREADS", "1")
        one = {"atan2": elementary2("atan2", a, b), "pow": elementary2("pow", base, b)}
        monkeypatch.setattr(module, "POOL_PER_THREAD", 1000)  # the kernels' pool's runs
        monkeypatch.setenv("INVARAX_NUM_THREADS", "3")
        for name, (x, y) in {"atan2": (a, b), "pow": (base, b)}.items():
            assert np.array_equal(bits(elementary2(name, x, y)), bits(one[name])), name
            buffer = x.copy()  # out is the first operand: each range reads before it writes
            elementary2(name, buffer, y, out=buffer)
            assert np.array_equal(bits(buffer), bits(one[name])), name
        monkeypatch.undo()

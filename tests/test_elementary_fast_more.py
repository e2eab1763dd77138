"""The vectorised float32 fast paths of log2, log10, asinh, acosh, atanh, cbrt and pow
(csrc/elementary_f32_more.h, elementary_more_fast.c; docs/numerics.md "float32 fast paths"):
where they change regime or hand elements to the exact path (range limits, subnormals,
+-0, +-inf, NaN, exact results, pow's exact powers and midpoints and its sign and
overflow rules), every result is the correctly rounded one at every dispatch level, and
block edges and in-place calls change no bit."""

import itertools

import numpy as np
import pytest
from test_elementary import _around, bits, correctly_rounded_f32, needs_long
from test_elementary_binary import correctly_rounded

import invarax
from invarax.kernels import _native
from invarax.kernels.elementary import elementary, elementary2

F = np.float32
SPECIALS = F([0.0, -0.0, np.inf, -np.inf, np.nan])
# where each fast path changes regime: ef_log's reduction (0.699, 1.398) and range, the
# 2^-28 cut of asinh and atanh, log1p's w = 2, the 2^127 range limits, cbrt's binades
EDGES = {
    "log2": [0.69921875, 1.3984375, 1.0, 2.0**-126, 2.0**-127, 2.0**-149, 3.4e38, 0.5, 2.0,
             10.0],
    "asinh": [2.0**-28, 2.0**-30, 2.0**-126, 2.0**-140, 2.0**127, 2.0**126, 3.4e38, 1.0,
              0.75, 2.0**-12, 1e-8, 2.0**26],
    "acosh": [1.0, 1.25, 1.5, 2.0, 2.0**127, 2.0**126, 3.4e38, 2.0**26],
    "atanh": [1.0, 0.6, 2.0**-28, 2.0**-30, 2.0**-126, 2.0**-140, 0.5, 1e-8],
    "cbrt": [1.0, 2.0, 4.0, 8.0, 27.0, 0.125, 2.0**-126, 2.0**-149, 2.0**-140, 3.4e38,
             1000.0, 2.0**-127],
}
EDGES["log10"] = EDGES["log2"] + [1e10, 100.0]


def exact_cases(name):
    """Inputs whose results are floats exactly (they must round to themselves)."""
    if name == "log2":
        return F(2.0) ** np.arange(-149, 128).astype(F)
    if name == "log10":
        return (10.0 ** np.arange(0, 11)).astype(F)
    if name == "cbrt":
        k = np.arange(1, 257, dtype=np.float64)
        cubes = np.concatenate([k**3, (k / 64) ** 3, (k * 2.0**30) ** 3])
        return np.concatenate([cubes, -cubes]).astype(F)
    return np.zeros(0, F)


def at_every_level(fn):
    """fn() at each dispatch level."""
    out = []
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            out.append((isa, fn()))
        finally:
            _native.set_isa(previous)
    return out


def assert_rounded(got, want, inputs, isa):
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(bits(got)[~nan] != bits(want)[~nan])
    assert bad.size == 0, (isa, [v[~nan][bad[:4]] for v in inputs], got[~nan][bad[:4]])


@needs_long
@pytest.mark.parametrize("name", sorted(EDGES))
def test_unary_fast_path_edges_are_correctly_rounded_at_every_level(name):
    x = np.concatenate([_around(EDGES[name]), SPECIALS, exact_cases(name)])
    want = correctly_rounded_f32(name, x)
    for isa, got in at_every_level(lambda: elementary(name, x)):
        assert_rounded(got, want, [x], isa)
    exact = exact_cases(name)
    if exact.size:  # log2(2^k) = k, log10(10^k) = k, cbrt(k^3) = k: floats, exactly
        ref = {"log2": np.log2, "log10": np.log10, "cbrt": np.cbrt}[name]
        assert np.array_equal(bits(elementary(name, exact)),
                              bits(ref(exact.astype(np.float64)).astype(F)))


def pow_edges():
    """(x, y) pairs where ev_pow changes regime or flags."""
    rng = np.random.default_rng(11)
    # |y log x| around 87.33 (the flag) and the overflow / underflow limits
    e = np.concatenate([rng.uniform(86.5, 89.5, 2000), -rng.uniform(86.5, 104.5, 2000)])
    xs = F([np.e, 2.0, 10.0, 0.5, 1.5, 3.0])
    pairs = [(x, F(v / np.log(x))) for x in xs for v in e]
    # negative x: integer (odd, even, huge) and non-integer y; y = +-0
    neg = F([-2.0, -0.5, -1.0, -3.0, -1.0000001, -(2.0**-149), -(2.0**-130)])
    ys = F([1, 2, 3, -1, -2, -3, 0.5, -0.5, 2.5, 0.0, -0.0, 2.0**23 + 1, 2.0**24,
            2.0**24 + 2, 2.0**30, -(2.0**23) - 1, 1e-8, 127.0])
    pairs += list(itertools.product(neg, ys))
    # subnormal and huge x, x = 2^k with fractional y, y = 1/2 of squares, midpoints
    # (4097^2 = 2^24 + 4097 needs 25 bits), x near 1 with large y
    odd = F(np.arange(4001, 4200, 2))
    pairs += [(x, F(2)) for x in odd] + [(x * x, F(0.5)) for x in odd]
    pairs += [(x, F(3)) for x in F(np.arange(200, 260))]
    pairs += list(itertools.product(F([2.0**-149, 2.0**-140, 2.0**-127, 3.4e38, 2.0**127]),
                                    F([0.5, 1.0, -1.0, 0.25, 1e-3, -1e-3, 0.75])))
    pairs += list(itertools.product(F(2.0) ** np.arange(-149, 128, 7).astype(F),
                                    F([0.5, 1.5, -2.5, 0.1, 3.0, -1.0])))
    near_one = F([1.0, np.nextafter(F(1), F(2)), np.nextafter(F(1), F(0))])
    pairs += list(itertools.product(near_one, F(rng.uniform(-2e9, 2e9, 500))))
    both = np.concatenate([SPECIALS, F([1.0, -1.0, 2.0, -2.0, 0.5])])
    pairs += list(itertools.product(both, both))
    x, y = (np.array(v, F) for v in zip(*pairs, strict=True))
    return x, y


@needs_long
def test_pow_fast_path_edges_are_correctly_rounded_at_every_level():
    x, y = pow_edges()
    want = correctly_rounded("pow", x, y)
    with np.errstate(all="ignore"):
        for isa, got in at_every_level(lambda: elementary2("pow", x, y)):
            assert_rounded(got, want, [x, y], isa)


@pytest.mark.parametrize("name", [*sorted(EDGES), "pow"])
def test_block_edges_and_in_place_change_no_bit(name):
    # elements the fast path flags (NaN, out-of-range) at a block's first and last places
    # and at the blocks' edges (EV_BLOCK = 1024): each element's bits are its own
    rng = np.random.default_rng(12)
    n = 3 * 1024 + 5
    x = F(rng.uniform(1.0, 3.0, n))
    y = F(rng.uniform(-3.0, 3.0, n))
    for i in (0, 1, 1023, 1024, 1025, 2047, 2048, n - 1):
        x[i] = [np.nan, -np.inf, 0.0, 2.0**-140][i % 4]

    def run(a, b):
        with np.errstate(all="ignore"):
            return elementary2("pow", a, b) if name == "pow" else elementary(name, a)

    whole = run(x, y)
    one_by_one = np.concatenate([run(x[i:i + 1], y[i:i + 1]) for i in range(n)])
    assert np.array_equal(bits(whole), bits(one_by_one))
    for m in (1, 7, 1023, 1025):
        assert np.array_equal(bits(run(x[:m], y[:m])), bits(whole[:m]))
    if name != "pow":
        buffer = x.copy()
        elementary(name, buffer, out=buffer)
        assert np.array_equal(bits(buffer), bits(whole))
    levels = at_every_level(lambda: run(x, y))
    assert all(np.array_equal(bits(r), bits(whole)) for _, r in levels)


def test_the_public_functions_use_the_fast_paths():
    import invarax.numpy as jnp

    x = F(np.linspace(1.5, 7.5, 50))
    with invarax.config.flag("invarax_exact_elementary", True):
        for name, fn in [("log2", jnp.log2), ("log10", jnp.log10), ("asinh", jnp.arcsinh),
                         ("acosh", jnp.arccosh), ("cbrt", jnp.cbrt)]:
            assert np.array_equal(bits(fn(x)), bits(elementary(name, x))), name
        assert np.array_equal(bits(jnp.arctanh(x / 8)), bits(elementary("atanh", x / 8)))
        assert np.array_equal(bits(jnp.power(x, x / 3)), bits(elementary2("pow", x, x / 3)))


def scalar_path_f32(d):
    """The exact scalar path's float32 result from its double result d (the float64 kernel:
    the same double algorithm), and where that is settled without its hard-case table or
    exact powers: wherever d is not within 2^-48 of a float32 rounding boundary."""
    with np.errstate(over="ignore"):
        settled = (d * (1 - 2.0**-48)).astype(F) == (d * (1 + 2.0**-48)).astype(F)
        return d.astype(F), settled | np.isnan(d)


@pytest.mark.parametrize("name", [*sorted(EDGES), "pow"])
def test_fast_paths_give_the_scalar_paths_bits(name):
    # independent of any reference: the float32 kernel (fast path + fix-ups) against the
    # scalar algorithm's own double result rounded once, on random bit patterns and ranges
    rng = np.random.default_rng(13)
    n = 400_000
    raw = rng.integers(0, 2**32, (2, n), dtype=np.uint64).astype(np.uint32).view(F)
    lo = {"acosh": 1.0, "log2": 0.0, "log10": 0.0}.get(name, -3.0)
    x = np.concatenate([raw[0], F(rng.uniform(lo, lo + 6, n))])
    y = np.concatenate([raw[1], F(rng.uniform(-30, 30, n))])
    with np.errstate(all="ignore"):
        if name == "pow":
            got = elementary2("pow", x, y)
            want, settled = scalar_path_f32(elementary2("pow", x.astype(float), y.astype(float)))
        else:
            got = elementary(name, x)
            want, settled = scalar_path_f32(elementary(name, x.astype(float)))
    assert settled.sum() > 0.999 * x.size
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got)[settled], nan[settled])
    ok = settled & ~nan
    bad = np.flatnonzero(bits(got)[ok] != bits(want)[ok])
    assert bad.size == 0, (x[ok][bad[:4]], got[ok][bad[:4]], want[ok][bad[:4]])

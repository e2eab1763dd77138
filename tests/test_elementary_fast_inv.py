"""The vectorised float32 paths of atan, asin, acos, tan, erf, erfc, erf_inv and atan2
(csrc/elementary_f32_inv.h, docs/numerics.md "float32 fast paths"): at the points where they
change regime or hand an element to the exact path (octant and half-range boundaries, the 2^20
limit of tan's reduction, erfcx's pieces, the first approximations' switch, results below
2^-126, subnormals, +-0, +-inf, NaN, |x| > 1, atan2's exact cases), every dispatch level
gives bitwise the exact path's result (the double-double algorithm rounded once, with the
hard-case table of tools/exhaustive_f32/), which is the correctly rounded float32."""

from pathlib import Path

import numpy as np
import pytest

from invarax.kernels import _native
from invarax.kernels.elementary import elementary, elementary2

mpmath = pytest.importorskip("mpmath")
from test_elementary import _around, bits, correctly_rounded_f32, needs_long  # noqa: E402
from test_elementary_binary import correctly_rounded  # noqa: E402

SAVED = Path(__file__).resolve().parents[1] / "tools" / "exhaustive_f32"
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**-149, -(2.0**-149), 2.0**-126,
                    np.finfo(np.float32).max, -np.finfo(np.float32).max], np.float32)
TAN_PIO8 = np.sqrt(2.0) - 1.0
EDGES = {
    "atan": [TAN_PIO8, 1.0, 1.0 / TAN_PIO8, 2.0**-12, 2.0**-126, 2.0**-140, 1e-8, 2.0**24,
             2.0**60, 3.0e38],
    "asin": [0.5, 1.0, 2.0**-12, 2.0**-126, 2.0**-140, 1e-8, 0.25, 0.999],
    "tan": [2.0**20, 2.0**-12, 2.0**-126, 2.0**-140, np.pi / 4, np.pi / 2, 3 * np.pi / 4,
            np.pi, 252.89820861816406, 1e5 * np.pi, 2.0**19 + 0.5],
}
EDGES["acos"] = EDGES["asin"]
EDGES.update({  # erf, erfc: x S(x^2) below 1, erfcx's pieces [1, 2), [2, 3), [3, 10.1]
    "erf": [1.0, 2.0, 3.0, 3.92, 6.0, 2.0**-126, 2.0**-140, 1e-8, 0.5],
    "erfc": [1.0, 2.0, 3.0, 9.1, 9.2, 10.05, 10.1, 10.5, 26.0, 0.5, 2.0**-26],
    # y0 = 1 (erf's or erfc's residual), w = 5 (the two first approximations), near 1
    "erf_inv": [0.8427007929497149, 0.9966253, 1.0, 0.5, 2.0**-126, 2.0**-140, 1e-8, 0.999],
})


def exact_path(name, x):
    """The exact path's float32 results: the float64 kernel's double (the double-double
    rounded once) rounded to float32, and the saved hard cases' results where it misrounds."""
    with np.errstate(all="ignore"):
        out = elementary(name, x.astype(np.float64)).astype(np.float32)
    path = SAVED / f"{name}.txt"
    if path.exists():
        table = dict(tuple(int(v, 16) for v in line.split())
                     for line in path.read_text().splitlines() if line.strip())
        for i, key in enumerate(bits(x)):
            if int(key) in table:
                out[i] = np.array([table[int(key)]], np.uint32).view(np.float32)[0]
    return out


def at_every_level(fn, *args):
    out = {}
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            out[isa] = fn(*args)
        finally:
            _native.set_isa(previous)
    return out


def same_or_both_nan(got, want):
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and np.array_equal(bits(got)[~nan],
                                                                 bits(want)[~nan])


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edges_match_the_exact_path_at_every_level(name):
    rng = np.random.default_rng(5)
    x = np.concatenate([_around(EDGES[name]), SPECIAL, rng.uniform(-1.5, 1.5, 20_000),
                        rng.uniform(-2e6, 2e6, 5_000)]).astype(np.float32)
    want = exact_path(name, x)
    for isa, got in at_every_level(elementary, name, x).items():
        assert same_or_both_nan(got, want), (isa, x[bits(got) != bits(want)][:5])


@needs_long
@pytest.mark.parametrize("name", sorted(EDGES))
def test_edges_are_correctly_rounded(name):
    x = np.concatenate([_around(EDGES[name]), SPECIAL])
    assert same_or_both_nan(elementary(name, x), correctly_rounded_f32(name, x))


def test_out_may_alias_an_input():
    x = np.random.default_rng(6).uniform(-3, 3, 5000).astype(np.float32)
    for name in EDGES:
        buffer = x.copy()
        elementary(name, buffer, out=buffer)
        assert same_or_both_nan(buffer, elementary(name, x)), name
    y, b = x.copy(), x[::-1].copy()
    elementary2("atan2", y, b, out=y)
    assert same_or_both_nan(y, elementary2("atan2", x, x[::-1].copy()))


def atan2_edges():
    """Pairs at atan2's fast-path boundaries: |y| / |x| near tan(pi/8), 1 and 1 / tan(pi/8)
    in every quadrant, y = +-x, the axes and infinities (exact cases), results near float's
    smallest normal, subnormal operands."""
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 2, 300).astype(np.float32)
    ys, xs = [], []
    for ratio in (TAN_PIO8, 1.0, 1.0 / TAN_PIO8, 2.0**-126, 2.0**-150, 2.0**127):
        for sy in (1, -1):
            for sx in (1, -1):
                y = (x.astype(np.float64) * ratio).astype(np.float32)
                for step in (-2, -1, 0, 1, 2):
                    yy = y
                    for _ in range(abs(step)):
                        yy = np.nextafter(yy, np.float32(np.inf if step > 0 else 0))
                    ys.append(sy * yy)
                    xs.append(sx * x)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0**-149, -(2.0**-149),
                        3.0e38], np.float32)
    gy, gx = np.meshgrid(special, special)
    return (np.concatenate([*ys, gy.ravel()]).astype(np.float32),
            np.concatenate([*xs, gx.ravel()]).astype(np.float32))


@needs_long
def test_atan2_edges_are_correctly_rounded_at_every_level():
    y, x = atan2_edges()
    want = correctly_rounded("atan2", y, x)
    for isa, got in at_every_level(elementary2, "atan2", y, x).items():
        assert same_or_both_nan(got, want), (isa, y[bits(got) != bits(want)][:5])


def test_atan2_exact_cases_keep_their_signs():
    pi, pio2, pio4 = np.float32(np.pi), np.float32(np.pi / 2), np.float32(np.pi / 4)
    cases = [(0.0, 1.0, 0.0), (-0.0, 1.0, -0.0), (0.0, -1.0, pi), (-0.0, -1.0, -pi),
             (0.0, -0.0, pi), (-0.0, -0.0, -pi), (0.0, 0.0, 0.0), (3.0, 0.0, pio2),
             (-3.0, -0.0, -pio2), (2.0, 2.0, pio4), (-2.0, -2.0, -3 * pio4),
             (np.inf, np.inf, pio4), (1.0, -np.inf, pi), (-1.0, np.inf, -0.0)]
    y, x, want = (np.array(c, np.float32) for c in zip(*cases, strict=True))
    for got in at_every_level(elementary2, "atan2", y, x).values():
        assert np.array_equal(bits(got), bits(want))

"""The short polynomials of invarax's float32 elementary kernels (elementary_f32.h and
elementary_f32_more.h) and their error bounds.

    python tools/f32_polys.py [NAME ...] # coefficients (C99 hex) and the bound of each
    python tools/f32_polys.py --trig     # min |x - n pi/2| over float32 x, 0 < |x| < 2^20

Each polynomial is a weighted minimax approximation found by the Remez exchange in
mpmath at 40 digits, its coefficients rounded to double; the bound printed is the largest
relative error of the rounded polynomial against mpmath on a dense grid (20,001
Chebyshev-distributed points plus the ends, then a 10% margin for the gaps between grid
points), which docs/numerics.md ("float32 fast paths") adds to the rounding errors of the
evaluation. Not part of the test suite; tools/exhaustive_f32.py checks the kernels.
"""

from __future__ import annotations

import sys

import mpmath as mp

mp.mp.dps = 40
LN2 = mp.log(2)

# name: (g, w, number of coefficients, interval, Remez grid), the polynomial's use in a comment.
# The polynomial q(t) = sum_j c_j t^j minimises max |w(t) (g(t) - q(t))| on the interval;
# w is chosen so that this is the relative error of the function.
SPECS = {
    # exp(r) = 1 + r + r^2 q(r) = 1 + r (1 + r q(r)), |r| <= ln2/2 (+ the reduction's slack)
    "exp": (lambda r: (mp.exp(r) - 1 - r) / r**2, lambda r: r**2 / mp.exp(r), 8,
            (-mp.mpf("0.3466"), mp.mpf("0.3466")), 3001),
    # exp's own path: exp(r) = 1 + r (1 + r q(r)), |r| <= ln2/32 (+ the reduction's slack),
    # after the 16-entry table of 2^(j/16)
    "exp16": (lambda r: (mp.exp(r) - 1 - r) / r**2, lambda r: r**2 / mp.exp(r), 4,
              (-mp.mpf("0.021661"), mp.mpf("0.021661")), 2001),
    # tanh's expm1 after the same table: expm1(r) = r (1 + r q(r)), relative to expm1 (for
    # r near 0 exp16's bound, relative to exp, is 2^-40.5 relative to expm1); the weight
    # vanishes at r = 0, where remez() stalls (2^-42.8), so it is fitted by lawson() (LAWSON)
    "tanh_expm1": (lambda r: (mp.exp(r) - 1 - r) / r**2, lambda r: r**2 / mp.expm1(r), 5,
                   (-mp.mpf("0.021661"), mp.mpf("0.021661")), 2001),
    # log z = 2 atanh(s) = 2s + 2s w q(w), w = s^2 in [0, 0.17701^2]
    "log": (lambda w: (mp.atanh(mp.sqrt(w)) / mp.sqrt(w) - 1) / w,
            lambda w: w * mp.sqrt(w) / mp.atanh(mp.sqrt(w)), 5,
            (mp.mpf(0), mp.mpf("0.03134")), 2001),
    # sin(r) = r + r z q(z), z = r^2 in [0, (pi/4 + 2^-20)^2]
    "sin": (lambda z: (mp.sin(mp.sqrt(z)) / mp.sqrt(z) - 1) / z,
            lambda z: z * mp.sqrt(z) / mp.sin(mp.sqrt(z)), 5,
            (mp.mpf(0), (mp.pi / 4 + mp.mpf(2) ** -20) ** 2), 3001),
    # cos(r) = 1 - z/2 + z^2 q(z)
    "cos": (lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2,
            lambda z: z**2 / mp.cos(mp.sqrt(z)), 4,
            (mp.mpf(0), (mp.pi / 4 + mp.mpf(2) ** -20) ** 2), 3001),
    # elementary_f32_more.h: pow's log z = 2 atanh(s) = 2s + 2s w q(w), as "log", 7 terms
    "pow_log": (lambda w: (mp.atanh(mp.sqrt(w)) / mp.sqrt(w) - 1) / w,
                lambda w: w * mp.sqrt(w) / mp.atanh(mp.sqrt(w)), 7,
                (mp.mpf(0), mp.mpf("0.03134")), 2001),
    # cbrt(m) = q(m), m in [1, 2] (the start of one Halley step)
    "cbrt": (lambda m: mp.cbrt(m), lambda m: 1 / mp.cbrt(m), 5, (mp.mpf(1), mp.mpf(2)), 3001),
}


def _erfcx(a):
    return mp.exp(a * a) * mp.erfc(a)


def _erf_inv_over_x(w):
    """erf_inv(a) / a for w = -log(1 - a^2)."""
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    a = mp.sqrt(-mp.expm1(-w))
    return mp.erfinv(a) / a


def _relative(g):
    return lambda t: 1 / g(t)


# elementary_f32_inv.h's (atan, asin, acos, tan, erf, erfc, erf_inv)
SPECS.update({
    # atan(t) = t + t^3 q(w), w = t^2 in [0, tan(pi/8)^2 (+ slack)]
    "atan": (lambda w: (mp.atan(mp.sqrt(w)) / mp.sqrt(w) - 1) / w,
             lambda w: w * mp.sqrt(w) / mp.atan(mp.sqrt(w)), 9,
             (mp.mpf(0), mp.mpf("0.1716")), 2001),
    # asin(s) = s + s^3 q(z), z = s^2 in [0, 1/4]
    "asin": (lambda z: (mp.asin(mp.sqrt(z)) / mp.sqrt(z) - 1) / z,
             lambda z: z * mp.sqrt(z) / mp.asin(mp.sqrt(z)), 10, (mp.mpf(0), mp.mpf("0.25")), 2001),
    # tan(r) = r + r^3 q(z), z = r^2 in [0, (pi/4 + 2^-20)^2]
    "tan": (lambda z: (mp.tan(mp.sqrt(z)) / mp.sqrt(z) - 1) / z,
            lambda z: z * mp.sqrt(z) / mp.tan(mp.sqrt(z)), 12,
            (mp.mpf(0), (mp.pi / 4 + mp.mpf(2) ** -20) ** 2), 2001),
    # erf(x) = x S(z), z = x^2 in [0, 1]
    "erf": ((g_erf := lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z)), _relative(g_erf), 11,
            (mp.mpf(0), mp.mpf(1)), 1201),
    # erfcx(a) on [1, 2) and [2, 3): polynomials in t = a - 1.5, a - 2.5
    "erfcx1": ((g1 := lambda t: _erfcx(mp.mpf("1.5") + t)), _relative(g1), 14,
               (-mp.mpf("0.5"), mp.mpf("0.5")), 1201),
    "erfcx2": ((g2 := lambda t: _erfcx(mp.mpf("2.5") + t)), _relative(g2), 13,
               (-mp.mpf("0.5"), mp.mpf("0.5")), 1201),
    # erfcx(a) = r g(v) on [3, 10.1], r = 1 / a, v = r^2: g(v) = a erfcx(a)
    "erfcx3": ((g3 := lambda v: _erfcx(1 / mp.sqrt(v)) / mp.sqrt(v)), _relative(g3), 14,
               (1 / mp.mpf("10.1") ** 2, 1 / mp.mpf(9)), 1201),
    # erf_inv's first approximation: a P(w) for w = -log(1 - a^2) < 5, a Q(sqrt w) above
    "erf_inv_w": (_erf_inv_over_x, _relative(_erf_inv_over_x), 8, (mp.mpf(0), mp.mpf(5)), 801),
    "erf_inv_s": ((gs := lambda s: _erf_inv_over_x(s * s)), _relative(gs), 7,
                  (mp.sqrt(5), mp.mpf(4)), 801),
})
# the variable of each polynomial over the interval of its argument, where it is not t itself


def horner_bound(coeffs, a, b, n=20001):
    """max over [a, b] of sum_j (j + 1) |c_j t^j| / |q(t)|: Horner's rule with fma rounds each
    partial sum once, so its roundings change q(t) by at most this many units of 2^-53,
    relatively (a bound on the evaluation error that the docs add to the approximation's)."""
    import numpy as np

    t = np.linspace(float(a), float(b), n)
    c = np.array(coeffs)
    terms = np.abs(c[:, None]) * np.abs(t[None, :]) ** np.arange(c.size)[:, None]
    q = np.polyval(c[::-1], t)
    return float(((np.arange(1, c.size + 1)[:, None] * terms).sum(0) / np.abs(q)).max())


def _safe(f, t, a, b):
    # g and w are removable singularities at 0: evaluate a hair inside the interval
    eps = (b - a) * mp.mpf(10) ** -25
    return f(t if t != 0 else (eps if a == 0 or b > 0 else -eps))


def _grid(a, b, n):
    return [a + (b - a) * (1 - mp.cos(mp.pi * i / (n - 1))) / 2 for i in range(n)]


def remez(g, w, n, a, b, iterations=12, grid=3001):
    """Coefficients c_0..c_{n-1} minimising max |w (g - q)| on [a, b]."""
    # the weight vanishes at t = 0: an interval starting there starts a hair later
    pts = _grid(a if a != 0 else b * mp.mpf(10) ** -8, b, grid)
    gv = [_safe(g, t, a, b) for t in pts]
    wv = [_safe(w, t, a, b) for t in pts]
    # a first reference off the points where the weight vanishes (0, inside or at an end)
    ref = [pts[int(round((i + 0.3) * (grid - 1) / (n + 1)))] for i in range(n + 1)]
    coeffs = None
    for _ in range(iterations):
        rows = [[t**j for j in range(n)] + [(-1) ** i / _safe(w, t, a, b)]
                for i, t in enumerate(ref)]
        sol = mp.lu_solve(mp.matrix(rows), mp.matrix([_safe(g, t, a, b) for t in ref]))
        coeffs = [sol[j] for j in range(n)]
        err = [wv[i] * (gv[i] - mp.polyval(coeffs[::-1], t)) for i, t in enumerate(pts)]
        # the extremum of each run of one sign, then the n + 1 largest alternating ones
        runs = []
        for i in range(grid):
            if err[i] == 0:
                continue
            if runs and mp.sign(err[i]) == mp.sign(err[runs[-1]]):
                runs[-1] = max(runs[-1], i, key=lambda j: abs(err[j]))
            else:
                runs.append(i)
        while len(runs) > n + 1:  # drop the smallest, merging its neighbours
            k = min(range(len(runs)), key=lambda j: abs(err[runs[j]]))
            runs.pop(k)
            if 0 < k < len(runs) and mp.sign(err[runs[k - 1]]) == mp.sign(err[runs[k]]):
                runs[k - 1] = max(runs[k - 1], runs.pop(k), key=lambda j: abs(err[j]))
        if len(runs) < n + 1:
            break
        ref = [pts[i] for i in runs]
    return coeffs


#: fitted by lawson() instead of remez()
LAWSON = {"tanh_expm1"}


def lawson(g, w, n, a, b, grid=2001, iterations=60, passes=3):
    """Coefficients c_0..c_{n-1} nearly minimising max |w (g - q)| on [a, b], by Lawson's
    iteratively reweighted least squares on Chebyshev points: no reference to exchange, so a
    weight vanishing inside the interval does no harm. Each pass fits, in double, a
    correction to the coefficients so far against their error computed by mpmath."""
    import numpy as np

    pts = [t for t in _grid(a, b, grid) if t != 0]
    scale = [max(abs(a), abs(b)) ** j for j in range(n)]
    cols = np.array([[float(w(t) * t**j / scale[j]) for j in range(n)] for t in pts])
    coeffs = [mp.mpf(0)] * n
    for _ in range(passes):
        rhs = np.array([float(w(t) * (g(t) - mp.polyval(coeffs[::-1], t))) for t in pts])
        weights = np.full(len(pts), 1.0 / len(pts))
        for _ in range(iterations):
            root = np.sqrt(weights)
            d = np.linalg.lstsq(cols * root[:, None], rhs * root, rcond=None)[0]
            weights *= np.abs(cols @ d - rhs) + 1e-300
            weights /= weights.sum()
        coeffs = [c + mp.mpf(float(d[j])) / scale[j] for j, c in enumerate(coeffs)]
    return coeffs


def bound(g, w, coeffs, a, b, n=20001):
    """Largest relative error of the polynomial with double coefficients, with a margin."""
    worst = max(abs(_safe(w, t, a, b) * (_safe(g, t, a, b) - mp.polyval(coeffs[::-1], t)))
                for t in _grid(a, b, n))
    return worst * mp.mpf("1.1")


def trig_reduction_minimum():
    """The smallest |x - n pi/2| (n = round(x 2/pi) != 0) over float32 x below 2^20: for
    each binade, x 2/pi = m C with m the 24-bit significand and C split in two 26-bit parts
    (m times each is exact in double) and a tail, so the fraction is known to ~2^-52."""
    import numpy as np

    best = (1.0, 0.0)
    m = np.arange(2**23, 2**24, dtype=np.float64)
    for e in range(-1, 20):  # x in [2^e, 2^(e+1))
        rest, parts = mp.mpf(2) ** (e - 23) * 2 / mp.pi, []
        for _ in range(2):
            unit = mp.mpf(2) ** (int(mp.floor(mp.log(rest, 2))) - 25)
            parts.append(float(mp.floor(rest / unit) * unit))
            rest -= parts[-1]
        f = sum((m * c) % 1.0 for c in parts) + m * float(rest)
        d = np.abs(f - np.round(f)) * (np.pi / 2)
        d[m * 2.0 ** (e - 23) < np.pi / 4] = 1.0  # n = 0
        i = int(np.argmin(d))
        best = min(best, (float(d[i]), float(m[i] * 2.0 ** (e - 23))))
    return best


def main():
    if "--trig" in sys.argv[1:]:
        d, x = trig_reduction_minimum()
        print(f"min |x - n pi/2| = 2^{float(mp.log(d, 2)):.2f} at x = {x!r}")
        return
    names = [n for n in sys.argv[1:] if not n.startswith("-")] or list(SPECS)
    for name in names:
        g, w, n, (a, b), grid = SPECS[name]
        fit = lawson if name in LAWSON else remez
        coeffs = [float(c) for c in fit(g, w, n, a, b, grid=grid)]
        e = bound(g, w, [mp.mpf(c) for c in coeffs], a, b)
        h = horner_bound(coeffs, a, b)
        print(f"{name}: relative error <= 2^{float(mp.log(e, 2)):.2f}, Horner's roundings "
              f"<= {h:.2f} 2^-53")
        for j, c in enumerate(coeffs):
            print(f"    c{j} = {c.hex()}  ({c!r})")


if __name__ == "__main__":
    main()

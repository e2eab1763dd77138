"""The largest float64 error in ulp of invarax's lgamma and digamma against mpmath, on dense
samples where the error concentrates (docs/numerics.md, "lgamma and digamma"). Not CI (it
takes minutes); tests/test_elementary_gamma.py runs a smaller sample with the same code.

    nice -n 19 python tools/gamma_ulp.py [--zeros 1000] [--width 300] [--random 20000]

- digamma: its positive zero and every negative one above -N-1 (N = --zeros), the `width`
  doubles on each side of the double nearest it, and 200 more zeros log-spaced out to -2^52;
- lgamma: its zeros at 1 and 2, the two in each interval (-n-1, -n) for n = 2 ... 17 (beyond,
  no double but the pole lies within them), likewise;
- both: random values uniform in (-200, 200), and log-uniform magnitudes 1e-300 ... 1e300 of
  both signs.
Near a zero x0 of digamma above -10^4 the reference is the Taylor series at x0 (mpmath, 240 bits, to
t^6), exact far beyond float64 for |t| below 2^-20; elsewhere mpmath's loggamma and digamma
at 240 bits.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import mpmath
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from invarax.kernels.elementary import elementary  # noqa: E402

PREC = 240


def _lgamma(x):
    return mpmath.re(mpmath.loggamma(x))


def digamma_zero(n):
    """The zero of digamma in (-n-1, -n), n >= 0."""
    with mpmath.workprec(PREC):
        a, b = -n - 1 + mpmath.mpf(2) ** -60, -n - mpmath.mpf(2) ** -60
        # digamma increases on each interval from -inf to +inf: bisect a little, then secant
        for _ in range(30):
            m = (a + b) / 2
            if mpmath.digamma(m) < 0:
                a = m
            else:
                b = m
        return mpmath.findroot(mpmath.digamma, (a, b), solver="anderson")


def lgamma_zeros(n):
    """The two zeros of lgamma in (-n-1, -n), n >= 2."""
    with mpmath.workprec(PREC):
        m = digamma_zero(n)  # lgamma's minimum there
        out = []
        for a, b in ((-n - 1, m), (m, -n)):
            lo, hi = mpmath.mpf(a) + mpmath.mpf(10) ** -60, mpmath.mpf(b) - mpmath.mpf(10) ** -60
            flo = _lgamma(lo)
            for _ in range(60):
                mid = (lo + hi) / 2
                if (_lgamma(mid) > 0) == (flo > 0):
                    lo = mid
                else:
                    hi = mid
            out.append(mpmath.findroot(_lgamma, (lo, hi), solver="anderson"))
        return out


def ulp_errors(computed, reference):
    """|computed - reference| / ulp(reference) for each (float64 ulp, subnormals included)."""
    out = np.empty(len(computed))
    with mpmath.workprec(PREC):
        for i, (c, r) in enumerate(zip(computed, reference, strict=True)):
            if r == 0:
                out[i] = 0.0 if c == 0 else np.inf
                continue
            e = max(int(mpmath.floor(mpmath.log(abs(r), 2))), -1022)
            out[i] = float(abs(mpmath.mpf(float(c)) - r) / mpmath.ldexp(1, e - 52))
    return out


def around_zero(name, zero, width):
    """The doubles within `width` of the one nearest `zero` and their exact values."""
    z = float(zero)
    steps = np.arange(-width, width + 1, dtype=np.float64)
    x = z + steps * np.spacing(z)
    x = x[(np.floor(x) != x)]
    with mpmath.workprec(PREC):
        # mpmath's polygamma is slow far out; lgamma's zeros lie close to the poles
        if abs(zero) > 1e4 or name == "lgamma":
            f = _lgamma if name == "lgamma" else mpmath.digamma
            return x, [f(mpmath.mpf(float(v))) for v in x]
        order = 1 if name == "digamma" else 0
        coef = [mpmath.polygamma(k - 1 + order, zero) / mpmath.factorial(k) for k in range(1, 7)]
        ref = []
        for v in x:
            t = mpmath.mpf(float(v)) - zero
            ref.append(sum(c * t ** (k + 1) for k, c in enumerate(coef)))
    return x, ref


def zero_sample(name, zeros, width):
    xs, refs = [], []
    for z in zeros:
        x, r = around_zero(name, z, width)
        xs.append(x)
        refs.extend(r)
    return np.concatenate(xs), refs


def digamma_zeros(count, far):
    with mpmath.workprec(PREC):
        near = [mpmath.findroot(mpmath.digamma, mpmath.mpf(1.46))]
    near += [digamma_zero(n) for n in range(0, count + 1)]
    ns = sorted({int(v) for v in np.geomspace(count + 1, 2.0**52 - 2, far)})
    return near + [digamma_zero(n) for n in ns]


def lgamma_zero_list():
    zs = [mpmath.mpf(1), mpmath.mpf(2)]
    for n in range(2, 18):
        zs.extend(lgamma_zeros(n))
    return zs


def random_sample(name, count, seed):
    rng = np.random.default_rng(seed)
    mags = 10.0 ** rng.uniform(-300, 300, count)
    x = np.concatenate([rng.uniform(-200, 200, count), mags, -mags])
    x = x[~((x <= 0) & (np.floor(x) == x))]
    f = _lgamma if name == "lgamma" else mpmath.digamma
    with mpmath.workprec(PREC):
        ref = [f(mpmath.mpf(float(v))) for v in x]
    return x, ref


def worst(name, x, ref):
    y = elementary(name, np.asarray(x, np.float64))
    err = ulp_errors(y, ref)
    i = int(np.argmax(err))
    return float(err[i]), float(x[i])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zeros", type=int, default=1000)
    ap.add_argument("--far", type=int, default=200)
    ap.add_argument("--width", type=int, default=300)
    ap.add_argument("--random", type=int, default=20000)
    args = ap.parse_args()
    t0 = time.time()
    rows = []
    x, r = zero_sample("digamma", digamma_zeros(args.zeros, args.far), args.width)
    rows.append(("digamma", f"zeros 1.46, (-{args.zeros + 1}, 0) and {args.far} to -2^52, "
                 f"+-{args.width} doubles", len(x), *worst("digamma", x, r)))
    x, r = zero_sample("lgamma", lgamma_zero_list(), args.width)
    rows.append(("lgamma", f"zeros 1, 2 and in (-18, -2), +-{args.width} doubles", len(x),
                 *worst("lgamma", x, r)))
    for name in ("digamma", "lgamma"):
        x, r = random_sample(name, args.random, 1)
        rows.append((name, "random (-200, 200), +-1e-300 ... 1e300", len(x), *worst(name, x, r)))
    for name, what, n, e, at in rows:
        print(f"{name:8s} {what}: {n} inputs, max {e:.3f} ulp at {at!r}")
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()

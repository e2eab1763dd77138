"""The polynomial table of invarax's erf and erfc (elementary_special.h): for each interval
[2^e (1 + j/4), 2^e (1 + (j + 1)/4)), e = -1 ... 4, j = 0 ... 3, the polynomial in
t = x - c (c the interval's midpoint) interpolating erfcx(x) = exp(x^2) erfc(x) at DEGREE + 1
Chebyshev points, solved in 200-bit arithmetic and rounded to double (c0 and c1 as
double-double pairs).

    python tools/fit_erfcx.py > /tmp/table.h   # the ERFCX_POLY initialiser, then its error

Not run by the tests: the header holds its output.
"""

from __future__ import annotations

import mpmath

DEGREE = 17
mpmath.mp.prec = 200


def erfcx(x):
    return mpmath.exp(x * x) * mpmath.erfc(x)


def interval(index):
    e, j = index // 4 - 1, index % 4
    lo = mpmath.mpf(2) ** e * (1 + mpmath.mpf(j) / 4)
    return lo, lo + mpmath.mpf(2) ** e / 4


def fit(index):
    lo, hi = interval(index)
    c, h = (lo + hi) / 2, (hi - lo) / 2
    nodes = [h * mpmath.cos(mpmath.pi * (k + mpmath.mpf(1) / 2) / (DEGREE + 1))
             for k in range(DEGREE + 1)]
    a = mpmath.matrix([[t**p for p in range(DEGREE + 1)] for t in nodes])
    b = mpmath.matrix([erfcx(c + t) for t in nodes])
    return c, h, list(mpmath.lu_solve(a, b))


def split(v):
    hi = float(v)
    return hi, float(v - mpmath.mpf(hi))


def main():
    rows, worst = [], 0
    for index in range(24):
        c, h, coef = fit(index)
        c0, c1 = split(coef[0]), split(coef[1])
        rest = [float(v) for v in coef[2:]]
        values = [*c0, *c1, *rest]
        rows.append("    {" + ", ".join(v.hex() for v in values) + "},")
        for k in range(41):  # the rounded polynomial against erfcx, at 200 bits
            t = h * (mpmath.mpf(k) / 20 - 1)
            p = sum(mpmath.mpf(v) * t**i for i, v in enumerate([0, 0, *rest]))
            p += mpmath.mpf(c0[0]) + c0[1] + (mpmath.mpf(c1[0]) + c1[1]) * t
            worst = max(worst, abs(p / erfcx(c + t) - 1))
    print("\n".join(rows))
    bits = float(mpmath.log(worst, 2))
    print(f"/* max relative error of the rounded polynomials: 2^{bits:.1f} */")


if __name__ == "__main__":
    main()

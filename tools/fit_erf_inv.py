"""The starting approximation of invarax's float64 erf_inv (elementary_special.h,
ES_ERF_INV_START): with w = -log((1 - a)(1 + a)) computed in double as the kernel does,
erf_inv(a) / a as a polynomial in w - 3.125 (w < 6.25), sqrt(w) - 3.25 (w < 16) or
sqrt(w) - 5 (w up to 36.04, a = 1 - 2^-53), each a weighted least-squares fit against
SciPy's erfinv (accurate to a few 2^-53; the start only needs about 2^-30, one Newton step
with an accurate residual gives the result).

    python tools/fit_erf_inv.py   # the initialiser, then each polynomial's measured error

Not run by the tests: the header holds its output.
"""

from __future__ import annotations

import numpy as np
import scipy.special as ss
from numpy.polynomial import polynomial as P

#: (variable, lower end, upper end, centre, degree) of each piece.
PIECES = (("w", 0.0, 6.25, 3.125, 14), ("s", 2.5, 4.0, 3.25, 12), ("s", 4.0, 6.01, 5.0, 12))


def samples(var, lo, hi, n=40000):
    """Inputs a in (0, 1) whose double-computed w (or sqrt(w)) lies in [lo, hi]."""
    v = np.cos(np.linspace(0, np.pi, n)) * (hi - lo) / 2 + (hi + lo) / 2
    a = np.sqrt(-np.expm1(-(v if var == "w" else v * v)))
    a = a[(a > 0) & (a < 1)]
    w = -np.log((1 - a) * (1 + a))
    vd = w if var == "w" else np.sqrt(w)
    keep = (vd >= lo) & (vd <= hi)
    return a[keep], vd[keep]


def fit(var, lo, hi, centre, degree):
    a, v = samples(var, lo, hi)
    f = ss.erfinv(a) / a
    c = P.polyfit(v - centre, f, degree, w=1 / f)
    return c, float(np.max(np.abs(P.polyval(v - centre, c) / f - 1)))


def main():
    errors = []
    print("static const double ES_ERF_INV_START[3][15] = {")
    for piece in PIECES:
        c, err = fit(*piece)
        coeffs = [float(x).hex() for x in c] + ["0.0"] * (15 - len(c))
        print("    {" + ", ".join(coeffs) + "},")
        errors.append(err)
    print("};")
    for piece, err in zip(PIECES, errors, strict=True):
        print(f"/* {piece}: max relative error {err:.2e} */")


if __name__ == "__main__":
    main()

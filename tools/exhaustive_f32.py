"""Check a float32 elementary function of invarax on all 2^32 inputs: is every result the
correctly rounded one?

    nice -n 19 python tools/exhaustive_f32.py exp [--start HEX --stop HEX]
    python tools/exhaustive_f32.py --header   # elementary_hard.h from the saved cases

The reference is independent of invarax's algorithm: NumPy's float64 function of the input
(within a few float64 ulp, far below 2^-45), rounded to float32; where that float64 value
lies within 2^-45 (relative) of a float32 rounding boundary, mpmath at 200 bits decides.
For lgamma and digamma the float64 reference is SciPy's ``gammaln`` and ``psi``, which are
accurate only in absolute terms where they cancel (next to the zeros, and below 0): each
input gets a generous absolute error bound (``ERR64``: 2^-45 times the size of the terms
that cancel), mpmath settles every input whose bound reaches a rounding boundary, and
mpmath also decides every input where invarax and the reference disagree.
The inputs invarax rounds the wrong way are printed and saved to
``tools/exhaustive_f32/NAME.txt`` (input bits, correct result bits); ``--header`` writes
them into ``invarax/kernels/csrc/elementary_hard.h``, the kernels' table of hard cases
(looked up only where the kernel's double result is within 2^-48 of a boundary, so the
table changes exactly those outputs). Not part of the test suite: it takes minutes per
function.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from invarax.kernels.elementary import NAMES, elementary  # noqa: E402

SAVED = ROOT / "tools" / "exhaustive_f32"
HEADER = ROOT / "invarax" / "kernels" / "csrc" / "elementary_hard.h"
CHUNK = 1 << 22
MARGIN = 2.0**-45


def _logistic64(x):
    return 1.0 / (1.0 + np.exp(-x))


# float64 references: within a few ulp, far below MARGIN
REF64 = {"exp": np.exp, "log": np.log, "expm1": np.expm1, "log1p": np.log1p, "tanh": np.tanh,
         "logistic": _logistic64, "sin": np.sin, "cos": np.cos, "exp2": np.exp2,
         "sinh": np.sinh, "cosh": np.cosh, "log2": np.log2, "log10": np.log10,
         "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "atan": np.arctan,
         "asin": np.arcsin, "acos": np.arccos, "tan": np.tan, "cbrt": np.cbrt,
         "erf": lambda x: _scipy_special().erf(x), "erfc": lambda x: _scipy_special().erfc(x),
         "erf_inv": lambda x: _erf_inv64(x), "lgamma": lambda x: _lgamma64(x),
         "digamma": lambda x: _digamma64(x)}


def _lgamma64(x):
    # SciPy's gammaln, with JAX's +inf (not NaN) at -inf
    return np.where(x == -np.inf, np.inf, _scipy_special().gammaln(x))


def _digamma64(x):
    # SciPy's psi, with JAX's NaN (not -inf) at +-0
    return np.where(x == 0, np.nan, _scipy_special().psi(x))


def _lgamma_err(x, r):
    # SciPy's gammaln is accurate in absolute terms where it cancels (near the zeros; the
    # reflection below 0): a generous bound on that error, the size of the cancelled terms
    a = np.abs(x)
    return 2.0**-45 * (np.abs(r) + 2 + 2 * a * (np.abs(np.log(a)) + 1))


def _digamma_err(x, r):
    # the same for SciPy's psi: its log, its reciprocals, and pi cot(pi x) below 0
    a = np.abs(x)
    frac = x - np.round(x)
    cot = np.where(x < 0, np.abs(np.pi / np.tan(np.pi * np.where(frac == 0, 0.5, frac))), 0)
    recip = np.where((x > 0) & (x < 1), 1 / np.where(x > 0, a, 1), 0)
    return 2.0**-45 * (np.abs(r) + 2 + np.log1p(a) + recip + cot)


#: absolute error bounds of the float64 references that cancel (others: MARGIN relative);
#: their every unsettled input and every disagreement with invarax goes to mpmath
ERR64 = {"lgamma": _lgamma_err, "digamma": _digamma_err}


def _erf_inv64(x):
    # SciPy's erfinv is slow outside [-1, 1] (100x): NaN there without calling it
    inside = np.abs(x) <= 1
    y = np.copysign(_scipy_special().erfinv(np.where(inside, x, 0.0)), x)
    return np.where(inside, y, np.nan)


def _scipy_special():
    import scipy.special  # float64 erf, erfc, erfinv (a few ulp); only for those three

    return scipy.special


def _mp_reference(name):
    import mpmath
    from mp_reference import EXACT  # tests/mp_reference.py, shared with the tests

    return mpmath, EXACT[name]


def nearest(name, x, below, above):
    """The correctly rounded float32 of name(x), given the two floats around it."""
    mpmath, f = _mp_reference(name)
    with mpmath.workprec(200):
        exact = f(mpmath.mpf(float(x)))
        top = mpmath.mpf(2) ** 128  # inf stands for 2^128 when rounding
        lo = top if np.isinf(below) else mpmath.mpf(float(below))
        hi = top if np.isinf(above) else mpmath.mpf(float(above))
        if np.isinf(below) and below < 0:
            lo = -top
        d_lo, d_hi = abs(exact - lo), abs(exact - hi)
        if d_lo == d_hi:  # ties to even
            return below if (np.float32(below).view(np.uint32) & 1) == 0 else above
        return below if d_lo < d_hi else above


def rounded(name, x):
    """The correctly rounded float32 of name(x) from mpmath alone (any result size): the
    nearest of the float32 rounding of the double nearest the exact value and its two
    neighbours, measured exactly."""
    mpmath, f = _mp_reference(name)
    with mpmath.workprec(200):
        exact = f(mpmath.mpf(float(x)))
        guess = np.float32(float(exact))
        if not np.isfinite(guess):
            return guess
        best = None
        for c in (np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf))):
            if not np.isfinite(c):
                continue
            key = (abs(exact - mpmath.mpf(float(c))), int(np.float32(c).view(np.uint32)) & 1)
            if best is None or key < best[0]:
                best = (key, c)
        return best[1]


def reference(name, x):
    """The correctly rounded float32 results for float32 inputs x, and how many inputs
    mpmath settled."""
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        r = REF64[name](x64)
        want = r.astype(np.float32)
        if name in ERR64:  # absolute bounds
            err = ERR64[name](x64, r)
            lo, hi = (r - err).astype(np.float32), (r + err).astype(np.float32)
        else:  # relative bounds (an infinite r stays itself)
            lo = (r * (1 - MARGIN)).astype(np.float32)
            hi = (r * (1 + MARGIN)).astype(np.float32)
    usable = np.isfinite(r) if name in ERR64 else ~np.isnan(r)  # inf - inf: not a bound
    close = np.flatnonzero((lo != hi) & usable)
    for i in close:
        if name in ERR64:
            want[i] = rounded(name, x[i])
        else:
            below, above = sorted((lo[i], hi[i]))
            want[i] = nearest(name, x[i], below, above)
    return want, close.size


def check(name, start, stop):
    wrong, resolved, began = [], 0, time.time()
    for first in range(start, stop, CHUNK):
        bits = np.arange(first, min(first + CHUNK, stop), dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        got = elementary(name, x)
        want, n = reference(name, x)
        resolved += n
        nan = np.isnan(want)
        bad = np.flatnonzero((got.view(np.uint32) != want.view(np.uint32)) & ~nan
                             | (np.isnan(got) != nan))
        if name in ERR64 and bad.size:  # mpmath decides every disagreement
            for i in bad:
                want[i] = rounded(name, x[i])
            bad = bad[(got[bad].view(np.uint32) != want[bad].view(np.uint32))
                      & ~(np.isnan(got[bad]) & np.isnan(want[bad]))]
        for i in bad:
            wrong.append((int(bits[i]), int(want[i:i + 1].view(np.uint32)[0])))
            print(f"  misrounded: x={x[i]!r} ({bits[i]:#010x}) got {got[i]!r} want {want[i]!r}",
                  flush=True)
        if (first // CHUNK) % 128 == 0:
            print(f"  {name}: {first:#010x} ... {time.time() - began:.0f} s", flush=True)
    return wrong, resolved, time.time() - began


def write_header():
    tables, entries = [], []
    for name in NAMES:
        path = SAVED / f"{name}.txt"
        cases = []
        if path.exists():
            cases = sorted(tuple(int(v, 16) for v in line.split())
                           for line in path.read_text().splitlines() if line.strip())
        if cases:
            rows = ",\n".join(f"    {{{a:#010x}u, {b:#010x}u}}" for a, b in cases)
            tables.append(f"static const uint32_t HARD_{name.upper()}[][2] = {{\n{rows},\n}};")
            entries.append(f"{{HARD_{name.upper()}, {len(cases)}}}")
        else:
            entries.append("{HARD_NONE, 0}")
    text = HEADER.read_text()
    head = text[:text.index("static const uint32_t HARD_NONE")]
    body = "\n\n".join(["static const uint32_t HARD_NONE[1][2] = {{0, 0}};", *tables])
    listing = ", ".join(entries)
    HEADER.write_text(f"{head}{body}\n\n/* in native.h's ELEM_* order */\n"
                      f"#define ELEM_HARD_TABLES {{{listing}}}\n\n#endif\n")
    print(f"wrote {HEADER.relative_to(ROOT)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", choices=NAMES)
    parser.add_argument("--start", default="0", help="first input bit pattern (hex)")
    parser.add_argument("--stop", default="100000000", help="one past the last (hex)")
    parser.add_argument("--header", action="store_true", help="write elementary_hard.h")
    args = parser.parse_args()
    if args.header:
        write_header()
        return
    if args.name is None:
        parser.error("name a function, or pass --header")
    start, stop = int(args.start, 16), int(args.stop, 16)
    wrong, resolved, seconds = check(args.name, start, stop)
    print(f"{args.name}: {stop - start} inputs, {len(wrong)} misrounded, {resolved} settled "
          f"by mpmath, {seconds:.0f} s")
    if start == 0 and stop == 1 << 32:
        # keep the cases found before: with the table in place they are no longer wrong
        SAVED.mkdir(exist_ok=True)
        path = SAVED / f"{args.name}.txt"
        old = path.read_text().splitlines() if path.exists() else []
        known = {tuple(int(v, 16) for v in line.split()) for line in old if line.strip()}
        path.write_text("".join(f"{a:#010x} {b:#010x}\n" for a, b in sorted(known | set(wrong))))


if __name__ == "__main__":
    main()

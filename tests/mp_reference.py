"""The exact functions behind invarax's elementary kernels, in mpmath: the reference that
the elementary tests and ``tools/exhaustive_f32.py`` round from (the tests import it as
``mp_reference``; the script puts ``tests/`` on ``sys.path`` first).

Example:
    >>> with mpmath.workprec(100):
    ...     print(mpmath.nstr(EXACT["logistic"](mpmath.mpf(0)), 5))
    0.5
"""

import mpmath

#: lax's name -> the function of an ``mpmath.mpf``, at the working precision. ``cbrt`` is
#: real for negative inputs; ``erf_inv`` is NaN outside [-1, 1]; ``lgamma`` is the log of
#: ``|gamma|`` (real), as invarax's.
EXACT = {
    "exp": mpmath.exp, "log": mpmath.log, "expm1": mpmath.expm1, "log1p": mpmath.log1p,
    "tanh": mpmath.tanh, "logistic": lambda v: 1 / (1 + mpmath.exp(-v)), "sin": mpmath.sin,
    "cos": mpmath.cos, "exp2": lambda v: mpmath.mpf(2) ** v, "sinh": mpmath.sinh,
    "cosh": mpmath.cosh, "log2": lambda v: mpmath.log(v, 2), "log10": mpmath.log10,
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh, "atan": mpmath.atan,
    "asin": mpmath.asin, "acos": mpmath.acos, "tan": mpmath.tan,
    "cbrt": lambda v: mpmath.sign(v) * mpmath.cbrt(abs(v)), "erf": mpmath.erf,
    "erfc": mpmath.erfc, "erf_inv": lambda v: mpmath.erfinv(v) if abs(v) <= 1 else mpmath.nan,
    "lgamma": lambda v: mpmath.re(mpmath.loggamma(v)), "digamma": mpmath.digamma,
}

"""The ``fma`` primitive: ``a * b + c`` with a single rounding (a fused multiply-add).

invarax never contracts ``a * b + c`` on its own (the numerics contract); ``fma`` is for
formulas defined with one rounding, such as ``random.uniform``'s scaling, which XLA
computes as an FMA: using it reproduces JAX's bits.

The impl is exact in NumPy, with no hardware FMA: float32 (and float16) products are exact
in float64, and the one float64 rounding of the sum is corrected where it lands on a
float32 midpoint; float64 uses error-free transformations (Dekker's product, Knuth's
two-sum) and corrects the final rounding the same way. (Float64 products beyond about
``1e300`` in magnitude, where Dekker's splitting overflows, are outside this guarantee.)
"""

from __future__ import annotations

import numpy as np

from ..interpreters.ad import defjvp
from . import elementwise as lax
from ._util import lax_operands
from .elementwise import _broadcast_like, _vectorized_batch_rule, defvectorized


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ta, tb = split * a, split * b
    ah, bh = ta - (ta - a), tb - (tb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _correct(r, rest, err):
    """The exact value ``r + rest + err`` rounded once, given ``r``, the rounding of
    ``r + rest`` (``rest`` exact, in a wider or equal dtype) and a tiny ``err``: only a
    tie (``r + rest`` a midpoint) can be decided otherwise, by the sign of ``err``."""
    other = np.nextafter(r, np.where(rest > 0, np.inf, -np.inf).astype(r.dtype))
    wide = rest.dtype
    midpoint = (rest != 0) & (2 * rest == other.astype(wide) - r.astype(wide))
    up, down = np.maximum(r, other), np.minimum(r, other)
    return np.where(midpoint & (err > 0), up, np.where(midpoint & (err < 0), down, r))


def _fma_impl(a, b, c):
    a, b, c = np.broadcast_arrays(a, b, c)
    with np.errstate(all="ignore"):
        naive = a * b + c
        if a.dtype == np.float64:
            p, e1 = _two_prod(a, b)
            s, e2 = _two_sum(p, c)
            u, e3 = _two_sum(e2, e1)  # a * b + c == s + u + e3 exactly
            r, e4 = _two_sum(s, u)  # == r + e4 + e3
            out = _correct(r, e4, e3)
        else:
            s, err = _two_sum(a.astype(np.float64) * b, c.astype(np.float64))  # exact product
            r = s.astype(a.dtype)
            out = _correct(r, s - r.astype(np.float64), err)
        return np.where(np.isfinite(out), out, naive).astype(a.dtype)


fma_p = defvectorized("fma", _fma_impl, "f")
defjvp(fma_p, lambda t, out, a, b, c: _broadcast_like(lax.mul(t, b), out),
       lambda t, out, a, b, c: _broadcast_like(lax.mul(a, t), out),
       lambda t, out, a, b, c: _broadcast_like(t, out))
_vectorized_batch_rule(fma_p)
lax.CHUNKABLE.add(fma_p)  # elementwise: a slice of the operands gives that slice's bits


def fma(a, b, c):
    """``a * b + c`` rounded once (a fused multiply-add), elementwise.

    Arguments:
        a, b, c: floating-point arrays of one dtype and equal shapes (or 0-d scalars).

    Returns:
        The correctly rounded ``a * b + c``.

    Example:
        >>> x = jnp.float32(1 + 2**-12)
        >>> fma(x, x, jnp.float32(-1)) == x * x - 1
        Array(False, dtype=bool)
    """
    return fma_p.bind(*lax_operands("fma", (a, b, c)))

"""The ``fma`` primitive: ``a * b + c`` with a single rounding (a fused multiply-add).

invarax never contracts ``a * b + c`` on its own (the numerics contract); ``fma`` is for
formulas defined with one rounding, such as ``random.uniform``'s scaling, which XLA
computes as an FMA: using it reproduces JAX's bits.

float32 and float64 run in a compiled kernel (C99's ``fma``, correctly rounded on every
machine: ``invarax/kernels/fma.py``); float16 is computed exactly in float64 with its one
rounding corrected where the float64 sum lands on a float16 midpoint.
"""

from __future__ import annotations

import numpy as np

from ..interpreters.ad import defjvp
from ..kernels.fma import fma as kernels_fma
from . import elementwise as lax
from ._util import lax_operands
from .elementwise import _broadcast_like, _vectorized_batch_rule, defvectorized


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _correct(r, rest, err):
    """The exact value ``r + rest + err`` rounded once, given ``r``, the rounding of
    ``r + rest`` (``rest`` exact, in a wider dtype) and a tiny ``err``: only a tie
    (``r + rest`` a midpoint) can be decided otherwise, by the sign of ``err``."""
    other = np.nextafter(r, np.where(rest > 0, np.inf, -np.inf).astype(r.dtype))
    wide = rest.dtype
    midpoint = (rest != 0) & (2 * rest == other.astype(wide) - r.astype(wide))
    up, down = np.maximum(r, other), np.minimum(r, other)
    return np.where(midpoint & (err > 0), up, np.where(midpoint & (err < 0), down, r))


def _fma_impl(a, b, c):
    if np.result_type(a) in (np.float32, np.float64):
        return kernels_fma(a, b, c)
    a, b, c = np.broadcast_arrays(a, b, c)  # float16: exact in float64, then one rounding
    with np.errstate(all="ignore"):
        s, err = _two_sum(a.astype(np.float64) * b, c.astype(np.float64))  # exact product
        r = s.astype(a.dtype)
        out = _correct(r, s - r.astype(np.float64), err)
        return np.where(np.isfinite(out), out, a * b + c).astype(a.dtype)


fma_p = defvectorized("fma", _fma_impl, "f", c=("fma",))
defjvp(fma_p, lambda t, out, a, b, c: _broadcast_like(lax.mul(t, b), out),
       lambda t, out, a, b, c: _broadcast_like(lax.mul(a, t), out),
       lambda t, out, a, b, c: _broadcast_like(t, out))
_vectorized_batch_rule(fma_p)


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

"""``log``, ``log1p`` and ``erf_inv`` as XLA's CPU backend computes them, for the samplers.

JAX's samplers apply ``log``, ``log1p`` and ``erf_inv`` to uniform draws; to give JAX's bits
the samplers must round as XLA's compiled code does, not as NumPy does. These routines
spell out, with lax ops, what XLA emits on x86-64 with FMA (read from its optimised LLVM IR
and machine code):

- float32 ``log(z)``: XLA's own polynomial (Cephes' ``logf``): ``z = m * 2**e`` with ``m``
  in ``[0.5, 1)``; ``x = m - 1`` (``2m - 1`` with ``e - 1`` when ``m < sqrt(1/2)``); an
  odd-degree polynomial in ``x`` by three interleaved Horner chains, then
  ``x - x**2/2 + p + e*ln2``, ``ln2`` split in two. LLVM contracts most multiply-adds into
  FMAs; each one is an ``fma`` here, every other product and sum is rounded on its own.
- float32 ``log1p(x)``: for ``|x| < 0.41421354`` a rational ``x - x**2/2 + x**3 P(x)/Q(x)``
  (degree 6 over 6, Horner with FMAs), else ``log(1 + x)`` as above.
- float64 ``log1p(x)``: the same rational (double-precision coefficients) for
  ``|x| < sqrt(2) - 1``, else ``log(1 + x)`` with the C library's ``log``; float64 ``log``
  is the C library's. invarax uses its own float64 ``log`` there (the same bits on every
  CPU), which differs from glibc's in the last bit for 0.5% of inputs in (0.01, 6)
  (NumPy's AVX-512 one for 0.16%).
- float32 ``erf(x)``: XLA's rational ``x * P(x**2) / Q(x**2)`` (FMA Horner steps) on ``x``
  clamped to ``[-3.7439213, 3.7439213]``, ``+-1`` from there on, as XLA emits it in a fusion
  (JAX's ``truncated_normal`` fuses it with the scaling of the bounds; a lone ``erf`` op
  is emitted by another code path, which evaluates the rational up to 3.832507). float64 ``erf``
  is invarax's own kernel.
- ``erf_inv``: Giles' polynomials on ``w = -log1p(-x*x)`` (``ops/special.py``), with this
  ``log1p``.

A float narrower than float32 (float16, bfloat16, float8) is converted to float32, computed
there and rounded back once, as XLA computes these functions of them.

They agree with ``jax.lax.log``/``log1p``/``erf`` bit for bit on normal float32 inputs
(tests/test_random_xla_math.py). XLA runs with subnormals flushed to zero; these routines
do not (a subnormal input gives an accurate result, XLA's gives +-0 or -inf). The samplers
never produce subnormal inputs. Users' ``jnp.log``/``jnp.log1p`` are invarax's own kernels
(``invarax/kernels/elementary.py``), as is this module's float64 ``log``.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes
from ..ops import elementwise as lax
from ..ops.fused import fma
from ..ops.shape import broadcast_in_dim
from ..ops.special import erf as _libm_erf
from ..ops.special import erf_inv_on


def _bits(value: int, dtype):
    return np.array(value, np.uint32 if dtype == np.float32 else np.uint64).view(dtype)[()]


def _c(x, value):
    """``value`` as a 0-d array of ``x``'s dtype."""
    return lax._const(x, value)


def _full(x, value):
    return broadcast_in_dim(_c(x, value), x.shape, ())


_F32 = np.float32
_SQRT_HALF = _bits(0x3F3504F3, _F32)
# Horner chains in x, highest power first; the chains are combined in powers of x**3.
_LOG_CHAINS = tuple(tuple(_bits(b, _F32) for b in chain) for chain in (
    (0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A),
    (0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50),
    (0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA),
))
_LN2_LO, _LN2_HI = _bits(0xB95E8083, _F32), _bits(0x3F318000, _F32)

# log1p's rational for small |x|: P and Q after their leading terms (4.527e-05 and 1).
_LOG1P_SMALL = {
    np.dtype(np.float32): (
        _bits(0x3ED413CD, _F32), _F32(4.527e-05),
        tuple(_bits(b, _F32) for b in (0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76,
                                        0x426473AD, 0x41A05101)),
        tuple(_bits(b, _F32) for b in (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3,
                                        0x43586D8A, 0x42707982))),
    np.dtype(np.float64): (
        _bits(0x3FDA827999FCEF32, np.float64), _bits(0x3F07BC0962B395CA, np.float64),
        tuple(_bits(b, np.float64) for b in (
            0x3FDFE818A0FE1A83, 0x401A509F46F4FA53, 0x403DE9738B8CB9C9, 0x404E798EB86C3351,
            0x404C8E7597479A10, 0x40340A202D99830A)),
        tuple(_bits(b, np.float64) for b in (
            0x402E20359E903E37, 0x4054C30B52213498, 0x406BB86590FCFB56, 0x407351945DC908A5,
            0x406B0DB13E48E066, 0x404E0F304466448E))),
}

_ERF_CLAMP = _bits(0x406F9C68, _F32)
_ERF_P = tuple(_bits(b, _F32) for b in (0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740,
                                         0x3F906EBA))
_ERF_Q = tuple(_bits(b, _F32) for b in (0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4,
                                         0x3DE34C21, 0x3EFEB44A, 0x3F800000))


def _frexp(z):
    """``(m, e)`` with ``z == m * 2**e`` exactly, ``m`` in ``[0.5, 1)``, ``e`` an integer-valued
    float, for ``z`` in ``[tiny, max]``: XLA reads them off the bits; here every step scales by
    a power of two, which is exact."""
    e = _full(z, 0.0)

    def scale_if(cond, k, z, e):
        return (lax.select(cond, lax.mul(z, _c(z, 2.0**-k)), z),
                lax.select(cond, lax.add(e, _c(e, float(k))), e))

    for k in (64, 32, 16, 8, 4, 2, 1):  # down to [tiny, 2)
        z, e = scale_if(lax.ge(z, _c(z, 2.0**k)), k, z, e)
    z, e = scale_if(lax.ge(z, _c(z, 1.0)), 1, z, e)  # [tiny, 1)
    for k in (64, 32, 16, 8, 4, 2, 1):  # up to [0.5, 1)
        z, e = scale_if(lax.lt(z, _c(z, 2.0**-k)), -k, z, e)
    return z, e


def _log_f32(z):
    """XLA's float32 ``log`` (its CPU polynomial), rounding step for step."""
    m, e = _frexp(lax.max(z, _c(z, np.finfo(_F32).tiny)))
    below = lax.lt(m, _c(m, _SQRT_HALF))
    x = lax.add(lax.add(m, _c(m, -1.0)), lax.select(below, m, _full(m, 0.0)))
    e = lax.select(below, lax.sub(e, _c(e, 1.0)), e)
    x2 = lax.mul(x, x)
    x3 = lax.mul(x2, x)
    a, b, c = (fma(fma(x, _c(x, p0), _c(x, p1)), x, _c(x, p2)) for p0, p1, p2 in _LOG_CHAINS)
    p = fma(fma(fma(a, x3, b), x3, c), x3, lax.mul(e, _c(e, _LN2_LO)))
    out = fma(e, _c(e, _LN2_HI), lax.add(fma(_c(x, -0.5), x2, x), p))
    # XLA's special cases, in its order: NaN below zero (and for NaN), -inf at 0, inf at inf.
    out = lax.select(lax.gt(z, _c(z, 0.0)), out, _full(z, np.nan))
    out = lax.select(lax.eq(z, _c(z, 0.0)), _full(z, -np.inf), out)
    return lax.select(lax.eq(z, _c(z, np.inf)), _full(z, np.inf), out)


def _narrow_in_float32(fun):
    """``fun``, which computes a float narrower than float32 in float32, rounded once."""
    @functools.wraps(fun)
    def computed(x):
        if x.dtype == np.float32 or dtypes.compute_dtype(x.dtype) != np.float32:
            return fun(x)
        return lax.convert_element_type(fun(lax.convert_element_type(x, np.float32)), x.dtype)

    return computed


@_narrow_in_float32
def log(x):
    """The natural logarithm as XLA computes it on CPU (float32: its polynomial; float64:
    invarax's ``log``, see the module docstring)."""
    return _log_f32(x) if x.dtype == np.float32 else lax.log(x)


@_narrow_in_float32
def log1p(x):
    """``log(1 + x)`` as XLA computes it on CPU: a rational for small ``|x|``, else ``log``."""
    if x.dtype not in _LOG1P_SMALL:
        return lax.log1p(x)
    bound, p0, p_coeffs, q_coeffs = _LOG1P_SMALL[x.dtype]
    zero = lax.mul(x, _c(x, 0.0))  # as XLA: the leading terms are 0*x + c, not folded
    p, q = lax.add(zero, _c(x, p0)), lax.add(zero, _c(x, 1.0))
    for pc, qc in zip(p_coeffs, q_coeffs, strict=True):
        p, q = fma(p, x, _c(x, pc)), fma(q, x, _c(x, qc))
    x2 = lax.mul(x, x)
    small = lax.add(x, fma(_c(x, -0.5), x2, lax.mul(lax.mul(x, x2), lax.div(p, q))))
    return lax.select(lax.lt(lax.abs(x), _c(x, bound)), small, log(lax.add(x, _c(x, 1.0))))


@_narrow_in_float32
def erf_inv(x):
    """``erf_inv`` on XLA's ``log1p``, as JAX's ``normal`` and ``truncated_normal`` see it."""
    return erf_inv_on(x, log1p)


@_narrow_in_float32
def erf(x):
    """The error function as XLA computes it on CPU (float32: its rational; float64: libm)."""
    if x.dtype != np.float32:
        return _libm_erf(x)
    clamped = lax.min(lax.max(x, _c(x, -_ERF_CLAMP)), _c(x, _ERF_CLAMP))
    x2 = lax.mul(clamped, clamped)
    p, q = fma(x2, _c(x, _ERF_P[0]), _c(x, _ERF_P[1])), fma(x2, _c(x, _ERF_Q[0]), _c(x, _ERF_Q[1]))
    for c in _ERF_P[2:]:
        p = fma(p, x2, _c(x, c))
    for c in _ERF_Q[2:]:
        q = fma(q, x2, _c(x, c))
    out = lax.div(lax.mul(clamped, p), q)
    return lax.select(lax.ge(lax.abs(x), _c(x, _ERF_CLAMP)), lax.sign(x), out)

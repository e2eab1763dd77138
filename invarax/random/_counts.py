"""``poisson``, ``binomial`` and ``multinomial``: JAX's samplers, on JAX's streams.

Each draws whole arrays per round (a ``while_loop`` until every element is done), as JAX
does: ``poisson`` by Knuth's products of uniforms for ``lam < 10`` and Hormann's
transformed rejection above; ``binomial`` by inversion (sums of geometric draws) when
``n q <= 10`` and by BTRS rejection above; ``multinomial`` as a ``scan`` of binomials over
the categories. Element ``i`` reads element ``i`` of each round's draws, so its value
depends on the other elements' only through the number of rounds, which never changes a
finished element. Rejection tests compare ``lgamma`` and ``log`` values, and a comparison
that lands within an ulp of its bound may decide otherwise than XLA: rare, and then the
count differs.
"""

from __future__ import annotations

import numpy as np

from .. import lax as _lax
from .. import numpy as jnp
from ..core import dtypes
from ..ops import elementwise as lax
from ..ops.gamma import lgamma
from . import _xla_math as xla
from ._eager import compiled
from ._keys import check_key, check_shape, split
from ._samplers import broadcast_shape, float_dtype, uniform


def _knuth(key, lam, shape, dtype):
    def body(carry):
        i, k, key, log_prod = carry
        key, sub = split(key)
        k = lax.select(lax.gt(log_prod, -lam), k + 1, k)
        return i + 1, k, key, log_prod + xla.log(uniform(sub, shape, np.float32))

    def cond(carry):
        return jnp.any(lax.gt(carry[3], -lam))

    init = (0, jnp.zeros(shape, dtype), key, jnp.zeros(shape, np.float32))
    return _lax.while_loop(cond, body, init)[1] - 1


def _hormann(key, lam, shape, dtype):
    log_lam = xla.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, key_u, key_v = split(key, 3)
        u = uniform(key_u, shape, lam.dtype) - 0.5
        v = uniform(key_v, shape, lam.dtype)
        us = 0.5 - jnp.abs(u)
        k = lax.floor((2 * a / us + b) * u + lam + 0.43)
        s = xla.log(v * inv_alpha / (a / (us * us) + b))
        bound = -lam + k * log_lam - lgamma(k + 1)
        first = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = first | (~reject & (s <= bound))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    init = (0, jnp.full(shape, -1.0, lam.dtype), jnp.zeros(shape, bool), key)
    k = _lax.while_loop(lambda c: jnp.any(~c[2]), body, init)[1]
    return lax.convert_element_type(k, dtype)


@compiled(static=("shape", "dtype"))
def poisson(key, lam, shape=None, dtype=None):
    """Poisson(``lam``) integers, JAX's algorithms and streams (see the module's text).

    Arguments:
        key: a ``uint32[2]`` key.
        lam: the rate (computed in float32, as JAX), broadcast to ``shape``.
        shape: the result's shape (default ``lam``'s).
        dtype: an int dtype (default int32, int64 with x64 on).

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.poisson(random.PRNGKey(0), jnp.array([0.5, 4.0, 50.0])).shape
        (3,)
    """
    key = check_key("poisson", key)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    shape = np.shape(lam) if shape is None else check_shape("poisson", shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
    knuth = jnp.isnan(lam) | (lam < 10)
    small = _knuth(key, lax.select(knuth, lam, jnp.zeros_like(lam)), shape, dtype)
    large = _hormann(key, lax.select(knuth, jnp.full_like(lam, 1e5), lam), shape, dtype)
    result = lax.select(knuth, small, large)
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    """``log k! - (Stirling's approximation)``: tabulated to 9, a series above, as JAX."""
    table = jnp.asarray(np.array(_STIRLING_TAIL, k.dtype))
    clipped = jnp.clip(k, 0.0, 9.0)
    sq = (clipped + 1) * (clipped + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / sq) / sq) / (clipped + 1)
    return lax.select(k <= 9, table[jnp.floor(clipped).astype(np.int32)], approx)


def _inversion(key, count, prob, shape, dtype):
    log_q = xla.log1p(-prob)

    def body(carry):
        i, num, total, key = carry
        sub, key = split(key)  # (this order: JAX's)
        num = lax.select(total <= count, num + 1, num)
        geom = jnp.ceil(xla.log(uniform(sub, shape, prob.dtype)) / log_q)
        return i + 1, num, total + geom, key

    init = (0, jnp.zeros(shape, prob.dtype), jnp.zeros(shape, prob.dtype), key)
    k = _lax.while_loop(lambda c: jnp.any(c[2] <= count), body, init)[1]
    return lax.convert_element_type(k - 1, dtype)


def _btrs(key, count, prob, shape, dtype):
    stddev = lax.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = lax.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, key_u, key_v = split(key, 3)
        u = uniform(key_u, shape, prob.dtype) - 0.5
        v = uniform(key_v, shape, prob.dtype)
        us = 0.5 - jnp.abs(u)
        first = (us >= 0.07) & (v <= v_r)
        k = lax.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = xla.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * xla.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * xla.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * xla.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = first | (~reject & (v <= bound))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    init = (0, jnp.full(shape, -1.0, prob.dtype), jnp.zeros(shape, bool), key)
    k = _lax.while_loop(lambda c: jnp.any(~c[2]), body, init)[1]
    return lax.convert_element_type(k, dtype)


@compiled(static=("shape", "dtype"))
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(``n``, ``p``) counts as floats, JAX's algorithms and streams (see the
    module's text); NaN for an invalid ``n`` or ``p``, ``inf`` for an infinite ``n``.

    Arguments:
        key: a key; n: the number of trials; p: the success probability (both broadcast
        to ``shape``, default their broadcast); dtype: a float dtype.

    Example:
        >>> random.binomial(random.PRNGKey(0), 10.0, jnp.array([0.1, 0.5, 0.9])).shape
        (3,)
    """
    key = check_key("binomial", key)
    dtype = float_dtype("binomial", dtype)
    shape = broadcast_shape("binomial", shape, n=n, p=p)
    prob = jnp.asarray(p)
    prob = prob.astype(prob.dtype if prob.dtype.kind == "f" else dtypes.default_float())
    count = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(n), prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    below_half = prob < 0.5
    q = lax.select(below_half, prob, 1.0 - prob)
    bad_count = jnp.isnan(count) | (count < 0.0)
    infinite = jnp.isinf(count)
    bad_q = jnp.isnan(q) | (q < 0.0)
    q = lax.select(bad_q, jnp.full_like(q, 0.01), q)
    inversion = bad_count | (count * q <= 10.0)
    count = lax.floor(count)
    small = _inversion(key, lax.select(inversion, count, jnp.zeros_like(count)), q, shape,
                       dtype)
    large = _btrs(key, lax.select(inversion, jnp.full_like(count, 1e4), count),
                  lax.select(inversion, jnp.full_like(q, 0.5), q), shape, dtype)
    samples = lax.select(inversion, small, large)
    invalid = bad_q | bad_count
    samples = lax.select(invalid, jnp.full_like(samples, np.nan), samples)
    samples = lax.select(infinite & ~invalid, jnp.full_like(samples, np.inf), samples)
    keep = below_half | bad_count | jnp.isnan(q) | infinite
    return lax.select(keep, samples, count.astype(dtype) - samples)


@compiled(static=("shape", "dtype", "unroll"))
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts over ``p``'s last axis (``n`` trials), as JAX: a ``scan`` over
    the categories drawing each count as a binomial of what remains.

    Arguments:
        key: a key; n: the number of trials; p: the probabilities (last axis: categories);
        shape: the result's shape (default ``p``'s); dtype: a float dtype; unroll: accepted
        (the scan's unrolling never changes the result).

    Example:
        >>> c = random.multinomial(random.PRNGKey(0), 10.0, jnp.array([0.2, 0.3, 0.5]))
        >>> float(c.sum())
        10.0
    """
    del unroll
    key = check_key("multinomial", key)
    p = jnp.asarray(p)
    n = jnp.asarray(n)
    kind = dtypes.promote_types((n.dtype, False), (p.dtype, False))[0]
    kind = kind if kind.kind == "f" else dtypes.default_float()
    n, p = n.astype(kind), p.astype(kind)
    shape = p.shape if shape is None else check_shape("multinomial", shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), axis=0), 0)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])

    def step(rest, ratio_key):
        ratio, k = ratio_key
        drawn = binomial(k, rest, jnp.clip(ratio, 0, 1), dtype=rest.dtype)
        return rest - drawn, drawn

    _, counts = _lax.scan(step, n, (ratios, keys))
    out = jnp.moveaxis(counts, 0, -1)
    return out if dtype is None else out.astype(float_dtype("multinomial", dtype))

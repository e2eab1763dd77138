"""The other continuous samplers of ``jax.random`` and ``multivariate_normal``/``orthogonal``,
each JAX's formula on JAX's streams (``uniform``, ``normal``, ``exponential``, ``bernoulli``
of the same key), with ``log``/``log1p`` as XLA computes them (``_xla_math``) where JAX
applies them to the draws. Where JAX's formula goes through ``exp``, ``pow``, ``tan`` or a
factorisation, invarax's correctly rounded functions and canonical kernels may differ from
XLA's in the last bits (docs/random.md)."""

from __future__ import annotations

import operator

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.config import numpy_rank_promotion
from ..ops import elementwise as lax
from . import _xla_math as xla
from ._eager import compiled
from ._keys import check_key, check_shape, split
from ._samplers import (
    _const,
    bernoulli,
    broadcast_shape,
    exponential,
    float_dtype,
    normal,
    param,
    uniform,
)


def _int_dtype(name, dtype):
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"random.{name}: dtype must be an int dtype, got {dtype.name}")
    return dtype


def clone(key):
    """A copy of ``key`` (JAX's key-reuse checker counts it as a new key; invarax has no
    such checker, so it is the same key).

    Example:
        >>> random.clone(random.PRNGKey(0))
        Array([0, 0], dtype=uint32)
    """
    return check_key("clone", key, allow_batched=True)


@compiled(static=("shape", "dtype"))
def rademacher(key, shape=(), dtype=None):
    """Random signs, ``-1`` or ``1`` with equal probability: ``2 bernoulli(key) - 1``, as JAX.

    Arguments:
        key: a key; shape: the result's shape; dtype: its dtype (default int).

    Example:
        >>> random.rademacher(random.PRNGKey(0), (4,))
        Array([-1, -1,  1,  1], dtype=int32)
    """
    key = check_key("rademacher", key)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    shape = check_shape("rademacher", shape)
    b = lax.convert_element_type(bernoulli(key, 0.5, shape), dtype)
    return lax.sub(lax.mul(_const(2, dtype), b), _const(1, dtype))


@compiled(static=("shape", "dtype"))
def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats: ``tan(pi (u - 1/2))``, ``u`` uniform in ``[eps, 1)``, as JAX.

    Example:
        >>> random.cauchy(random.PRNGKey(0), (2,)).shape
        (2,)
    """
    key = check_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    u = uniform(key, check_shape("cauchy", shape), dtype, np.finfo(dtype).eps, 1.0)
    return jnp.tan(lax.mul(_const(np.pi, dtype), lax.sub(u, _const(0.5, dtype))))


@compiled(static=("shape", "dtype"))
def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Log-normal floats: ``exp(sigma n)``, ``n`` standard normal, as JAX.

    Example:
        >>> bool((random.lognormal(random.PRNGKey(0), shape=(3,)) > 0).all())
        True
    """
    key = check_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype)
    shape = broadcast_shape("lognormal", shape, sigma=sigma)
    return jnp.exp(lax.mul(normal(key, shape, dtype),
                           param("lognormal", "sigma", sigma, dtype, shape)))


@compiled(static=("shape", "dtype"))
def maxwell(key, shape=(), dtype=None):
    """Maxwell floats: the norm of three standard normals (``normal(key, (*shape, 3))``).

    Example:
        >>> random.maxwell(random.PRNGKey(0), (2,)).shape
        (2,)
    """
    key = check_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    n = normal(key, (*check_shape("maxwell", shape), 3), dtype)
    return lax.sqrt(jnp.sum(lax.mul(n, n), axis=-1))


@compiled(static=("shape", "dtype"))
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats: ``sign maxwell scale + loc`` (keys ``split(key)``), the
    shape followed by the parameters' broadcast shape, as JAX.

    Example:
        >>> random.double_sided_maxwell(random.PRNGKey(0), 0.0, 1.0, (2,)).shape
        (2,)
    """
    key = check_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = (*check_shape("double_sided_maxwell", shape),
             *np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    key_m, key_r = split(key)
    signed = lax.mul(rademacher(key_r, shape, dtype), maxwell(key_m, shape, dtype))
    return lax.add(lax.mul(signed, param("double_sided_maxwell", "scale", scale, dtype, shape)),
                   param("double_sided_maxwell", "loc", loc, dtype, shape))


@compiled(static=("shape", "dtype"))
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: ``(-log1p(-u))**(1 / concentration) scale``, as JAX.

    Example:
        >>> random.weibull_min(random.PRNGKey(0), 1.0, 2.0, (2,)).shape
        (2,)
    """
    key = check_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    shape = check_shape("weibull_min", shape)
    u = uniform(key, shape, dtype)
    power = lax.div(_const(1, dtype), param("weibull_min", "concentration", concentration,
                                            dtype, shape))
    return lax.mul(lax.pow(lax.neg(xla.log1p(lax.neg(u))), power),
                   param("weibull_min", "scale", scale, dtype, shape))


@compiled(static=("shape", "dtype"))
def pareto(key, b, shape=None, dtype=None):
    """Pareto floats: ``exp(e / b)``, ``e`` exponential, as JAX.

    Example:
        >>> bool((random.pareto(random.PRNGKey(0), 3.0, (3,)) >= 1).all())
        True
    """
    key = check_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = broadcast_shape("pareto", shape, b=b)
    e = exponential(key, shape, dtype)
    return jnp.exp(lax.div(e, param("pareto", "b", b, dtype, shape)))


@compiled(static=("shape", "dtype"))
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats: ``scale sqrt(-2 log u)``, as JAX.

    Example:
        >>> random.rayleigh(random.PRNGKey(0), 1.0, (2,)).shape
        (2,)
    """
    key = check_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = broadcast_shape("rayleigh", shape, scale=scale)
    u = uniform(key, shape, dtype)
    root = lax.sqrt(lax.mul(xla.log(u), _const(-2, dtype)))
    return lax.mul(param("rayleigh", "scale", scale, dtype, shape), root)


@compiled(static=("shape", "dtype"))
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats with unit shape, JAX's transformation of a normal and
    a uniform (keys ``split(key)``).

    Example:
        >>> bool((random.wald(random.PRNGKey(0), 1.0, (3,)) > 0).all())
        True
    """
    key = check_key("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = broadcast_shape("wald", shape, mean=mean)
    key_v, key_z = split(key)
    mean = param("wald", "mean", mean, dtype, shape)
    v = normal(key_v, shape, dtype)
    z = uniform(key_z, shape, dtype)
    y = lax.mul(v, v)
    mean_sq = lax.mul(mean, mean)
    root = lax.sqrt(lax.add(lax.mul(lax.mul(_const(4, dtype), mean), y),
                            lax.mul(mean_sq, lax.mul(y, y))))
    half = _const(2, dtype)
    x = lax.sub(lax.add(mean, lax.div(lax.mul(mean_sq, y), half)),
                lax.mul(lax.div(mean, half), root))
    return lax.select(lax.le(z, lax.div(mean, lax.add(mean, x))), x, lax.div(mean_sq, x))


@compiled(static=("shape", "dtype"))
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on ``[left, right]`` with peak ``mode``: the inverse CDF of a
    uniform, as JAX.

    Example:
        >>> x = random.triangular(random.PRNGKey(0), 0.0, 0.3, 1.0, (3,))
        >>> bool(((x >= 0) & (x <= 1)).all())
        True
    """
    key = check_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = broadcast_shape("triangular", shape, left=left, mode=mode, right=right)
    left, mode, right = (param("triangular", what, x, dtype, shape)
                         for what, x in (("left", left), ("mode", mode), ("right", right)))
    width = lax.sub(right, left)
    split_at = lax.div(lax.sub(mode, left), width)
    u = uniform(key, shape, dtype)
    low = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    high = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(_const(1, dtype), u), width),
                                           lax.sub(right, mode))))
    return lax.select(lax.lt(u, split_at), low, high)


@compiled(static=("shape", "dtype"))
def geometric(key, p, shape=None, dtype=None):
    """Geometric integers (trials to the first success, ``>= 1``):
    ``floor(log u / log1p(-p)) + 1``, as JAX.

    Example:
        >>> bool((random.geometric(random.PRNGKey(0), 0.3, (4,)) >= 1).all())
        True
    """
    key = check_key("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    shape = broadcast_shape("geometric", shape, p=p)
    p = jnp.asarray(p)
    p = lax.convert_element_type(p, p.dtype if p.dtype.kind == "f" else dtypes.default_float())
    u = uniform(key, shape, p.dtype)
    u = lax.select(lax.eq(u, _const(0, p.dtype)), jnp.ones_like(u), u)
    log_q = jnp.broadcast_to(xla.log1p(lax.neg(p)), shape)
    g = lax.add(lax.floor(lax.div(xla.log(u), log_q)), _const(1, p.dtype))
    return lax.convert_element_type(g, dtype)


@compiled(static=("n", "shape", "dtype", "m"))
def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Random ``n x m`` matrices with orthonormal columns (or rows), Haar-distributed: the
    ``Q`` of a normal matrix's QR with the signs of ``R``'s diagonal, as JAX.

    Example:
        >>> q = random.orthogonal(random.PRNGKey(0), 3)
        >>> bool(jnp.allclose(q @ q.T, jnp.eye(3), atol=1e-5))
        True
    """
    key = check_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    shape = check_shape("orthogonal", shape)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


@compiled(static=("shape", "dtype", "method"))
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal vectors: ``mean + factor @ n``, ``factor`` from ``cov`` by
    ``method`` (``"cholesky"``, ``"eigh"`` or ``"svd"``), as JAX.

    Example:
        >>> random.multivariate_normal(random.PRNGKey(0), jnp.zeros(2), jnp.eye(2), (3,)).shape
        (3, 2)
    """
    key = check_key("multivariate_normal", key)
    dtype = float_dtype("multivariate_normal", dtype)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(f"random.multivariate_normal: method must be one of 'svd', 'eigh' "
                         f"or 'cholesky', got {method!r}")
    mean = lax.convert_element_type(jnp.asarray(mean), dtype)
    cov = lax.convert_element_type(jnp.asarray(cov), dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    n = mean.shape[-1]
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    shape = broadcast_shape("multivariate_normal", shape, mean=np.empty(mean.shape[:-1]),
                            cov=np.empty(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.expand_dims(lax.sqrt(s), -2)
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.expand_dims(lax.sqrt(w), -2)
    else:
        factor = jnp.linalg.cholesky(cov)
    samples = normal(key, (*shape, n), dtype)
    with numpy_rank_promotion("allow"):  # (mean broadcasts to the batch, as in JAX)
        return mean + jnp.einsum("...ij,...j->...i", factor, samples)

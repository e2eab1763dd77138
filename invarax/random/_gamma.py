"""``gamma`` and ``loggamma``, JAX's Marsaglia-Tsang sampler, and the samplers built on them.

As JAX (``jax._src.random._gamma_one``): element ``i`` of ``a`` (flattened) draws from key
``split(key, a.size)[i]``; it splits that key once (``key, subkey``), then loops: split
``key`` three ways, draw normals ``x`` from the second (split again for each redraw) until
``v = 1 + c x > 0``, a uniform ``U`` from the third, and accepts when
``U < 1 - 0.0331 x**4`` or ``log U < x**2 / 2 + d (1 - v**3 + log v**3)``. The result is
``d v**3``, times ``(1 - u)**(1/a)`` (``u`` uniform from ``subkey``) when ``a < 1`` (``a``
is raised by 1 for the loop); ``loggamma`` computes its log, with ``-exponential(subkey)``
for ``log u``. Each element runs its own loop (a ``while_loop`` under ``vmap``), so its
value does not depend on the others (N1).

The derivative with respect to ``a`` is JAX's implicit one: ``dx/da = -(dP/da) / (dP/dx)``
for ``P`` the regularised incomplete gamma function (``random_gamma_grad``).
"""

from __future__ import annotations

import operator

import numpy as np

from .. import lax as _lax
from .. import numpy as jnp
from ..ops import elementwise as lax
from ..ops.fused import fma
from ..ops.gamma import random_gamma_grad
from ..transforms import custom_jvp, vmap
from . import _xla_math as xla
from ._eager import compiled
from ._keys import check_key, check_shape, split
from ._more import rademacher
from ._samplers import (
    _const,
    broadcast_shape,
    exponential,
    float_dtype,
    normal,
    param,
    uniform,
)


def _gamma_one(key, alpha, log_space: bool):
    """One draw of Gamma(``alpha``) (or its log), JAX's loop for one element."""
    dtype = alpha.dtype

    def c_(v):
        return _const(v, dtype)

    boost = lax.ge(alpha, c_(1))
    raised = lax.select(boost, alpha, lax.add(alpha, c_(1)))
    d = lax.sub(raised, c_(1 / 3))
    c = lax.div(c_(1 / 3), lax.sqrt(d))

    def rejected(state):
        _, x2, v3, u = state
        squeeze = lax.ge(u, lax.sub(c_(1), lax.mul(c_(0.0331), lax.mul(x2, x2))))
        bound = lax.add(lax.mul(x2, c_(0.5)), lax.mul(d, lax.add(lax.sub(c_(1), v3),
                                                                 xla.log(v3))))
        return lax.bitwise_and(squeeze, lax.ge(xla.log(u), bound))

    def redraw(state):
        k, _, _ = state
        k, sub = split(k)
        x = normal(sub, (), dtype)
        return k, x, fma(x, c, c_(1))  # XLA contracts 1 + x * c into one multiply-add

    def propose(state):
        k, x_key, u_key = split(state[0], 3)
        _, x, v = _lax.while_loop(lambda s: lax.le(s[2], c_(0)), redraw,
                                  (x_key, c_(0), c_(-1)))
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), uniform(u_key, (), dtype)

    key, subkey = split(key)
    _, _, v3, _ = _lax.while_loop(rejected, propose, (key, c_(0), c_(1), c_(2)))
    if log_space:
        log_u = lax.neg(exponential(subkey, (), dtype))
        skip = lax.bitwise_or(boost, lax.eq(log_u, c_(0)))
        log_boost = lax.select(skip, c_(0), lax.mul(log_u, lax.div(c_(1), alpha)))
        return lax.add(lax.add(xla.log(d), xla.log(v3)), log_boost)
    u = lax.sub(c_(1), uniform(subkey, (), dtype))
    power = lax.select(boost, c_(1), lax.pow(u, lax.div(c_(1), alpha)))
    return lax.mul(lax.mul(d, v3), power)


def _draw(keys, a, log_space):
    return vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, a)


def _samples(key, a, log_space):
    """Draws for every element of ``a`` (its shape), differentiable in ``a``."""
    flat = jnp.reshape(a, (-1,))
    keys = jnp.reshape(split(key, flat.shape[0]), (-1, 2))

    @custom_jvp
    def sample(flat):
        return _draw(keys, flat, log_space)

    @sample.defjvp
    def sample_jvp(primals, tangents):
        (alpha,), (t,) = primals, tangents
        out = sample(alpha)
        if log_space:  # d log x = dx / x, x = exp(log x) (at least the smallest normal)
            x = lax.exp(out)
            x = lax.select(lax.eq(x, _const(0, x.dtype)),
                           jnp.full_like(x, np.finfo(x.dtype).tiny), x)
            grad = lax.div(random_gamma_grad(alpha, x), x)
        else:
            grad = random_gamma_grad(alpha, out)
        return out, lax.mul(t, grad)

    return jnp.reshape(sample(flat), a.shape)


@compiled(static=("shape", "dtype"))
def gamma(key, a, shape=None, dtype=None):
    """Gamma(``a``, 1) floats, JAX's algorithm and random streams (see the module's text).

    Arguments:
        key: a ``uint32[2]`` key.
        a: the shape parameter (> 0), broadcast to ``shape``.
        shape: the result's shape (default ``a``'s).
        dtype: a float dtype.

    Returns:
        An array of ``shape`` and ``dtype``, differentiable in ``a``.

    Example:
        >>> random.gamma(random.PRNGKey(0), jnp.array([0.5, 2.0])).shape
        (2,)
    """
    key = check_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    return _samples(key, param("gamma", "a", a, dtype, broadcast_shape("gamma", shape, a=a)),
                    False)


@compiled(static=("shape", "dtype"))
def loggamma(key, a, shape=None, dtype=None):
    """The log of Gamma(``a``, 1) floats, computed in log space (accurate for small ``a``),
    from the same streams as ``gamma``.

    Arguments:
        key, a, shape, dtype: as for ``gamma``.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.loggamma(random.PRNGKey(0), jnp.array([1e-3])).shape
        (1,)
    """
    key = check_key("loggamma", key)
    dtype = float_dtype("loggamma", dtype)
    return _samples(key, param("loggamma", "a", a, dtype,
                               broadcast_shape("loggamma", shape, a=a)), True)


@compiled(static=("shape", "dtype"))
def beta(key, a, b, shape=None, dtype=None):
    """Beta(``a``, ``b``) floats: ``G_a / (G_a + G_b)`` from two ``loggamma`` draws (keys
    ``split(key)``), scaled by their maximum, as JAX.

    Example:
        >>> x = random.beta(random.PRNGKey(0), 2.0, 3.0, (3,))
        >>> bool(((x > 0) & (x < 1)).all())
        True
    """
    key = check_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = broadcast_shape("beta", shape, a=a, b=b)
    key_a, key_b = split(key)
    log_a = loggamma(key_a, param("beta", "a", a, dtype, shape), shape, dtype)
    log_b = loggamma(key_b, param("beta", "b", b, dtype, shape), shape, dtype)
    top = lax.max(log_a, log_b)
    scaled_a, scaled_b = jnp.exp(lax.sub(log_a, top)), jnp.exp(lax.sub(log_b, top))
    return lax.div(scaled_a, lax.add(scaled_a, scaled_b))


@compiled(static=("shape", "dtype"))
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(``alpha``) vectors (over ``alpha``'s last axis): the softmax of
    ``loggamma`` draws, as JAX.

    Example:
        >>> round(float(random.dirichlet(random.PRNGKey(0), jnp.ones(3)).sum()), 6)
        1.0
    """
    key = check_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    alpha = jnp.asarray(alpha)
    if alpha.ndim < 1:
        raise ValueError(f"random.dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{alpha.ndim}")
    batch = broadcast_shape("dirichlet", shape, alpha=np.empty(alpha.shape[:-1]))
    logs = loggamma(key, lax.convert_element_type(alpha, dtype), (*batch, alpha.shape[-1]),
                    dtype)
    exps = jnp.exp(logs - lax.stop_gradient(jnp.max(logs, axis=-1, keepdims=True)))
    return exps / jnp.sum(exps, axis=-1, keepdims=True)


@compiled(static=("shape", "dtype"))
def chisquare(key, df, shape=None, dtype=None):
    """Chi-squared(``df``) floats: ``2 exp(loggamma(df / 2))``, as JAX.

    Example:
        >>> random.chisquare(random.PRNGKey(0), 3.0, (2,)).shape
        (2,)
    """
    key = check_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = broadcast_shape("chisquare", shape, df=df)
    half = lax.div(param("chisquare", "df", df, dtype, shape), _const(2, dtype))
    return lax.mul(jnp.exp(loggamma(key, half, shape, dtype)), _const(2, dtype))


@compiled(static=("shape", "dtype"))
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(``dfnum``, ``dfden``) floats: the ratio of two scaled ``chisquare`` draws (keys
    ``split(key)``: the denominator's first), as JAX.

    Example:
        >>> random.f(random.PRNGKey(0), 3.0, 5.0, (2,)).shape
        (2,)
    """
    key = check_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = broadcast_shape("f", shape, dfnum=dfnum, dfden=dfden)
    dfnum, dfden = (param("f", what, x, dtype, shape)
                    for what, x in (("dfnum", dfnum), ("dfden", dfden)))
    key_den, key_num = split(key)
    num = lax.div(chisquare(key_num, dfnum, shape, dtype), dfnum)
    return lax.div(num, lax.div(chisquare(key_den, dfden, shape, dtype), dfden))


@compiled(static=("shape", "dtype"))
def t(key, df, shape=None, dtype=None):
    """Student's t(``df``) floats: ``n sqrt(df / 2 / g)``, ``n`` normal and ``g`` Gamma(df/2)
    (keys ``split(key)``), as JAX.

    Example:
        >>> random.t(random.PRNGKey(0), 4.0, (2,)).shape
        (2,)
    """
    key = check_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = broadcast_shape("t", shape, df=df)
    key_n, key_g = split(key)
    n = normal(key_n, shape, dtype)
    half = lax.div(param("t", "df", df, dtype, shape), _const(2, dtype))
    return lax.mul(n, lax.sqrt(lax.div(half, gamma(key_g, half, shape, dtype))))


@compiled(static=("shape", "dtype"))
def generalized_normal(key, p, shape=(), dtype=None):
    """Generalised normal floats of power ``p``: ``r g**(1/p)``, ``g`` Gamma(1/p) and ``r``
    a random sign (keys ``split(key)``), as JAX.

    Example:
        >>> random.generalized_normal(random.PRNGKey(0), 2.0, (2,)).shape
        (2,)
    """
    key = check_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    shape = check_shape("generalized_normal", shape)
    key_g, key_r = split(key)
    inverse = lax.div(_const(1, dtype), param("generalized_normal", "p", p, dtype, shape))
    g = gamma(key_g, inverse, shape, dtype)
    return lax.mul(rademacher(key_r, shape, dtype), lax.pow(g, inverse))


@compiled(static=("d", "shape", "dtype"))
def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit ``p``-norm ball of dimension ``d``, as JAX: generalised
    normals over an exponential's ``p``-th root (keys ``split(key)``).

    Example:
        >>> x = random.ball(random.PRNGKey(0), 3, shape=(4,))
        >>> x.shape, bool((jnp.linalg.norm(x, axis=-1) <= 1).all())
        ((4, 3), True)
    """
    key = check_key("ball", key)
    dtype = float_dtype("ball", dtype)
    shape = check_shape("ball", shape)
    d = operator.index(d)
    key_g, key_e = split(key)
    p = lax.convert_element_type(jnp.asarray(p), dtype)
    g = generalized_normal(key_g, p, (*shape, d), dtype)
    e = exponential(key_e, shape, dtype)
    total = lax.add(jnp.sum(lax.pow(jnp.abs(g), p), axis=-1), e)
    return g / jnp.expand_dims(lax.pow(total, lax.div(_const(1, dtype), p)), -1)

"""A line search for the strong Wolfe conditions (Nocedal and Wright's algorithms 3.5 and
3.6: bracketing, then zooming by cubic, quadratic or bisection steps), as JAX's
``jax.scipy.optimize.line_search``; every step is invarax ops in a ``lax.while_loop``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...transforms import value_and_grad


class _Zoom(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object


class LineSearchResults(NamedTuple):
    """What ``line_search`` found: the step ``a_k`` and ``f``, its gradient there, counts."""

    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through ``(a, fa)`` (slope ``fpa``), ``(b, fb)``, ``(c, fc)``."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc ** 2 * rb - db ** 2 * rc) / denom
    big_b = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-big_b + jnp.sqrt(big_b * big_b - 3.0 * big_a * fpa)) / (3.0 * big_a)


def _quad_min(a, fa, fpa, b, fb):
    """The minimiser of the parabola through ``(a, fa)`` with slope ``fpa`` and ``(b, fb)``."""
    db = b - a
    return a - fpa / (2.0 * ((fb - fa - fpa * db) / db ** 2))


def _where(pred, new: dict, state):
    return state._replace(**{k: jnp.where(pred, v, getattr(state, k)) for k, v in new.items()})


def _zoom(phi_and_grad, wolfe_one, wolfe_two, lo, hi, g_0, skip):
    """Narrow the bracket ``lo``-``hi`` (each ``(a, phi, dphi)``) to a strong-Wolfe step."""
    (a_lo, phi_lo, dphi_lo), (a_hi, phi_hi, dphi_hi) = lo, hi
    state = _Zoom(jnp.array(False), jnp.array(False), 0, a_lo, phi_lo, dphi_lo, a_hi, phi_hi,
                  dphi_hi, (a_lo + a_hi) / 2.0, (phi_lo + phi_hi) / 2.0, jnp.ones_like(a_lo),
                  phi_lo, dphi_lo, g_0, 0)
    threshold = 1e-5 if np.finfo(np.dtype(jnp.result_type(a_lo))).bits < 64 else 1e-10

    def body(s):
        span = s.a_hi - s.a_lo
        low, high = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        s = s._replace(failed=s.failed | (span <= threshold))
        cubic = _cubic_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (cubic > low + 0.2 * span) & (cubic < high - 0.2 * span)
        quad = _quad_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cubic & (quad > low + 0.1 * span) & (quad < high - 0.1 * span)
        a_j = jnp.where(use_cubic, cubic,
                        jnp.where(use_quad, quad, (s.a_lo + s.a_hi) / 2.0))
        phi_j, dphi_j, g_j = phi_and_grad(a_j)
        s = s._replace(nfev=s.nfev + 1)
        to_hi = wolfe_one(a_j, phi_j) | (phi_j >= s.phi_lo)
        found = wolfe_two(dphi_j) & ~to_hi
        hi_to_lo = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        s = _where(to_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                               phi_rec=s.phi_hi), s)
        s = _where(found, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s)
        s = s._replace(done=found | s.done)
        s = _where(hi_to_lo, dict(a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                                  a_rec=s.a_hi, phi_rec=s.phi_hi), s)
        s = _where(to_lo & ~hi_to_lo, dict(a_rec=s.a_lo, phi_rec=s.phi_lo), s)
        s = _where(to_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s)
        return s._replace(j=s.j + 1, failed=s.failed | (s.j + 1 >= 30))

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20) -> LineSearchResults:
    """A step ``a`` along ``pk`` from ``xk`` meeting the strong Wolfe conditions for ``f``.

    Arguments:
        f: a scalar function of a 1-D array.
        xk, pk: the start and the (descent) direction.
        old_fval, gfk: ``f(xk)`` and its gradient, if known.
        old_old_fval: ``f`` at the previous iterate (it sets the first trial step).
        c1, c2: the sufficient-decrease and curvature constants.
        maxiter: the most bracketing steps.

    Returns:
        ``LineSearchResults``: ``a_k``, ``f_k``/``g_k`` there, ``failed``, ``status`` (0 ok,
        1 the zoom failed, 3 ``maxiter`` reached) and the evaluation counts.

    Example:
        >>> import invarax.numpy as jnp
        >>> r = line_search(lambda x: jnp.sum(x ** 2), jnp.array([1.0]), jnp.array([-1.0]))
        >>> r.a_k, r.failed
        (Array(1., dtype=float32), Array(False, dtype=bool))
    """
    xk, pk = jnp.asarray(xk), jnp.asarray(pk)
    xk, pk = xk.astype(jnp.result_type(xk, pk, 0.0)), pk.astype(jnp.result_type(xk, pk, 0.0))

    def phi_and_grad(t):
        phi, g = value_and_grad(f)(xk + jnp.asarray(t, pk.dtype) * pk)
        return phi, jnp.real(jnp.dot(g, pk)), g

    known = old_fval is not None and gfk is not None
    if known:
        phi_0, dphi_0 = jnp.asarray(old_fval), jnp.real(jnp.dot(gfk, pk))
    else:
        phi_0, dphi_0, gfk = phi_and_grad(0.0)
    start = 1.0
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(candidate > 1, 1.0, candidate)

    def wolfe_one(a, phi):
        return phi > phi_0 + c1 * a * dphi_0

    def wolfe_two(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0

    zero = jnp.zeros((), pk.dtype)
    state = dict(done=jnp.array(False), failed=jnp.array(False), i=1, a_prev=zero,
                 phi_prev=phi_0, dphi_prev=dphi_0, nfev=0 if known else 1, a_star=zero,
                 phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(s):
        a_i = jnp.where(s["i"] == 1, start, s["a_prev"] * 2.0).astype(pk.dtype)
        phi_i, dphi_i, g_i = phi_and_grad(a_i)
        nfev = s["nfev"] + 1
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= s["phi_prev"]) & (s["i"] > 1))
        found = wolfe_two(dphi_i) & ~to_zoom1
        to_zoom2 = (dphi_i >= 0.0) & ~to_zoom1 & ~found
        prev = (s["a_prev"], s["phi_prev"], s["dphi_prev"])
        here = (a_i, phi_i, dphi_i)
        zoom1 = _zoom(phi_and_grad, wolfe_one, wolfe_two, prev, here, gfk, ~to_zoom1)
        zoom2 = _zoom(phi_and_grad, wolfe_one, wolfe_two, here, prev, gfk, ~to_zoom2)
        out = dict(s, nfev=nfev + zoom1.nfev + zoom2.nfev, i=s["i"] + 1, a_prev=a_i,
                   phi_prev=phi_i, dphi_prev=dphi_i)
        for pred, (a, phi, dphi, g), failed in (
                (to_zoom1, (zoom1.a_star, zoom1.phi_star, zoom1.dphi_star, zoom1.g_star),
                 zoom1.failed),
                (found, (a_i, phi_i, dphi_i, g_i), False),
                (to_zoom2, (zoom2.a_star, zoom2.phi_star, zoom2.dphi_star, zoom2.g_star),
                 zoom2.failed)):
            out.update(done=out["done"] | pred, failed=out["failed"] | (pred & failed),
                       a_star=jnp.where(pred, a, out["a_star"]),
                       phi_star=jnp.where(pred, phi, out["phi_star"]),
                       dphi_star=jnp.where(pred, dphi, out["dphi_star"]),
                       g_star=jnp.where(pred, g, out["g_star"]))
        return out

    s = lax.while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = jnp.where(s["failed"], 1, jnp.where(s["i"] > maxiter, 3, 0))
    a_k = s["a_star"]
    if np.finfo(np.dtype(a_k.dtype)).bits != 64:
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s["failed"] | ~s["done"], nit=s["i"] - 1, nfev=s["nfev"],
                             ngev=s["nfev"], k=s["i"], a_k=a_k, f_k=s["phi_star"],
                             g_k=s["g_star"], status=status)

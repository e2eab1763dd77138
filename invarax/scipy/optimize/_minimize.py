"""``minimize`` with BFGS, as JAX's ``jax.scipy.optimize.minimize``: the inverse-Hessian
update of Nocedal and Wright's algorithm 6.1 and the strong-Wolfe ``line_search``, in a
``lax.while_loop`` (so it runs under ``jit`` and ``vmap``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...transforms import value_and_grad
from ._line_search import line_search


class OptimizeResults(NamedTuple):
    """What ``minimize`` found: ``x``, ``fun`` and ``jac`` there, ``hess_inv`` (BFGS's
    estimate), ``success``, ``status`` (0 converged, 1 ``maxiter`` reached, 2 + the line
    search's status when it failed) and the counts ``nfev``, ``njev``, ``nit``."""

    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    maxiter = np.size(x0) * 200 if maxiter is None else maxiter
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = dict(converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=jnp.array(False),
                 k=0, nfev=1, x=x0, f=f_0, g=g_0, h=jnp.eye(d, dtype=x0.dtype),
                 f_prev=f_0 + jnp.linalg.norm(g_0) / 2, ls_status=0)

    def body(s):
        p = -jnp.dot(s["h"], s["g"])
        ls = line_search(fun, s["x"], p, old_fval=s["f"], old_old_fval=s["f_prev"],
                         gfk=s["g"], maxiter=line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - s["g"]
        rho = jnp.reciprocal(jnp.dot(y, step))
        w = jnp.eye(d, dtype=rho.dtype) - rho * step[:, None] * y[None, :]
        h = jnp.einsum("ij,jk,lk", w, s["h"], w) + rho * step[:, None] * step[None, :]
        return dict(converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol, failed=ls.failed,
                    k=s["k"] + 1, nfev=s["nfev"] + ls.nfev, x=s["x"] + step, f=ls.f_k,
                    g=ls.g_k, h=jnp.where(jnp.isfinite(rho), h, s["h"]), f_prev=s["f"],
                    ls_status=ls.status)

    s = lax.while_loop(lambda s: ~s["converged"] & ~s["failed"] & (s["k"] < maxiter), body,
                       state)
    status = jnp.where(s["converged"], 0, jnp.where(
        s["k"] == maxiter, 1, jnp.where(s["failed"], 2 + s["ls_status"], -1)))
    return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=status,
                           fun=s["f"], jac=s["g"], hess_inv=s["h"], nfev=s["nfev"],
                           njev=s["nfev"], nit=s["k"])


def minimize(fun, x0, args=(), *, method: str, tol=None, options=None) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` from ``x0`` (a 1-D array), as JAX's ``minimize``.

    Arguments:
        fun: a scalar function of a 1-D array (and ``args``), differentiable by ``grad``.
        x0: the starting point.
        args: a tuple of further arguments of ``fun``.
        method: ``"BFGS"`` (the one method, as in JAX).
        tol: unused (as in JAX); set ``options={"gtol": ...}``.
        options: ``maxiter`` (default ``200 * x0.size``), ``norm`` (of the gradient for
            the stopping test, default ``inf``), ``gtol`` (default ``1e-5``),
            ``line_search_maxiter`` (default 10).

    Returns:
        ``OptimizeResults``.

    Example:
        >>> import invarax.numpy as jnp
        >>> r = minimize(lambda x: jnp.sum((x - 3.0) ** 2), jnp.zeros(2), method="BFGS")
        >>> r.x, r.success
        (Array([3., 3.], dtype=float32), Array(True, dtype=bool))
    """
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got "
                        f"{args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized (invarax has BFGS, as JAX)")
    return _bfgs(lambda x: fun(x, *args), jnp.asarray(x0), **(options or {}))

"""``jnp.roots`` and ``jnp.polyfit``: polynomials through ``jnp.linalg`` (JAX's formulas)."""

from __future__ import annotations

import numpy as np

from ..core.array import Array
from . import _ufuncs as uf
from ._creation import asarray, eye, zeros
from ._dtypes import finfo
from ._joining import concatenate
from ._promote import promote_dtypes, ranks_broadcast
from .linalg import eigvals, inv, lstsq


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients ``p`` (highest power first), complex.

    Arguments:
        p: 1-d coefficients.
        strip_zeros: strip leading zeros and give trailing zeros' roots (0) exactly, as
            NumPy; this reads ``p``'s values, so it cannot be traced (as JAX: pass False
            under ``jit``, where a leading zero gives NaN roots).

    Returns:
        The eigenvalues of the companion matrix (``jnp.linalg.eigvals``), complex.

    Example:
        >>> jnp.roots(jnp.array([1.0, -3.0, 2.0])).real
        Array([2., 1.], dtype=float32)
    """
    (p,) = promote_dtypes(p if isinstance(p, Array) else asarray(p), to_inexact=True)
    if p.ndim != 1:
        raise ValueError(f"jnp.roots takes 1-d coefficients, got shape {p.shape}")
    trailing = 0
    if strip_zeros:
        nonzero = np.flatnonzero(np.asarray(p))  # concrete values, as NumPy and JAX
        if nonzero.size == 0:
            return zeros((0,), np.result_type(p.dtype, np.complex64))
        trailing = p.shape[0] - 1 - int(nonzero[-1])
        p = p[int(nonzero[0]):int(nonzero[-1]) + 1]
    n = p.shape[0] - 1
    if n < 1:
        found = zeros((0,), np.result_type(p.dtype, np.complex64))
    else:
        # Companion matrix: ones below the diagonal, first row -p[1:] / p[0].
        companion = eye(n, k=-1, dtype=p.dtype).at[0].set(uf.negative(p[1:]) / p[0])
        found = eigvals(companion)
    return concatenate([found, zeros((trailing,), found.dtype)]) if trailing else found


@ranks_broadcast
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree ``deg`` through the points ``(x, y)``.

    Arguments:
        x: 1-d sample positions.
        y: the values, 1-d or 2-d (one fit per column).
        deg: the degree (a Python int).
        rcond: the cut-off for small singular values (default ``len(x) * eps``).
        full: also return the residuals, the rank, the singular values and ``rcond``.
        w: weights of the points (applied to the residuals, not squared).
        cov: also return the coefficients' covariance (``"unscaled"``: not scaled by the
            residuals).

    Returns:
        The coefficients, highest power first (and what ``full``/``cov`` ask for), as
        NumPy's and JAX's ``polyfit``.

    Example:
        >>> x = jnp.arange(5.0)
        >>> jnp.polyfit(x, 2 * x + 1, 1).round(4)
        Array([2., 1.], dtype=float32)
    """
    deg = int(deg)
    x, y = promote_dtypes(x if isinstance(x, Array) else asarray(x),
                          y if isinstance(y, Array) else asarray(y), to_inexact=True)
    if deg < 0:
        raise ValueError(f"jnp.polyfit: deg must be >= 0, got {deg}")
    if x.ndim != 1 or x.shape[0] == 0:
        raise ValueError(f"jnp.polyfit: x must be a non-empty 1-d array, got shape {x.shape}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise ValueError(f"jnp.polyfit: y must be 1-d or 2-d with len(x) = {x.shape[0]} rows, "
                         f"got shape {y.shape}")
    if rcond is None:
        rcond = x.shape[0] * float(finfo(x.dtype).eps)
    order = deg + 1
    lhs = x[:, None] ** asarray(np.arange(deg, -1, -1))  # the Vandermonde matrix
    rhs = y
    if w is not None:
        w = asarray(w, dtype=x.dtype)
        if w.shape != (x.shape[0],):
            raise ValueError(f"jnp.polyfit: w must have shape {(x.shape[0],)}, got {w.shape}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = uf.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, asarray(rcond, dtype=x.dtype)
    if cov:
        base = inv(lhs.T @ lhs) / (scale[:, None] * scale[None, :])
        if cov == "unscaled":
            factor = asarray(1.0, dtype=x.dtype)
        else:
            if x.shape[0] <= order:
                raise ValueError("jnp.polyfit: cov needs more points than the degree + 1")
            factor = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, base * factor
        return c, base[:, :, None] * factor  # JAX's shapes: (order, order, k or 1)
    return c

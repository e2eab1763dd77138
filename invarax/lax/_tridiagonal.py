"""``lax.linalg.tridiagonal_solve``: Gaussian elimination with partial pivoting on a
tridiagonal system (LAPACK's ``gtsv`` steps), written with ``scan`` so that every
transformation (``grad``, ``vmap``, ``jit``) applies.

Row ``i`` of ``A`` is ``dl[i] x[i-1] + d[i] x[i] + du[i] x[i+1]`` (``dl[0]`` and ``du[-1]``
are ignored, as JAX's). The forward sweep keeps the current pivot row ``(p, q, c)``; at
step ``i`` it compares ``|p|`` with the next row's subdiagonal ``l``:

- ``|p| >= |l|``: row ``i`` stays, ``f = l / p``, the next row becomes
  ``(d[i+1] - f q, du[i+1], b[i+1] - f c)``;
- else the rows swap: row ``i`` is the next row ``(l, d[i+1], du[i+1], b[i+1])``, with a
  second superdiagonal ``du[i+1]``, ``f = p / l``, and the next pivot row is
  ``(q - f d[i+1], -f du[i+1], c - f b[i+1])``.

Back substitution then runs from the last row: ``x[i] = (c - q x[i+1] - r x[i+2]) / p``.
"""

from __future__ import annotations

import numpy as np

from ..core.array import to_array
from ..ops import elementwise as el
from ..ops import shape as sh
from ._control_flow import scan


def tridiagonal_solve(dl, d, du, b):
    """The solution ``x`` of ``A x = b`` for the tridiagonal ``A`` with diagonals ``dl``,
    ``d``, ``du`` (each ``(..., m)``) and ``b`` of shape ``(..., m, n)`` (JAX's
    ``lax.linalg.tridiagonal_solve``).

    Example:
        >>> x = tridiagonal_solve(jnp.array([0.0, 1.0, 1.0]), jnp.array([4.0, 4.0, 4.0]),
        ...                       jnp.array([1.0, 1.0, 0.0]), jnp.array([[5.0], [6.0], [5.0]]))
        >>> x.ravel().round(5)
        Array([1., 1., 1.], dtype=float32)
    """
    dl, d, du, b = (to_array(v, "tridiagonal_solve operand") for v in (dl, d, du, b))
    if not (dl.shape == d.shape == du.shape) or d.ndim < 1 or b.ndim != d.ndim + 1 \
            or b.shape[:-1] != d.shape:
        raise ValueError(
            f"tridiagonal_solve: dl, d and du must share one shape (..., m) and b be "
            f"(..., m, n); got dl {dl.shape}, d {d.shape}, du {du.shape}, b {b.shape}")
    if len({v.dtype for v in (dl, d, du, b)}) != 1 or d.dtype.kind not in "fc":
        raise TypeError(f"tridiagonal_solve: the operands must share one float or complex "
                        f"dtype, got {dl.dtype}, {d.dtype}, {du.dtype}, {b.dtype}")
    m = d.shape[-1]
    if m == 0:
        return b
    # The row axis first; the diagonals' elements broadcast against b's rows (..., n).
    rows = d.ndim - 1
    b = sh.transpose(b, (rows, *range(rows), rows + 1))
    # Each diagonal element broadcast against its row of b: (m, ..., n), as b.
    dl, d, du = (sh.broadcast_in_dim(sh.transpose(v, (rows, *range(rows))), b.shape,
                                     tuple(range(rows + 1))) for v in (dl, d, du))
    zero = np.zeros((), d.dtype)
    if m == 1:
        return _unrows(el.div(b, d), rows)

    def absolute(v):  # LAPACK's pivot size: |re| + |im| for complex
        return el.abs(v) if d.dtype.kind == "f" else el.add(el.abs(el.real(v)),
                                                            el.abs(el.imag(v)))

    def forward(carry, row):
        p, q, c = carry
        lo, di, up, bi = row
        stay = el.ge(absolute(p), absolute(lo))
        f = el.div(el.select(stay, lo, p), el.select(stay, p, lo))
        out = (el.select(stay, p, lo), el.select(stay, q, di),
               el.select(stay, sh.broadcast_in_dim(zero, up.shape, ()), up),
               el.select(stay, c, bi))
        nxt = (el.select(stay, el.sub(di, el.mul(f, q)), el.sub(q, el.mul(f, di))),
               el.select(stay, up, el.neg(el.mul(f, up))),
               el.select(stay, el.sub(bi, el.mul(f, c)), el.sub(c, el.mul(f, bi))))
        return nxt, out

    (p, _, c), (ps, qs, rs, cs) = scan(forward, (d[0], du[0], b[0]),
                                       (dl[1:], d[1:], du[1:], b[1:]))
    last = el.div(c, p)

    def backward(carry, row):
        x1, x2 = carry
        pi, qi, ri, ci = row
        x = el.div(el.sub(el.sub(ci, el.mul(qi, x1)), el.mul(ri, x2)), pi)
        return (x, x1), x

    zeros = sh.broadcast_in_dim(zero, last.shape, ())
    _, xs_back = scan(backward, (last, zeros), (ps, qs, rs, cs), reverse=True)
    x = sh.concatenate([xs_back, sh.expand_dims(last, (0,))], 0)
    return _unrows(x, rows)


def _unrows(x, rows):
    """``x`` (rows first) with its row axis back before the last axis."""
    return sh.transpose(x, (*range(1, rows + 1), 0, rows + 1))

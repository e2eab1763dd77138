"""The Cholesky factor of complex Hermitian matrices, composed of canonical ops.

The factorisation kernels are real (float32/float64). A complex Cholesky is the
column-by-column (left-looking) algorithm written with lax ops, whose every reduction is
a canonical contraction: column ``j`` is ``v = a[:, j] - L[:, :j] @ conj(L[j, :j])``, its
diagonal ``d = sqrt(re(v[j]))`` and the rows below ``v / d``. So a matrix gets the same bits
alone or in any batch (N1, N2), under ``jit`` (N3), and its derivatives are those of the
composition. The program holds ``n`` column steps: meant for the small matrices complex
factorisations are used on here.
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl
from . import elementwise as el
from . import shape as sh
from .contractions import dot_general


def _full(value, like_shape, dtype):
    return sh.broadcast_in_dim(ArrayImpl(np.asarray(value, dtype)), like_shape, ())


def cholesky_complex(x, symmetrize_input: bool):
    """The lower Cholesky factor of each Hermitian positive definite matrix of ``x``
    (``(..., n, n)``, complex); for a matrix that is not positive definite, NaN on and
    below the diagonal and zeros above (as JAX)."""
    nd, n = x.ndim, x.shape[-1]
    perm = (*range(nd - 2), nd - 1, nd - 2)
    if symmetrize_input:  # (x + x^H) / 2, JAX's default
        x = el.div(el.add(x, el.conj(sh.transpose(x, perm))), _full(2, x.shape, x.dtype))
    column_shape = (*x.shape[:-1], 1)
    rows = sh.broadcasted_iota(np.int32, column_shape, nd - 2)
    zero = _full(0, column_shape, x.dtype)
    batch = tuple(range(nd - 2))
    cols, ok = [], None
    for j in range(n):
        v = sh.slice_in_dim(x, j, j + 1, axis=nd - 1)  # (..., n, 1)
        if cols:
            prev = sh.concatenate(cols, nd - 1)  # (..., n, j)
            row = el.conj(sh.slice_in_dim(prev, j, j + 1, axis=nd - 2))  # (..., 1, j)
            v = el.sub(v, dot_general(prev, row, (((nd - 1,), (nd - 1,)), (batch, batch))))
        pivot = el.real(sh.slice_in_dim(v, j, j + 1, axis=nd - 2))  # (..., 1, 1)
        positive = el.gt(pivot, _full(0, pivot.shape, pivot.dtype))
        ok = positive if ok is None else el.bitwise_and(ok, positive)
        d = sh.broadcast_in_dim(el.convert_element_type(el.sqrt(pivot), x.dtype),
                                column_shape, tuple(range(nd)))
        j_ = _full(j, column_shape, np.int32)
        col = el.select(el.gt(rows, j_), el.div(v, d), el.select(el.eq(rows, j_), d, zero))
        cols.append(col)
    factor = sh.concatenate(cols, nd - 1)
    ok = sh.broadcast_in_dim(ok, x.shape, tuple(range(nd)))
    lower = el.ge(sh.broadcasted_iota(np.int32, x.shape, nd - 2),
                  sh.broadcasted_iota(np.int32, x.shape, nd - 1))
    failed = el.select(lower, _full(complex(np.nan, np.nan), x.shape, x.dtype),
                       _full(0, x.shape, x.dtype))
    return el.select(ok, factor, failed)

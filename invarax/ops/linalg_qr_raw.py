"""``qr_raw``: the Householder form of a QR decomposition, as ``jnp.linalg.qr(mode="raw")``.

LAPACK geqrf's (zgeqrf's, for complex operands) output in NumPy's layout: for a
(..., m, n) operand, ``h`` (..., n, m) and ``tau`` (..., min(m, n)). The impl is the same
kernel as ``qr`` (each matrix on its own, a fixed order), so batching never changes a
matrix's bits. It is not differentiable (as JAX's geqrf): differentiate through ``qr``'s
``(q, r)`` instead.
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..kernels import linalg as klinalg
from . import elementwise as el
from . import shape as sh
from .linalg_common import _H, _check_matrix, _leading_batch_rule, _mm, _operand, triangle


def _qr_raw_abstract_eval(a):
    _check_matrix("qr_raw", a, kinds="fc")
    *batch, m, n = a.shape
    return [ShapedArray((*batch, n, m), a.dtype), ShapedArray((*batch, min(m, n)), a.dtype)]


qr_raw_p = Primitive("qr_raw", multiple_results=True)
qr_raw_p.def_impl(lambda a: list(klinalg.qr_raw(a)))
qr_raw_p.def_abstract_eval(_qr_raw_abstract_eval)
register_lowering(qr_raw_p)
_leading_batch_rule(qr_raw_p)


def qr_raw(x):
    """``(h, tau)``: each matrix's QR decomposition in LAPACK's Householder form.

    Arguments:
        x: a float or complex array of shape (..., m, n).

    Returns:
        ``h`` (..., n, m): row ``j`` holds ``r``'s column ``j`` (its first ``j + 1``
        entries; the diagonal real) and the tail of reflector ``j`` (its leading 1
        implied); ``tau`` (..., min(m, n)): ``H_j = I - tau_j v_j v_j^H`` and
        ``q = H_0 H_1 ...``.

    Example:
        >>> h, tau = qr_raw(jnp.array([[3.0], [4.0]]))
        >>> h, tau
        (Array([[-5. ,  0.5]], dtype=float32), Array([1.6], dtype=float32))
    """
    return tuple(qr_raw_p.bind(_operand(x, "qr_raw")))


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """``c`` multiplied by the ``Q`` of a Householder form, without forming ``Q``, as
    ``jax.lax.linalg.ormqr``.

    Arguments:
        a: the reflectors, (..., m, n) (LAPACK's layout: ``qr_raw``'s ``h`` transposed).
        taus: their scales, (..., k) with ``k <= min(m, n)``.
        c: the matrix, (..., m, p) if ``left`` else (..., p, m).
        left: ``Q @ c`` (else ``c @ Q``).
        transpose: ``Q^T`` in place of ``Q`` (``Q^H`` for complex reflectors, as JAX's).

    Returns:
        The product, of ``c``'s shape: lax ops, one reflection at a time (differentiable
        and batched as they are).

    Example:
        >>> h, tau = qr_raw(jnp.array([[3.0], [4.0]]))
        >>> ormqr(h.mT, tau, jnp.array([[3.0], [4.0]]), transpose=True)
        Array([[-5.],
               [ 0.]], dtype=float32)
    """
    a, taus, c = _operand(a, "ormqr"), _operand(taus, "ormqr"), _operand(c, "ormqr")
    *batch, m, _ = a.shape
    k = taus.shape[-1]
    if c.shape[:-2] != tuple(batch) or c.shape[-2 if left else -1] != m:
        raise ValueError(
            f"lax.linalg.ormqr: c of shape {c.shape} does not fit reflectors of shape "
            f"{a.shape} (c's {'rows' if left else 'columns'} must be {m}, batch {tuple(batch)})")
    nd = a.ndim
    eye = sh.broadcast_in_dim(ArrayImpl(np.eye(m, k, dtype=a.dtype)), (*batch, m, k),
                              (nd - 2, nd - 1))
    v_all = el.add(triangle(sh.slice_in_dim(a, 0, k, axis=-1), lower=True, k=-1), eye)
    steps = range(k - 1, -1, -1) if left != transpose else range(k)
    for j in steps:
        v = sh.slice_in_dim(v_all, j, j + 1, axis=-1)  # (..., m, 1)
        tau = sh.reshape(sh.slice_in_dim(taus, j, j + 1, axis=-1), (*batch, 1, 1))
        if transpose and tau.dtype.kind == "c":  # Q^H: every H_j^H = I - conj(tau_j) v v^H
            tau = el.conj(tau)
        update = _mm(v, _mm(_H(v), c)) if left else _mm(_mm(c, v), _H(v))
        c = el.sub(c, el.mul(sh.broadcast_in_dim(tau, c.shape, tuple(range(nd))), update))
    return c


__all__ = ["ormqr", "qr_raw", "qr_raw_p"]

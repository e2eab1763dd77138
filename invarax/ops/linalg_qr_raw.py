"""``qr_raw``: the Householder form of a QR decomposition, as ``jnp.linalg.qr(mode="raw")``.

LAPACK geqrf's output in NumPy's layout: for a (..., m, n) operand, ``h`` (..., n, m) and
``tau`` (..., min(m, n)). The impl is the same kernel as ``qr`` (each matrix on its own, a
fixed order), so batching never changes a matrix's bits. It is not differentiable (as JAX's
geqrf): differentiate through ``qr``'s ``(q, r)`` instead.
"""

from __future__ import annotations

from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..kernels import linalg as klinalg
from .linalg import _check_matrix, _leading_batch_rule, _operand


def _qr_raw_abstract_eval(a):
    _check_matrix("qr_raw", a)
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
        x: a float array of shape (..., m, n).

    Returns:
        ``h`` (..., n, m): row ``j`` holds ``r``'s column ``j`` (its first ``j + 1``
        entries) and the tail of reflector ``j`` (its leading 1 implied); ``tau``
        (..., min(m, n)): ``H_j = I - tau_j v_j v_j^T`` and ``q = H_0 H_1 ...``.

    Example:
        >>> h, tau = qr_raw(jnp.array([[3.0], [4.0]]))
        >>> h, tau
        (Array([[-5. ,  0.5]], dtype=float32), Array([1.6], dtype=float32))
    """
    return tuple(qr_raw_p.bind(_operand(x, "qr_raw")))


__all__ = ["qr_raw", "qr_raw_p"]

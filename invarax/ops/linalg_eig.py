"""The ``eig`` primitive: eigenvalues and right eigenvectors of general real square matrices.

Forward only (no JVP rule), as the issue scopes it. The impl, ``kernels.linalg.eig``, is
NumPy's LAPACK ``geev``, one call per matrix: measured (tests/test_linalg_eig.py), a
matrix's result has the same bits alone or in any batch and layout, so N1, N2 and N3
hold; N5 and N6 rest on the LAPACK build (docs/numerics.md). Eigenvalues come in LAPACK's
order; each eigenvector has unit norm and its largest component real.
"""

from __future__ import annotations

import numpy as np

from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..kernels import linalg as klinalg
from .linalg_common import _check_matrix, _leading_batch_rule

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def _eig_abstract_eval(a, *, compute_right_eigenvectors):
    _check_matrix("eig", a, square=True)
    dtype = _COMPLEX[a.dtype]
    w = ShapedArray(a.shape[:-1], dtype)
    return [w, ShapedArray(a.shape, dtype)] if compute_right_eigenvectors else [w]


eig_p = Primitive("eig", multiple_results=True)
eig_p.def_impl(klinalg.eig)
eig_p.def_abstract_eval(_eig_abstract_eval)
register_lowering(eig_p)
_leading_batch_rule(eig_p)


def eig(x, *, compute_left_eigenvectors: bool = False,
        compute_right_eigenvectors: bool = True):
    """Eigenvalues and right eigenvectors of general square matrices (not differentiable).

    Arguments:
        x: a float (..., n, n) array.
        compute_left_eigenvectors: must be False (left eigenvectors are not supported).
        compute_right_eigenvectors: also return the eigenvectors.

    Returns:
        ``[w]`` or ``[w, v]``, complex: ``x @ v[..., :, i] = w[..., i] * v[..., :, i]``.

    Example:
        >>> lax.linalg.eig(jnp.array([[0.0, -1.0], [1.0, 0.0]]))[0]
        Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    if compute_left_eigenvectors:
        raise NotImplementedError("lax.linalg.eig: left eigenvectors are not supported")
    return eig_p.bind(to_array(x, "lax.linalg.eig operand"),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors))

"""``invarax.lax.linalg``: the factorisation primitives' wrappers (JAX's ``jax.lax.linalg``)."""

from ..ops.linalg import cholesky, eigh, lu, qr, svd, triangular_solve
from ..ops.linalg_eig import eig
from ..ops.linalg_qr_raw import ormqr
from ._tridiagonal import tridiagonal_solve

__all__ = ["cholesky", "eig", "eigh", "lu", "ormqr", "qr", "svd", "triangular_solve",
           "tridiagonal_solve"]

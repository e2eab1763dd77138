"""``invarax.lax.linalg``: the factorisation primitives' wrappers (JAX's ``jax.lax.linalg``)."""

from ..ops.linalg import cholesky, eigh, lu, qr, svd, triangular_solve
from ..ops.linalg_eig import eig

__all__ = ["cholesky", "eig", "eigh", "lu", "qr", "svd", "triangular_solve"]

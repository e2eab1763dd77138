"""``invarax.lax.linalg``: the factorisation primitives' wrappers (JAX's ``jax.lax.linalg``)."""

from ..ops.linalg import cholesky, eigh, lu, qr, svd, triangular_solve

__all__ = ["cholesky", "eigh", "lu", "qr", "svd", "triangular_solve"]

"""``invarax.numpy.linalg``: JAX's ``jnp.linalg`` (decompositions, solves, norms, products).

Leading axes are batch axes. The decompositions run on invarax's own kernels, one matrix
at a time in a fixed order (docs/numerics.md, "Factorisations"; docs/linalg.md).
"""

from ._linalg_decomp import (
    cholesky,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from ._linalg_derived import (
    cond,
    cross,
    diagonal,
    lstsq,
    matmul,
    matrix_power,
    matrix_rank,
    matrix_transpose,
    multi_dot,
    outer,
    pinv,
    tensordot,
    tensorinv,
    tensorsolve,
    trace,
    vecdot,
)
from ._linalg_norms import matrix_norm, norm, vector_norm

__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
    "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm",
]

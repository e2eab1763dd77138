"""The canonical kernels: every reduction and contraction in invarax is computed here.

Nothing outside this package may call a NumPy reduction (``np.sum``, ``np.matmul``,
...) on a computation path. The order of floating-point operations of each kernel
is written down in ``docs/numerics.md``.
"""

from . import windows
from ._isa import apply_max_isa  # (importing it applies $INVARAX_MAX_ISA)
from .contraction import dot_general
from .convolution import conv
from .reductions import (
    argmax,
    argmin,
    cumulative,
    reduce_and,
    reduce_max,
    reduce_min,
    reduce_or,
    reduce_prod,
    reduce_sum,
)
from .scatter import scatter_rows

__all__ = [
    "apply_max_isa", "argmax", "argmin", "conv", "cumulative", "dot_general", "reduce_and",
    "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "reduce_sum", "scatter_rows",
    "windows",
]

"""The contraction kernel: every ``dot_general`` in invarax (so every matmul, dot, einsum,
tensordot) is computed here.

Any contraction is first *normalised* to one canonical problem,
``(B, M, K) x (B, K, N) -> (B, M, N)``: the batch dimensions are moved to the
front and merged into ``B``, the free dimensions of each side are merged into
``M`` (lhs) and ``N`` (rhs), and the contracted dimensions into ``K``, in the order
the dimension numbers list them. Both operands are cast to the output dtype *before*
contracting and made C-contiguous, so the core routine sees the same arrays,
with the same layout, whatever the original transposition, operand order
(``x @ W.T``, ``einsum('nk,mk->nm', x, W)``, ``tensordot(x, W, ([1], [1]))``) or
memory layout.

The core routine ``_bmm`` is the interim implementation: ``np.matmul`` for floats
and complex (vendor BLAS, whose order of operations depends on the call shape,
so rows are not yet invariant, N2). The compiled canonical kernel of
``docs/numerics.md``, whose order is a fixed function of ``K`` alone, replaces
``_bmm`` in a later issue and plugs into this normalisation unchanged. Integer
contractions are exact (they accumulate in the output dtype and wrap, as JAX's
``int32``); bool contractions are the logical or of ands, as JAX's.
"""

from __future__ import annotations

import numpy as np


def _prod(sizes) -> int:
    return int(np.prod(sizes, dtype=np.int64))


def _canonical(x: np.ndarray, batch, middle, last, dtype) -> np.ndarray:
    """``x`` with its axes ``batch``, ``middle``, ``last`` merged into a contiguous 3-d array.

    Arguments:
        x: the operand.
        batch, middle, last: disjoint axis lists covering every axis of ``x``.
        dtype: the dtype of the result (the cast happens before contracting).

    Returns:
        A C-contiguous array of shape ``(prod(batch), prod(middle), prod(last))``.

    Example:
        >>> _canonical(np.ones((2, 3, 4)), [1], [0], [2], np.float32).shape
        (3, 2, 4)
    """
    shape = [_prod([x.shape[d] for d in group]) for group in (batch, middle, last)]
    moved = np.transpose(x, [*batch, *middle, *last])
    return np.require(moved, dtype=dtype, requirements="CA").reshape(shape)


def _bmm(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The core routine: ``(B, M, K) x (B, K, N) -> (B, M, N)``, both of the output dtype.

    Interim: ``np.matmul``, which is exact for integers (accumulating in their dtype)
    and gives the logical or of ands for bools. The canonical kernel replaces it.

    Example:
        >>> _bmm(np.ones((1, 2, 3), np.int32), np.ones((1, 3, 4), np.int32)).tolist()[0][0]
        [3, 3, 3, 3]
    """
    return np.matmul(lhs, rhs)


def dot_general(lhs: np.ndarray, rhs: np.ndarray, dimension_numbers, out_dtype) -> np.ndarray:
    """Contract ``lhs`` with ``rhs`` as ``lax.dot_general`` does.

    Arguments:
        lhs, rhs: the operands (NumPy arrays).
        dimension_numbers: ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``,
            tuples of axes, already validated.
        out_dtype: the dtype of the result; both operands are converted to it first,
            so it is also the accumulation dtype.

    Returns:
        An array of ``out_dtype`` whose axes are the batch axes (in the order listed),
        then the free axes of ``lhs``, then the free axes of ``rhs`` (each in order).

    Example:
        >>> x, w = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)
        >>> dot_general(x, w, (((1,), (1,)), ((), ())), np.float32).shape
        (2, 4)
    """
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_free = [d for d in range(lhs.ndim) if d not in lhs_contract and d not in lhs_batch]
    rhs_free = [d for d in range(rhs.ndim) if d not in rhs_contract and d not in rhs_batch]
    a = _canonical(lhs, lhs_batch, lhs_free, lhs_contract, out_dtype)
    b = _canonical(rhs, rhs_batch, rhs_contract, rhs_free, out_dtype)
    out_shape = (
        *(lhs.shape[d] for d in lhs_batch),
        *(lhs.shape[d] for d in lhs_free),
        *(rhs.shape[d] for d in rhs_free),
    )
    return _bmm(a, b).reshape(out_shape)

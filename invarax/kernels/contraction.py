"""The contraction kernel: every ``dot_general`` in invarax (so every matmul, dot, einsum,
tensordot) is computed here.

Any contraction is first *normalised* to one canonical problem,
``(B, M, K) x (B, K, N) -> (B, M, N)``: the batch dimensions are moved to the
front and merged into ``B``, the free dimensions of each side are merged into
``M`` (lhs) and ``N`` (rhs), and the contracted dimensions into ``K``, in the order
the dimension numbers list them. Both operands are cast to the output dtype *before*
contracting. The merged operands are strided views where NumPy can make one
(copies otherwise); the layout never matters to the result.

float32 and float64 products run in the compiled kernel ``_native.gemm``, whose
order of operations for each output element is a fixed function of ``K`` alone
(``docs/numerics.md``): ``K`` is cut into blocks of 256 terms, each block is an FMA
chain ``s = fma(a[i, p], b[p, j], s)`` from ``s = 0`` in increasing ``p``, and the
block sums are added in block order. The order is symmetric in the two operands,
so ``A @ B`` and ``(B.T @ A.T).T`` agree bitwise, and it never depends on ``M``,
``N``, ``B``, the layout or the thread count. Other dtypes reduce to it:

- float16 is computed in float32 (exact conversions) and rounded once at the end;
- complex: ``re = Ar @ Br - Ai @ Bi`` and ``im = Ar @ Bi + Ai @ Br``, each product a
  canonical real product;
- integers are exact (they accumulate in the output dtype and wrap, as JAX's
  ``int32``, so the order cannot matter) and bools are the logical or of ands, as
  JAX's: both use NumPy's exact integer ``matmul``.
"""

from __future__ import annotations

import math

import numpy as np

from . import _native
from ._support import num_threads, operand

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _canonical(x: np.ndarray, batch, middle, last, dtype) -> np.ndarray:
    """``x`` with its axes ``batch``, ``middle``, ``last`` merged into a 3-d array of ``dtype``.

    Arguments:
        x: the operand.
        batch, middle, last: disjoint axis lists covering every axis of ``x``.
        dtype: the dtype of the result (the cast happens before contracting).

    Returns:
        An aligned array of shape ``(prod(batch), prod(middle), prod(last))``: a strided
        view of ``x`` when NumPy can merge the axes without copying, else a copy.

    Example:
        >>> _canonical(np.ones((2, 3, 4)), [1], [0], [2], np.float32).shape
        (3, 2, 4)
    """
    shape = [math.prod(x.shape[d] for d in group) for group in (batch, middle, last)]
    return operand(x, [*batch, *middle, *last], dtype, shape)


def _gemm(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The canonical product ``(B, M, K) x (B, K, N) -> (B, M, N)`` of float32 or float64.

    Example:
        >>> _gemm(np.ones((1, 2, 3), np.float32), np.ones((1, 3, 4), np.float32))[0, 0]
        array([3., 3., 3., 3.], dtype=float32)
    """
    out = np.empty((lhs.shape[0], lhs.shape[1], rhs.shape[2]), lhs.dtype)
    _native.gemm(lhs, rhs, out, num_threads())
    return out


def _bmm(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``(B, M, K) x (B, K, N) -> (B, M, N)`` for operands of the output dtype.

    Example:
        >>> _bmm(np.ones((1, 2, 3), np.int32), np.ones((1, 3, 4), np.int32)).tolist()[0][0]
        [3, 3, 3, 3]
    """
    dtype = lhs.dtype
    if dtype in _FLOATS:
        return _gemm(lhs, rhs)
    if dtype == np.float16:
        return _gemm(lhs.astype(np.float32), rhs.astype(np.float32)).astype(dtype)
    if dtype.kind == "c":
        real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        ar, ai = (operand(part, (0, 1, 2), real, part.shape) for part in (lhs.real, lhs.imag))
        br, bi = (operand(part, (0, 1, 2), real, part.shape) for part in (rhs.real, rhs.imag))
        out = np.empty((lhs.shape[0], lhs.shape[1], rhs.shape[2]), dtype)
        out.real = _gemm(ar, br) - _gemm(ai, bi)
        out.imag = _gemm(ar, bi) + _gemm(ai, br)
        return out
    return np.matmul(np.ascontiguousarray(lhs), np.ascontiguousarray(rhs))


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

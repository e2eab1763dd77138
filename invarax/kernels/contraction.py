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
#: Rows per block below which an lhs whose rows do not merge into one stride is copied
#: rather than read in place block by block (products of few rows run below the peak).
_MIN_BLOCK_ROWS = 32


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
    # vendor BLAS allowed: integer and bool products are exact (NumPy's own loops, never BLAS
    # for these dtypes), so no order needs fixing; every float dtype took a branch above
    return np.matmul(np.ascontiguousarray(lhs), np.ascontiguousarray(rhs))


def layout(lhs_shape, rhs_shape, dimension_numbers) -> tuple:
    """How ``dot_general`` of operands of these shapes is normalised to the canonical
    product.

    Arguments:
        lhs_shape, rhs_shape: the operands' shapes.
        dimension_numbers: ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``.

    Returns:
        ``(lhs_perm, lhs_3d, rhs_perm, rhs_3d, out_shape)``: each operand's axes in the
        order (batch, free, contracted) for the lhs and (batch, contracted, free) for the
        rhs, the 3-d shapes ``(B, M, K)`` and ``(B, K, N)`` they merge into, and the shape
        of the result (batch axes, lhs free axes, rhs free axes).

    Example:
        >>> layout((2, 3), (4, 3), (((1,), (1,)), ((), ())))
        ([0, 1], (1, 2, 3), [1, 0], (1, 3, 4), (2, 4))
    """
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_free = [d for d in range(len(lhs_shape)) if d not in lhs_contract and d not in lhs_batch]
    rhs_free = [d for d in range(len(rhs_shape)) if d not in rhs_contract and d not in rhs_batch]
    groups_a = (lhs_batch, lhs_free, lhs_contract)
    groups_b = (rhs_batch, rhs_contract, rhs_free)
    out_shape = (*(lhs_shape[d] for d in lhs_batch), *(lhs_shape[d] for d in lhs_free),
                 *(rhs_shape[d] for d in rhs_free))
    return ([d for g in groups_a for d in g],
            tuple(math.prod(lhs_shape[d] for d in g) for g in groups_a),
            [d for g in groups_b for d in g],
            tuple(math.prod(rhs_shape[d] for d in g) for g in groups_b), out_shape)


def _breaks(x: np.ndarray, axes) -> list:
    """The positions ``i`` in ``axes`` (axes of ``x``, in order) where ``axes[i]`` does not
    merge with the axes before it into one stride (axes of length 1 merge with any)."""
    out, prev = [], None
    for i, d in enumerate(axes):
        if x.shape[d] == 1:
            continue
        if prev is not None and x.strides[prev] != x.strides[d] * x.shape[d]:
            out.append(i)
        prev = d
    return out


def _in_place(lhs: np.ndarray, rhs: np.ndarray, pa, pb, sizes, sa, sb):
    """How the kernel reads ``lhs`` and ``rhs`` in place where their 3-d forms would be
    copies: ``(lhs 4-d shape, rhs 4-d shape, product's 4-d shape, repeat)``, or None.

    A batch that merges into two strides but not one (the heads of an attention,
    ``(batch, seq, heads, d)`` batched over ``(batch, heads)``) is cut in two,
    ``(B1, B2, ...)``. Rows of ``lhs`` that merge into two strides but not one (a transposed
    ``(batch, seq, d)``) become a second batch axis, ``(B, M1, M2, K)``, over which ``rhs``
    repeats (``repeat``: a stride 0; the kernel packs it once); the product
    ``(B, M1, M2, N)`` is ``(B, M, N)``. ``sizes``: ``lhs``'s batch and free axes' lengths,
    in order.
    """
    nbatch = len(sizes[0])
    cuts = [_breaks(x, p[:nbatch]) for x, p in ((lhs, pa), (rhs, pb))]
    if any(cuts):
        if any(len(c) > 1 for c in cuts) or (all(cuts) and cuts[0] != cuts[1]):
            return None
        j = (cuts[0] or cuts[1])[0]
        b1, b2 = math.prod(sizes[0][:j]), math.prod(sizes[0][j:])
        return (b1, b2, *sa[1:]), (b1, b2, *sb[1:]), (b1, b2, sa[1], sb[2]), False
    rows = _breaks(lhs, pa[nbatch:nbatch + len(sizes[1])])
    if len(rows) != 1:
        return None
    m1 = math.prod(sizes[1][:rows[0]])
    m2 = sa[1] // m1
    if m2 < _MIN_BLOCK_ROWS:
        return None
    return (sa[0], m1, m2, sa[2]), (sb[0], 1, *sb[1:]), (sa[0], m1, m2, sb[2]), True


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
    return prepared(lhs.shape, rhs.shape, dimension_numbers, out_dtype)(lhs, rhs)


def prepared(lhs_shape, rhs_shape, dimension_numbers, out_dtype):
    """``dot_general`` for operands of these shapes, with the layout worked out once: for a
    compiled program, which calls it with the same shapes every time (a loop body).

    Arguments:
        lhs_shape, rhs_shape, dimension_numbers, out_dtype: as ``dot_general``.

    Returns:
        ``run(lhs, rhs, packed=None, bias=None, bias_first=False)``: ``dot_general(lhs, rhs,
        dimension_numbers, out_dtype)`` bit for bit (the same operands handed to the same
        kernel); for float32 and float64, plus ``bias`` (a contiguous vector over the rhs free
        axes, of ``out_dtype``) added by the kernel to each finished block of the product
        (``bias + product`` if ``bias_first``): the bits of ``add`` after it. A loop whose
        ``rhs`` is the same in every iteration packs it once, ``packed = run.pack(rhs)``
        (None where the kernel keeps no packing for these shapes), and passes it to every
        call: the kernel then reads the packed copy instead of packing ``rhs`` again. The
        packing only moves elements, so the bits are the same.

    Example:
        >>> run = prepared((2, 3), (3, 4), (((1,), (0,)), ((), ())), np.float32)
        >>> w = np.ones((3, 4), np.float32)
        >>> run(np.ones((2, 3), np.float32), w, run.pack(w))[0]
        array([3., 3., 3., 3.], dtype=float32)
    """
    pa, sa, pb, sb, out_shape = layout(lhs_shape, rhs_shape, dimension_numbers)
    dtype = np.dtype(out_dtype)
    if dtype not in _FLOATS:
        def general(lhs, rhs, packed=None):
            return _bmm(operand(lhs, pa, dtype, sa),
                        operand(rhs, pb, dtype, sb)).reshape(out_shape)
        general.pack = lambda rhs: None
        return general
    cshape, empty = (sa[0], sa[1], sb[2]), np.empty
    gemm, gemm_packed = _native.gemm, _native.gemm_packed
    (lhs_contract, _), (lhs_batch, _) = dimension_numbers
    nb, nfree = len(lhs_batch), len(lhs_shape) - len(lhs_batch) - len(lhs_contract)
    sizes = ([lhs_shape[d] for d in pa[:nb]], [lhs_shape[d] for d in pa[nb:nb + nfree]])
    views = {}  # (lhs strides, rhs strides) -> _in_place's answer
    splits = nb > 1 or nfree > 1  # axes that may not merge into one stride

    def run(lhs, rhs, packed=None, bias=None, bias_first=False):
        if splits and packed is None and lhs.dtype == dtype == rhs.dtype:
            key = (lhs.strides, rhs.strides)
            view = views.get(key, False)
            if view is False:
                view = views[key] = _in_place(lhs, rhs, pa, pb, sizes, sa, sb)
            if view is not None:
                a4, b4, c4, repeat = view
                b = operand(rhs, pb, dtype, b4)
                out = empty(c4, dtype)
                gemm(operand(lhs, pa, dtype, a4),
                     np.broadcast_to(b, (b4[0], a4[1], *b4[2:])) if repeat else b, out,
                     num_threads(), bias, bias_first)
                return out.reshape(out_shape)
        out = empty(cshape, dtype)
        if packed is None:
            gemm(operand(lhs, pa, dtype, sa), operand(rhs, pb, dtype, sb), out, num_threads(),
                 bias, bias_first)
        else:
            gemm_packed(operand(lhs, pa, dtype, sa), packed, out, num_threads(), bias,
                        bias_first)
        return out.reshape(out_shape)

    def pack(rhs):
        return _native.gemm_pack(operand(rhs, pb, dtype, sb), sa[1]) if sa[0] == 1 else None

    run.pack = pack
    return run

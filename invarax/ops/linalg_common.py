"""The checks and lax-level helpers shared by the ``lax.linalg`` primitives' rules.

Matrices are the last two axes of an array, the leading ones a batch; every helper is a
composition of lax ops (so it batches, differentiates and jits as they do).
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..interpreters.batching import batching_rules, move_batch_axis, not_mapped
from . import elementwise as el
from . import shape as sh
from .contractions import dot_general


def _check_matrix(name: str, x: ShapedArray, square: bool = False, kinds: str = "f") -> None:
    """A TypeError unless ``x`` is float32/float64 (complex64/complex128 too if ``kinds`` has
    "c"), a ValueError unless it is a stack of (square) matrices."""
    if x.dtype.kind == "c" and "c" not in kinds:
        raise TypeError(
            f"lax.linalg.{name} takes float32 or float64 matrices, got {x.dtype.name}: of "
            "invarax's factorisations cholesky, lu, triangular_solve, qr, eigh and svd take "
            "complex matrices (cholesky through lax.linalg.cholesky), eig real ones only"
        )
    if x.dtype not in (np.float32, np.float64, *((np.complex64, np.complex128)
                                                  if "c" in kinds else ())):
        also = ", complex64 or complex128" if "c" in kinds else " or float64"
        raise TypeError(
            f"lax.linalg.{name} takes float32{also} matrices, got {x.dtype.name} "
            "(convert with .astype(jnp.float32))"
        )
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        kind = "square matrices" if square else "matrices"
        raise ValueError(
            f"lax.linalg.{name} takes {kind} of shape (..., m, {'m' if square else 'n'}), "
            f"got an array of shape {x.shape}"
        )


def _batch_leading(vals, dims):
    """Every value with its batch axis first (unbatched ones broadcast there)."""
    size = next(v.shape[d] for v, d in zip(vals, dims, strict=True) if d is not not_mapped)
    return [move_batch_axis(v, d, 0, size) for v, d in zip(vals, dims, strict=True)]


def _leading_batch_rule(prim):
    """The batching rule of a primitive over leading batch axes: batch axis to the front."""

    def rule(vals, dims, **params):
        outs = prim.bind(*_batch_leading(vals, dims), **params)
        return outs, ([0] * len(outs) if prim.multiple_results else 0)

    batching_rules[prim] = rule


def _T(x):
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    return sh.transpose(x, perm)


def _H(x):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return el.conj(_T(x)) if x.dtype.kind == "c" else _T(x)


def _mm(a, b):
    """``a @ b`` over leading batch axes (equal on both sides)."""
    batch = tuple(range(a.ndim - 2))
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)))


def _full(value, shape, dtype):
    return sh.broadcast_in_dim(ArrayImpl(np.asarray(value, dtype)), shape, ())


def _mask(shape, keep):
    """A bool array of ``shape`` true where ``keep(row_iota, col_iota)`` holds."""
    rows = sh.broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = sh.broadcasted_iota(np.int32, shape, len(shape) - 1)
    return keep(rows, cols)


def triangle(x, lower: bool, k: int = 0):
    """``x`` with the entries outside its lower (``j <= i + k``) or upper (``j >= i + k``)
    triangle set to zero: jnp.tril/triu with lax ops."""
    offset = _full(k, x.shape, np.int32)
    if lower:
        keep = _mask(x.shape, lambda r, c: el.le(c, el.add(r, offset)))
    else:
        keep = _mask(x.shape, lambda r, c: el.ge(c, el.add(r, offset)))
    return el.select_n(keep, _full(0, x.shape, x.dtype), x)


def _eye(shape, dtype):
    """Identity matrices of ``shape`` (..., m, n)."""
    on = _mask(shape, lambda r, c: el.eq(r, c))
    return el.convert_element_type(on, dtype)


def matrix_diagonal(x):
    """The diagonal of each square matrix of ``x``: every (n+1)-th element, a strided slice."""
    n = x.shape[-1]
    flat = sh.reshape(x, (*x.shape[:-2], n * n))
    return sh.slice_in_dim(flat, 0, n * n, n + 1, axis=x.ndim - 2)


def _rows(v, n):
    """``v[..., None, :]`` broadcast to (..., n, k)."""
    return sh.broadcast_in_dim(v, (*v.shape[:-1], n, v.shape[-1]), (*range(v.ndim - 1), v.ndim))


def _cols(v, n):
    """``v[..., :, None]`` broadcast to (..., k, n)."""
    return sh.broadcast_in_dim(v, (*v.shape, n), tuple(range(v.ndim)))


def _operand(x, name):
    return to_array(x, f"lax.linalg.{name} operand")


def _symmetrize(x):
    """``(x + x^H) / 2``, the symmetric (Hermitian) part that JAX factorises by default."""
    return el.div(el.add(x, _H(x)), _full(2, x.shape, x.dtype))

"""The FFT kernel: invarax's own compiled FFT (csrc/fft.c, csrc/fft_impl.h), axis by axis.

A plan fixes, per length and type, every operation of a 1-d transform (Stockham stages of
radix 4, 2 and odd primes up to 31, Bluestein beyond; twiddles computed once by a fixed
sequence of IEEE operations, the same bits on every machine). The kernel transforms blocks
of lines, one line per vector lane, each with exactly its plan's operations: a line's bits
do not depend on the batch, the block or lane it lands in, the thread count or the
dispatch level (docs/numerics.md, "The FFT"). A multi-axis transform is 1-d transforms
along the last axis, then the one before it, and so on (IRFFT: the other way round).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from . import _native
from ._support import num_threads

COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
           np.dtype(np.float64): np.dtype(np.complex128)}
REAL = {c: r for r, c in COMPLEX.items()}

KINDS = {"FFT": 0, "IFFT": 1, "RFFT": 2, "IRFFT": 3}
#: Lines transformed together, one per vector lane (any value gives the same bits).
LANES = 16
#: Rows (lines along the last axis) from this length on may be transformed one at a time,
#: vectorised within the row (see _within).
ROW_MIN = 64
#: The scratch of one thread stays below this many bytes (fewer lanes for long lines).
SCRATCH_BYTES = 1 << 25


@lru_cache(maxsize=256)
def _within(n: int) -> bool:
    """Whether rows of length n are fastest one at a time, vectorised within the row (their
    elements are contiguous): from ROW_MIN on, with a power-of-two factor of 32 at least
    (the stages with few elements per twiddle) and no prime factor above 31 (Bluestein);
    other lines go LANES at a time, one per vector lane."""
    if n < ROW_MIN or n & -n < 32:
        return False
    odd = n // (n & -n)
    for p in range(3, 32, 2):
        while odd % p == 0:
            odd //= p
    return odd == 1


@lru_cache(maxsize=64)
def _plan(n: int, dbl: bool, real: bool):
    return _native.fft_plan(n, dbl, real)


def fft_1d(x: np.ndarray, kind: str, n: int, axis: int) -> np.ndarray:
    """The 1-d transform ``kind`` of length ``n`` along ``axis`` of ``x`` (complex for FFT,
    IFFT and IRFFT, real for RFFT; IRFFT takes ``n // 2 + 1`` bins), in ``x``'s precision.

    Example:
        >>> fft_1d(np.array([1.0, 0.0, 0.0, 0.0], np.float32), "RFFT", 4, 0)
        array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    if n < 0 or (n == 0 and kind == "RFFT"):
        raise ValueError(f"fft: an {kind} needs a length of at least 1, got {n}")
    real = REAL.get(x.dtype, x.dtype)
    out_len = n // 2 + 1 if kind == "RFFT" else n
    out_dtype = real if kind == "IRFFT" else COMPLEX[real]
    shape = list(x.shape)
    shape[axis] = out_len
    out = np.empty(shape, out_dtype)
    inner = math.prod(x.shape[axis + 1:])
    lines = math.prod(x.shape[:axis]) * inner
    if lines == 0 or n == 0:  # nothing to transform (a length-0 FFT is empty, as JAX's)
        return out
    x = np.ascontiguousarray(x)
    lanes = 1 if inner == 1 and _within(n) else min(LANES, lines)
    while lanes > 1 and lanes * (n + 2) * 8 * real.itemsize > SCRATCH_BYTES:
        lanes //= 2
    plan = _plan(n, real == np.float64, kind in ("RFFT", "IRFFT"))
    _native.fft(KINDS[kind], plan, x.reshape(-1).view(real), out.reshape(-1).view(real),
                lines, inner, lanes, num_threads())
    return out


def fft(x: np.ndarray, kind: str, lengths: tuple) -> np.ndarray:
    """The transform ``kind`` (``"FFT"``, ``"IFFT"``, ``"RFFT"``, ``"IRFFT"``) of ``x`` over
    its last ``len(lengths)`` axes, in ``x``'s precision (IRFFT: ``lengths`` of the output).
    The inverse transforms are scaled by ``1 / prod(lengths)`` (as ``numpy.fft``).

    Example:
        >>> fft(np.array([1.0, 0.0, 0.0, 0.0], np.float32), "RFFT", (4,))
        array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    x = np.asarray(x)
    axes = range(x.ndim - len(lengths), x.ndim)
    pairs = list(zip(axes, lengths, strict=True))
    if kind == "RFFT":
        x = fft_1d(x, "RFFT", pairs[-1][1], pairs[-1][0])
        for axis, n in reversed(pairs[:-1]):
            x = fft_1d(x, "FFT", n, axis)
        return x
    if kind == "IRFFT":
        for axis, n in pairs[:-1]:
            x = fft_1d(x, "IFFT", n, axis)
        return fft_1d(x, "IRFFT", pairs[-1][1], pairs[-1][0])
    for axis, n in reversed(pairs):
        x = fft_1d(x, kind, n, axis)
    return x

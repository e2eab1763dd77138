"""The FFT kernel: NumPy's pocketfft over the trailing axes, one transform at a time.

NumPy computes each 1-d transform on its own (measured: its bits do not depend on the
batch, the layout or the axis; tests/test_fft.py). A large batch is split into contiguous
parts, one per thread (``num_threads()``): each transform is still computed whole by one
call, so the thread count never changes a bit (N5). Its order is pocketfft's, not written
down here, so N6 (other CPUs and NumPy builds) is open (docs/numerics.md, "Factorisations
and the FFT").
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._support import num_threads

# A batch is split between threads when it holds at least this many elements.
PARALLEL_SIZE = 1 << 17

COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
           np.dtype(np.float64): np.dtype(np.complex128)}
REAL = {c: r for r, c in COMPLEX.items()}


def fft(x: np.ndarray, kind: str, lengths: tuple) -> np.ndarray:
    """The transform ``kind`` (``"FFT"``, ``"IFFT"``, ``"RFFT"``, ``"IRFFT"``) of ``x`` over
    its last ``len(lengths)`` axes, in ``x``'s precision (IRFFT: ``lengths`` of the output).

    Example:
        >>> fft(np.array([1.0, 0.0, 0.0, 0.0], np.float32), "RFFT", (4,))
        array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    batch = x.shape[: x.ndim - len(lengths)]
    threads = min(num_threads(), int(np.prod(batch)))
    if threads > 1 and x.size >= PARALLEL_SIZE:
        flat = x.reshape(-1, *x.shape[len(batch):])
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(lambda part: _transform(part, kind, lengths),
                                  np.array_split(flat, threads)))
        out = np.concatenate(parts)
        return out.reshape(*batch, *out.shape[1:])
    return _transform(x, kind, lengths)


def _transform(x, kind, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if kind == "FFT":
        out, dtype = np.fft.fftn(x, axes=axes), x.dtype
    elif kind == "IFFT":
        out, dtype = np.fft.ifftn(x, axes=axes), x.dtype
    elif kind == "RFFT":
        out, dtype = np.fft.rfftn(x, axes=axes), COMPLEX[x.dtype]
    else:
        out, dtype = np.fft.irfftn(x, s=lengths, axes=axes), REAL[x.dtype]
    return np.asarray(out, dtype=dtype)

"""Large output buffers reused once nothing references them any more.

Freshly allocated memory is mapped page by page on first touch, which costs about as much
as writing it: a scan's stacked residuals (the LSTM benchmark's 14 x 3.2 MB per call) or
an MPI collective's gathered stack (8 MB for a psum of 10^6 float32 over 2 processes) paid
it on every call. ``unreferenced_buffer`` hands out a pooled array that no other object
refers to (its last user, and every view of it, is gone), so the memory is already mapped.
At most POOL_PER_KEY buffers per shape and dtype and POOL_MAX_BYTES in all are kept.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

POOL_MIN_BYTES, POOL_PER_KEY, POOL_MAX_BYTES = 1 << 18, 32, 1 << 30
_pool, _pool_lock, _pool_bytes = {}, threading.Lock(), [0]


def unreferenced_buffer(shape, dtype) -> np.ndarray:
    """An uninitialised array of ``shape`` and ``dtype``: a pooled one no other object
    references, a new pooled one, or (below POOL_MIN_BYTES, or with the pool full) a plain
    new one.

    Example:
        >>> unreferenced_buffer((2, 3), np.float32).shape
        (2, 3)
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    with _pool_lock:
        arrays = _pool.setdefault((tuple(shape), dtype.str), [])
        for a in arrays:
            if sys.getrefcount(a) == 3:  # the list, ``a`` and getrefcount's argument
                a.flags.writeable = True  # (an invarax Array made it read-only)
                return a
        if len(arrays) < POOL_PER_KEY and _pool_bytes[0] + nbytes <= POOL_MAX_BYTES:
            arrays.append(np.empty(shape, dtype))
            _pool_bytes[0] += nbytes
            return arrays[-1]
    return np.empty(shape, dtype)


def clear_pool() -> None:
    """Drop the pooled buffers (``invarax.clear_caches`` calls it)."""
    with _pool_lock:
        _pool.clear()
        _pool_bytes[0] = 0

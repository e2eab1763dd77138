"""What the kernels share: their thread count, and the views they hand to the compiled code.

Threads only ever split the outputs of a kernel between them, so the count never
changes a result's bits (N5); it only changes the speed. Layouts never change a
result either: the compiled kernels read any strides.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import numpy as np

ENV = "INVARAX_NUM_THREADS"
_local = threading.local()  # .cap: the threads one device's worker may use (see devices)


def _available() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


_AVAILABLE = _available()
_share = [1]  # processes of this run sharing this machine's CPUs (distributed.initialize)


def share_cpus(processes: int):
    """Divide the usable CPUs among ``processes`` processes of one run on this machine (MPI
    launches several per node): without ``$INVARAX_NUM_THREADS``, each process's kernels
    then use ``CPUs // processes`` threads, so the processes do not oversubscribe the cores."""
    _share[0] = max(1, int(processes))


def num_threads() -> int:
    """The threads a kernel may use: ``$INVARAX_NUM_THREADS`` if set, else the usable CPUs
    (this process's share of them in a run of several processes on one machine).

    Returns:
        An int >= 1.

    Example:
        >>> num_threads() >= 1
        True
    """
    count = _configured()
    cap = getattr(_local, "cap", None)
    return count if cap is None else min(count, cap)


@contextmanager
def capped_threads(cap: int):
    """Let kernels called from this thread use at most ``cap`` threads (a device's share)."""
    previous = getattr(_local, "cap", None)
    _local.cap = cap
    try:
        yield
    finally:
        _local.cap = previous


def _configured() -> int:
    value = os.environ.get(ENV)
    if not value:
        return max(1, _AVAILABLE // _share[0])
    try:
        count = int(value)
    except ValueError:
        raise ValueError(f"{ENV} must be a positive integer, got {value!r}") from None
    if count < 1:
        raise ValueError(f"{ENV} must be a positive integer, got {value!r}")
    return count


def operand(x: np.ndarray, perm, dtype, shape) -> np.ndarray:
    """``x`` with its axes permuted by ``perm``, as an aligned array of ``dtype`` and ``shape``.

    Arguments:
        x: a NumPy array.
        perm: a permutation of ``x``'s axes.
        dtype: the dtype of the result (``x`` is converted first if it differs).
        shape: the shape of the result, merging consecutive permuted axes.

    Returns:
        A strided view of ``x`` when no conversion is needed and NumPy can merge the axes
        without copying; a copy otherwise.

    Example:
        >>> operand(np.ones((2, 3, 4)), (1, 0, 2), np.float32, (3, 8)).shape
        (3, 8)
    """
    if x.dtype != dtype or not x.flags.aligned:
        x = x.astype(dtype)
    if list(perm) != list(range(x.ndim)):
        x = x.transpose(perm)
    return x.reshape(shape)

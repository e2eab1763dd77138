"""The thread count of the compiled kernels.

Threads only ever split the outputs of a kernel between them, so the count never
changes a result's bits (N5); it only changes the speed.
"""

from __future__ import annotations

import os

ENV = "INVARAX_NUM_THREADS"


def _available() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


_AVAILABLE = _available()


def num_threads() -> int:
    """The threads a kernel may use: ``$INVARAX_NUM_THREADS`` if set, else the usable CPUs.

    Returns:
        An int >= 1.

    Example:
        >>> num_threads() >= 1
        True
    """
    value = os.environ.get(ENV)
    if not value:
        return _AVAILABLE
    try:
        count = int(value)
    except ValueError:
        raise ValueError(f"{ENV} must be a positive integer, got {value!r}") from None
    if count < 1:
        raise ValueError(f"{ENV} must be a positive integer, got {value!r}")
    return count

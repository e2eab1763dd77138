"""What the kernels share: their thread count, and the views they hand to the compiled code.

Threads only ever split the outputs of a kernel between them, so the count never
changes a result's bits (N5); it only changes the speed. Layouts never change a
result either: the compiled kernels read any strides.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from . import _native

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


_POOL = {"executor": None, "workers": 0, "pid": None}
_POOL_LOCK = threading.Lock()


def worker_pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool with at least ``workers`` threads, kept for later calls (fusion's
    chunks, the elementary functions' ranges); a forked child, which has none of its
    parent's threads, makes its own. Its workers never wait on it: a split called from
    a task of another (``in_parallel``) runs on the task's thread."""
    with _POOL_LOCK:
        if _POOL["workers"] < workers or _POOL["pid"] != os.getpid():
            if _POOL["executor"] is not None and _POOL["pid"] == os.getpid():
                _POOL["executor"].shutdown(wait=False)
            _POOL.update(executor=ThreadPoolExecutor(workers, "invarax-worker"),
                         workers=workers, pid=os.getpid())
        return _POOL["executor"]


def in_parallel(tasks) -> None:
    """Run the callables ``tasks`` at once: the first on this thread, the others on the
    worker pool; return when all are done (an error of any is raised). Called from inside
    one of these tasks (a kernel called by a fusion group's chunk), it runs them in turn on
    this thread: a task waiting on the pool it occupies would wait forever."""
    if len(tasks) == 1 or in_parallel_task():
        for task in tasks:
            task()
        return
    pool = worker_pool(len(tasks) - 1)
    futures = [pool.submit(_as_parallel_task, task) for task in tasks[1:]]
    try:
        _as_parallel_task(tasks[0])
    finally:
        for f in futures:
            f.result()


def in_parallel_task() -> bool:
    """Whether this thread is running a task of ``in_parallel`` (a kernel called there runs
    on this thread alone)."""
    return getattr(_local, "in_parallel", False)


def _as_parallel_task(task) -> None:
    previous = in_parallel_task()
    _local.in_parallel = True
    try:
        task()
    finally:
        _local.in_parallel = previous


def _fresh_lock() -> None:
    """In a forked child: a new pool lock (a parent's thread may have held it at the fork)."""
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_lock)


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


def cache_root() -> str:
    """Where invarax keeps what it compiles (native loops, GPU kernels):
    ``$INVARAX_CACHE_DIR``, else ``~/.cache/invarax``."""
    return os.environ.get("INVARAX_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "invarax")


@functools.cache
def c_entry(name: str) -> int:
    """The address of the compiled kernels' C function ``name``, for generated C code to call
    (native fusion groups): the very code the kernels' Python functions run, so the same bits.

    Example:
        >>> c_entry("elementary") > 0
        True
    """
    return ctypes.cast(getattr(ctypes.CDLL(_native.__file__), name), ctypes.c_void_p).value

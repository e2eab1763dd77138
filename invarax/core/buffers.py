"""One pool of spare array buffers, handed out again only once no live value can reach them.

Freshly allocated memory is mapped page by page on first touch, which costs about as much
as writing it: malloc maps every block over 128 KiB anew, so a transformer's 4 MB
activations, a scan's stacked residuals (the LSTM benchmark's 14 x 3.2 MB per call), an
MPI collective's gathered stack or a fusion group's scratch block would pay their page
faults at every call. So every buffer reuse across items, calls and threads goes through
this one pool:

- the compiled program (``compiler/lower.py``) writes an item's output into a ``take``-n
  buffer and ``give``-s back each value that dies without its buffer being lent on;
- a fusion group (``compiler/fusion.py``) takes its scratch block for one run
  (``take_block``: 64-byte aligned, so each scratch buffer starts on a cache line) and
  gives it back;
- ``scan`` (its stacked ys) and the MPI transport (its gathered stack) give their result
  back as they return it: the pool hands it out again once its holder has dropped it.

The rule that keeps every bit: ``take`` hands out a pooled buffer only when the pool
holds the only reference to it. ``give`` accepts only arrays that own their memory, so
every view of one refers to it and counts, and ``take`` removes the buffer from the pool,
so its new owner is never shared with it; an owner may therefore give a buffer it still
holds, as ``scan`` does. The pool never holds a taken buffer, so an output a caller
later donates is still lendable (``jit`` checks its references too).

One policy: a buffer is keyed by its shape and dtype; only C-contiguous ones of at least
``MIN_BYTES`` are kept (smaller ones come from the heap, already resident), at most
``PER_KEY`` per key and ``MAX_BYTES`` in all (to make room, unreferenced buffers of other
keys are dropped, the oldest key first); one lock guards it; a forked child starts with
an empty pool and a new lock; ``invarax.clear_caches()`` empties it (``clear``).
"""

from __future__ import annotations

import os
import threading
from sys import getrefcount

import numpy as np

MIN_BYTES = 1 << 16
PER_KEY = 32
MAX_BYTES = 1 << 30
ALIGN = 64  # bytes: a cache line

# (shape, dtype) -> the kept buffers, most recently given last (``take`` looks there
# first: a buffer given by a program that then deletes it is free). A key emptied to make
# room is removed, so it is the newest when given again.
_pool: dict = {}
_bytes = [0]
_lock = threading.Lock()
_UINT8 = np.dtype(np.uint8)


def take(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape`` and ``dtype`` that no live value
    references: a pooled one, else a new one.

    Arguments:
        shape: a tuple of ints (a list would miss the pool's key).
        dtype: a ``np.dtype`` (a scalar type would miss the pool's key).

    Returns:
        The array, which its caller owns: the pool keeps no reference to it.

    Example:
        >>> x = take((2, 3), np.dtype(np.float32))
        >>> x.shape, x.flags.c_contiguous
        ((2, 3), True)
    """
    arrays = _pool.get((shape, dtype))
    if arrays:  # looked up without the lock (the common miss); emptied meanwhile: seen below
        x = None
        _lock.acquire()  # not ``with``, which costs twice as much: this runs per item
        try:
            i = len(arrays) - 1
            while i >= 0 and getrefcount(arrays[i]) != 2:  # the list's and the argument
                i -= 1
            if i >= 0:
                x = arrays.pop(i)
                _bytes[0] -= x.nbytes
        finally:
            _lock.release()
        if x is not None:
            if not x.flags.writeable:  # an invarax Array held it, read-only
                x.flags.writeable = True
            return x
    return np.empty(shape, dtype)


def give(x: np.ndarray) -> None:
    """Keep ``x`` for a later ``take``, which hands it out once nothing else refers to it.

    ``x`` must be a buffer that its owner will not write again (it may still read it, and
    pass it on). A view, a non-C-contiguous or small array, or one beyond the limits, is
    not kept.

    Example:
        >>> x = take((1 << 16,), np.dtype(np.float32))
        >>> give(x)
        >>> take((1 << 16,), np.dtype(np.float32)) is x  # ``x`` still refers to it
        False
        >>> address = x.ctypes.data
        >>> del x  # now nothing does
        >>> take((1 << 16,), np.dtype(np.float32)).ctypes.data == address
        True
    """
    nbytes = x.nbytes
    if x.base is not None or nbytes < MIN_BYTES or not x.flags.c_contiguous:
        return
    key = (x.shape, x.dtype)
    _lock.acquire()  # as in ``take``
    try:
        arrays = _pool.get(key)
        if arrays is None:
            arrays = _pool[key] = []
        if len(arrays) < PER_KEY and (_bytes[0] + nbytes <= MAX_BYTES
                                      or _make_room(nbytes, key)):
            arrays.append(x)
            _bytes[0] += nbytes
    finally:
        _lock.release()


def _make_room(nbytes: int, keep) -> bool:
    """Drop unreferenced buffers of keys other than ``keep``, the oldest key first, until
    ``nbytes`` more fit; whether they do. Called with the lock held."""
    for key in list(_pool):
        if key == keep:
            continue
        arrays = _pool[key]
        for i in range(len(arrays) - 1, -1, -1):
            if getrefcount(arrays[i]) == 2:
                _bytes[0] -= arrays.pop(i).nbytes
        if not arrays:
            del _pool[key]
        if _bytes[0] + nbytes <= MAX_BYTES:
            return True
    return False


def take_block(nbytes: int) -> np.ndarray:
    """An uninitialised ``ALIGN``-byte aligned uint8 block of ``nbytes`` bytes: a view of
    a ``take``-n array, which its ``.base`` is (to ``give`` back).

    Example:
        >>> block = take_block(1000)
        >>> block.size, block.ctypes.data % ALIGN, block.base.size
        (1000, 0, 1064)
    """
    raw = take((nbytes + ALIGN,), _UINT8)
    start = -raw.__array_interface__["data"][0] % ALIGN
    return raw[start:start + nbytes]


def clear() -> None:
    """Drop the pooled buffers (``invarax.clear_caches`` calls it); those handed out are
    their owners'."""
    with _lock:
        for arrays in _pool.values():  # emptied too: a ``take`` may have looked one up
            arrays.clear()
        _pool.clear()
        _bytes[0] = 0


def _after_fork() -> None:
    """In a forked child: a new lock (a parent's thread may have held it at the fork) and
    an empty pool (its pages are the parent's until written, so they would fault anyway)."""
    global _lock
    _lock = threading.Lock()
    clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)

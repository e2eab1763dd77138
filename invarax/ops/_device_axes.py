"""Axes mapped over devices by ``pmap``, as the collectives see them.

While ``pmap`` traces its body, its axis name is bound here with the axis's size (so the
collectives' abstract evaluation knows it); while a device runs the body, the name is
bound with that device's index and the ``Exchange`` where the devices meet. Bindings are
per thread: each device runs on a thread of its own.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

_local = threading.local()


class DeviceAxis:
    """A named axis over ``size`` devices. While a device runs: ``index``, its position on the
    axis (over every process); ``exchange`` and ``slot``, where it meets this process's
    other devices and its place there."""

    def __init__(self, name, size: int, index: int | None = None, exchange=None,
                 slot: int | None = None):
        self.name = name
        self.size = size
        self.index = index
        self.exchange = exchange
        self.slot = slot


def _axes() -> dict:
    axes = getattr(_local, "axes", None)
    if axes is None:
        axes = _local.axes = {}
    return axes


@contextmanager
def bound(axis: DeviceAxis):
    """Bind ``axis.name`` to ``axis`` in this thread for the duration of the block."""
    axes = _axes()
    if axis.name in axes:
        raise ValueError(
            f"pmap axis name {axis.name!r} is already bound by an enclosing pmap; nested pmaps "
            "need distinct axis names (and invarax runs one pmap level on devices: map the "
            "inner level with vmap)"
        )
    axes[axis.name] = axis
    try:
        yield axis
    finally:
        del axes[axis.name]


def lookup(name) -> DeviceAxis | None:
    """The device axis bound to ``name`` in this thread, or None."""
    return _axes().get(name)


class Exchange:
    """Where the local devices of one ``pmap`` call meet for each collective.

    ``gather(i, value)`` returns every device's value stacked along a new leading axis in
    global device order: the local devices' values, then (with a ``transport``, over MPI)
    those of every process, in process order. One barrier per collective: its action, run
    by one thread once every local device has arrived, stacks the values. The stack is
    shared by the devices: read it, never write into it.
    """

    def __init__(self, local_size: int, transport=None, timeout: float | None = None):
        self._slots = [None] * local_size
        self._transport = transport
        self._gathered = None
        self._barrier = threading.Barrier(local_size, action=self._assemble, timeout=timeout)

    def _assemble(self):
        self._gathered = None  # every device is done with the last stack: let it go
        slots = self._slots  # one device: a view, no copy
        local = slots[0][None] if len(slots) == 1 else np.stack(slots)
        self._gathered = local if self._transport is None else self._transport.allgather(local)

    def gather(self, local_index: int, value) -> np.ndarray:
        self._slots[local_index] = value
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise DeviceFailure(
                "a collective was abandoned because another device of the same pmap call "
                "failed (its error is the one raised by pmap)"
            ) from None
        return self._gathered

    def abort(self):
        """Release every device waiting here (another device failed)."""
        self._barrier.abort()

    def close(self):
        """Drop the last stack and the devices' values once the pmap call is done (the
        barrier's action refers back to the exchange, so only the garbage collector would
        free them otherwise, and the pooled buffer of an MPI gather could not be reused)."""
        self._gathered = None
        self._slots = [None] * len(self._slots)


class DeviceFailure(RuntimeError):
    """Raised on a device whose collective cannot complete because another device failed."""

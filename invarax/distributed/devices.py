"""CPU devices: each a worker thread of this process; with MPI, the devices of every process.

A process has ``config.jax_num_cpu_devices`` local devices (JAX's flag; else the count in
``XLA_FLAGS=--xla_force_host_platform_device_count=N``; else 1), fixed when devices are
first used. Each runs the work ``pmap`` gives it on a thread of its own (the kernels release
the GIL), with ``CPUs // devices`` kernel threads, so N devices use N cores. After
``invarax.distributed.initialize()`` the global devices are those of every process, in
process order: process ``p`` owns the ids ``p * L, ..., p * L + L - 1`` (``L`` local
devices each).

Memory is the host's, shared by every local device, so placing an array on devices
(``device_put``, in ``_placement``) records where it lives and copies nothing.
"""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..core.array import Array
from ..core.config import config
from ..core.pytree import tree_map
from ..kernels import _support


class Device:
    """Base class of invarax's devices (JAX's ``jax.Device``)."""


class CpuDevice(Device):
    """One CPU device: an id, the process that owns it, and (if local) a worker thread."""

    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id: int, process_index: int, local_id: int):
        self.id = id
        self.process_index = process_index
        self.local_id = local_id
        self._pool = None
        self._lock = threading.Lock()

    def _submit(self, fn, *args):
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"invarax-device-{self.id}")
        return self._pool.submit(fn, *args)

    @property
    def local(self) -> bool:
        """Whether this process owns the device."""
        return self.process_index == _registry.process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})"


class _Registry:
    """The devices, made on first use; ``distributed.initialize`` widens them to every process."""

    def __init__(self):
        self._lock = threading.Lock()
        self.local = None
        self.all = None
        self.process_index = 0
        self.process_count = 1

    def ensure(self):
        with self._lock:
            if self.local is None:
                self._make(_requested_count(), 0, 1)
        return self

    def _make(self, count, process_index, process_count):
        self.process_index, self.process_count = process_index, process_count
        self.all = [CpuDevice(p * count + j, p, j) for p in range(process_count)
                    for j in range(count)]
        self.local = self.all[process_index * count:(process_index + 1) * count]

    def widen(self, process_index: int, process_count: int):
        """Make this process one of ``process_count`` (each with the same local count)."""
        with self._lock:
            count = len(self.local) if self.local is not None else _requested_count()
            self._make(count, process_index, process_count)


_registry = _Registry()


def _requested_count() -> int:
    flags = os.environ.get("XLA_FLAGS", "")
    match = re.search(r"--xla_force_host_platform_device_count=(\S+)", flags)
    count = config.jax_num_cpu_devices
    if count == 1 and match:
        try:
            count = int(match.group(1))
        except ValueError:
            raise ValueError(
                f"XLA_FLAGS has --xla_force_host_platform_device_count={match.group(1)}; "
                "it must be a positive integer"
            ) from None
        if count < 1:
            raise ValueError(f"XLA_FLAGS asks for {count} CPU devices; it must be at least 1")
    return count


def _refuse_late_change(value):
    if _registry.local is not None and value != len(_registry.local):
        raise RuntimeError(
            f"jax_num_cpu_devices can only be set before devices are first used: this process "
            f"already has {len(_registry.local)} device(s). Call "
            f"invarax.config.update('jax_num_cpu_devices', {value}) at the start of the "
            "program, before devices(), pmap or any other use of devices."
        )


config.def_validator("jax_num_cpu_devices", _refuse_late_change)
config.def_validator("jax_platform_name", lambda value: _check_backend(str(value)))


def devices(backend=None) -> list:
    """Every device, of every process (``[CpuDevice(id=0), ...]``).

    Example:
        >>> invarax.devices()[0]
        CpuDevice(id=0)
    """
    _check_backend(backend)
    return list(_registry.ensure().all)


def local_devices(process_index=None, backend=None) -> list:
    """The devices of this process (or of process ``process_index``)."""
    _check_backend(backend)
    registry = _registry.ensure()
    if process_index is None:
        return list(registry.local)
    return [d for d in registry.all if d.process_index == process_index]


def device_count(backend=None) -> int:
    """The number of devices of every process."""
    return len(devices(backend))


def local_device_count(backend=None) -> int:
    """The number of devices of this process."""
    return len(local_devices(backend=backend))


def process_index(backend=None) -> int:
    """This process's index among the processes of the run (0 without MPI)."""
    _check_backend(backend)
    return _registry.ensure().process_index


def process_count(backend=None) -> int:
    """The number of processes of the run (1 without MPI)."""
    _check_backend(backend)
    return _registry.ensure().process_count


def default_device():
    """The device arrays live on unless placed elsewhere: this process's first."""
    return _registry.ensure().local[0]


def _check_backend(backend):
    if backend not in (None, "cpu"):
        raise ValueError(f"unknown backend {backend!r}: invarax has the 'cpu' backend only")


def kernel_threads_per_device(count: int) -> int:
    """Kernel threads for each of ``count`` devices working at once: the CPUs shared out."""
    return max(1, _support.num_threads() // count)


def block_until_ready(x):
    """Wait for every array in the pytree ``x`` and return ``x`` (CPU results are always ready).

    Example:
        >>> invarax.block_until_ready({"a": jnp.ones(2)})["a"].shape
        (2,)
    """
    return tree_map(lambda leaf: leaf.block_until_ready() if isinstance(leaf, Array) else leaf, x)


def device_get(x):
    """The pytree ``x`` with its arrays converted to NumPy arrays.

    Example:
        >>> type(invarax.device_get(jnp.ones(2))).__name__
        'ndarray'
    """
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)

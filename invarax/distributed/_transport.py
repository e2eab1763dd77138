"""The MPI transport of the collectives, and ``initialize``/``shutdown``."""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from ..core import buffers
from ..kernels import _support
from . import devices as _devices

TIMEOUT_ENV = "INVARAX_COLLECTIVE_TIMEOUT"  # seconds a collective waits for the other processes
DEFAULT_TIMEOUT = 300.0
SPIN = 0.01  # seconds a collective polls without pausing
ABORT_GRACE = 0.5  # seconds between printing a failure and aborting the run
_BYTES = np.dtype(np.uint8)
_LAUNCH_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")

_current = None


def current():
    """The transport of this run (None in a run of one process)."""
    return _current


class CollectiveTimeout(RuntimeError):
    """Another process did not reach a collective in time (it died, or diverged)."""


class MpiTransport:
    """Gathers the processes' stacked local values, in process order, over MPI.

    When every process of the run is on one machine (``node``: the run's communicator of
    them, in the same order), a gather goes through a shared-memory window instead of
    MPI's copies: each process writes its bytes into its own slot, all wait at one barrier,
    and each reads every slot. Two slots per process alternate between calls: a process that
    has passed a call's barrier writes its next gather into the other slot while the others
    may still be reading this call's; it writes this call's slot again only after the next
    barrier, which each process reaches once it is done reading."""

    def __init__(self, comm, timeout: float, node=None):
        self.comm = comm
        self.timeout = timeout
        self.node = node
        self._window, self._slots, self._slot, self._calls = None, [], 0, 0

    def allgather(self, local: np.ndarray) -> np.ndarray:
        """The processes' stacks of local values, concatenated in process order (in a
        pooled buffer, given back to ``core.buffers`` for when its reader drops it)."""
        local = np.ascontiguousarray(local)
        n = local.nbytes
        out = buffers.take((self.comm.size * n,), _BYTES)
        mine = local.reshape(-1).view(np.uint8)  # raw bytes: every dtype crosses unchanged
        if self.node is None:
            self._wait(self.comm.Iallgather(mine, out))
        else:
            for rank, theirs in enumerate(self.allgather_views(n, mine)):
                out[rank * n:(rank + 1) * n] = theirs
        buffers.give(out)
        return out.view(local.dtype).reshape((-1, *local.shape[1:]))

    def allgather_views(self, n: int, write) -> list:
        """Every process's ``n`` bytes, in process order: this process's are written by
        ``write`` (into a writable ``uint8`` array of ``n`` bytes, its slot of the shared
        window, or an array whose ``[...]`` assignment fills it). The arrays returned are
        read-only and may be the shared window itself: read them before this process's next
        gather (from its barrier on, the other processes may write over them)."""
        if self.node is None:
            mine, out = np.empty(n, np.uint8), np.empty(self.comm.size * n, np.uint8)
            _fill(mine, write)
            self._wait(self.comm.Iallgather(mine, out))
            return list(out.reshape(self.comm.size, n))
        if n > self._slot or self._window is None:
            self._grow(n)
        start = self._calls % 2 * self._slot
        self._calls += 1
        _fill(self._slots[self.node.rank][start:start + n], write)
        self._window.Sync()
        self._wait(self.node.Ibarrier())  # every process has written its slot
        self._window.Sync()
        return [slots[start:start + n] for slots in self._slots]

    def _grow(self, n: int):
        """A window with slots of at least ``n`` bytes (made by every process together:
        they all gather the same sizes in the same order), the old one freed: every process
        is at this gather, so none still reads a view of the last one."""
        from mpi4py import MPI

        self._wait(self.node.Ibarrier())
        self.close()
        self._slot = -(-max(n, 2 * self._slot, 1 << 16) // 64) * 64
        self._window = MPI.Win.Allocate_shared(2 * self._slot, 1, comm=self.node)
        self._window.Lock_all(MPI.MODE_NOCHECK)
        self._slots = [np.frombuffer(self._window.Shared_query(rank)[0], np.uint8)
                       for rank in range(self.node.size)]
        for rank, slots in enumerate(self._slots):
            slots.flags.writeable = rank == self.node.rank  # the others' slots: read only

    def close(self):
        """Free the shared window (every process together); the slot size is kept."""
        if self._window is not None:
            self._slots = []
            self._window.Unlock_all()
            self._window.Free()
            self._window = None

    def _wait(self, request):
        """Wait for ``request``: polling without pause for ``SPIN`` seconds (a collective
        between busy processes completes in well under that, and a sleeping process can
        lose its core for a whole time slice), then with growing pauses, until the
        timeout."""
        start = time.monotonic()
        while not request.Test():
            waited = time.monotonic() - start
            if waited > self.timeout:
                raise CollectiveTimeout(
                    f"process {self.comm.rank} of {self.comm.size} waited {self.timeout:g} s "
                    "for the other processes at a collective: one of them has died or is "
                    f"running another program. Set {TIMEOUT_ENV} (seconds) to wait longer."
                )
            if waited > SPIN:
                time.sleep(min(1e-3, waited / 100))


def _fill(buffer: np.ndarray, write):
    if isinstance(write, np.ndarray):
        buffer[...] = write
    else:
        write(buffer)


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, **kwargs):
    """Join the processes of an MPI launch (``mpiexec -n P python train.py``) into one run.

    Arguments:
        coordinator_address, num_processes, process_id, local_device_ids: JAX's arguments;
            MPI gives all of them, so each must be None or agree with the launch.

    Raises:
        RuntimeError: outside an MPI launch, or when called twice.
        ImportError: without mpi4py (``pip install 'invarax[mpi]'``).

    Example (in a script started by ``mpiexec -n 2``)::

        invarax.distributed.initialize()
        invarax.process_count()   # 2
    """
    global _current
    if _current is not None:
        raise RuntimeError("invarax.distributed.initialize() was already called in this process")
    if local_device_ids is not None:
        raise ValueError("initialize(local_device_ids=...) is not supported: set the local "
                         "device count with config.update('jax_num_cpu_devices', N)")
    if not any(v in os.environ for v in _LAUNCH_VARS):
        raise RuntimeError(
            "invarax.distributed.initialize() found no MPI launch: start every process with "
            "mpiexec, e.g. `mpiexec -n 2 python train.py` (on a cluster, `mpiexec -hosts "
            "node1,node2 -n 4 python train.py`), after `pip install 'invarax[mpi]'`"
        )
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError(
            "invarax.distributed needs mpi4py: pip install 'invarax[mpi]' (mpi4py and the "
            "MPICH wheel)"
        ) from None
    comm = MPI.COMM_WORLD
    for name, given, actual in (("num_processes", num_processes, comm.size),
                                ("process_id", process_id, comm.rank)):
        if given is not None and given != actual:
            raise ValueError(f"initialize({name}={given}) disagrees with the MPI launch, "
                             f"which gives {actual}")
    count = _devices.local_device_count()
    counts = comm.allgather(count)
    if len(set(counts)) != 1:
        raise RuntimeError(
            f"the processes have different local device counts {counts}: give every process "
            "the same config.update('jax_num_cpu_devices', N)"
        )
    _devices._registry.widen(comm.rank, comm.size)
    # The processes of this run on this machine, in the run's order.
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    _support.share_cpus(node.size)
    if node.size != comm.size:
        node.Free()
        node = None
    _current = MpiTransport(comm, float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)), node)
    sys.excepthook = _aborting_hook(sys.excepthook, comm)
    signal.signal(signal.SIGTERM, _terminated(comm.rank, comm.size))


def _terminated(rank, size):
    """What a process says when the launcher ends it (another process failed or died)."""

    def handler(signum, frame):
        sys.stderr.write(
            f"invarax: process {rank} of {size} was terminated by the MPI launcher: another "
            "process of the run failed or died (its error, if any, is printed above)\n")
        sys.stderr.flush()
        os._exit(128 + signum)

    return handler


def _aborting_hook(previous, comm):
    """An uncaught error in one process ends every process of the run (MPI_Abort), after its
    traceback is printed: the others would otherwise wait for it at their next collective
    or at exit."""

    def hook(kind, value, traceback):
        sys.stderr.write(f"invarax: process {comm.rank} of {comm.size} failed: "
                         f"{kind.__name__}: {value}\n")
        previous(kind, value, traceback)
        sys.stderr.flush()
        time.sleep(ABORT_GRACE)  # let the launcher forward the message before the abort
        comm.Abort(1)

    return hook


def is_initialized() -> bool:
    """Whether ``initialize()`` has joined this process to a multi-process run."""
    return _current is not None


def shutdown():
    """Leave the multi-process run: wait for the others, then run as one process again."""
    global _current
    if _current is not None:
        _current.comm.Barrier()
        _current.close()
        _current = None
        _devices._registry.widen(0, 1)
        _support.share_cpus(1)

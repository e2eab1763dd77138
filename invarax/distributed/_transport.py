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
    """Gathers the processes' stacked local values, in process order, over MPI."""

    def __init__(self, comm, timeout: float):
        self.comm = comm
        self.timeout = timeout

    def allgather(self, local: np.ndarray) -> np.ndarray:
        """The processes' stacks of local values, concatenated in process order (in a
        pooled buffer, given back to ``core.buffers`` for when its reader drops it)."""
        local = np.ascontiguousarray(local)
        out = buffers.take((self.comm.size * local.nbytes,), _BYTES)
        # Raw bytes: every dtype (bool, float16, complex) crosses unchanged.
        request = self.comm.Iallgather(local.reshape(-1).view(np.uint8), out)
        self._wait(request)
        buffers.give(out)
        return out.view(local.dtype).reshape((-1, *local.shape[1:]))

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
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)  # the processes of this run on this machine
    _support.share_cpus(node.size)
    node.Free()
    _current = MpiTransport(comm, float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)))
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
        _current = None
        _devices._registry.widen(0, 1)
        _support.share_cpus(1)

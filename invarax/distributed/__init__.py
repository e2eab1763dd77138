"""``invarax.distributed``: several processes, each with its local devices, as one run.

``initialize()`` (JAX's name) after ``mpiexec -n P python train.py`` joins this process to
the others through MPI (``pip install 'invarax[mpi]'``: mpi4py and the MPICH wheel). Then
``invarax.devices()`` lists every process's devices, and the collectives of ``pmap``
cross processes: each gathers every device's value in global device order over MPI
(``Iallgather`` of raw buffers, never pickles) and reduces them with the canonical kernels,
so a run gives the same bits whatever its split into processes (N7, docs/distributed.md).
"""

from ._transport import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]

"""Devices: CPU devices, each a worker thread of this process (with MPI, the devices of
every process), and this process's CUDA GPUs where CuPy sees one.

A process has ``config.jax_num_cpu_devices`` local devices (JAX's flag; else the count in
``XLA_FLAGS=--xla_force_host_platform_device_count=N``; else 1), fixed when devices are
first used. Each runs the work ``pmap`` gives it on a thread of its own (the kernels release
the GIL), with ``CPUs // devices`` kernel threads, so N devices use N cores. After
``invarax.distributed.initialize()`` the global devices are those of every process, in
process order: process ``p`` owns the ids ``p * L, ..., p * L + L - 1`` (``L`` local
devices each).

Memory is the host's, shared by every local device, so placing an array on CPU devices
(``device_put``, in ``placement``) records where it lives and copies nothing.

GPUs are found on the first eager operation or the first use of devices: with CuPy and
NVRTC installed (``pip install 'invarax[cuda13]'``) and a CUDA device present, ``devices()``
lists ``CudaDevice(id=0), ...``, the default backend is ``"gpu"`` and arrays live in the
GPU's memory (``invarax/backends/cuda`` runs the operations there). ``JAX_PLATFORMS=cpu``
(or ``config.update("jax_platforms", "cpu")`` before the first operation) keeps
everything on the CPU.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..core import backends
from ..core.array import Array
from ..core.config import config
from ..core.pytree import tree_map
from ..kernels import _support, cuda, nvrtc


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


class CudaDevice(Device):
    """One CUDA GPU of this process (JAX's ``CudaDevice``): arrays placed on it, and the
    operations on them, live in its memory."""

    platform = "gpu"
    process_index = 0
    local = True

    def __init__(self, id: int):
        self.id = self.local_id = id
        self._cupy = cuda._cupy()
        self.device_kind = _device_name(self._cupy, id)

    def context(self):
        """A context manager making this GPU CuPy's current device (a new one each time, so
        nested and concurrent uses do not share it)."""
        return self._cupy.cuda.Device(self.id)

    def to_device(self, value: np.ndarray):
        """A copy of the host array ``value`` in this GPU's memory (a CuPy array)."""
        with self.context():
            return self._cupy.asarray(value)

    def to_host(self, buffer) -> np.ndarray:
        """A host copy of ``buffer`` (a CuPy array on this GPU), once it is computed."""
        with self.context():
            return buffer.get()

    def synchronize(self) -> None:
        """Wait for the work queued on this GPU."""
        self.context().synchronize()

    def __repr__(self):
        return f"CudaDevice(id={self.id})"


def _device_name(cupy, id: int) -> str:
    try:
        name = cupy.cuda.runtime.getDeviceProperties(id)["name"]
    except Exception:  # a CuPy without the call (or a stand-in): the generic name
        return "gpu"
    return name.decode() if isinstance(name, bytes) else str(name)


class _Registry:
    """The devices, made on first use; ``distributed.initialize`` widens them to every process."""

    def __init__(self):
        self._lock = threading.Lock()
        self.local = None
        self.all = None
        self.process_index = 0
        self.process_count = 1
        self.gpus = None  # this process's CudaDevices, once probed

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


#: The platforms ``jax_platforms`` / ``JAX_PLATFORMS`` may name (JAX's spellings).
_GPU_NAMES = ("cuda", "gpu")


def _platforms() -> list:
    """The platforms asked for, in order: ``jax_platforms``, else ``JAX_PLATFORMS``, else
    every platform present (an empty list)."""
    value = config.jax_platforms or os.environ.get("JAX_PLATFORMS", "")
    names = [p.strip().lower() for p in str(value).split(",") if p.strip()]
    unknown = [p for p in names if p not in ("cpu", *_GPU_NAMES)]
    if unknown:
        raise ValueError(f"unknown platform(s) {unknown} in jax_platforms={value!r}: invarax has "
                         "'cpu' and 'cuda' (or 'gpu')")
    return names


def _find_gpus() -> list:
    """This process's GPUs, unless the platforms asked for leave them out; a GPU asked for
    that cannot be used is an error, one merely present but unusable a warning."""
    names = _platforms()
    if names and not any(p in _GPU_NAMES for p in names):
        return []
    asked = any(p in _GPU_NAMES for p in names)
    try:
        count = cuda._cupy().cuda.runtime.getDeviceCount()
    except Exception as e:  # no CuPy, no driver or no device
        if asked:
            raise RuntimeError(f"jax_platforms asks for a GPU, but none can be used ({e}); "
                               "install CuPy for your CUDA (pip install 'invarax[cuda13]' or "
                               "'invarax[cuda12]'), or ask for 'cpu'") from e
        return []
    if count and not nvrtc.available():
        message = ("a CUDA GPU is present but NVRTC (cuda-bindings) is not installed, so "
                   "invarax cannot build its kernels: pip install 'invarax[cuda13]' (or "
                   "'invarax[cuda12]')")
        if asked:
            raise RuntimeError(message)
        warnings.warn(message + "; running on the CPU", RuntimeWarning, stacklevel=3)
        return []
    return [CudaDevice(i) for i in range(count)]


def _probe():
    """Find the GPUs (once) and return the runner that puts eager operations on them."""
    with _registry._lock:  # (the CPU devices are made when first used, not here)
        if _registry.gpus is None:
            _registry.gpus = _find_gpus()
    if _registry.gpus and "cuda" in backends.FACTORIES:
        return backends.FACTORIES["cuda"](_registry.gpus)
    return None


backends.PROBE = _probe


def _gpus() -> list:
    backends.runner()  # (probes once)
    return _registry.gpus or []


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
config.def_validator("jax_platform_name",
                     lambda value: _check_backend(str(value)) if value else None)


def _refuse_late_platforms(value):
    if _registry.gpus is not None:
        raise RuntimeError(
            "jax_platforms can only be set before the first operation: the devices are "
            f"already chosen ({_registry.gpus or 'CPU only'}). Set JAX_PLATFORMS in the "
            "environment, or call invarax.config.update('jax_platforms', ...) first thing.")


config.def_validator("jax_platforms", _refuse_late_platforms)


def devices(backend=None) -> list:
    """Every device of ``backend`` (``"cpu"``, ``"gpu"``; default: the default backend's),
    of every process: ``[CpuDevice(id=0), ...]``, or ``[CudaDevice(id=0), ...]`` where a
    GPU is used.

    Example:
        >>> invarax.devices("cpu")[0]
        CpuDevice(id=0)
    """
    if _check_backend(backend) == "gpu":
        return list(_gpus())
    return list(_registry.ensure().all)


def local_devices(process_index=None, backend=None) -> list:
    """The devices of this process (or of process ``process_index``)."""
    if _check_backend(backend) == "gpu":
        return list(_gpus()) if process_index in (None, 0) else []
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


_UNSET = object()


def default_device(device=_UNSET):
    """The device arrays live on unless placed elsewhere; with a device, a context manager
    making it the default inside a ``with`` block (JAX's ``jax.default_device``).

    Without ``jax_default_device`` set, it is this process's first GPU where one is used,
    else its first CPU device.

    Example:
        >>> invarax.default_device()
        CpuDevice(id=0)
        >>> with invarax.default_device(invarax.devices("cpu")[0]):
        ...     jnp.ones(2).devices() == {invarax.devices("cpu")[0]}
        True
    """
    if device is not _UNSET:
        return config.flag("jax_default_device", device)
    chosen = config.jax_default_device
    if chosen is not None:
        return chosen
    gpus = _gpus()
    if gpus and config.jax_platform_name != "cpu":
        return gpus[0]
    return _registry.ensure().local[0]


def _check_default_device(device):
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"jax_default_device must be a device (one of invarax.devices()) or "
                        f"None, got {device!r}")


config.def_validator("jax_default_device", _check_default_device)


def default_backend() -> str:
    """The platform computations run on unless placed elsewhere: ``"gpu"`` where a GPU is
    used, else ``"cpu"``.

    Example:
        >>> invarax.default_backend()
        'cpu'
    """
    return default_device().platform


def _check_backend(backend) -> str:
    """The platform ``backend`` names (``"cpu"`` or ``"gpu"``; None: the default one)."""
    if backend is None:
        return default_backend()
    name = str(getattr(backend, "platform", backend)).lower()
    if name == "cpu":
        return "cpu"
    if name in _GPU_NAMES:
        if not _gpus():
            raise RuntimeError(
                f"Unknown backend: {backend!r} requested, but no GPU is present or usable "
                "here (platforms present: cpu). Install CuPy and NVRTC for your CUDA "
                "(pip install 'invarax[cuda13]') on a machine with an NVIDIA GPU, or use "
                "backend='cpu'.")
        return "gpu"
    raise ValueError(f"unknown backend {backend!r}: invarax has 'cpu' and 'gpu' ('cuda')")


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

"""What a verification report records about the machine and the software it ran on."""

from __future__ import annotations

import os
import platform
import sys

import numpy as np

from ..distributed.devices import local_device_count
from ..kernels import _isa, _support

#: The CPU features that choose code paths: the kernels' dispatch levels and NumPy's loops.
FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512vl", "avx512bw",
         "asimd", "sve", "sve2")


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (empty where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as file:
            for line in file:
                if not line.strip():
                    if fields:
                        break
                    continue
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def _blas() -> str:
    """The name and version of the BLAS NumPy links (which no float result comes from)."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '?')}"
    except Exception:  # older NumPy: show_config has no dicts
        return "unknown"


def environment() -> dict:
    """The versions, CPU and settings a battery ran with.

    Returns:
        A dict of strings and ints: ``invarax``, ``numpy``, ``python``, ``platform``,
        ``cpu`` (the model), ``cpu_flags`` (those of ``FLAGS`` the CPU has), ``cpus`` (usable
        by this process), ``dispatch_level`` (the kernels' instruction set in use),
        ``INVARAX_MAX_ISA``, ``blas`` and ``OPENBLAS_CORETYPE`` (NumPy's BLAS and its kernel
        choice, recorded to show that they change nothing), ``local_devices``.

    Example:
        >>> environment()["dispatch_level"] in ("scalar", "avx2", "avx512")
        True
    """
    info = _cpuinfo()
    present = set((info.get("flags") or info.get("Features") or "").split())
    package = sys.modules.get("invarax")  # imported by now: this runs when verify() is called
    return {
        "invarax": getattr(package, "__version__", "unknown"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpu": info.get("model name") or platform.processor() or "unknown",
        "cpu_flags": [flag for flag in FLAGS if flag in present],
        "cpus": _support._available(),
        "dispatch_level": _isa.current_level(),
        "INVARAX_MAX_ISA": os.environ.get(_isa.ENV, ""),
        "blas": _blas(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", ""),
        "local_devices": local_device_count(),
    }


def describe(env: dict) -> list[str]:
    """A report's environment as a few lines of text."""
    flags = " ".join(env.get("cpu_flags", [])) or "no flags read"
    cap = env.get("INVARAX_MAX_ISA") or "unset"
    coretype = env.get("OPENBLAS_CORETYPE") or "unset"
    return [
        f"invarax {env.get('invarax')}, numpy {env.get('numpy')}, python {env.get('python')}, "
        f"{env.get('platform')}",
        f"cpu: {env.get('cpu')} ({flags}), {env.get('cpus')} usable CPUs",
        f"kernels' dispatch level: {env.get('dispatch_level')} (INVARAX_MAX_ISA {cap}); "
        f"NumPy's BLAS: {env.get('blas')} (OPENBLAS_CORETYPE {coretype}; no float result "
        "comes from it)",
        f"local devices: {env.get('local_devices')}",
    ]

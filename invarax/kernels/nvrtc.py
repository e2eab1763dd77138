"""GPU kernels from the CPU's C headers: compiling device sources to PTX with NVRTC.

The device sources (``csrc/device/*.cu``) include the same headers as the CPU kernels
(``csrc/``: the elementary functions, the canonical orders of ``csrc/device/order.h``), so
one source fixes the bits on both. NVRTC compiles them with ``OPTIONS``: no contraction of
``a * b + c`` into an FMA (every FMA is one the source writes), subnormals kept (no flush to
zero), IEEE division and square root, no fast math. Only NVRTC itself is used, through
``cuda.bindings`` (``pip install 'invarax[cuda13]'``; it needs no GPU): CuPy's
``RawModule`` appends ``-ftz=true`` after the caller's options, which would flush
subnormals.

PTX is cached on disk (``$INVARAX_CACHE_DIR/ptx``, else ``~/.cache/invarax/ptx``), keyed by
the source, every header it may include, the options, the target and NVRTC's version.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from pathlib import Path

from ._support import cache_root

CSRC = Path(__file__).parent / "csrc"
DEVICE = CSRC / "device"

#: NVRTC's options for every device source: the contract's arithmetic (docs/gpu.md).
OPTIONS = ("--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true",
           "-default-device", "-std=c++17")

#: The virtual architecture PTX is written for by default (Hopper: H100, H200).
ARCH = "compute_90"


class NvrtcError(RuntimeError):
    """NVRTC is missing, or a device source did not compile."""


@functools.cache
def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise NvrtcError(
            "compiling GPU kernels needs NVRTC: pip install 'invarax[cuda13]' (or "
            "'invarax[cuda12]' for a CUDA 12 driver)") from e
    return nvrtc


def available() -> bool:
    """Whether NVRTC can be loaded (no GPU is needed to compile)."""
    try:
        return _check(_nvrtc().nvrtcVersion())[0] > 0
    except (NvrtcError, OSError, RuntimeError):
        return False


def version() -> tuple:
    """NVRTC's ``(major, minor)``."""
    return tuple(_check(_nvrtc().nvrtcVersion()))


def _check(result):
    err, *values = result
    if err != _nvrtc().nvrtcResult.NVRTC_SUCCESS:
        raise NvrtcError(f"NVRTC failed: {err}")
    return values


def sources() -> list:
    """The names of the device sources (``csrc/device/*.cu``)."""
    return sorted(p.name for p in DEVICE.glob("*.cu"))


def _headers() -> str:
    """Every header a device source may include, for the cache key."""
    paths = sorted([*CSRC.glob("*.h"), *DEVICE.glob("*.h"), *(DEVICE / "stub").glob("*.h")])
    return "".join(f"{p.name}\0{p.read_text()}\0" for p in paths)


def compile_ptx(name: str, *, source: str | None = None, arch: str = ARCH,
                defines: tuple = ()) -> str:
    """The PTX of the device source ``name`` (``csrc/device/<name>``), or of the generated
    ``source`` named ``name``, compiled by NVRTC with ``OPTIONS`` for ``arch`` (or found in
    the cache).

    Arguments:
        name: a file of ``sources()``, e.g. ``"kernels.cu"``, or the name of ``source``.
        source: CUDA source text (a generated kernel), which may include the headers of
            ``csrc/`` and ``csrc/device/``; default: the file ``name``.
        arch: the virtual architecture, e.g. ``"compute_90"`` (Hopper) or ``"compute_80"``.
        defines: extra ``-D`` macro definitions, as ``"NAME=VALUE"`` strings.

    Returns:
        The PTX text.

    Raises:
        NvrtcError: NVRTC is not installed, or the source does not compile (with NVRTC's
            log).
    """
    if source is None:
        if name not in sources():
            raise ValueError(f"no device source {name!r}; the sources are {sources()}")
        source = (DEVICE / name).read_text()
    options = [*OPTIONS, f"-arch={arch}", f"-I{DEVICE / 'stub'}", f"-I{DEVICE}", f"-I{CSRC}",
               *(f"-D{d}" for d in defines)]
    key = hashlib.sha256("\0".join([name, source, _headers(), *options,
                                    repr(version())]).encode()).hexdigest()[:32]
    path = os.path.join(cache_root(), "ptx", f"{key}.ptx")
    if os.path.exists(path):
        with open(path) as f:
            return f.read()
    ptx = _compile(name, source, options)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(ptx)
    os.replace(tmp, path)  # atomic: a concurrent reader sees the whole file or none
    return ptx


def _compile(name: str, source: str, options: list) -> str:
    nvrtc = _nvrtc()
    (prog,) = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []))
    try:
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        # NVRTC writes into the buffers it is given: fresh bytearrays (``b" " * 1`` would be
        # CPython's shared one-byte object, and NVRTC's NUL would overwrite every b" ").
        (size,) = _check(nvrtc.nvrtcGetProgramLogSize(prog))
        log = bytearray(size)
        _check(nvrtc.nvrtcGetProgramLog(prog, log))
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise NvrtcError(f"{name} did not compile ({err}):\n"
                             f"{bytes(log).decode(errors='replace').rstrip(chr(0))}")
        (size,) = _check(nvrtc.nvrtcGetPTXSize(prog))
        ptx = bytearray(size)
        _check(nvrtc.nvrtcGetPTX(prog, ptx))
        return bytes(ptx).rstrip(b"\0").decode()
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


#: PTX instructions a float kernel must not hold: approximate or flushing arithmetic
#: (``.approx``, ``.ftz``), a float add, subtract or multiply without its rounding mode
#: (which ptxas may contract into an FMA), tensor-core products (``mma``, ``wgmma``) and
#: atomics (whose order of updates varies from run to run).
FORBIDDEN = re.compile(r"\.approx\b|\.ftz\b|\b(add|sub|mul)\.f(32|64)\b|\bw?mma\.|"
                       r"\batom\.|\bred\.")


def forbidden(ptx: str) -> list:
    """The lines of ``ptx`` holding an instruction of ``FORBIDDEN``."""
    return [line.strip() for line in ptx.splitlines()
            if not line.lstrip().startswith("//") and FORBIDDEN.search(line)]

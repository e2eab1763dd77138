"""Building native loops: compile C source with the C compiler that built Python's
extensions (``$CC``, else ``sysconfig``'s ``CC``), cache the shared object on disk and load
it with ``ctypes``.

The cache (``~/.cache/invarax/loops``, or ``$INVARAX_CACHE_DIR/loops``) is keyed by a hash of
the source, the compiler command and version, the flags and this CPU's model and features
(the code is built with ``-march=native``); an entry is written atomically (built in a
temporary directory beside it, then renamed), and one that does not load is built again.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shlex
import subprocess
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

from ..kernels._support import cache_root

# -O3 and this CPU's vector instructions (elementwise IEEE operations: the same bits on any
# width), no contraction into FMAs, no fast-math: -fno-trapping-math and -fno-math-errno
# only let GCC evaluate both sides of a select (if-conversion, to vectorize) and call
# sqrt without errno; neither changes a value. -frounding-math keeps GCC from moving a
# negation into a product or quotient (-(1 / x) into -1 / x), exact but for a NaN's sign,
# which NumPy's order gives. Without -march=native if it is refused.
FLAGS = ("-O3", "-ffp-contract=off", "-fno-trapping-math", "-fno-math-errno",
         "-frounding-math", "-fPIC", "-shared")
NATIVE_ARCH = ("-march=native",)


_LOCK = threading.Lock()
_LOADED = {}  # cache path -> the loaded function, or the reason it could not be built
_VERSIONS = {}  # compiler command -> its version line, or None if it does not run
COMPILED = []  # (cache path, seconds) of each compilation in this process (first-call cost)


def compiler() -> list:
    """The C compiler command: ``$CC``, else the one that built Python's extensions."""
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


def cache_dir() -> str:
    """Where compiled loops are kept: ``$INVARAX_CACHE_DIR/loops``, else
    ``~/.cache/invarax/loops``."""
    return os.path.join(cache_root(), "loops")


def _version(cc: list):
    key = " ".join(cc)
    if key not in _VERSIONS:
        try:
            out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30)
            _VERSIONS[key] = out.stdout.splitlines()[0] if out.returncode == 0 and \
                out.stdout else None
        except (OSError, subprocess.SubprocessError):
            _VERSIONS[key] = None
    return _VERSIONS[key]


def _headers(includes) -> list:
    """``-I`` options for the folders ``includes``, and the text of their headers (for the
    cache key: a changed header builds the source again)."""
    texts = [f"{p.name}\0{p.read_text()}" for d in includes for p in sorted(Path(d).glob("*.h"))]
    return [*(f"-I{d}" for d in includes), *texts]


def cache_path(source: str, includes=()):
    """The cache entry of ``source`` (including headers from the folders ``includes``) with
    this compiler, or None if no compiler runs."""
    cc = compiler()
    version = _version(cc)
    if version is None:
        return None
    key = hashlib.sha256("\0".join([source, " ".join(cc), version, *FLAGS, *NATIVE_ARCH,
                                    _cpu(), *_headers(includes)]).encode()).hexdigest()[:32]
    return os.path.join(cache_dir(), f"{key}.so")


@functools.cache
def _cpu() -> str:
    """This CPU's model and features (``-march=native`` code is built for them)."""
    try:
        with open("/proc/cpuinfo") as f:
            return "".join(sorted({line for line in f if line.startswith(("model name",
                                                                           "flags"))}))
    except OSError:
        return f"{platform.machine()} {platform.processor()}"


def load(source: str, symbol: str = "loop", includes=()):
    """The C function ``symbol`` of ``source``, compiled (or found in the cache) and loaded;
    None if no compiler runs or the compilation fails (the reason is kept in ``_LOADED``).
    ``includes``: folders whose headers the source includes."""
    path = cache_path(source, includes)
    if path is None:
        return None
    key = (path, symbol)  # one object may hold several functions
    with _LOCK:
        if key in _LOADED:
            fn = _LOADED[key]
            return None if isinstance(fn, str) else fn
        try:
            fn = _load_or_build(compiler(), path, source, symbol, includes)
        except (OSError, subprocess.SubprocessError) as e:
            fn = f"{type(e).__name__}: {e}"
        _LOADED[key] = fn
        return None if isinstance(fn, str) else fn


def loaded(source: str, symbol: str = "loop", includes=()):
    """The C function ``symbol`` of ``source`` if this process has already loaded it (as
    ``load`` would return it, without compiling or reading the disk), else None."""
    path = cache_path(source, includes)
    fn = _LOADED.get((path, symbol)) if path is not None else None
    return None if isinstance(fn, str) else fn


def _load_or_build(cc, path, source, symbol, includes):
    folder = os.path.dirname(path)
    if os.path.exists(path):
        try:
            return getattr(ctypes.CDLL(path), symbol)
        except (OSError, AttributeError):
            pass  # a corrupt or partial entry: build it again
    os.makedirs(folder, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src = os.path.join(tmp, "loop.c")
        with open(src, "w") as f:
            f.write(source)
        out = os.path.join(tmp, "loop.so")
        for arch in (NATIVE_ARCH, ()):
            done = subprocess.run([*cc, *FLAGS, *arch, *(f"-I{d}" for d in includes), "-o",
                                   out, src, "-lm"],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                break
        if done.returncode != 0:
            raise subprocess.SubprocessError(f"{cc[0]} failed: {done.stderr.strip()[:500]}")
        os.replace(out, path)  # atomic: a reader sees the old entry or the whole new one
    COMPILED.append((path, time.perf_counter() - start))
    return getattr(ctypes.CDLL(path), symbol)



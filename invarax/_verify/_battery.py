"""``invarax.verify()``: run the battery of the numerics contract and digest its results, at
one or several thread counts; compare two reports (made on two machines)."""

from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from ..core.config import config
from ..core.pytree import tree_leaves
from ..distributed.devices import default_device, devices
from ..kernels import _support
from . import _elementwise, _kernels, _linalg, _models
from ._environment import environment
from ._inputs import digest, overall

#: The version of the report's format (its keys), written into every report.
FORMAT = 1
#: The flags the battery runs with: the defaults, whatever the caller set (the opt-out of
#: invarax's elementary functions and JAX's older random streams give other bits).
DEFAULT_FLAGS = {"invarax_exact_elementary": True, "jax_threefry_partitionable": True}
_WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}


def workloads() -> list[tuple[str, bool, object]]:
    """Every workload of the battery: ``(name, runs with float64, function)`` in order."""
    out = (_elementwise.workloads() + _kernels.workloads() + _linalg.workloads()
           + _models.workloads())
    names = [name for name, _, _ in out]
    assert len(set(names)) == len(names), "two workloads of the battery share a name"
    return out


def _run_one(name: str, x64: bool, fn) -> str:
    with config.flag("jax_enable_x64", x64):
        results = fn()
    wide = any(np.asarray(leaf).dtype in _WIDE for leaf in tree_leaves(results))
    if wide != x64:  # a float64 workload that computed in float32, or the reverse
        raise RuntimeError(f"invarax verify: workload {name} {'lacks' if x64 else 'has'} "
                           "float64 results; this is a bug in the battery")
    return digest(results)


@contextlib.contextmanager
def _threads(count: int):
    """Kernels use ``count`` threads inside the block (``$INVARAX_NUM_THREADS``)."""
    previous = os.environ.get(_support.ENV)
    os.environ[_support.ENV] = str(count)
    try:
        yield
    finally:
        if previous is None:
            del os.environ[_support.ENV]
        else:
            os.environ[_support.ENV] = previous


def run_battery(only=None) -> dict[str, str]:
    """The digest of each workload (those whose names start with one of ``only``)."""
    chosen = [w for w in workloads() if not only or w[0].startswith(tuple(only))]
    if not chosen:
        raise ValueError(f"no workload of the battery starts with any of {list(only)}; the "
                         "families are elementary, arithmetic, activations, special, fused, "
                         "contractions, reductions, convolutions, windows, fft, random, "
                         "linalg, mlp_train_jit, mlp_train_vmap, conv_train, lstm_scan_grad, "
                         "collectives")
    with contextlib.ExitStack() as stack:
        for flag, value in DEFAULT_FLAGS.items():
            stack.enter_context(config.flag(flag, value))
        return {name: _run_one(name, x64, fn) for name, x64, fn in chosen}


def _thread_counts(threads) -> list[int]:
    if threads is None:
        return [_support.num_threads()]
    counts = [threads] if isinstance(threads, int) else list(threads)
    if not counts or any(not isinstance(c, int) or isinstance(c, bool) or c < 1
                         for c in counts):
        raise ValueError(f"verify: threads must be a positive int or a list of them, got "
                         f"{threads!r}; e.g. threads=[1, 2, 8]")
    return counts


def verify(threads=None, *, device: str = "cpu", only=None) -> dict:
    """Run the battery of the numerics contract and return one digest per workload.

    The battery covers every elementary function in float32 and float64 on a fixed spread of
    inputs (zeros of both signs, subnormals, infinities, NaN, huge and tiny values),
    contractions of many shapes, reductions, convolutions, FFTs, random streams, linear
    algebra, an MLP's train step under ``jit`` and under ``vmap``, a convolutional network's
    train step, an LSTM's ``scan`` gradient and collectives. The contract (N5, N6) says the
    digests are the same on every CPU and at every thread count: compare two machines'
    reports (``invarax verify --json`` and ``--compare`` on the command line).

    Arguments:
        threads: the kernel thread count, or a list of them to run the battery at each
            (default: the current count, ``$INVARAX_NUM_THREADS`` or the usable CPUs).
        device: ``"cpu"`` or ``"gpu"``: the battery runs with that backend's first device
            as the default device (every workload's digests must be the same on both).
        only: optionally, name prefixes: run only the workloads whose names start with one.

    Returns:
        A dict (JSON-ready): ``digests`` (workload -> 16 hex digits, from the first thread
        count), ``overall`` (the digest of them all), ``threads``, ``seconds`` (per thread
        count), ``threads_differ`` (workload -> {thread count: digest} where the thread
        counts disagree; empty when the contract holds), ``environment`` (versions, CPU,
        dispatch level) and ``format``.

    Example:
        >>> report = invarax.verify(threads=[1, 2], only=["linalg/cholesky"])
        >>> sorted(report["digests"])
        ['linalg/cholesky/float32', 'linalg/cholesky/float64']
        >>> report["threads_differ"]
        {}
    """
    target = _device(device)
    counts = _thread_counts(threads)
    only = [only] if isinstance(only, str) else only
    runs, seconds = {}, []
    for count in counts:
        start = time.perf_counter()
        with _threads(count), default_device(target):
            runs[count] = run_battery(only)
        seconds.append(round(time.perf_counter() - start, 2))
    first = runs[counts[0]]
    differ = {name: {str(c): runs[c][name] for c in counts} for name in first
              if len({runs[c][name] for c in counts}) > 1}
    return {"format": FORMAT, "digests": first, "overall": overall(first),
            "threads": counts, "seconds": seconds, "threads_differ": differ,
            "environment": environment()}


def _device(device: str):
    """The first device of the backend ``device`` names, with a clear error."""
    if str(device).lower() not in ("cpu", "gpu", "cuda"):
        raise ValueError(f"verify: unknown device {device!r}; use 'cpu' or 'gpu'")
    try:
        return devices(str(device).lower())[0]
    except RuntimeError as err:
        raise ValueError(f"verify: {err}") from None


def compare(ours: dict, theirs: dict) -> dict[str, tuple]:
    """The workloads whose digests differ between two reports of ``verify``.

    Arguments:
        ours, theirs: reports (as ``verify`` returns them, or read from their JSON files).

    Returns:
        ``{workload: (our digest, their digest)}``, ``None`` for a workload one report
        lacks; empty when the two agree.

    Example:
        >>> a = {"digests": {"x": "0011", "y": "2233"}}
        >>> compare(a, {"digests": {"x": "0011", "y": "ffff"}})
        {'y': ('2233', 'ffff')}
    """
    for report in (ours, theirs):
        if not isinstance(report, dict) or not isinstance(report.get("digests"), dict):
            raise ValueError("compare: a report has no digests: give what invarax.verify() "
                             "returns, or a file written by invarax verify --json")
    a, b = ours["digests"], theirs["digests"]
    return {name: (a.get(name), b.get(name)) for name in sorted(a.keys() | b.keys())
            if a.get(name) != b.get(name)}

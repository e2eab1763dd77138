"""Arrays whose shards live on several processes (after ``distributed.initialize()``).

Every process holds the whole, global value of such an array, and its
``addressable_shards`` are the blocks of its own devices. Building one from each
process's pieces (``make_array_from_callback``, ``make_array_from_single_device_arrays``,
``make_array_from_process_local_data``) gathers the pieces of every process over MPI
(one ``Iallgather`` of raw buffers: every process sends its devices' blocks, in the
sharding's device order); placing a value that each process computed
(``device_put``, ``jit``'s ``in_shardings``) checks, with a gathered digest, that every
process holds the same bits. Programs then run on the global values, so their results are
those of the unsharded program, bit for bit, for any split into processes (N7).
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import _transport
from .devices import _registry

_DIGEST = 32  # bytes of a sha256 digest


def spans_processes(sharding) -> bool:
    """Whether ``sharding`` places pieces on the devices of several processes: the same
    answer in every process, so every process takes part in the same collectives."""
    return sharding is not None and len({d.process_index for d in sharding.device_set}) > 1


def assemble(shape: tuple, dtype, sharding, blocks: dict) -> np.ndarray:
    """The global array of ``shape`` whose block on each device of ``sharding`` is
    ``blocks[device]`` (NumPy arrays of ``sharding.shard_shape(shape)``), given here for
    this process's devices only: the other processes' blocks are gathered."""
    indices = sharding.devices_indices_map(shape)
    out = np.empty(shape, dtype)
    transport = _transport.current()
    if transport is None or not spans_processes(sharding):
        if not blocks:
            raise ValueError(
                f"the devices of {sharding} are all another process's, so this process has "
                "no block of the array: build it in that process, or place it on a mesh "
                "that includes this process's devices")
        for device, block in blocks.items():
            out[indices[device]] = block
        return out
    by_process = {}
    for device in sharding._device_assignment:
        by_process.setdefault(device.process_index, []).append(device)
    width = max(len(v) for v in by_process.values())  # each process sends as many blocks
    mine = np.zeros((width, *sharding.shard_shape(shape)), dtype)
    for i, device in enumerate(by_process.get(_registry.process_index, ())):
        mine[i] = blocks[device]
    gathered = transport.allgather(mine)
    for process, devices_ in by_process.items():
        for i, device in enumerate(devices_):
            out[indices[device]] = gathered[process * width + i]
    return out


def check_same(value: np.ndarray, sharding, what: str) -> None:
    """Raise unless every process holds the same bits of ``value`` (the global value of an
    array to be placed with ``sharding``, which spans processes)."""
    transport = _transport.current()
    if transport is None or not spans_processes(sharding):
        return
    value = np.ascontiguousarray(value)
    digest = hashlib.sha256(repr((value.shape, value.dtype.str)).encode())
    digest.update(value.view(np.uint8).reshape(-1) if value.size else b"")
    mine = np.frombuffer(digest.digest(), np.uint8).reshape(1, _DIGEST)
    digests = np.array(transport.allgather(mine))
    differ = [p for p in range(len(digests)) if not np.array_equal(digests[p], digests[0])]
    if differ:
        raise ValueError(
            f"{what} is placed with {sharding}, whose devices span processes, so it must be "
            f"the same global value in every process, but processes {differ} hold other "
            f"values than process 0 (shape {value.shape}, dtype {value.dtype}). Compute it "
            "identically in every process, or build it from each process's own part with "
            "make_array_from_process_local_data (or make_array_from_callback)")


def local_blocks(local: np.ndarray, shape: tuple, sharding, what: str) -> dict:
    """Each of this process's devices' blocks, cut from ``local``: this process's data of
    the global array of ``shape``, i.e. the blocks its devices hold along each dimension,
    in order, side by side (``make_array_from_process_local_data``)."""
    mine = sharding.addressable_devices_indices_map(shape)
    starts = [sorted({_start(index[d]) for index in mine.values()}) for d in range(len(shape))]
    block = sharding.shard_shape(shape)
    want = tuple(len(s) * b for s, b in zip(starts, block, strict=True))
    if local.shape != want:
        raise ValueError(
            f"{what}: this process's data has shape {local.shape}, but its devices hold "
            f"{[len(s) for s in starts]} blocks of shape {block} along the dimensions of the "
            f"global array of shape {shape} placed with {sharding}, so its data must have "
            f"shape {want}. Pass this process's rows only (or the right global_shape)")
    out = {}
    for device, index in mine.items():
        out[device] = local[tuple(
            slice(s.index(_start(i)) * b, (s.index(_start(i)) + 1) * b)
            for i, s, b in zip(index, starts, block, strict=True))]
    return out


def infer_global_shape(local_shape: tuple, sharding) -> tuple:
    """The global shape whose blocks on this process's devices make ``local_shape``."""
    ndim = len(local_shape)
    probe = tuple(sharding.num_devices for _ in range(ndim))  # divisible by every split
    full = sharding.devices_indices_map(probe)
    mine = sharding.addressable_devices_indices_map(probe)
    shape = []
    for d in range(ndim):
        every = len({_start(index[d]) for index in full.values()})
        here = len({_start(index[d]) for index in mine.values()})
        if local_shape[d] % here:
            raise ValueError(
                f"make_array_from_process_local_data: dimension {d} of this process's data "
                f"(shape {local_shape}) holds {here} blocks of {sharding} but does not divide "
                "into them; pass global_shape")
        shape.append(local_shape[d] // here * every)
    return tuple(shape)


def _start(index: slice) -> int:
    return index.start or 0

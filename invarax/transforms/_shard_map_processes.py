"""``shard_map`` across processes: each process runs its own devices' blocks.

After ``distributed.initialize()``, a ``shard_map`` called eagerly over a one-axis mesh of
every device of the run (``make_mesh((device_count(),), (name,))``) runs as ``pmap`` over
this process's devices: each device computes ``f`` on its block, and the collectives
(``psum``, ``all_gather``, ...) cross processes over MPI, as ``pmap``'s do, bitwise
``vmap``'s. An output split over the axis is gathered (one ``Iallgather`` of every
device's block) so that every process holds its global value; a replicated one is the
first local device's block, the same on every device (checked, as the ``vmap`` path
checks it, by tracing the nested ``vmap`` once per signature). Any other ``shard_map``
(under a transformation, over several mesh axes or some of the devices) computes every
block in every process, as on one process.
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl
from ..core.trace import Tracer
from ..distributed import across
from ..distributed import devices as _devices
from ..distributed.shardings import NamedSharding, PartitionSpec
from ._pmap import pmap
from ._shapes import eval_shape


def eligible(mesh, manual: list, blocks: list) -> bool:
    """Whether this call runs per process: several processes, one mapped axis that is the
    whole mesh of every device in order, and no enclosing transformation."""
    return (_devices.process_count() > 1 and list(mesh.axis_names) == manual
            and len(manual) == 1 and list(mesh.devices.flat) == _devices.devices()
            and not any(isinstance(b, Tracer) for b in blocks))


def run(mapped, mesh, body, in_tree, blocks: list, dims: list, levels: list, out_info: dict):
    """The outputs of ``mapped`` (a ``_ShardMapped``) as its nested ``vmap`` gives them
    (the blocks of an output split over the axis stacked in front), computed per process.
    ``out_info`` receives the outputs' tree and specs."""
    ((name, size),) = levels
    in_axes = tuple(d[0] for d in dims)
    key = (in_tree, in_axes, tuple((b.shape, b.dtype, b.weak_type) for b in blocks))
    cached = mapped._per_process.get(key)
    if cached is None:
        # The nested vmap, abstractly: raises where check_vma finds a varying output.
        eval_shape(lambda *bs: mapped._nest(body, list(bs), dims, levels, out_info), *blocks)
        cached = mapped._per_process[key] = (pmap(body, axis_name=name, in_axes=in_axes,
                                                  axis_size=len(_devices.local_devices())),
                                             dict(out_info))
    per_device, info = cached
    out_info.update(info)
    local = _devices.local_devices()
    first = _devices.process_index() * len(local)
    outs = per_device(*[b if d is None else ArrayImpl(b._value[first:first + len(local)],
                                                      b.weak_type)
                        for b, d in zip(blocks, in_axes, strict=True)])
    split = NamedSharding(mesh, PartitionSpec(name))
    result = []
    for x, spec in zip(outs, info["specs"], strict=True):
        value = np.asarray(x)
        named = any(name in axes for axes in spec._axes(len(spec)))
        if named or not mapped.check_vma:
            # every device's block, gathered: (size, *block) in mesh order
            value = across.assemble((size, *value.shape[1:]), value.dtype, split,
                                    dict(zip(local, value, strict=True)))
        if not named:
            value = value[0]  # the same on every device (else, check_vma=False: device 0's)
        result.append(ArrayImpl(value, x.weak_type))
    return result

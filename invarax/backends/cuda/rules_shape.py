"""GPU rules of the operations that move values without computing any: broadcasts, reshapes,
transpositions, slices, padding, concatenation, reversal, iota, dynamic slices, gathers.

No arithmetic is done, so CuPy's copies and views give exactly the CPU's bits; the index
arithmetic (clamped starts, gathered rows, dropped updates) is done on the device by the
CPU's rules (``kernels.cuda_index``): no index value is read back to the host.
"""

from __future__ import annotations

import builtins
import math

from ...core.lowering import register_lowering
from ...kernels import cuda, cuda_index
from ...ops import arithmetic, checks
from ...ops import dynamic_slicing as ds
from ...ops import gather as ga
from ...ops import shape as sh
from .runner import NotOnDevice


def _cupy():
    return cuda._cupy()


def _broadcast_in_dim(x, shape, broadcast_dimensions, **_):
    expanded = [1] * len(shape)
    for d, size in zip(broadcast_dimensions, x.shape, strict=True):
        expanded[d] = size
    return _cupy().broadcast_to(x.reshape(expanded), shape)


def _pad(x, padval, padding_config):
    cupy = _cupy()
    shape, dst, src = sh.pad_slices(x.shape, padding_config)
    out = cupy.empty(shape, x.dtype)
    out[...] = padval  # a 0-d array: its value copied to every element
    if all(s.stop > s.start for s in src):
        out[tuple(dst)] = x[tuple(src)]
    return out


def _iota(dtype, shape, dimension, **_):
    return _cupy().asarray(sh.iota_p.impl(dtype=dtype, shape=shape, dimension=dimension))


def _dynamic_slice(operand, *starts, slice_sizes):
    _check_rank(operand)
    return cuda_index.dynamic_slice(operand, starts, slice_sizes)


def _dynamic_update_slice(operand, update, *starts):
    _check_rank(operand)
    return cuda_index.dynamic_update_slice(operand, update, starts)


def _check_rank(operand):
    if operand.ndim > cuda_index.MAX_RANK:
        raise NotOnDevice(f"a dynamic slice of {operand.ndim} axes (the GPU slices up to "
                          f"{cuda_index.MAX_RANK})")


def _front(x, axes):
    """``x`` with ``axes`` moved to the front and merged into one (a contiguous copy)."""
    cupy = _cupy()
    moved = cupy.moveaxis(x, list(axes), list(range(len(axes))))
    k = len(axes)
    return cupy.ascontiguousarray(moved).reshape(
        (math.prod(moved.shape[:k]), *moved.shape[k:]))


def _gather(operand, indices, *, axes, mode, fill_value):
    front = _front(operand, axes)
    fill = None
    if mode is ga.GatherScatterMode.FILL_OR_DROP:
        fill = ga.fill_of(operand.dtype, fill_value)
    rows = cuda_index.rows(indices, [operand.shape[a] for a in axes], drop=fill is not None)
    out = cuda_index.take_rows(front, rows, fill)
    return out.reshape((*indices.shape[:-1], *front.shape[1:]))


def _scatter(combine):
    def impl(operand, indices, updates, *, axes, mode):
        if operand.dtype not in cuda._SCATTER_SUFFIXES:
            raise NotOnDevice(f"scatter of {operand.dtype} (the GPU scatters float32, float64, "
                              "integers and bools)")
        dims = [operand.shape[a] for a in axes]
        front = _front(operand, axes).copy()
        if front.shape[0]:
            # Out-of-bounds updates get row -1 and are dropped, but with CLIP (clamped).
            rows = cuda_index.rows(indices, dims, drop=mode is not ga.GatherScatterMode.CLIP)
            updates = updates.reshape((rows.shape[0], *front.shape[1:]))
            cuda.scatter_rows(front, rows, updates, combine)
        back = front.reshape((*dims, *front.shape[1:]))
        return _cupy().moveaxis(back, list(range(len(axes))), list(axes))
    return impl


def _register():
    cupy = _cupy
    rules = {
        sh.broadcast_in_dim_p: _broadcast_in_dim,
        sh.reshape_p: lambda x, new_sizes, dimensions: x.reshape(new_sizes),
        sh.transpose_p: lambda x, permutation: x.transpose(permutation),
        sh.squeeze_p: lambda x, dimensions: x.reshape(
            [d for i, d in enumerate(x.shape) if i not in dimensions]),
        sh.rev_p: lambda x, dimensions: x[tuple(
            builtins.slice(None, None, -1) if i in dimensions else builtins.slice(None)
            for i in range(x.ndim))],
        sh.concatenate_p: lambda *xs, dimension: cupy().concatenate(xs, dimension),
        sh.pad_p: _pad,
        sh.slice_p: lambda x, start_indices, limit_indices, strides: x[tuple(map(
            builtins.slice, start_indices, limit_indices, strides or (1,) * x.ndim))],
        sh.iota_p: _iota,
        ds.dynamic_slice_p: _dynamic_slice,
        ds.dynamic_update_slice_p: _dynamic_update_slice,
        ga.gather_p: _gather,
        arithmetic.stop_gradient_p: lambda x: x,
        checks.dce_probe_p: lambda x, record, index: record.run(x),
    }
    for prim, impl in rules.items():
        register_lowering(prim, platform="cuda", impl=impl)
    for prim in (ga.scatter_p, ga.scatter_add_p, ga.scatter_mul_p, ga.scatter_min_p,
                 ga.scatter_max_p):
        register_lowering(prim, platform="cuda", impl=_scatter(ga.SCATTERS[prim.name][0]))


_register()

"""GPU rules of the operations that compute through a canonical order: reductions, arg
reductions, cumulative operations, contractions, convolutions and window reductions.

Each lays its operands out as the CPU kernel does (the same ``layout`` of a contraction,
the same rows of a reduction, the same canonical convolution layout) and calls the GPU
kernel that gives each output the CPU's sequence of operations (``kernels/cuda.py``).
Float32 and float64 run on the GPU; other dtypes (exact integer arithmetic) on the host.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.lowering import register_lowering
from ...kernels import contraction, cuda, cuda_sort
from ...ops import contractions, convolution, reductions, sorting, windowed
from .runner import NotOnDevice, require_exact_elementary

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _floats(what: str, dtype) -> None:
    if np.dtype(dtype) not in _FLOATS:
        raise NotOnDevice(f"{what} of {np.dtype(dtype)} (the GPU computes it for float32 and "
                          "float64)")


def _rows(x, axes):
    """``x`` as ``(M, K)`` rows, the reduced ``axes`` last, and the kept axes' shape."""
    kept = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    k = math.prod(x.shape[d] for d in axes)
    return x.transpose(kept + list(axes)).reshape(math.prod(out_shape), k), out_shape


def _reduce(op: str):
    def impl(x, axes):
        _floats(f"reduce_{op}", x.dtype)
        rows, out_shape = _rows(x, axes)
        return cuda.reduce_rows(op, rows).reshape(out_shape)
    return impl


def _arg_reduce(op: str):
    def impl(x, axes, index_dtype):
        _floats(op, x.dtype)
        rows, out_shape = _rows(x, axes)
        return cuda.reduce_rows(op, rows).astype(index_dtype).reshape(out_shape)
    return impl


def _cumulative(kind: str):
    def impl(x, axis, reverse):
        _floats(f"cum{kind}", x.dtype)
        return x.copy() if x.size == 0 else cuda.cumulative(kind, x, axis, reverse)
    return impl


def _cumlogsumexp(x, axis, reverse):
    _floats("cumlogsumexp", x.dtype)
    require_exact_elementary("cumlogsumexp")
    return x.copy() if x.size == 0 else cuda_sort.cumlogsumexp(x, axis, reverse)


def _sort(*operands, dimension, is_stable, num_keys):
    if any(x.dtype.kind not in "biuf" or x.dtype.itemsize < 2 and x.dtype.kind == "f"
           for x in operands[:num_keys]):
        raise NotOnDevice("sort by keys of " + ", ".join(str(x.dtype) for x in operands)
                          + " (the GPU sorts float16/32/64, integer and bool keys)")
    return cuda_sort.sort(operands, dimension, num_keys)


def _top_k(x, *, k, axis):
    if x.dtype.kind not in "biuf":
        raise NotOnDevice(f"top_k of {x.dtype}")
    return list(cuda_sort.top_k(x, k, axis))


def _dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type):
    out_dtype = np.dtype(lhs.dtype if preferred_element_type is None else preferred_element_type)
    _floats("dot_general", out_dtype)
    pa, sa, pb, sb, out_shape = contraction.layout(lhs.shape, rhs.shape, dimension_numbers)
    a = lhs.astype(out_dtype, copy=False).transpose(pa).reshape(sa)
    b = rhs.astype(out_dtype, copy=False).transpose(pb).reshape(sb)
    return cuda.matmul(a, b).reshape(out_shape)


def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count, batch_group_count, precision,
          preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = np.dtype(lhs.dtype if preferred_element_type is None else preferred_element_type)
    _floats("conv_general_dilated", out_dtype)
    if lhs.ndim > 5:
        raise NotOnDevice(f"a convolution with {lhs.ndim - 2} spatial axes (the GPU's have "
                          "up to 3)")
    out = cuda.conv(lhs.astype(out_dtype, copy=False).transpose(lhs_spec),
                    rhs.astype(out_dtype, copy=False).transpose(rhs_spec), window_strides,
                    padding, lhs_dilation, rhs_dilation, feature_group_count,
                    batch_group_count)
    return out.transpose(tuple(int(a) for a in np.argsort(out_spec)))


def _window(op: str):
    def impl(x, **params):
        _floats(f"reduce_window_{op}", x.dtype)
        if x.ndim > cuda._WIN_DIMS:
            raise NotOnDevice(f"a window reduction of {x.ndim} axes (the GPU's take up to "
                              f"{cuda._WIN_DIMS})")
        return cuda.window_reduce(op, x, *(params[p] for p in windowed._PARAMS))
    return impl


def _register():
    rules = {
        contractions.dot_general_p: _dot_general,
        convolution.conv_general_dilated_p: _conv,
        windowed.reduce_window_sum_p: _window("sum"),
        windowed.reduce_window_max_p: _window("max"),
        windowed.reduce_window_min_p: _window("min"),
        reductions.argmax_p: _arg_reduce("argmax"),
        reductions.argmin_p: _arg_reduce("argmin"),
        reductions.cumlogsumexp_p: _cumlogsumexp,
        sorting.sort_p: _sort,
        sorting.top_k_p: _top_k,
    }
    for op in ("sum", "prod", "max", "min"):
        rules[getattr(reductions, f"reduce_{op}_p")] = _reduce(op)
        rules[getattr(reductions, f"cum{op}_p")] = _cumulative(op)
    for prim, impl in rules.items():
        register_lowering(prim, platform="cuda", impl=impl)


_register()

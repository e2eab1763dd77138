"""Equinox's ``equinox.internal``: the pieces that libraries built on Equinox (diffrax,
optimistix, lineax) import: loops with checkpointing and buffers, primitives of pytrees,
transformation guards, finalisation, ``ω`` and small helpers."""

from .._abstract import AbstractClassVar, AbstractVar
from .._dce import assert_dce, inspect_dce, store_dce
from .._enum import Enumeration
from .._errors import EquinoxRuntimeError, branched_error_if, error_if
from .._static import Static
from ._announce import announce_jaxpr_p, announce_transform
from ._buffers import MaybeBuffer, buffer_at_set
from ._closure import closure_to_pytree
from ._debug import debug_backward_nan
from ._doc import doc_remove_args, doc_repr
from ._finalise import (
    finalise_eval_jaxpr,
    finalise_fn,
    finalise_jaxpr,
    finalise_jaxpr_as_fn,
    finalise_make_jaxpr,
    primitive_finalisations,
    register_impl_finalisation,
)
from ._loop import scan, while_loop
from ._misc import (
    ContainerMeta,
    GetKey,
    cached_filter_eval_shape,
    eval_empty,
    eval_zero,
    hashable_combine,
    hashable_partition,
    left_broadcast_to,
    nextafter,
    prevbefore,
    scan_trick,
    str2jax,
)
from ._noinline import noinline, noinline_p
from ._nontraceable import (
    nonbatchable,
    nonbatchable_p,
    nondifferentiable,
    nondifferentiable_backward,
    nondifferentiable_backward_p,
    nontraceable,
    nontraceable_p,
)
from ._omega import ω
from ._primitive import (
    filter_primitive_batching,
    filter_primitive_bind,
    filter_primitive_def,
    filter_primitive_jvp,
    filter_primitive_transpose,
    materialise_zeros,
)
from ._progress import (
    AbstractProgressMeter,
    NoProgressMeter,
    TextProgressMeter,
    TqdmProgressMeter,
)
from ._unvmap import unvmap_all, unvmap_all_p, unvmap_any, unvmap_any_p, unvmap_max, unvmap_max_p
from ._vprim import create_vprim

__all__ = [
    "AbstractClassVar", "AbstractProgressMeter", "AbstractVar", "ContainerMeta", "Enumeration",
    "EquinoxRuntimeError", "GetKey", "MaybeBuffer", "NoProgressMeter", "Static",
    "TextProgressMeter", "TqdmProgressMeter", "announce_jaxpr_p", "announce_transform",
    "assert_dce", "branched_error_if", "buffer_at_set", "cached_filter_eval_shape",
    "closure_to_pytree", "create_vprim", "debug_backward_nan", "doc_remove_args", "doc_repr",
    "error_if", "eval_empty", "eval_zero", "filter_primitive_batching", "filter_primitive_bind",
    "filter_primitive_def", "filter_primitive_jvp", "filter_primitive_transpose",
    "finalise_eval_jaxpr", "finalise_fn", "finalise_jaxpr", "finalise_jaxpr_as_fn",
    "finalise_make_jaxpr", "hashable_combine", "hashable_partition", "inspect_dce",
    "left_broadcast_to", "materialise_zeros", "nextafter", "noinline", "noinline_p",
    "nonbatchable", "nonbatchable_p", "nondifferentiable", "nondifferentiable_backward",
    "nondifferentiable_backward_p", "nontraceable", "nontraceable_p", "prevbefore",
    "primitive_finalisations", "register_impl_finalisation", "scan", "scan_trick", "store_dce",
    "str2jax", "unvmap_all", "unvmap_all_p", "unvmap_any", "unvmap_any_p", "unvmap_max",
    "unvmap_max_p", "while_loop", "ω",
]

"""Equinox's ``equinox.internal``: the pieces that libraries built on Equinox import."""

from ._nontraceable import (
    nonbatchable,
    nonbatchable_p,
    nondifferentiable,
    nondifferentiable_backward,
    nondifferentiable_backward_p,
    nontraceable,
    nontraceable_p,
)
from ._unvmap import unvmap_all, unvmap_all_p, unvmap_any, unvmap_any_p, unvmap_max, unvmap_max_p
from ._primitive import (
    filter_primitive_batching,
    filter_primitive_bind,
    filter_primitive_def,
    filter_primitive_jvp,
    filter_primitive_transpose,
    materialise_zeros,
)
from ._vprim import create_vprim
from ._buffers import MaybeBuffer, buffer_at_set
from ._loop import scan, while_loop
from ._omega import ω
from ._closure import closure_to_pytree
from ._doc import doc_remove_args, doc_repr
from ._misc import (
    ContainerMeta,
    GetKey,
    cached_filter_eval_shape,
    eval_empty,
    eval_full,
    eval_zero,
    hashable_combine,
    hashable_partition,
    left_broadcast_to,
    nextafter,
    prevbefore,
    scan_trick,
    str2jax,
)
from ._finalise import (
    finalise_eval_jaxpr,
    finalise_fn,
    finalise_jaxpr,
    finalise_jaxpr_as_fn,
    finalise_make_jaxpr,
    primitive_finalisations,
    register_impl_finalisation,
)
from ._noinline import noinline, noinline_p

"""optax's ``optax.transforms``: the gradient transformations and their states under
optax's submodule (the same objects as ``invarax.optim``'s)."""

from collections.abc import Callable
from typing import Any

from ._adaptive import EmaState, ema
from ._base import chain
from ._clipping import clip, clip_by_block_rms, clip_by_global_norm
from ._extras import (
    ConditionallyMaskState,
    ConditionallyTransformState,
    MonitorState,
    NonNegativeParamsState,
    ShouldSkipUpdateFunction,
    SnapshotState,
    ZeroNansState,
    adaptive_grad_clip,
    conditionally_mask,
    conditionally_transform,
    freeze,
    keep_params_nonnegative,
    measure_with_ema,
    monitor,
    named_chain,
    per_example_global_norm_clip,
    per_example_layer_norm_clip,
    selective_transform,
    skip_large_updates,
    skip_not_finite,
    snapshot,
    unitwise_clip,
    unitwise_norm,
    zero_nans,
)
from ._noise import AddNoiseState, add_noise
from ._transform import MaskedNode, MaskedState, TraceState, add_decayed_weights, masked, trace
from ._wrappers import (
    ApplyIfFiniteState,
    MultiSteps,
    MultiStepsState,
    PartitionState,
    apply_if_finite,
    flatten,
    partition,
)

# optax's type of conditionally_transform's should_transform_fn: step -> bool
ConditionFn = Callable[[Any], Any]

__all__ = [
    "AddNoiseState", "ApplyIfFiniteState", "ConditionFn", "ConditionallyMaskState",
    "ConditionallyTransformState", "EmaState", "MaskedNode", "MaskedState", "MonitorState",
    "MultiSteps", "MultiStepsState", "NonNegativeParamsState", "PartitionState",
    "ShouldSkipUpdateFunction", "SnapshotState", "TraceState", "ZeroNansState",
    "adaptive_grad_clip", "add_decayed_weights", "add_noise", "apply_if_finite", "chain",
    "clip", "clip_by_block_rms", "clip_by_global_norm", "conditionally_mask",
    "conditionally_transform", "ema", "flatten", "freeze", "keep_params_nonnegative",
    "masked", "measure_with_ema", "monitor", "named_chain", "partition",
    "per_example_global_norm_clip", "per_example_layer_norm_clip", "selective_transform",
    "skip_large_updates", "skip_not_finite", "snapshot", "trace", "unitwise_clip",
    "unitwise_norm", "zero_nans",
]

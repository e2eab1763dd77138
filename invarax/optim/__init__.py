"""Optimizers, optax-style: gradient transformations, their building blocks and schedules."""

from . import tree, tree_utils
from ._adaptive import (
    EmaState,
    ScaleByLionState,
    ScaleByOptimisticGradientState,
    ScaleByRmsState,
    ScaleByRmsWithCountState,
    ScaleByRssState,
    ScaleByRStdDevState,
    ScaleByRStdDevWithCountState,
    ema,
    scale_by_lion,
    scale_by_optimistic_gradient,
    scale_by_param_block_rms,
    scale_by_rms,
    scale_by_rss,
    scale_by_stddev,
    scale_by_trust_ratio,
)
from ._alias import (
    adafactor,
    adagrad,
    adam,
    adamw,
    lamb,
    lion,
    optimistic_gradient_descent,
    rmsprop,
    sgd,
)
from ._base import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    OptState,
    Params,
    ScalarOrSchedule,
    Schedule,
    Updates,
    chain,
    identity,
    set_to_zero,
    with_extra_args_support,
)
from ._clipping import clip, clip_by_block_rms, clip_by_global_norm, global_norm
from ._factorized import FactoredState, scale_by_factored_rms
from ._schedule import (
    constant_schedule,
    cosine_decay_schedule,
    exponential_decay,
    join_schedules,
    linear_schedule,
    piecewise_constant_schedule,
    polynomial_schedule,
    warmup_cosine_decay_schedule,
)
from ._transform import (
    MaskedState,
    ScaleByAdamState,
    ScaleByScheduleState,
    TraceState,
    add_decayed_weights,
    masked,
    safe_increment,
    scale,
    scale_by_adam,
    scale_by_learning_rate,
    scale_by_schedule,
    trace,
)
from ._update import apply_updates
from ._wrappers import (
    ApplyIfFiniteState,
    InjectHyperparamsState,
    InjectStatefulHyperparamsState,
    MultiSteps,
    MultiStepsState,
    MultiTransformState,
    PartitionState,
    WrappedScheduleState,
    apply_if_finite,
    flatten,
    inject_hyperparams,
    multi_transform,
    partition,
)

__all__ = [
    "ApplyIfFiniteState", "EmaState", "EmptyState", "FactoredState", "GradientTransformation",
    "GradientTransformationExtraArgs", "InjectHyperparamsState", "InjectStatefulHyperparamsState",
    "MaskedState", "MultiSteps", "MultiStepsState", "MultiTransformState", "OptState", "Params",
    "PartitionState", "ScalarOrSchedule", "ScaleByAdamState", "ScaleByLionState",
    "ScaleByOptimisticGradientState", "ScaleByRStdDevState", "ScaleByRStdDevWithCountState",
    "ScaleByRmsState", "ScaleByRmsWithCountState", "ScaleByRssState", "ScaleByScheduleState",
    "Schedule", "TraceState", "Updates", "WrappedScheduleState", "adafactor", "adagrad", "adam",
    "adamw", "add_decayed_weights", "apply_if_finite", "apply_updates", "chain", "clip",
    "clip_by_block_rms", "clip_by_global_norm", "constant_schedule", "cosine_decay_schedule",
    "ema", "exponential_decay", "flatten", "global_norm", "identity", "inject_hyperparams",
    "join_schedules", "lamb", "linear_schedule", "lion", "masked", "multi_transform",
    "optimistic_gradient_descent", "partition", "piecewise_constant_schedule",
    "polynomial_schedule", "rmsprop", "safe_increment", "scale", "scale_by_adam",
    "scale_by_factored_rms", "scale_by_learning_rate", "scale_by_lion",
    "scale_by_optimistic_gradient", "scale_by_param_block_rms", "scale_by_rms", "scale_by_rss",
    "scale_by_schedule", "scale_by_stddev", "scale_by_trust_ratio", "set_to_zero", "sgd", "trace",
    "tree", "tree_utils", "warmup_cosine_decay_schedule", "with_extra_args_support",
]

"""Optimizers, optax-style: gradient transformations, their building blocks and schedules."""

from ._alias import adam, adamw, sgd
from ._base import EmptyState, GradientTransformation, chain, identity
from ._clipping import clip_by_global_norm, global_norm
from ._schedule import (
    constant_schedule,
    cosine_decay_schedule,
    join_schedules,
    linear_schedule,
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

__all__ = [
    "EmptyState", "GradientTransformation", "MaskedState", "ScaleByAdamState",
    "ScaleByScheduleState", "TraceState", "adam", "adamw", "add_decayed_weights",
    "apply_updates", "chain", "clip_by_global_norm", "constant_schedule",
    "cosine_decay_schedule", "global_norm", "identity", "join_schedules", "linear_schedule",
    "masked", "polynomial_schedule", "safe_increment", "scale", "scale_by_adam",
    "scale_by_learning_rate", "scale_by_schedule", "sgd", "trace",
    "warmup_cosine_decay_schedule",
]

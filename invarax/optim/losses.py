"""optax's ``optax.losses``: the losses, unreduced (one value per element or example)."""

from ._ctc import ctc_loss, ctc_loss_with_forward_probs
from ._losses import (
    convex_kl_divergence,
    cosine_distance,
    cosine_similarity,
    generalized_kl_divergence,
    hinge_loss,
    huber_loss,
    kl_divergence,
    kl_divergence_with_log_targets,
    l2_loss,
    log_cosh,
    multiclass_hinge_loss,
    multiclass_perceptron_loss,
    multiclass_sparsemax_loss,
    ntxent,
    perceptron_loss,
    poly_loss_cross_entropy,
    safe_softmax_cross_entropy,
    sigmoid_binary_cross_entropy,
    sigmoid_focal_loss,
    smooth_labels,
    softmax_cross_entropy,
    softmax_cross_entropy_with_integer_labels,
    sparsemax_loss,
    squared_error,
)

__all__ = [
    "convex_kl_divergence", "cosine_distance", "cosine_similarity", "ctc_loss",
    "ctc_loss_with_forward_probs",
    "generalized_kl_divergence", "hinge_loss", "huber_loss", "kl_divergence",
    "kl_divergence_with_log_targets", "l2_loss", "log_cosh", "multiclass_hinge_loss",
    "multiclass_sparsemax_loss", "sparsemax_loss",
    "multiclass_perceptron_loss", "ntxent", "perceptron_loss", "poly_loss_cross_entropy",
    "safe_softmax_cross_entropy", "sigmoid_binary_cross_entropy", "sigmoid_focal_loss",
    "smooth_labels", "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
    "squared_error",
]

"""optax's losses: regression, classification and divergences, elementwise or per example.

Each returns the unreduced loss (one value per element or per example), as optax does: take
``jnp.mean`` of it for a scalar objective.
"""

from __future__ import annotations

import numpy as np

from .. import lax, nn
from .. import numpy as jnp
from ..transforms._vmap import vmap


def _check_dtype(who: str, name: str, x, kind) -> None:
    dtype = jnp.asarray(x).dtype
    if not jnp.issubdtype(dtype, kind):
        want, fix = ("a floating", "float32") if kind is jnp.floating else ("an integer", "int32")
        raise TypeError(f"{who}: {name} must have {want} dtype, got {np.dtype(dtype).name}; "
                        f"cast it with .astype(jnp.{fix})")


def _check_same_shape(who: str, a, b, names=("predictions", "targets")) -> None:
    if np.shape(a) != np.shape(b):
        raise ValueError(f"{who}: {names[0]} and {names[1]} must have one shape, got "
                         f"{np.shape(a)} and {np.shape(b)} (optax does not broadcast here)")


def _errors(who: str, predictions, targets):
    _check_dtype(who, "predictions", predictions, jnp.floating)
    if targets is None:
        return jnp.asarray(predictions)
    _check_same_shape(who, predictions, targets)
    return predictions - targets


def _log_sigmoid(x):
    return -nn.softplus(-x)


def squared_error(predictions, targets=None):
    """``(predictions - targets)**2`` elementwise (``predictions**2`` without targets).

    Arguments:
        predictions: a float array.
        targets: an array of the same shape, or None.

    Returns:
        An array of ``predictions``' shape.

    Example:
        >>> squared_error(jnp.array([1.0, 3.0]), jnp.array([0.0, 1.0]))
        Array([1., 4.], dtype=float32)
    """
    return _errors("squared_error", predictions, targets) ** 2


def l2_loss(predictions, targets=None):
    """Half the squared error: ``0.5 * (predictions - targets)**2`` elementwise.

    Example:
        >>> l2_loss(jnp.array([1.0, 3.0]), jnp.array([0.0, 1.0]))
        Array([0.5, 2. ], dtype=float32)
    """
    return 0.5 * _errors("l2_loss", predictions, targets) ** 2


def huber_loss(predictions, targets=None, *, delta: float = 1.0):
    """The Huber loss: quadratic for errors up to ``delta``, then linear.

    ``0.5 * e**2`` for ``|e| <= delta``, ``0.5 * delta**2 + delta * (|e| - delta)`` beyond.

    Arguments:
        predictions: a float array.
        targets: an array of the same shape, or None.
        delta: where the loss turns linear.

    Returns:
        An array of ``predictions``' shape.

    Example:
        >>> huber_loss(jnp.array([0.5, 3.0]), jnp.array([0.0, 0.0]))
        Array([0.125, 2.5  ], dtype=float32)
    """
    errors = jnp.abs(_errors("huber_loss", predictions, targets))
    quadratic = jnp.minimum(errors, delta)
    return 0.5 * quadratic ** 2 + delta * (errors - quadratic)


def log_cosh(predictions, targets=None):
    """``log(cosh(predictions - targets))`` elementwise, computed without overflow.

    Example:
        >>> log_cosh(jnp.array([0.0, 100.0]))
        Array([ 0.      , 99.306854], dtype=float32)
    """
    errors = _errors("log_cosh", predictions, targets)
    return jnp.logaddexp(errors, -errors) - jnp.log(2.0).astype(errors.dtype)


def cosine_similarity(predictions, targets, *, epsilon: float = 0.0, axis=-1, where=None):
    """The cosine of the angle between ``predictions`` and ``targets`` along ``axis``.

    Arguments:
        predictions: a float array.
        targets: a float array of the same shape.
        epsilon: a lower bound of each squared norm.
        axis: the axis (or axes) of the vectors.
        where: a bool mask of the elements to include.

    Returns:
        An array without ``axis``.

    Example:
        >>> cosine_similarity(jnp.array([[1.0, 0.0]]), jnp.array([[1.0, 1.0]]))
        Array([0.70710677], dtype=float32)
    """
    for name, x in (("predictions", predictions), ("targets", targets)):
        _check_dtype("cosine_similarity", name, x, jnp.floating)
    a_norm = jnp.sqrt(jnp.clip(jnp.sum(jnp.square(predictions), axis=axis, where=where,
                                       keepdims=True), epsilon))
    b_norm = jnp.sqrt(jnp.clip(jnp.sum(jnp.square(targets), axis=axis, where=where,
                                       keepdims=True), epsilon))
    return jnp.sum((predictions / a_norm) * (targets / b_norm), axis=axis, where=where)


def cosine_distance(predictions, targets, *, epsilon: float = 0.0, axis=-1, where=None):
    """``1 - cosine_similarity(predictions, targets)``.

    Example:
        >>> cosine_distance(jnp.array([[1.0, 0.0]]), jnp.array([[0.0, 1.0]]))
        Array([1.], dtype=float32)
    """
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis,
                                   where=where)


def smooth_labels(labels, alpha: float, *, axis=-1, where=None):
    """Label smoothing: ``(1 - alpha) * labels + alpha / num_categories``.

    Example:
        >>> smooth_labels(jnp.array([0.0, 1.0]), 0.2)
        Array([0.1       , 0.90000004], dtype=float32)
    """
    _check_dtype("smooth_labels", "labels", labels, jnp.floating)
    if where is None:
        num_categories = np.shape(labels)[axis]
    else:
        num_categories = jnp.sum(where, axis, keepdims=True)
    return (1.0 - alpha) * labels + alpha / num_categories


def sigmoid_binary_cross_entropy(logits, labels):
    """The cross entropy of independent binary labels given their logits, elementwise.

    ``-labels * log(sigmoid(logits)) - (1 - labels) * log(1 - sigmoid(logits))``.

    Arguments:
        logits: a float array.
        labels: an array of probabilities (or 0/1) broadcastable to ``logits``.

    Returns:
        An array of the broadcast shape.

    Example:
        >>> sigmoid_binary_cross_entropy(jnp.array([0.0, 2.0]), jnp.array([1.0, 0.0]))
        Array([0.6931472, 2.126928 ], dtype=float32)
    """
    _check_dtype("sigmoid_binary_cross_entropy", "logits", logits, jnp.floating)
    labels = jnp.asarray(labels).astype(jnp.asarray(logits).dtype)
    return -labels * _log_sigmoid(logits) - (1.0 - labels) * _log_sigmoid(-logits)


def sigmoid_focal_loss(logits, labels, *, alpha: float | None = None, gamma: float = 2.0):
    """The focal loss: the sigmoid cross entropy weighted by ``(1 - p_t)**gamma``.

    Arguments:
        logits: a float array.
        labels: probabilities (or 0/1) of ``logits``' shape.
        alpha: a weight of the positive class (``1 - alpha`` for the negative); None: none.
        gamma: the focusing exponent.

    Returns:
        An array of ``logits``' shape.

    Example:
        >>> sigmoid_focal_loss(jnp.array([0.0]), jnp.array([1.0]))
        Array([0.1732868], dtype=float32)
    """
    _check_dtype("sigmoid_focal_loss", "logits", logits, jnp.floating)
    labels = jnp.asarray(labels).astype(jnp.asarray(logits).dtype)
    ce = sigmoid_binary_cross_entropy(logits, labels)
    log_p, log_q = _log_sigmoid(logits), _log_sigmoid(-logits)
    log_one_minus_p_t = nn.logsumexp(jnp.stack([log_p, log_q], axis=-1), axis=-1,
                                     b=jnp.stack([1 - labels, labels], axis=-1))
    loss = ce * jnp.exp(gamma * log_one_minus_p_t)
    if alpha is None:
        return loss
    return (alpha * labels + (1.0 - alpha) * (1.0 - labels)) * loss


def hinge_loss(predictor_outputs, targets):
    """The hinge loss ``max(0, 1 - outputs * targets)`` (targets are -1 or 1).

    Example:
        >>> hinge_loss(jnp.array([0.5, 2.0]), jnp.array([1.0, -1.0]))
        Array([0.5, 3. ], dtype=float32)
    """
    return jnp.maximum(0, 1 - predictor_outputs * targets)


def perceptron_loss(predictor_outputs, targets):
    """The perceptron loss ``max(0, -outputs * targets)`` (targets are -1 or 1).

    Example:
        >>> perceptron_loss(jnp.array([0.5, 2.0]), jnp.array([1.0, -1.0]))
        Array([0., 2.], dtype=float32)
    """
    _check_same_shape("perceptron_loss", predictor_outputs, targets,
                      ("predictor_outputs", "targets"))
    return jnp.maximum(0, -predictor_outputs * targets)


def softmax_cross_entropy(logits, labels, axis=-1, where=None):
    """The cross entropy between ``labels`` (probabilities) and ``softmax(logits)``.

    ``-sum(labels * log_softmax(logits), axis)``.

    Arguments:
        logits: a float array.
        labels: probabilities over ``axis``, broadcastable to ``logits``.
        axis: the class axis.
        where: a bool mask of the classes to include.

    Returns:
        An array without ``axis``.

    Example:
        >>> softmax_cross_entropy(jnp.array([[0.0, 0.0]]), jnp.array([[1.0, 0.0]]))
        Array([0.6931472], dtype=float32)
    """
    _check_dtype("softmax_cross_entropy", "logits", logits, jnp.floating)
    logits = jnp.asarray(logits)
    if where is not None and np.ndim(where) != logits.ndim:
        where = jnp.expand_dims(where, axis)
    log_probs = nn.log_softmax(logits, axis, where)
    return -jnp.sum(labels * log_probs, axis, where=where)


def safe_softmax_cross_entropy(logits, labels):
    """``softmax_cross_entropy`` over the last axis, with 0 (not NaN) where a label is 0 and
    its logit is ``-inf``.

    Example:
        >>> safe_softmax_cross_entropy(jnp.array([[0.0, -jnp.inf]]), jnp.array([[1.0, 0.0]]))
        Array([-0.], dtype=float32)
    """
    _check_dtype("safe_softmax_cross_entropy", "logits", logits, jnp.floating)
    log_probs = nn.log_softmax(logits, axis=-1)
    return -jnp.sum(jnp.where(labels != 0.0, labels * log_probs, jnp.zeros_like(log_probs)),
                    axis=-1)


def softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1, where=None):
    """The cross entropy of integer class labels: ``logsumexp(logits) - logits[label]``.

    Arguments:
        logits: a float array.
        labels: integer class indices, of ``logits``' shape without ``axis``.
        axis: the class axis (an int).
        where: a bool mask of the classes to include; an example with none gives 0.

    Returns:
        An array of ``labels``' shape.

    Example:
        >>> softmax_cross_entropy_with_integer_labels(jnp.array([[0.0, 0.0], [3.0, 1.0]]),
        ...                                           jnp.array([0, 1]))
        Array([0.6931472, 2.126928 ], dtype=float32)
    """
    who = "softmax_cross_entropy_with_integer_labels"
    _check_dtype(who, "logits", logits, jnp.floating)
    _check_dtype(who, "labels", labels, jnp.integer)
    logits = jnp.asarray(logits)
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: axis must be an int here, got {axis!r}")
    axis = int(axis) % logits.ndim
    expected = logits.shape[:axis] + logits.shape[axis + 1:]
    if np.shape(labels) != expected:
        raise ValueError(f"{who}: labels must have the logits' shape {logits.shape} without "
                         f"axis {axis}, i.e. {expected}; got {np.shape(labels)}")
    if where is not None and np.ndim(where) != logits.ndim:
        where = jnp.expand_dims(where, axis)
    label_logits = jnp.squeeze(
        jnp.take_along_axis(logits, jnp.expand_dims(labels, axis), axis=axis), axis)
    out = nn.logsumexp(logits, axis=axis, where=where) - label_logits
    if where is not None:
        out = jnp.where(jnp.any(where, axis), out, 0.0)
    return out


def _dot_last_dim(x, y):
    return jnp.sum(x * y, axis=-1)


def multiclass_hinge_loss(scores, labels):
    """The multiclass hinge loss ``max(scores + 1 - onehot) - scores[label]``.

    Example:
        >>> multiclass_hinge_loss(jnp.array([[2.0, 1.5]]), jnp.array([0]))
        Array([0.5], dtype=float32)
    """
    one_hot = nn.one_hot(labels, np.shape(scores)[-1])
    return jnp.max(scores + 1.0 - one_hot, axis=-1) - _dot_last_dim(scores, one_hot)


def multiclass_perceptron_loss(scores, labels):
    """The multiclass perceptron loss ``max(scores) - scores[label]``.

    Example:
        >>> multiclass_perceptron_loss(jnp.array([[2.0, 1.5]]), jnp.array([1]))
        Array([0.5], dtype=float32)
    """
    one_hot = nn.one_hot(labels, np.shape(scores)[-1])
    return jnp.max(scores, axis=-1) - _dot_last_dim(scores, one_hot)


def poly_loss_cross_entropy(logits, labels, *, epsilon: float = 2.0, axis=-1, where=None):
    """The Poly-1 loss: the softmax cross entropy plus ``epsilon * (1 - p_t)``.

    Example:
        >>> poly_loss_cross_entropy(jnp.array([[0.0, 0.0]]), jnp.array([[1.0, 0.0]]))
        Array([1.6931472], dtype=float32)
    """
    _check_dtype("poly_loss_cross_entropy", "logits", logits, jnp.floating)
    _check_dtype("poly_loss_cross_entropy", "labels", labels, jnp.floating)
    p = nn.softmax(logits, axis=axis, where=where)
    one_minus_pt = jnp.sum(labels * (1 - p), axis=axis, where=where)
    return softmax_cross_entropy(logits, labels, axis=axis, where=where) + \
        epsilon * one_minus_pt


def kl_divergence(log_predictions, targets, axis=-1, where=None):
    """The Kullback-Leibler divergence ``sum(targets * (log(targets) - log_predictions))``.

    Arguments:
        log_predictions: log-probabilities.
        targets: probabilities (a 0 contributes 0).
        axis: the axis summed over.
        where: a bool mask of the elements to include.

    Returns:
        An array without ``axis``.

    Example:
        >>> kl_divergence(jnp.log(jnp.array([0.5, 0.5])), jnp.array([1.0, 0.0]))
        Array(0.6931472, dtype=float32)
    """
    for name, x in (("log_predictions", log_predictions), ("targets", targets)):
        _check_dtype("kl_divergence", name, x, jnp.floating)
    loss = targets * (jnp.where(targets == 0, 0, jnp.log(targets)) - log_predictions)
    return jnp.sum(loss, axis=axis, where=where)


def kl_divergence_with_log_targets(log_predictions, log_targets, axis=-1, where=None):
    """``kl_divergence`` with the targets given as log-probabilities.

    Example:
        >>> kl_divergence_with_log_targets(jnp.log(jnp.array([0.5, 0.5])),
        ...                                jnp.log(jnp.array([0.5, 0.5])))
        Array(0., dtype=float32)
    """
    for name, x in (("log_predictions", log_predictions), ("log_targets", log_targets)):
        _check_dtype("kl_divergence_with_log_targets", name, x, jnp.floating)
    return jnp.sum(jnp.exp(log_targets) * (log_targets - log_predictions), axis=axis,
                   where=where)


def generalized_kl_divergence(log_predictions, targets, axis=-1, where=None):
    """The KL divergence of unnormalised measures: ``kl_divergence + sum(exp(lp) - t)``.

    Example:
        >>> generalized_kl_divergence(jnp.log(jnp.array([1.0, 1.0])), jnp.array([1.0, 0.0]))
        Array(1., dtype=float32)
    """
    kl = kl_divergence(log_predictions, targets, axis=axis, where=where)
    return kl + jnp.sum(jnp.exp(log_predictions) - targets, axis=axis, where=where)


convex_kl_divergence = generalized_kl_divergence


def ntxent(embeddings, labels, temperature: float = 0.07):
    """The normalised temperature-scaled cross entropy (NT-Xent, SimCLR's contrastive loss).

    Examples with equal labels are positives of each other, the others negatives.

    Arguments:
        embeddings: a float array of shape ``(n, d)``.
        labels: an integer array of shape ``(n,)``.
        temperature: the softmax temperature.

    Returns:
        A scalar.

    Example:
        >>> e = jnp.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
        >>> ntxent(e, jnp.array([0, 0, 1, 1]))
        Array(1.1443998e-05, dtype=float32)
    """
    _check_dtype("ntxent", "embeddings", embeddings, jnp.floating)
    embeddings = jnp.asarray(embeddings)
    if np.shape(labels)[0] != embeddings.shape[0]:
        raise ValueError(f"ntxent: labels and embeddings must have one leading dimension, got "
                         f"{np.shape(labels)[0]} and {embeddings.shape[0]}")
    xcs = cosine_similarity(embeddings[None, :, :], embeddings[:, None, :],
                            epsilon=jnp.finfo(embeddings.dtype).eps) / temperature
    matches = jnp.expand_dims(labels, 1) == jnp.expand_dims(labels, 0)
    diffs = jnp.logical_not(matches)
    matches = jnp.logical_and(matches, jnp.logical_not(jnp.eye(matches.shape[0], dtype=bool)))
    xcs_diffs = jnp.where(diffs, xcs, -jnp.inf)
    xcs_matches = jnp.where(matches, xcs, -jnp.inf)
    xcs_max = lax.stop_gradient(jnp.max(jnp.concatenate((xcs_diffs, xcs_matches), axis=-1),
                                        axis=1, keepdims=True))
    shift_diffs, shift_matches = xcs_diffs - xcs_max, xcs_matches - xcs_max
    denom = jnp.sum(jnp.exp(shift_diffs), axis=1, keepdims=True) + jnp.exp(shift_matches)
    log_softmax = shift_matches - jnp.log(denom)
    return -jnp.sum(jnp.where(matches, log_softmax, 0.0)) / jnp.sum(matches)


def sparsemax_loss(logits, labels):
    """The binary sparsemax loss: ``sparse_plus`` of ``-logits`` where the label is 1 and of
    ``logits`` where it is 0 (``sparse_plus(x)`` is 0 below -1, ``x`` above 1,
    ``(x + 1)**2 / 4`` between).

    Example:
        >>> sparsemax_loss(jnp.array([2.0, 0.0, -3.0]), jnp.array([1, 1, 0]))
        Array([0.  , 0.25, 0.  ], dtype=float32)
    """
    x = jnp.where(labels, -logits, logits)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def _projection_unit_simplex(values):
    n = values.shape[0]
    u = jnp.flip(jnp.sort(values))
    cumsum_u = jnp.cumsum(u)
    ind = jnp.arange(n) + 1
    idx = jnp.sum((1 / ind + (u - cumsum_u / ind) > 0).astype(jnp.int32))
    return jnp.maximum(1 / idx + (values - cumsum_u[idx - 1] / idx), 0.0)


def _multiclass_sparsemax_loss(scores, label):
    proba = _projection_unit_simplex(scores)
    scores = (scores - scores[label]).at[label].set(0.0)
    return jnp.dot(proba, jnp.where(proba != 0, scores, 0.0)) + 0.5 * (
        1.0 - jnp.dot(proba, proba))


def multiclass_sparsemax_loss(scores, labels):
    """The multiclass sparsemax loss (the Fenchel-Young loss of the Gini negentropy).

    Arguments:
        scores: a float array of shape ``(n, classes)``.
        labels: integer labels of shape ``(n,)``.

    Returns:
        An array of shape ``(n,)``.

    Example:
        >>> multiclass_sparsemax_loss(jnp.array([[2.0, 0.0], [0.5, 0.0]]), jnp.array([0, 1]))
        Array([0.    , 0.5625], dtype=float32)
    """
    return vmap(_multiclass_sparsemax_loss)(jnp.asarray(scores), jnp.asarray(labels))

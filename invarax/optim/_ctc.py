"""The connectionist temporal classification loss (``ctc_loss``), as optax computes it.

optax runs the forward recursion in ``lax.scan`` over the time axis; here it is a Python
loop over the (static) number of time steps, the same operations in the same order, so it
runs eagerly and under ``jit``/``vmap`` alike (``jit`` unrolls it).
"""

from __future__ import annotations

import numpy as np

from .. import nn
from .. import numpy as jnp


def _check(logits, logit_paddings, labels, label_paddings):
    who = "ctc_loss"
    if np.ndim(logits) != 3 or np.ndim(labels) != 2:
        raise ValueError(f"{who}: logits must be [batch, time, classes] and labels "
                         f"[batch, label length]; got shapes {np.shape(logits)} and "
                         f"{np.shape(labels)}")
    if np.shape(labels) != np.shape(label_paddings):
        raise ValueError(f"{who}: label_paddings must have the labels' shape "
                         f"{np.shape(labels)}, got {np.shape(label_paddings)}")
    if np.shape(logit_paddings) != np.shape(logits)[:2]:
        raise ValueError(f"{who}: logit_paddings must have shape [batch, time] = "
                         f"{np.shape(logits)[:2]}, got {np.shape(logit_paddings)}")
    if np.shape(labels)[0] != np.shape(logits)[0]:
        raise ValueError(f"{who}: labels have batch size {np.shape(labels)[0]}, logits "
                         f"{np.shape(logits)[0]}")


def ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings, *,
                                blank_id: int = 0, log_epsilon: float = -1e5):
    """The CTC loss and the forward log-probabilities of blanks and of labels.

    Arguments:
        logits: ``[batch, time, classes]`` unnormalised log-probabilities.
        logit_paddings: ``[batch, time]``, 1.0 at padded time steps.
        labels: ``[batch, label length]`` integer labels.
        label_paddings: ``[batch, label length]``, 1.0 at padded labels.
        blank_id: the class of the blank.
        log_epsilon: the log-probability standing for zero.

    Returns:
        ``(per_seq_loss [batch], logalpha_phi [time, batch, length + 1],
        logalpha_emit [time, batch, length])``.

    Example:
        >>> loss, phi, emit = ctc_loss_with_forward_probs(
        ...     jnp.zeros((1, 3, 3)), jnp.zeros((1, 3)), jnp.array([[1, 2]]), jnp.zeros((1, 2)))
        >>> phi.shape, emit.shape
        ((3, 1, 3), (3, 1, 2))
    """
    _check(logits, logit_paddings, labels, label_paddings)
    logits, labels = jnp.asarray(logits), jnp.asarray(labels)
    batchsize, max_input_len, num_classes = logits.shape
    max_label_len = labels.shape[1]
    logprobs = nn.log_softmax(logits)
    labellens = max_label_len - jnp.sum(label_paddings, axis=1).astype(jnp.int32)
    repeat = (labels[:, :-1] == labels[:, 1:]).astype(jnp.float32)
    repeat = jnp.pad(repeat, ((0, 0), (0, 1)))
    logprobs_phi = jnp.transpose(logprobs[:, :, blank_id:blank_id + 1], (1, 0, 2))
    one_hot = nn.one_hot(labels, num_classes)
    logprobs_emit = jnp.transpose(jnp.einsum("btk,bnk->btn", logprobs, one_hot), (1, 0, 2))
    phi = (jnp.ones((batchsize, max_label_len + 1)) * log_epsilon).at[:, 0].set(0.0)
    emit = jnp.ones((batchsize, max_label_len)) * log_epsilon
    pads = jnp.transpose(jnp.asarray(logit_paddings), (1, 0))

    def add_to_phi(phi, added):
        return jnp.concatenate([phi[:, :1], jnp.logaddexp(phi[:, 1:], added)], axis=-1)

    phis, emits = [], []
    for t in range(max_input_len):
        prev_phi_orig = phi
        prev_phi = add_to_phi(phi, emit + log_epsilon * repeat)
        next_emit = jnp.logaddexp(prev_phi[:, :-1] + logprobs_emit[t], emit + logprobs_emit[t])
        next_phi = add_to_phi(prev_phi + logprobs_phi[t],
                              emit + logprobs_phi[t] + log_epsilon * (1.0 - repeat))
        pad = jnp.reshape(pads[t], (batchsize, 1))
        emit = pad * emit + (1.0 - pad) * next_emit
        phi = pad * prev_phi_orig + (1.0 - pad) * next_phi
        phis.append(phi)
        emits.append(emit)
    logalpha_phi, logalpha_emit = jnp.stack(phis), jnp.stack(emits)
    last = add_to_phi(logalpha_phi[-1], logalpha_emit[-1])
    logalpha_phi = logalpha_phi.at[-1].set(last)
    per_seq_loss = -jnp.einsum("bn,bn->b", last, nn.one_hot(labellens, max_label_len + 1))
    return per_seq_loss, logalpha_phi, logalpha_emit


def ctc_loss(logits, logit_paddings, labels, label_paddings, *, blank_id: int = 0,
             log_epsilon: float = -1e5):
    """The CTC loss of each sequence: ``-log`` of the total probability of the alignments of
    its labels to its (unpadded) time steps, with blanks.

    Arguments:
        logits: ``[batch, time, classes]`` unnormalised log-probabilities.
        logit_paddings: ``[batch, time]``, 1.0 at padded time steps.
        labels: ``[batch, label length]`` integer labels.
        label_paddings: ``[batch, label length]``, 1.0 at padded labels.
        blank_id: the class of the blank.
        log_epsilon: the log-probability standing for zero.

    Returns:
        ``[batch]`` losses.

    Example:
        >>> ctc_loss(jnp.zeros((1, 2, 2)), jnp.zeros((1, 2)), jnp.array([[1]]), jnp.zeros((1, 1)))
        Array([0.2876821], dtype=float32)
    """
    return ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings,
                                       blank_id=blank_id, log_epsilon=log_epsilon)[0]

"""``MultiheadAttention``, ``dot_product_attention`` and ``dot_product_attention_weights``."""

from __future__ import annotations

import math

from .. import numpy as jnp
from .. import random
from ..module import Module, field
from ..transforms._vmap import vmap
from ._activations import softmax
from ._dropout import Dropout
from ._linear import Linear
from ._misc import check_key, compute_dtype, deterministic_alias, float_dtype


class MultiheadAttention(Module):
    """Multi-head scaled dot-product attention, as ``equinox.nn.MultiheadAttention``.

    The query, key and value sequences are projected by ``Linear`` layers (without bias by
    default) into ``num_heads`` heads; each head computes
    ``softmax(q k^T / sqrt(qk_size)) v`` (masked entries get the dtype's lowest value
    before the softmax, which runs in float32 at least), with dropout on the attention
    weights; the heads are concatenated and projected by ``output_proj``. The four
    projections are initialised from ``random.split(key, 4)`` in the order query, key,
    value, output, so a key gives Equinox's initial parameters bit for bit.

    Arguments:
        num_heads: the number of heads.
        query_size: the size of each query vector.
        key_size: the size of each key vector (default ``query_size``).
        value_size: the size of each value vector (default ``query_size``).
        output_size: the size of each output vector (default ``query_size``).
        qk_size: the size of a head's queries and keys (default
            ``query_size // num_heads``).
        vo_size: the size of a head's values and outputs (default
            ``query_size // num_heads``).
        use_query_bias, use_key_bias, use_value_bias, use_output_bias: biases in the
            projections.
        dropout_p: the dropout probability of the attention weights.
        inference: the dropout layer's default mode.
        dtype: the parameters' dtype (default float32, float64 with x64 on).
        key: a PRNG key (keyword only), e.g. ``invarax.random.key(0)``.

    Returns:
        The layer; call it as ``attention(query, key_, value, mask=None)``.

    Example:
        >>> attention = MultiheadAttention(2, 8, key=invarax.random.key(0))
        >>> attention(jnp.ones((3, 8)), jnp.ones((5, 8)), jnp.ones((5, 8))).shape
        (3, 8)
    """

    query_proj: Linear
    key_proj: Linear
    value_proj: Linear
    output_proj: Linear
    dropout: Dropout
    num_heads: int = field(static=True)
    query_size: int = field(static=True)
    key_size: int = field(static=True)
    value_size: int = field(static=True)
    output_size: int = field(static=True)
    qk_size: int = field(static=True)
    vo_size: int = field(static=True)
    use_query_bias: bool = field(static=True)
    use_key_bias: bool = field(static=True)
    use_value_bias: bool = field(static=True)
    use_output_bias: bool = field(static=True)

    def __init__(self, num_heads, query_size, key_size=None, value_size=None,
                 output_size=None, qk_size=None, vo_size=None, use_query_bias=False,
                 use_key_bias=False, use_value_bias=False, use_output_bias=False,
                 dropout_p=0.0, inference=False, dtype=None, *, key=None):
        key = check_key("MultiheadAttention", key)
        if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
            raise ValueError(f"MultiheadAttention: num_heads must be a positive int, got "
                             f"{num_heads!r}")
        dtype = float_dtype(dtype)
        qkey, kkey, vkey, okey = random.split(key, 4)
        key_size = query_size if key_size is None else key_size
        value_size = query_size if value_size is None else value_size
        qk_size = query_size // num_heads if qk_size is None else qk_size
        vo_size = query_size // num_heads if vo_size is None else vo_size
        output_size = query_size if output_size is None else output_size
        self.query_proj = Linear(query_size, num_heads * qk_size, use_query_bias, dtype,
                                 key=qkey)
        self.key_proj = Linear(key_size, num_heads * qk_size, use_key_bias, dtype, key=kkey)
        self.value_proj = Linear(value_size, num_heads * vo_size, use_value_bias, dtype,
                                 key=vkey)
        self.output_proj = Linear(num_heads * vo_size, output_size, use_output_bias, dtype,
                                  key=okey)
        self.dropout = Dropout(dropout_p, inference=inference)
        self.num_heads = num_heads
        self.query_size = query_size
        self.key_size = key_size
        self.value_size = value_size
        self.output_size = output_size
        self.qk_size = qk_size
        self.vo_size = vo_size
        self.use_query_bias = use_query_bias
        self.use_key_bias = use_key_bias
        self.use_value_bias = use_value_bias
        self.use_output_bias = use_output_bias

    def __call__(self, query, key_, value, mask=None, *, key=None, inference=None,
                 deterministic=None, process_heads=None):
        """Attend from each query to the keys and values.

        Arguments:
            query: an array of shape ``(query_seq_length, query_size)``.
            key_: an array of shape ``(kv_seq_length, key_size)``.
            value: an array of shape ``(kv_seq_length, value_size)``.
            mask: None, or a boolean array of shape ``(query_seq_length, kv_seq_length)``
                or ``(num_heads, query_seq_length, kv_seq_length)``: True where a query
                may attend to a key.
            key: a PRNG key for dropout (split into one key per head, as Equinox).
            inference: overrides the dropout layer's ``inference`` flag when not None.
            deterministic: Equinox's deprecated name for ``inference`` (warns).
            process_heads: None, or a function of the projected heads
                ``(query_heads, key_heads, value_heads)``, each ``(seq, num_heads, size)``,
                returning them changed but of the same shapes (e.g. rotary embeddings).

        Returns:
            An array of shape ``(query_seq_length, output_size)``.

        Example:
            >>> attention = MultiheadAttention(1, 2, key=invarax.random.key(0))
            >>> mask = jnp.array([[True, False]])
            >>> attention(jnp.ones((1, 2)), jnp.ones((2, 2)), jnp.ones((2, 2)), mask).shape
            (1, 2)
        """
        inference = deterministic_alias("MultiheadAttention()(deterministic=...)", inference,
                                        deterministic)
        query, key_, value = jnp.asarray(query), jnp.asarray(key_), jnp.asarray(value)
        for name, x, size in (("query", query, self.query_size),
                              ("key_", key_, self.key_size), ("value", value, self.value_size)):
            if x.ndim != 2 or x.shape[1] != size:
                raise ValueError(
                    f"MultiheadAttention: {name} must have shape (seq_length, {size}), got "
                    f"{tuple(x.shape)}; for a batch of sequences use invarax.vmap(attention)"
                )
        if key_.shape[0] != value.shape[0]:
            raise ValueError(
                f"MultiheadAttention: key_ and value must be sequences of the same length, "
                f"got {key_.shape[0]} and {value.shape[0]}"
            )
        heads = (self._project(self.query_proj, query), self._project(self.key_proj, key_),
                 self._project(self.value_proj, value))
        if process_heads is not None:
            shapes = tuple(h.shape for h in heads)
            heads = tuple(process_heads(*heads))
            if tuple(h.shape for h in heads) != shapes:
                raise ValueError("MultiheadAttention: process_heads must not change the "
                                 f"shapes of the heads {shapes}")
        q, k, v = heads
        weights = self._weights(q, k, mask)
        if key is None:
            weights = self.dropout(weights, inference=inference)
        else:
            keys = random.split(key, self.num_heads)
            weights = vmap(lambda w, k: self.dropout(w, key=k, inference=inference))(
                weights, keys)
        attn = jnp.einsum("hsS,Shd->shd", weights, v)
        return self.output_proj(attn.reshape(query.shape[0], -1))

    def _project(self, proj, x):
        return proj(x).reshape(x.shape[0], self.num_heads, -1)

    def _weights(self, q, k, mask):
        """Softmax attention weights ``(num_heads, q_seq, kv_seq)`` of the heads."""
        q = q / math.sqrt(q.shape[-1])
        logits = jnp.einsum("shd,Shd->hsS", q, k)
        if mask is not None:
            mask = jnp.asarray(mask)
            seqs = logits.shape[1:]
            if tuple(mask.shape) not in (seqs, logits.shape):
                raise ValueError(
                    f"MultiheadAttention: mask must have shape (query_seq_length, "
                    f"kv_seq_length) = {seqs} or (num_heads, query_seq_length, "
                    f"kv_seq_length) = {tuple(logits.shape)}; got {tuple(mask.shape)}"
                )
        return _masked_softmax(logits, mask)


def _masked_softmax(logits, mask):
    """Softmax over the last axis (in float32 at least); masked-out logits get the lowest value."""
    if mask is not None:
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
    return softmax(logits.astype(compute_dtype(logits))).astype(logits.dtype)


def dot_product_attention_weights(query, key, mask=None):
    """The attention weights ``softmax(query key^T / sqrt(qk_size))`` of one head.

    As ``equinox.nn._attention.dot_product_attention_weights``.

    Arguments:
        query: an array of shape ``(q_seq, qk_size)``.
        key: an array of shape ``(kv_seq, qk_size)``.
        mask: None, or a boolean array ``(q_seq, kv_seq)``: True where a query may attend.

    Returns:
        The weights, ``(q_seq, kv_seq)``; each row sums to one.

    Example:
        >>> dot_product_attention_weights(jnp.ones((1, 2)), jnp.ones((3, 2)))
        Array([[0.33333334, 0.33333334, 0.33333334]], dtype=float32)
    """
    query, key = jnp.asarray(query), jnp.asarray(key)
    if query.ndim != 2 or key.ndim != 2 or query.shape[1] != key.shape[1]:
        raise ValueError(
            f"dot_product_attention_weights: query (q_seq, qk_size) and key (kv_seq, "
            f"qk_size) must be 2-d with the same qk_size, got {tuple(query.shape)} and "
            f"{tuple(key.shape)}")
    logits = jnp.einsum("sd,Sd->sS", query / math.sqrt(query.shape[-1]), key)
    mask = None if mask is None else jnp.asarray(mask)
    if mask is not None and tuple(mask.shape) != tuple(logits.shape):
        raise ValueError(
            f"dot_product_attention_weights: mask must have shape (query_seq_length, "
            f"kv_seq_length) = {tuple(logits.shape)}, got {tuple(mask.shape)}")
    return _masked_softmax(logits, mask)


def dot_product_attention(query, key_, value, mask=None, dropout=None, *, key=None,
                          inference=None):
    """Scaled dot-product attention of one head, ``weights @ value``, as Equinox's.

    Arguments:
        query: an array ``(q_seq, qk_size)``.
        key_: an array ``(kv_seq, qk_size)``.
        value: an array ``(kv_seq, v_size)``.
        mask: None, or a boolean array ``(q_seq, kv_seq)``.
        dropout: None, or a ``Dropout`` applied to the weights.
        key: the PRNG key for the dropout.
        inference: passed to the dropout.

    Returns:
        An array ``(q_seq, v_size)``.

    Example:
        >>> dot_product_attention(jnp.ones((1, 2)), jnp.ones((3, 2)), jnp.arange(3.0)[:, None])
        Array([[1.]], dtype=float32)
    """
    weights = dot_product_attention_weights(query, key_, mask)
    if dropout is not None:
        weights = dropout(weights, key=key, inference=inference)
    return jnp.einsum("sS,Sd->sd", weights, jnp.asarray(value))

"""``Embedding`` and ``RotaryPositionalEmbedding``."""

from __future__ import annotations

from .. import numpy as jnp
from .. import random
from ..module import Module, field
from ._misc import check_key, float_dtype


class Embedding(Module):
    """A lookup table of vectors, as ``equinox.nn.Embedding``: ``embedding(i)`` is ``weight[i]``.

    The weight, of shape ``(num_embeddings, embedding_size)``, is standard normal from
    ``random.normal(key, ...)`` unless given. Beyond Equinox, which takes one scalar
    index, an integer array of indices of any shape gives ``weight[x]``, of shape
    ``(*x.shape, embedding_size)``.

    Arguments:
        num_embeddings: the number of vectors (read from ``weight`` if omitted).
        embedding_size: the size of each vector (read from ``weight`` if omitted).
        weight: the table itself, of shape ``(num_embeddings, embedding_size)``.
        dtype: the dtype of a generated table (default float32, float64 with x64 on).
        key: a PRNG key (keyword only); needed unless ``weight`` is given.

    Returns:
        The layer.

    Example:
        >>> embedding = Embedding(weight=jnp.array([[0.0, 1.0], [2.0, 3.0]]))
        >>> embedding(1)
        Array([2., 3.], dtype=float32)
    """

    num_embeddings: int = field(static=True)
    embedding_size: int = field(static=True)
    weight: object

    def __init__(self, num_embeddings=None, embedding_size=None, weight=None, dtype=None,
                 *, key=None):
        if weight is None:
            if num_embeddings is None or embedding_size is None:
                raise ValueError(
                    "Embedding needs Embedding(num_embeddings, embedding_size, "
                    "key=invarax.random.key(0)), or the table itself: Embedding(weight=w)"
                )
            for name, n in (("num_embeddings", num_embeddings),
                            ("embedding_size", embedding_size)):
                if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                    raise ValueError(f"Embedding: {name} must be a non-negative int, got {n!r}")
            key = check_key("Embedding", key)
            weight = random.normal(key, (num_embeddings, embedding_size), float_dtype(dtype))
        else:
            weight = jnp.asarray(weight)
            if weight.ndim != 2:
                raise ValueError("Embedding: weight must have shape (num_embeddings, "
                                 f"embedding_size), got shape {tuple(weight.shape)}")
            expected = (weight.shape[0] if num_embeddings is None else num_embeddings,
                        weight.shape[1] if embedding_size is None else embedding_size)
            if tuple(weight.shape) != expected:
                raise ValueError(f"Embedding: weight must have shape (num_embeddings, "
                                 f"embedding_size) = {expected}, got shape "
                                 f"{tuple(weight.shape)}")
            num_embeddings, embedding_size = weight.shape
        self.num_embeddings = num_embeddings
        self.embedding_size = embedding_size
        self.weight = weight

    def __call__(self, x, *, key=None):
        """Look up the vectors of the indices ``x``.

        Arguments:
            x: an integer index, or an integer array of indices.
            key: ignored (for the common layer signature).

        Returns:
            ``weight[x]``, of shape ``(*x.shape, embedding_size)``.

        Example:
            >>> Embedding(3, 2, key=invarax.random.key(0))(jnp.array([0, 2])).shape
            (2, 2)
        """
        del key
        x = jnp.asarray(x)
        if not jnp.issubdtype(x.dtype, jnp.integer):
            raise TypeError(
                f"Embedding takes integer indices, got {x.dtype.name}{list(x.shape)}; "
                "convert them with x.astype(jnp.int32)"
            )
        return self.weight[x]


class RotaryPositionalEmbedding(Module):
    """Rotary positional embedding (RoPE), as ``equinox.nn.RotaryPositionalEmbedding``.

    Position ``t``'s vector is rotated pairwise, its halves ``(x1, x2)`` becoming
    ``(x1 cos - x2 sin, x2 cos + x1 sin)`` at the angles ``t * theta ** (-2i / size)``;
    the angles are computed in float32 (float64 with x64 on) and cast to ``dtype``.

    Arguments:
        embedding_size: the vectors' size; even.
        theta: the base of the angles' frequencies.
        dtype: the dtype of the cosines and sines (default float32, float64 with x64 on).

    Returns:
        The layer; call it on one sequence ``(seq_length, embedding_size)`` (in
        ``MultiheadAttention``, from ``process_heads``).

    Example:
        >>> rope = RotaryPositionalEmbedding(2)
        >>> rope(jnp.array([[1.0, 0.0], [1.0, 0.0]]))
        Array([[1.        , 0.        ],
               [0.5403023 , 0.84147096]], dtype=float32)
    """

    embedding_size: int = field(static=True)
    theta: float = field(static=True)
    dtype: object = field(static=True)

    def __init__(self, embedding_size, theta=10_000.0, dtype=None):
        if embedding_size < 0 or embedding_size % 2:
            raise ValueError(f"RotaryPositionalEmbedding: embedding_size must be even and "
                             f"non-negative, got {embedding_size}")
        self.embedding_size = embedding_size
        self.theta = theta
        self.dtype = float_dtype(dtype)

    @staticmethod
    def rotate_half(x):
        """``concatenate([-x2, x1])`` of the halves ``x1, x2`` of the last axis."""
        half = x.shape[-1] // 2
        return jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)

    @staticmethod
    def precompute_freqs_cis(embedding_size, end, theta, dtype):
        """The cosines and sines ``(end, embedding_size // 2)`` of the rotation angles."""
        freqs = 1.0 / (theta ** (jnp.arange(0.0, embedding_size, 2)[None, :]
                                 / embedding_size))
        angles = jnp.outer(jnp.arange(float(end)), freqs)
        return jnp.cos(angles).astype(dtype), jnp.sin(angles).astype(dtype)

    def __call__(self, x, *, key=None):
        """Rotate each position of ``x`` (``(seq_length, embedding_size)``) by its angles."""
        del key
        x = jnp.asarray(x)
        if x.ndim != 2 or x.shape[1] != self.embedding_size:
            raise ValueError(
                f"RotaryPositionalEmbedding({self.embedding_size}) needs x of shape "
                f"(seq_length, {self.embedding_size}), got {tuple(x.shape)}")
        cos, sin = self.precompute_freqs_cis(self.embedding_size, x.shape[0], self.theta,
                                             self.dtype)
        cos, sin = jnp.tile(cos, (1, 2)), jnp.tile(sin, (1, 2))
        return (x * cos + self.rotate_half(x) * sin).astype(x.dtype)

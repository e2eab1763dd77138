"""``Dropout``."""

from __future__ import annotations

from .. import lax, random
from .. import numpy as jnp
from ..module import Module
from ._misc import deterministic_alias


class Dropout(Module):
    """Dropout, as ``equinox.nn.Dropout``: zero each element with probability ``p``.

    In training mode each element is kept with probability ``q = 1 - p`` (a mask from
    ``random.bernoulli(key, q, x.shape)``, so a key gives Equinox's mask bit for bit) and
    the kept elements are divided by ``q``; in inference mode, or when ``p == 0``, the
    input is returned unchanged. Any input shape is accepted.

    Arguments:
        p: the probability of zeroing an element.
        inference: the default mode: True for inference (no dropout), False for training.
        deterministic: Equinox's deprecated name for ``inference`` (warns).

    Returns:
        The layer; call it as ``dropout(x, key=key)`` in training mode.

    Example:
        >>> dropout = Dropout(0.5)
        >>> dropout(jnp.ones(4), key=invarax.random.key(0))
        Array([0., 0., 2., 2.], dtype=float32)
        >>> dropout(jnp.ones(4), inference=True)
        Array([1., 1., 1., 1.], dtype=float32)
    """

    p: float
    inference: bool

    def __init__(self, p=0.5, inference=False, *, deterministic=None):
        inference = deterministic_alias("Dropout(deterministic=...)", inference, deterministic)
        if isinstance(p, (int, float)) and not 0 <= p <= 1:
            raise ValueError(f"Dropout: p is a probability in [0, 1], got {p}")
        self.p = p
        self.inference = inference

    @property
    def deterministic(self) -> bool:
        """Equinox's old name for ``inference``."""
        return self.inference

    def __call__(self, x, *, key=None, inference=None, deterministic=None):
        """Apply dropout.

        Arguments:
            x: an array of any shape.
            key: a PRNG key; required in training mode.
            inference: overrides the layer's ``inference`` flag when not None.
            deterministic: Equinox's deprecated name for ``inference`` (warns).

        Returns:
            An array of ``x``'s shape.

        Example:
            >>> Dropout(0.0)(jnp.ones(2))
            Array([1., 1.], dtype=float32)
        """
        inference = deterministic_alias("Dropout()(deterministic=...)", inference,
                                        deterministic)
        if inference is None:
            inference = self.inference
        if isinstance(self.p, (int, float)) and self.p == 0:
            inference = True
        if inference:
            return x
        if key is None:
            raise RuntimeError(
                "Dropout in training mode needs a PRNG key: call it as "
                "dropout(x, key=invarax.random.key(0)) (a fresh key per step), or pass "
                "inference=True (to the call or to Dropout(...)) to turn dropout off."
            )
        x = jnp.asarray(x)
        # A Python p stays a Python float (as in JAX), so q rounds once, to x's dtype.
        q = 1 - (self.p if isinstance(self.p, (int, float)) else lax.stop_gradient(self.p))
        mask = random.bernoulli(key, q, x.shape)
        return jnp.where(mask, x / q, 0)

"""``Sequential`` and ``Lambda``."""

from __future__ import annotations

import inspect

from .. import random
from ..module import Module
from ._stateful import NO_STATE, StatefulLayer


def _stateful(layer) -> bool:
    return isinstance(layer, StatefulLayer) and layer.is_stateful()


class Sequential(StatefulLayer):
    """Layers applied one after the other, as ``equinox.nn.Sequential``.

    Each layer is called as ``layer(x, key=k)``. Given a key, it is split with
    ``random.split(key, len(layers))`` and layer ``i`` gets key ``i`` (as Equinox does);
    otherwise every layer gets ``key=None``. Wrap a plain function in ``Lambda``. Given a
    ``State``, stateful layers (``BatchNorm``, ...) are called as
    ``x, state = layer(x, state, key=k)`` and the final state is returned too.

    Arguments:
        layers: a sequence of layers (modules whose ``__call__`` takes ``key=``).

    Returns:
        The composite layer; it can be indexed, sliced (giving a ``Sequential``),
        iterated and measured with ``len``.

    Example:
        >>> model = Sequential([nn.Linear(2, 3, key=invarax.random.key(0)), Lambda(nn.relu)])
        >>> model(jnp.ones(2)).shape
        (3,)
    """

    layers: tuple

    def __init__(self, layers):
        layers = tuple(layers)
        for i, layer in enumerate(layers):
            if not callable(layer):
                raise TypeError(f"Sequential: layer {i} is not callable: {layer!r}")
            if not _takes_key(layer):
                name = getattr(layer, "__name__", type(layer).__name__)
                raise TypeError(
                    f"Sequential: layer {i} ({name}) does not take the keyword argument "
                    f"key=, which Sequential passes to every layer; wrap it as "
                    f"nn.Lambda({name})"
                )
        self.layers = layers

    def is_stateful(self) -> bool:
        """Whether any layer is stateful (then the call takes and returns a state)."""
        return any(_stateful(layer) for layer in self.layers)

    def __call__(self, x, state=NO_STATE, *, key=None):
        """Apply the layers in order.

        Arguments:
            x: the input of the first layer.
            state: a ``State``, threaded through the stateful layers (optional).
            key: a PRNG key split across the layers, or None.

        Returns:
            The output of the last layer; ``(output, state)`` if a state was given.

        Example:
            >>> Sequential([Lambda(nn.relu)])(jnp.array([-1.0, 1.0]))
            Array([0., 1.], dtype=float32)
        """
        keys = [None] * len(self.layers) if key is None else random.split(key, len(self.layers))
        for layer, layer_key in zip(self.layers, keys, strict=True):
            if state is not NO_STATE and _stateful(layer):
                x, state = layer(x, state=state, key=layer_key)
            else:
                x = layer(x, key=layer_key)
        return x if state is NO_STATE else (x, state)

    def __getitem__(self, i):
        if isinstance(i, int):
            return self.layers[i]
        if isinstance(i, slice):
            return Sequential(self.layers[i])
        raise TypeError(f"Sequential indices are ints or slices, got {type(i).__name__}")

    def __iter__(self):
        yield from self.layers

    def __len__(self):
        return len(self.layers)


class Lambda(Module):
    """A function as a layer, as ``equinox.nn.Lambda``: ``Lambda(fn)(x, key=k)`` is ``fn(x)``.

    Arguments:
        fn: a function of one argument.

    Returns:
        The layer, for use in ``Sequential``.

    Example:
        >>> Lambda(jnp.tanh)(jnp.zeros(2))
        Array([0., 0.], dtype=float32)
    """

    fn: object

    def __call__(self, x, *, key=None):
        """Return ``fn(x)`` (``key`` is ignored).

        Arguments:
            x: the input.
            key: ignored.

        Returns:
            ``fn(x)``.

        Example:
            >>> Lambda(lambda x: 2 * x)(jnp.ones(2))
            Array([2., 2.], dtype=float32)
        """
        del key
        return self.fn(x)


def _takes_key(layer) -> bool:
    """Whether ``layer(x, key=...)`` is a valid call (True when the signature is unknown)."""
    try:
        parameters = inspect.signature(layer).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "key" or p.kind is p.VAR_KEYWORD for p in parameters)

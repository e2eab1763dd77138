"""``MLP``: a stack of ``Linear`` layers with an activation between them."""

from __future__ import annotations

from .. import random
from ..module import Module, field
from ._activations import identity, relu
from ._linear import Linear
from ._misc import check_key, float_dtype


class MLP(Module):
    """A multi-layer perceptron, as ``equinox.nn.MLP``.

    ``depth`` hidden layers of ``width_size`` (``depth + 1`` ``Linear`` layers), with
    ``activation`` after each hidden layer and ``final_activation`` after the last. The
    layers are initialised from ``random.split(key, depth + 1)``, in order, so a key gives
    Equinox's initial parameters bit for bit.

    The activations are applied to whole arrays (Equinox maps them over the neurons, which
    only matters for activations with parameters of their own, which ``MLP`` does not
    support). Like ``Linear``, the input may carry leading batch dimensions,
    ``(..., in_size)``, with bitwise the same rows as one example at a time or ``vmap``.

    Arguments:
        in_size: the input size, or ``"scalar"``.
        out_size: the output size, or ``"scalar"``.
        width_size: the size of each hidden layer.
        depth: the number of hidden layers (0: one ``Linear`` from input to output).
        activation: the function after each hidden layer (default ``relu``).
        final_activation: the function after the output layer (default identity).
        use_bias: biases in the hidden layers.
        use_final_bias: a bias in the output layer.
        dtype: the parameters' dtype (default float32, float64 with x64 on).
        key: a PRNG key (keyword only), e.g. ``invarax.random.key(0)``.

    Returns:
        The model; call it on ``(..., in_size)`` to get ``(..., out_size)``.

    Example:
        >>> mlp = MLP(2, 1, width_size=8, depth=2, key=invarax.random.key(0))
        >>> [layer.weight.shape for layer in mlp.layers]
        [(8, 2), (8, 8), (1, 8)]
        >>> mlp(jnp.zeros((4, 2))).shape
        (4, 1)
    """

    layers: tuple
    activation: object
    final_activation: object
    use_bias: bool = field(static=True)
    use_final_bias: bool = field(static=True)
    in_size: object = field(static=True)
    out_size: object = field(static=True)
    width_size: int = field(static=True)
    depth: int = field(static=True)

    def __init__(self, in_size, out_size, width_size, depth, activation=relu,
                 final_activation=identity, use_bias=True, use_final_bias=True, dtype=None,
                 *, key=None):
        key = check_key("MLP", key)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValueError(f"MLP: depth must be a non-negative int, got {depth!r}")
        dtype = float_dtype(dtype)
        keys = random.split(key, depth + 1)
        if depth == 0:
            layers = [Linear(in_size, out_size, use_final_bias, dtype, key=keys[0])]
        else:
            layers = [Linear(in_size, width_size, use_bias, dtype, key=keys[0])]
            layers += [Linear(width_size, width_size, use_bias, dtype, key=keys[i])
                       for i in range(1, depth)]
            layers.append(Linear(width_size, out_size, use_final_bias, dtype, key=keys[depth]))
        self.layers = tuple(layers)
        self.activation = activation
        self.final_activation = final_activation
        self.use_bias = use_bias
        self.use_final_bias = use_final_bias
        self.in_size = in_size
        self.out_size = out_size
        self.width_size = width_size
        self.depth = depth

    def __call__(self, x, *, key=None):
        """Apply the layers and activations.

        Arguments:
            x: an array of shape ``(..., in_size)`` (``(...)`` for ``"scalar"``).
            key: ignored (for the common layer signature).

        Returns:
            An array of shape ``(..., out_size)`` (``(...)`` for ``"scalar"``).

        Example:
            >>> mlp = MLP("scalar", "scalar", 4, 1, key=invarax.random.key(0))
            >>> mlp(jnp.array(1.0)).shape
            ()
        """
        del key
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.final_activation(self.layers[-1](x))

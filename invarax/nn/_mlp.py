"""``MLP``: a stack of ``Linear`` layers with an activation between them."""

from __future__ import annotations

from .. import lax, random
from .. import numpy as jnp
from ..module import Module, field, filter_vmap, if_array, is_array
from ..tree_util import tree_leaves, tree_map
from ._activations import identity, relu
from ._linear import Linear
from ._misc import check_key, float_dtype


class MLP(Module):
    """A multi-layer perceptron, as ``equinox.nn.MLP``.

    ``depth`` hidden layers of ``width_size`` (``depth + 1`` ``Linear`` layers), with
    ``activation`` after each hidden layer and ``final_activation`` after the last. The
    layers are initialised from ``random.split(key, depth + 1)``, in order, so a key gives
    Equinox's initial parameters bit for bit.

    As in Equinox, an activation with parameters of its own (a learnt slope, say) gets a
    separate copy for every neuron: ``activation``'s arrays are stacked to
    ``(depth, width_size, ...)`` and ``final_activation``'s to ``(out_size, ...)``, and
    each neuron applies its own copy. An activation without arrays (``relu``) is applied
    to whole arrays, which gives the same bits. Like ``Linear``, the input may carry
    leading batch dimensions, ``(..., in_size)``, with bitwise the same rows as one example
    at a time or ``vmap``.

    With ``scan=True`` (as Equinox's), the ``depth - 1`` hidden ``width_size x width_size``
    layers are one ``Linear`` whose arrays are stacked on a leading axis (so ``layers`` is
    ``(input, hidden, output)`` whenever ``depth >= 1``) and are run by ``lax.scan``: the
    program holds one copy of the hidden layer's computation whatever the depth. The
    parameters are those of ``scan=False`` from the same key, stacked, bit for bit, and the
    outputs are bitwise those of ``scan=False``.

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
        scan: stack the hidden layers and run them with ``lax.scan`` (keyword only).
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
    scan: bool = field(static=True, default=False)

    def __init__(self, in_size, out_size, width_size, depth, activation=relu,
                 final_activation=identity, use_bias=True, use_final_bias=True, dtype=None,
                 *, scan=False, key=None):
        key = check_key("MLP", key)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValueError(f"MLP: depth must be a non-negative int, got {depth!r}")
        dtype = float_dtype(dtype)
        keys = random.split(key, depth + 1)
        if depth == 0:
            layers = [Linear(in_size, out_size, use_final_bias, dtype, key=keys[0])]
        else:
            layers = [Linear(in_size, width_size, use_bias, dtype, key=keys[0])]

            def hidden(k):
                return Linear(width_size, width_size, use_bias, dtype, key=k)

            if scan:
                layers.append(filter_vmap(hidden)(keys[1:depth]))
            else:
                layers += [hidden(keys[i]) for i in range(1, depth)]
            layers.append(Linear(width_size, out_size, use_final_bias, dtype, key=keys[depth]))
        self.layers = tuple(layers)
        # A learnt activation gets a copy of its parameters per layer and per neuron.
        self.activation = filter_vmap(filter_vmap(lambda: activation, axis_size=width_size),
                                      axis_size=depth)()
        self.final_activation = final_activation if out_size == "scalar" else filter_vmap(
            lambda: final_activation, axis_size=out_size)()
        self.use_bias = use_bias
        self.use_final_bias = use_final_bias
        self.in_size = in_size
        self.out_size = out_size
        self.width_size = width_size
        self.depth = depth
        self.scan = bool(scan)

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
        if self.scan and self.depth > 0:
            first, hidden, last = self.layers

            def step(h, layer_i):
                i, layer = layer_i
                return _per_neuron(self._activation(i), layer(h)), None

            x = _per_neuron(self._activation(0), first(jnp.asarray(x)))
            x, _ = lax.scan(step, x, (jnp.arange(1, self.depth), hidden))
        else:
            for i, layer in enumerate(self.layers[:-1]):
                x = _per_neuron(self._activation(i), layer(x))
        x = self.layers[-1](x)
        if self.out_size == "scalar":
            return self.final_activation(x)
        return _per_neuron(self.final_activation, x)

    def _activation(self, i):
        """The activation of hidden layer ``i`` (an int or a traced index): each array of
        ``activation`` at row ``i``, one copy per neuron."""
        if not _has_arrays(self.activation):
            return self.activation
        return tree_map(lambda a: a[i] if is_array(a) else a, self.activation)


def _has_arrays(tree) -> bool:
    return any(map(is_array, tree_leaves(tree)))


def _per_neuron(activation, x):
    """``activation`` on ``x`` (``(..., n)``): whole, when it holds no arrays; else copy ``j``
    of its arrays (stacked on a leading axis of size ``n``) on neuron ``j``."""
    if not _has_arrays(activation):
        return activation(x)
    return filter_vmap(lambda a, h: a(h), in_axes=(if_array(0), -1), out_axes=-1)(
        activation, x)

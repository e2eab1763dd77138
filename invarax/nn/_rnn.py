"""Recurrent cells: ``GRUCell`` and ``LSTMCell``, as Equinox's (one time step; loop them
with ``lax.scan``)."""

from __future__ import annotations

import math

from .. import numpy as jnp
from .. import random
from ..module import Module, field
from ._activations import sigmoid
from ._misc import check_key, float_dtype, uniform_init


def _check_sizes(layer, input_size, hidden_size):
    for name, n in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ValueError(f"{layer}: {name} must be a positive int, got {n!r}")


def _check_shape(layer, what, x, size):
    if getattr(x, "shape", None) != (size,):
        raise ValueError(f"{layer}: {what} must have shape ({size},), got "
                         f"{getattr(x, 'shape', type(x).__name__)}; the cell takes one example "
                         "(use vmap for a batch)")


class GRUCell(Module):
    """One step of a Gated Recurrent Unit, as ``equinox.nn.GRUCell``.

    ``weight_ih`` is ``(3 * hidden_size, input_size)``, ``weight_hh`` ``(3 * hidden_size,
    hidden_size)``, ``bias`` ``(3 * hidden_size,)`` and ``bias_n`` ``(hidden_size,)``, all
    uniform in ``[-lim, lim)`` with ``lim = sqrt(1 / hidden_size)`` from
    ``random.split(key, 4)``: a key gives Equinox's parameters bit for bit.

    Arguments:
        input_size: the size of each input vector.
        hidden_size: the size of the hidden state.
        use_bias: add the biases.
        dtype: the parameters' dtype (default float32, float64 with x64 on).
        key: a PRNG key (keyword only).

    Returns:
        The cell: ``cell(input, hidden)`` gives the next hidden state.

    Example:
        >>> cell = GRUCell(3, 4, key=invarax.random.key(0))
        >>> def step(h, x):
        ...     return cell(x, h), None
        >>> h, _ = invarax.lax.scan(step, jnp.zeros(4), jnp.ones((5, 3)))
        >>> h.shape
        (4,)
    """

    weight_ih: object
    weight_hh: object
    bias: object
    bias_n: object
    input_size: int = field(static=True)
    hidden_size: int = field(static=True)
    use_bias: bool = field(static=True)

    def __init__(self, input_size, hidden_size, use_bias=True, dtype=None, *, key=None):
        key = check_key("GRUCell", key)
        _check_sizes("GRUCell", input_size, hidden_size)
        dtype = float_dtype(dtype)
        ihkey, hhkey, bkey, bkey2 = random.split(key, 4)
        lim = math.sqrt(1 / hidden_size)
        self.weight_ih = uniform_init(ihkey, (3 * hidden_size, input_size), dtype, lim)
        self.weight_hh = uniform_init(hhkey, (3 * hidden_size, hidden_size), dtype, lim)
        self.bias = uniform_init(bkey, (3 * hidden_size,), dtype, lim) if use_bias else None
        self.bias_n = uniform_init(bkey2, (hidden_size,), dtype, lim) if use_bias else None
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.use_bias = use_bias

    def __call__(self, input, hidden, *, key=None):
        """The next hidden state.

        Arguments:
            input: an array of shape ``(input_size,)``.
            hidden: the hidden state, of shape ``(hidden_size,)``.
            key: ignored (for the common layer signature).

        Returns:
            The new hidden state, of shape ``(hidden_size,)``.
        """
        _check_shape("GRUCell", "input", input, self.input_size)
        _check_shape("GRUCell", "hidden", hidden, self.hidden_size)
        bias, bias_n = (self.bias, self.bias_n) if self.use_bias else (0, 0)
        igates = jnp.split(self.weight_ih @ input + bias, 3)
        hgates = jnp.split(self.weight_hh @ hidden, 3)
        reset = sigmoid(igates[0] + hgates[0])
        inp = sigmoid(igates[1] + hgates[1])
        new = jnp.tanh(igates[2] + reset * (hgates[2] + bias_n))
        return new + inp * (hidden - new)


class LSTMCell(Module):
    """One step of a Long Short-Term Memory unit, as ``equinox.nn.LSTMCell``.

    ``weight_ih`` is ``(4 * hidden_size, input_size)``, ``weight_hh`` ``(4 * hidden_size,
    hidden_size)`` and ``bias`` ``(4 * hidden_size,)`` (gates in the order input, forget,
    cell, output), uniform in ``[-lim, lim)`` with ``lim = sqrt(1 / hidden_size)`` from
    ``random.split(key, 3)``: a key gives Equinox's parameters bit for bit.

    Arguments:
        input_size: the size of each input vector.
        hidden_size: the size of the hidden and cell states.
        use_bias: add the bias.
        dtype: the parameters' dtype (default float32, float64 with x64 on).
        key: a PRNG key (keyword only).

    Returns:
        The cell: ``cell(input, (h, c))`` gives the next ``(h, c)``.

    Example:
        >>> cell = LSTMCell(3, 4, key=invarax.random.key(0))
        >>> state = (jnp.zeros(4), jnp.zeros(4))
        >>> (h, c), _ = invarax.lax.scan(lambda s, x: (cell(x, s), None), state, jnp.ones((5, 3)))
        >>> h.shape, c.shape
        ((4,), (4,))
    """

    weight_ih: object
    weight_hh: object
    bias: object
    input_size: int = field(static=True)
    hidden_size: int = field(static=True)
    use_bias: bool = field(static=True)

    def __init__(self, input_size, hidden_size, use_bias=True, dtype=None, *, key=None):
        key = check_key("LSTMCell", key)
        _check_sizes("LSTMCell", input_size, hidden_size)
        dtype = float_dtype(dtype)
        ihkey, hhkey, bkey = random.split(key, 3)
        lim = math.sqrt(1 / hidden_size)
        self.weight_ih = uniform_init(ihkey, (4 * hidden_size, input_size), dtype, lim)
        self.weight_hh = uniform_init(hhkey, (4 * hidden_size, hidden_size), dtype, lim)
        self.bias = uniform_init(bkey, (4 * hidden_size,), dtype, lim) if use_bias else None
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.use_bias = use_bias

    def __call__(self, input, hidden, *, key=None):
        """The next ``(h, c)``.

        Arguments:
            input: an array of shape ``(input_size,)``.
            hidden: the pair ``(h, c)``, each of shape ``(hidden_size,)``.
            key: ignored (for the common layer signature).

        Returns:
            The new ``(h, c)``.
        """
        if not (isinstance(hidden, (tuple, list)) and len(hidden) == 2):
            raise TypeError(f"LSTMCell: hidden must be a pair (h, c), got "
                            f"{type(hidden).__name__}")
        h, c = hidden
        _check_shape("LSTMCell", "input", input, self.input_size)
        _check_shape("LSTMCell", "hidden h", h, self.hidden_size)
        _check_shape("LSTMCell", "hidden c", c, self.hidden_size)
        lin = self.weight_ih @ input + self.weight_hh @ h
        if self.use_bias:
            lin = lin + self.bias
        i, f, g, o = jnp.split(lin, 4)
        i = sigmoid(i)
        f = sigmoid(f)
        g = jnp.tanh(g)
        o = sigmoid(o)
        c = f * c + i * g
        h = o * jnp.tanh(c)
        return (h, c)

"""``WeightNorm`` and ``SpectralNorm``: reparametrised weights of a wrapped layer."""

from __future__ import annotations

import typing

from .. import lax, random
from .. import numpy as jnp
from ..module import Module, field, tree_at
from ._misc import check_key
from ._stateful import StatefulLayer, StateIndex


def _norm_except_axis(v, axis):
    """The 2-norm of ``v`` over every axis but ``axis`` (all axes if None), kept as size 1."""
    axes = tuple(a for a in range(v.ndim) if axis is None or a != axis % v.ndim)
    return jnp.sqrt(jnp.sum(v * v, axis=axes, keepdims=True))


def _weight_of(layer, name, who):
    weight = getattr(layer, name, None)
    if weight is None or not hasattr(weight, "shape"):
        raise ValueError(f"{who}: the layer {type(layer).__name__} has no array field "
                         f"{name!r}; pass weight_name= naming its weight")
    return weight


_Layer = typing.TypeVar("_Layer")


class WeightNorm(Module, typing.Generic[_Layer]):
    """Weight normalisation, as ``equinox.nn.WeightNorm``: ``weight = g * v / |v|``.

    The wrapped layer's weight ``v`` is used through its direction; its norm over every
    axis but ``axis`` (one norm per output row, by default) is the learnt ``g``,
    initialised to that norm, so the layer starts out computing what it did.

    Arguments:
        layer: the layer to wrap (a ``Linear``, a ``Conv``, ...).
        weight_name: the name of its weight field.
        axis: the axis whose entries get one norm each (None: one norm for the whole
            weight).

    Returns:
        The wrapped layer, called as the layer is.

    Example:
        >>> linear = nn.Linear(3, 2, key=invarax.random.key(0))
        >>> wn = nn.WeightNorm(linear)
        >>> wn.g.shape, float(jnp.max(jnp.abs(wn(jnp.ones(3)) - linear(jnp.ones(3))))) < 1e-6
        ((2, 1), True)
    """

    layer: object
    g: object
    weight_name: str = field(static=True)
    axis: object = field(static=True)

    def __init__(self, layer, weight_name="weight", axis=0):
        self.layer = layer
        self.weight_name = weight_name
        self.axis = axis
        self.g = _norm_except_axis(_weight_of(layer, weight_name, "WeightNorm"), axis)

    def __call__(self, x, *, key=None):
        """The wrapped layer with weight ``g * v / |v|``, applied to ``x``."""
        v = getattr(self.layer, self.weight_name)
        weight = v * self.g / _norm_except_axis(v, self.axis)
        return tree_at(lambda m: getattr(m, self.weight_name), self.layer, weight)(x)


def _power_iteration(weight, u, v, eps):
    u = weight @ v
    u = u / jnp.maximum(eps, jnp.sqrt(jnp.sum(u ** 2)))
    v = weight.T @ u
    v = v / jnp.maximum(eps, jnp.sqrt(jnp.sum(v ** 2)))
    return u, v


class SpectralNorm(StatefulLayer, typing.Generic[_Layer]):
    """Spectral normalisation, as ``equinox.nn.SpectralNorm``: ``weight / sigma``.

    ``sigma``, the weight's largest singular value (the weight reshaped to
    ``(shape[0], -1)``), is estimated by power iteration; the iteration's vectors ``u, v``
    live in the ``State`` and advance ``num_power_iterations`` steps per call in training
    mode. They start from ``random.normal`` draws of ``random.split(key)`` followed by 15
    iterations, as Equinox's.

    Arguments:
        layer: the layer to wrap.
        weight_name: the name of its weight field (at least 2-d).
        num_power_iterations: iterations per training call.
        eps: the floor of the vectors' norms.
        inference: the default mode: True leaves ``u, v`` unchanged.
        key: a PRNG key (keyword only) for the starting vectors.

    Returns:
        The layer; build it with ``nn.make_with_state(nn.SpectralNorm)(...)`` and call it
        as ``y, state = layer(x, state)``.

    Example:
        >>> linear = nn.Linear(3, 2, key=invarax.random.key(0))
        >>> sn, state = nn.make_with_state(nn.SpectralNorm)(linear, "weight",
        ...                                                key=invarax.random.key(1))
        >>> y, state = sn(jnp.ones(3), state)
        >>> y.shape
        (2,)
    """

    layer: object
    uv_index: object
    inference: bool
    weight_name: str = field(static=True)
    num_power_iterations: int = field(static=True)
    eps: float = field(static=True)

    def __init__(self, layer, weight_name, num_power_iterations=1, eps=1e-12,
                 inference=False, *, key=None):
        key = check_key("SpectralNorm", key)
        weight = _weight_of(layer, weight_name, "SpectralNorm")
        if weight.ndim < 2:
            raise ValueError(f"SpectralNorm: the weight {weight_name!r} must be at least "
                             f"2-d, got shape {tuple(weight.shape)}")
        self.layer = layer
        self.weight_name = weight_name
        self.num_power_iterations = num_power_iterations
        self.eps = eps
        self.inference = inference
        weight = weight.reshape(weight.shape[0], -1)
        ukey, vkey = random.split(key)
        u = random.normal(ukey, (weight.shape[0],), weight.dtype)
        v = random.normal(vkey, (weight.shape[1],), weight.dtype)
        for _ in range(15):
            u, v = _power_iteration(weight, u, v, eps)
        self.uv_index = StateIndex((u, v))

    def __call__(self, x, state, *, key=None, inference=None):
        """Apply the layer with its weight divided by ``sigma``; returns ``(y, state)``."""
        del key
        u, v = state.get(self.uv_index)
        weight = getattr(self.layer, self.weight_name)
        shape = weight.shape
        weight = weight.reshape(shape[0], -1)
        if inference is None:
            inference = self.inference
        if not inference:
            frozen = lax.stop_gradient(weight)
            for _ in range(self.num_power_iterations):
                u, v = _power_iteration(frozen, u, v, self.eps)
            state = state.set(self.uv_index, (u, v))
        sigma = jnp.einsum("i,ij,j->", u, weight, v)
        layer = tree_at(lambda m: getattr(m, self.weight_name), self.layer,
                        (weight / sigma).reshape(shape))
        return layer(x), state

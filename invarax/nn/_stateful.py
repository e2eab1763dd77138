"""Stateful layers, as Equinox's: ``StateIndex``, ``State``, ``make_with_state``,
``delete_init_state``, and ``inference_mode``.

A stateful layer (``BatchNorm``, ``SpectralNorm``) holds a ``StateIndex``: a key and the
state's initial value. ``make_with_state(Layer)(...)`` builds the layer and collects the
initial values into a ``State``, a pytree mapping each key to its value; the layer's call
takes the state and returns the updated one.
"""

from __future__ import annotations

import types
import typing

from ..core.pytree import (
    keystr,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from ..core.pytree_registry import register_pytree_node
from ..module import Module, field, tree_at
from ..module._tree import tree_inference

NO_STATE = object()  # the default of a stateless layer's ``state`` argument


class _Deleted(Module):
    """Stands for an initial state deleted by ``delete_init_state`` (a pytree with no leaves)."""


_DELETED = _Deleted()


_Value = typing.TypeVar("_Value")


class StateIndex(Module, typing.Generic[_Value]):
    """The key of one piece of state, and its initial value, as ``equinox.nn.StateIndex``.

    Arguments:
        init: the initial value: a pytree of arrays.

    Returns:
        The index; a layer stores it as a field and reads and writes its value with
        ``state.get(index)`` and ``state.set(index, value)``.

    Example:
        >>> class Counter(invarax.Module):
        ...     index: nn.StateIndex
        ...     def __init__(self):
        ...         self.index = nn.StateIndex(jnp.array(0))
        ...     def __call__(self, x, state):
        ...         count = state.get(self.index)
        ...         return x + count, state.set(self.index, count + 1)
        >>> counter, state = nn.make_with_state(Counter)()
        >>> _, state = counter(1, state)
        >>> counter(1, state)[0]
        Array(2, dtype=int32, weak_type=True)
    """

    marker: object = field(static=True)
    init: object

    def __init__(self, init):
        if isinstance(init, types.FunctionType):
            raise ValueError(
                "StateIndex takes the initial value itself (an array or a pytree of arrays), "
                "not a function making it, as Equinox since 0.11: "
                "StateIndex(jnp.zeros(3)), not StateIndex(lambda: jnp.zeros(3))")
        self.marker = object()
        self.init = init


def _is_index(x) -> bool:
    return isinstance(x, StateIndex)


_OLD_STATE = (
    "this State was already used: set() and update() return a new State and invalidate "
    "the old one. Use the returned state (`x, state = layer(x, state)`), or clone one "
    "on purpose with tree_unflatten(*reversed(tree_flatten(state)))."
)


def _asarray(x):
    from .. import numpy as jnp

    return jnp.asarray(x)


class State:
    """The state of a model (say, the running statistics of its ``BatchNorm`` layers).

    A pytree mapping each ``StateIndex`` of the model to its value, as
    ``equinox.nn.State``. Build it with ``make_with_state``. ``set`` and ``update`` return
    a new state and invalidate the old one, so that reusing a stale state is an error.

    Arguments:
        model: any pytree; the initial values of its ``StateIndex`` es are collected.

    Returns:
        The state.

    Example:
        >>> bn, state = nn.make_with_state(nn.BatchNorm)(2, "batch", mode="batch")
        >>> state
        State(BatchNorm.batch_counter: weak_i32[], BatchNorm.batch_state_index: (f32[2], f32[2]))
    """

    __slots__ = ("_state",)

    def __init__(self, model):
        state = {}
        for leaf in tree_leaves(model, is_leaf=_is_index):
            if _is_index(leaf):
                if isinstance(leaf.init, _Deleted):
                    raise ValueError(
                        "State(model): this model's initial states were deleted (it came "
                        "from make_with_state or delete_init_state). Build model and state "
                        "together with nn.make_with_state(ModelClass)(...args...).")
                state[leaf.marker] = tree_map(_asarray, leaf.init)
        self._state = state

    def _live(self) -> dict:
        if self._state is None:
            raise ValueError(_OLD_STATE)
        return self._state

    def _new(self, state: dict) -> State:
        new = object.__new__(State)
        new._state = state
        self._state = None
        return new

    def get(self, item: StateIndex):
        """The value stored for the ``StateIndex`` ``item``."""
        state = self._live()
        if not _is_index(item):
            raise ValueError(f"State.get takes a StateIndex, got {type(item).__name__}")
        if item.marker not in state:
            raise KeyError(f"this State holds no value for {item!r:.60}: build model and "
                           "state together with nn.make_with_state")
        return state[item.marker]

    def set(self, item: StateIndex, value) -> State:
        """A new State with ``value`` at ``item`` (the old state becomes invalid).

        The value must have the structure, shapes and dtypes of the old one.
        """
        old = self.get(item)
        value = tree_map(_asarray, value)
        describe = lambda t: tree_map(lambda a: (tuple(a.shape), str(a.dtype)), t)  # noqa: E731
        if tree_structure(old) != tree_structure(value) or describe(old) != describe(value):
            raise ValueError(
                "State.set: the new value must have the old one's structure, shapes and "
                f"dtypes: old {describe(old)}, new {describe(value)}")
        state = dict(self._live())
        state[item.marker] = value
        return self._new(state)

    def substate(self, pytree) -> State:
        """A State holding only the values of the ``StateIndex`` es found in ``pytree``."""
        state = self._live()
        sub = object.__new__(State)
        sub._state = {x.marker: state[x.marker]
                      for x in tree_leaves(pytree, is_leaf=_is_index) if _is_index(x)}
        return sub

    def update(self, substate: State) -> State:
        """A new State with the values of ``substate`` (one of its substates) written in."""
        state = dict(self._live())
        if type(substate) is not State:
            raise ValueError(f"State.update takes a State, got {type(substate).__name__}")
        for key, value in substate._live().items():
            if key not in state:
                raise ValueError("state.update(sub): sub must be a substate of state")
            state[key] = value
        return self._new(state)

    def __repr__(self):
        from ..module import tree_pformat

        if self._state is None:
            return "State(~old~)"
        items = ", ".join(f"{k if isinstance(k, str) else '<index>'}: {tree_pformat(v)}"
                          for k, v in self._state.items())
        return f"State({items})"


def _flatten_state(state: State):
    live = state._live()
    keys = tuple(live)
    return [live[k] for k in keys], keys


def _unflatten_state(keys, values):
    state = object.__new__(State)
    state._state = dict(zip(keys, values, strict=True))
    return state


register_pytree_node(State, _flatten_state, _unflatten_state)


class StatefulLayer(Module):
    """A layer whose call takes and returns a ``State``, as ``equinox.nn.StatefulLayer``.

    ``Sequential`` threads the state through the layers whose ``is_stateful()`` is True.
    """

    def is_stateful(self) -> bool:
        """Whether the call takes a state (True unless a subclass says otherwise)."""
        return True


def delete_init_state(model):
    """A copy of ``model`` with the initial values of its ``StateIndex`` es dropped.

    Arguments:
        model: any pytree.

    Returns:
        The model, lighter: a ``State`` can no longer be built from it.

    Example:
        >>> bn = nn.BatchNorm(2, "batch", mode="batch")
        >>> nn.delete_init_state(bn).batch_counter.init
        _Deleted()
    """
    return tree_map(lambda x: tree_at(lambda i: i.init, x, _DELETED) if _is_index(x) else x,
                    model, is_leaf=_is_index)


def make_with_state(make_model):
    """Build a stateful model and its initial ``State``, as ``equinox.nn.make_with_state``.

    Each ``StateIndex`` gets a key naming its place in the model (``BatchNorm.ema_state``),
    so two models built by the same call agree on their keys.

    Arguments:
        make_model: a callable returning a pytree (a layer class, say).

    Returns:
        A function of ``make_model``'s arguments returning ``(model, state)``; the model's
        initial states are deleted (they live in ``state``).

    Example:
        >>> bn, state = nn.make_with_state(nn.BatchNorm)(3, "batch", mode="batch")
        >>> x = jnp.arange(6.0).reshape(2, 3)
        >>> y, state = invarax.vmap(bn, in_axes=(0, None), out_axes=(0, None),
        ...                         axis_name="batch")(x, state)
        >>> y
        Array([[-0.9999978, -0.9999978, -0.9999978],
               [ 0.9999978,  0.9999978,  0.9999978]], dtype=float32)
    """
    def make(*args, **kwargs):
        model = make_model(*args, **kwargs)
        pairs, treedef = tree_flatten_with_path(model, is_leaf=_is_index)
        leaves = []
        for path, leaf in pairs:
            if _is_index(leaf):
                leaf = StateIndex(leaf.init)
                object.__setattr__(leaf, "marker", type(model).__name__ + keystr(path))
            leaves.append(leaf)
        model = tree_unflatten(treedef, leaves)
        return delete_init_state(model), State(model)

    return make


def inference_mode(model, value: bool = True):
    """A copy of ``model`` with every layer's ``inference`` flag set to ``value``.

    ``Dropout``, ``BatchNorm``, ``SpectralNorm`` and ``MultiheadAttention`` read the flag:
    in inference mode dropout is off and running statistics are used, not updated.
    (``invarax.tree_inference``, Equinox's older name, is the same function.)

    Arguments:
        model: any pytree of layers.
        value: True for inference, False for training.

    Returns:
        The changed copy.

    Example:
        >>> model = nn.Sequential([nn.Dropout(0.5), nn.Dropout(0.2)])
        >>> [layer.inference for layer in nn.inference_mode(model).layers]
        [True, True]
    """
    return tree_inference(model, value)

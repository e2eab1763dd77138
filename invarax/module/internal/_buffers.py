"""Buffers of Equinox's loops: arrays of the carry that the loop body reads with
``buf[i]`` and writes with ``buf.at[i].set(x)``, each location written once.

Inside ``while_loop(..., buffers=...)`` the chosen arrays of the carry are wrapped in a
``_Buffer`` for the duration of ``cond_fun``/``body_fun``; the loop unwraps what the body
returns. A write with ``pred`` (or inside a ``bounded`` loop, whose steps past the end
are no-ops) writes the old value where the predicate is False.
"""

from __future__ import annotations

import itertools
import typing

import numpy as np

from ...core.pytree import tree_flatten, tree_leaves, tree_map
from .._filters import is_array
from .._module import Module, field
from .._tree import tree_pformat
from .._tree_at import tree_at


def _and(a, b):
    if a is True:
        return b
    return a if b is True else a & b


def _maybe_set(pred, xs, item, x, kwargs):
    """``xs.at[item].set(x)`` where ``pred`` holds (``True``: unconditionally)."""
    from ... import numpy as jnp

    dtype = jnp.result_type(x, xs)
    if dtype != jnp.result_type(xs):
        raise ValueError("When doing `buffer.at[i].set(value)`, then `value` must have a dtype "
                         "that can be promoted to the same dtype as `buffer`.")
    x = jnp.broadcast_to(jnp.asarray(x).astype(dtype), xs[item].shape)
    if pred is not True:
        pred = jnp.asarray(pred)
        if pred.shape != () or pred.dtype != np.bool_:
            raise ValueError("predicate must be a boolean scalar.")
        x = jnp.where(pred, x, xs.at[item].get(**kwargs))
    return xs.at[item].set(x, **kwargs)


class _Buffer(Module):
    _array: typing.Any  # an array, or the _Buffer of an enclosing loop
    _pred: typing.Any  # True, or the bool scalar of a bounded loop's step
    _tag: object = field(static=True)

    def __getitem__(self, item):
        return self._array[item]

    def _set(self, pred, item, x, kwargs):
        pred = _and(pred, self._pred)
        if isinstance(self._array, _Buffer):
            array = self._array._set(pred, item, x, kwargs)
        else:
            array = _maybe_set(pred, self._array, item, x, kwargs)
        return _Buffer(array, self._pred, self._tag)

    @property
    def at(self):
        return _BufferAt(self)

    @property
    def shape(self):
        return self._array.shape

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def size(self):
        return self._array.size


class _BufferAt(Module):
    _buffer: _Buffer

    def __getitem__(self, item):
        return _BufferItem(self._buffer, item)


class _BufferItem(Module):
    _buffer: _Buffer
    _item: typing.Any

    def set(self, x, *, pred=True, **kwargs):
        return self._buffer._set(pred, self._item, x, kwargs)


def _is_buffer(x) -> bool:
    return isinstance(x, _Buffer)


def _unwrap(x):
    while _is_buffer(x):
        x = x._array
    return x


class _MetaBufferItem(type):
    def __instancecheck__(cls, instance):
        return isinstance(_unwrap(instance), cls.annotation)


class MaybeBuffer:
    """``MaybeBuffer[T]``: an annotation for ``T`` or a loop buffer holding one (an
    ``isinstance`` check looks through buffers)."""

    def __class_getitem__(cls, item):
        return _MetaBufferItem("MaybeBuffer", (), {"annotation": item})


def buffer_at_set(buffer, item, x, *, pred=True, **kwargs):
    """``buffer.at[item].set(x)``, also for a plain array, writing only where ``pred``.

    Example:
        >>> buffer_at_set(jnp.zeros(3), 1, 5.0, pred=jnp.array(False))
        Array([0., 0., 0.], dtype=float32)
    """
    if isinstance(buffer, _Buffer):
        return buffer.at[item].set(x, pred=pred, **kwargs)
    if pred is not True:
        from ... import numpy as jnp

        x = jnp.where(pred, x, buffer.at[item].get(**kwargs))
    return buffer.at[item].set(x)


def wrap_buffers(buffers, val, pred, tag):
    """``val`` with the arrays that ``buffers(val)`` names wrapped in ``_Buffer``s tagged
    ``tag`` (``buffers`` None: ``val`` as it is)."""
    if buffers is None:
        return val

    def nodes(v):
        # a None among the named nodes is no node, as in Equinox (diffrax names its dense
        # output's buffers, None when there is no dense output)
        return tree_leaves(tree_map(_unwrap, buffers(v), is_leaf=_is_buffer))

    def wrap_one(leaf):
        if not is_array(leaf):
            raise ValueError("Only arrays can be treated as buffers.")
        return _Buffer(leaf, pred, tag)

    return tree_at(nodes, val, replace_fn=wrap_one)


def unwrap_output(new, tag):
    """The body's output with the buffers of this loop (``tag``) back to arrays."""
    def is_ours(x):
        return _is_buffer(x) and x._tag is tag

    return tree_map(lambda x: x._array if is_ours(x) else x, new, is_leaf=is_ours)


def _struct(tree):
    from ...core.aval import ShapeDtypeStruct

    return tree_map(lambda x: ShapeDtypeStruct(x.shape, x.dtype) if is_array(x) else x, tree)


def check_same_structure(val, new):
    """Raise Equinox's error, with a line diff, if ``new`` is not shaped like ``val``."""
    a, b = _struct(val), _struct(new)
    (la, ta), (lb, tb) = tree_flatten(a), tree_flatten(b)
    if ta == tb and all(x == y for x, y in zip(la, lb, strict=True)):
        return
    lines = []
    for line, line2 in itertools.zip_longest(tree_pformat(a, struct_as_array=True).split("\n"),
                                             tree_pformat(b, struct_as_array=True).split("\n"),
                                             fillvalue=""):
        lines += ["  " + line] if line == line2 else ["- " + line, "+ " + line2]
    raise ValueError("`body_fun` must have the same input and output structure. Difference "
                     "is:\n" + "\n".join(lines))

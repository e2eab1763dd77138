"""Mutable array references, as JAX's ``jax.new_ref``: ``ref[idx]`` reads, ``ref[idx] = v``
writes, ``jax.freeze(ref)`` gives the value.

A ``Ref`` holds an array. Eagerly, a write replaces it (``value.at[idx].set(v)``: the same
bits as the functional update). Inside ``jit``, the refs that the function reads or
writes but did not make are the program's extra inputs and outputs: a *frame* (one per
``jit`` trace, innermost last) holds each ref's value inside the trace; the first use of
an outer ref adds an input of the trace (``lift``), a write records the new value, and
the call passes every lifted ref's value and writes the written ones back, in the
caller's context (an enclosing ``jit`` trace's frame, or the ref itself). So a jitted
function that closes over a ref, or takes one as an argument, sees its current value at
every call, as JAX's does.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from . import dtypes
from .array import Array, ArrayImpl, to_array
from .pytree_registry import register_pytree_node
from .trace import EVAL_TRACE, Tracer, current_trace

_local = threading.local()


class Frame:
    """The refs of one ``jit`` trace: ``values`` (ref -> its value inside the trace),
    ``lifted`` (the outer refs made inputs, in order), ``written`` (the outer refs
    written, in order: a dict used as an ordered set) and ``made`` (the refs made inside
    the trace)."""

    def __init__(self, trace):
        self.trace, self.values, self.lifted, self.written, self.made = trace, {}, [], {}, set()


def _frames() -> list:
    stack = getattr(_local, "frames", None)
    if stack is None:
        stack = _local.frames = []
    return stack


@contextmanager
def tracing(trace):
    """A frame for the ``jit`` trace ``trace`` (the current one) while the block runs."""
    stack, frame = _frames(), Frame(trace)
    stack.append(frame)
    try:
        yield frame
    finally:
        stack.pop()


def call_in_frame(fun, *args, **kwargs):
    """``(out, frame)``: ``fun(*args, **kwargs)`` run in a new frame of the current trace;
    ``out`` is ``(fun's output, [each written ref's value])`` when it wrote outer refs (the
    trace's extra outputs), else ``fun``'s output."""
    with tracing(current_trace()) as frame:
        out = fun(*args, **kwargs)
    if frame.written:
        out = (out, [frame.values[r] for r in frame.written])
    return out, frame


def read(ref: Ref):
    """``ref``'s whole value where the caller runs: inside ``jit`` traces, the innermost
    frame's (an outer ref lifted to an input of each trace between)."""
    return _value_at(ref, len(_frames()) - 1)


def _value_at(ref, depth: int):
    if depth < 0:
        return ref._array()
    frame = _frames()[depth]
    value = frame.values.get(ref)
    if value is None:
        value = frame.values[ref] = frame.trace.new_arg(_value_at(ref, depth - 1).aval)
        frame.lifted.append(ref)
    return value


def write(ref: Ref, value) -> None:
    """Make ``value`` (of ``ref``'s shape and dtype) ``ref``'s value where the caller runs."""
    stack = _frames()
    if not stack:
        if isinstance(value, Tracer) and not ref._traced:
            raise ValueError(
                f"a traced value ({value.aval}) was written into a Ref made outside the "
                "transformation (grad, vmap, ...) that traces it; write it inside jit, or make "
                "the Ref inside the transformed function")
        ref._value = value
        return
    frame = stack[-1]
    if ref not in frame.made:
        frame.written[ref] = None
    frame.values[ref] = value


class Ref:
    """A mutable array (JAX's ``jax.Ref``): made by ``new_ref``; ``ref[...]`` is its value,
    ``ref[idx] = v`` writes ``v`` at ``idx`` (broadcast and converted to its dtype), also
    inside ``jit``.

    Example:
        >>> ref = new_ref(jnp.zeros(3))
        >>> ref[1] = 5.0
        >>> ref[...] += 1.0
        >>> ref
        Ref([1., 6., 1.], dtype=float32)
    """

    __slots__ = ("_value", "_traced", "__weakref__")

    def __init__(self, value):
        self._value = value
        self._traced = current_trace() is not EVAL_TRACE
        stack = _frames()
        if stack:
            stack[-1].made.add(self)
            stack[-1].values[self] = value

    def _array(self):
        if self._value is None:
            raise RuntimeError("this Ref was freed (jax.free_ref): make a new one with new_ref")
        return self._value

    def __getitem__(self, index):
        value = read(self)
        return value if index is Ellipsis else value[index]

    def __setitem__(self, index, update):
        value = read(self)
        if index is Ellipsis and isinstance(update, (Array, Tracer)) and (
                update.aval == value.aval):
            write(self, update)  # the whole value: what the scatter would give, without it
            return
        write(self, value.at[index].set(update))

    @property
    def shape(self):
        return read(self).shape

    @property
    def dtype(self):
        return read(self).dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return read(self).size

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        value = read(self)
        if isinstance(value, Tracer):
            return f"Ref{{{value.aval}}}"
        return "Ref" + repr(value)[len("Array"):]


register_pytree_node(Ref, lambda ref: ((), ref), lambda ref, _: ref)


def new_ref(init_val, *, memory_space=None, kind=None):
    """A ``Ref`` holding ``init_val`` (JAX's ``jax.new_ref``; ``memory_space`` and
    ``kind`` are accepted: there is one memory).

    Example:
        >>> new_ref(jnp.arange(3))[1:]
        Array([1, 2], dtype=int32)
    """
    del memory_space, kind
    value = to_array(init_val, "new_ref's initial value")
    if not isinstance(value, Array):
        raise TypeError(f"new_ref takes an array, got {type(init_val).__name__}")
    return Ref(value)


def empty_ref(ty, *, memory_space=None, kind=None):
    """A ``Ref`` of ``ty``'s shape and dtype (a ``ShapeDtypeStruct`` or an array), holding
    zeros (JAX's ``jax.empty_ref`` leaves it unset; invarax has no unset memory).

    Example:
        >>> empty_ref(ShapeDtypeStruct((2,), jnp.int32))
        Ref([0, 0], dtype=int32)
    """
    del memory_space, kind
    return Ref(ArrayImpl(np.zeros(ty.shape, dtypes.canonicalize(ty.dtype))))


def freeze(ref: Ref):
    """``ref``'s value, as an immutable array (JAX's ``jax.freeze``).

    Example:
        >>> freeze(new_ref(jnp.ones(2)))
        Array([1., 1.], dtype=float32)
    """
    if not isinstance(ref, Ref):
        raise TypeError(f"freeze takes a Ref (made by new_ref), got {type(ref).__name__}")
    return read(ref)


def free_ref(ref: Ref) -> None:
    """Release ``ref``'s value; using it afterwards raises (JAX's ``jax.free_ref``)."""
    ref._value = None

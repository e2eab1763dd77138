"""``closure_to_pytree``: functions whose closed-over values are pytree children.

A local function (as optax's transformations are) is a leaf of a pytree, compared by
identity, so a new one (say, for a new learning rate) retraces a ``filter_jit``. Replaced
by a ``_Closure``, its cell contents become children: arrays in them are traced, and two
closures of the same source compare equal.
"""

from __future__ import annotations

import inspect
import types
import typing

from ...core.pytree import tree_map
from .._module import Module


def _cell(value):
    return (lambda: value).__closure__[0]


def _with_closure(fn, closure):
    out = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    out.__module__, out.__qualname__, out.__doc__ = fn.__module__, fn.__qualname__, fn.__doc__
    out.__annotations__.update(fn.__annotations__)
    if fn.__kwdefaults__ is not None:
        out.__kwdefaults__ = fn.__kwdefaults__.copy()
    return out


class _FunctionWithEquality:
    """A function compared by its name, module and source (by identity if it has no
    source file, as in a REPL). Not a pytree."""

    def __init__(self, fn):
        self.fn = fn

    def _key(self):
        try:
            return self.fn.__qualname__, self.fn.__module__, inspect.getsource(self.fn)
        except OSError:
            return self.fn

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()


class _Closure(Module):
    fn: _FunctionWithEquality
    contents: typing.Any

    def __init__(self, fn):
        self.fn = _FunctionWithEquality(fn)
        self.contents = (None if fn.__closure__ is None else
                         tuple(closure_to_pytree(c.cell_contents) for c in fn.__closure__))

    def __call__(self, *args, **kwargs):
        closure = None if self.contents is None else tuple(_cell(c) for c in self.contents)
        return _with_closure(self.fn.fn, closure)(*args, **kwargs)


def closure_to_pytree(tree):
    """``tree`` with each function replaced by a callable pytree whose children are its
    closure's contents (converted likewise).

    Example:
        >>> def make(a):
        ...     return lambda x: x + a
        >>> f = closure_to_pytree(make(jnp.float32(2.0)))
        >>> tree_util.tree_leaves(f)[-1], f(1.0)  # (the first leaf: the function)
        (Array(2., dtype=float32), Array(3., dtype=float32))
    """
    return tree_map(lambda x: _Closure(x) if isinstance(x, types.FunctionType) else x, tree)

"""``ω``: arithmetic on whole pytrees, as Equinox's (``(a**ω + b**ω).ω`` is
``tree_map(operator.add, a, b)``)."""

from __future__ import annotations

import operator

from ...core.array import Array
from ...core.pytree import tree_map, tree_structure

_SCALARS = (bool, complex, float, int, Array)


class _MetaOmega(type):
    def __rpow__(cls, value):
        return cls(value)


class ω(metaclass=_MetaOmega):  # noqa: N801  (Equinox's name)
    """A pytree wrapped for leafwise arithmetic: ``ω(tree)`` or ``tree**ω``; ``.ω``
    unwraps it.

    Operators apply leaf by leaf between two ``ω`` of the same structure, or between an
    ``ω`` and a scalar or array; ``x[i]``, ``.call(fn)`` and ``.at[i].set(y)`` (and
    ``add``, ``multiply``, ``divide``, ``power``, ``min``, ``max``) map too.

    Arguments:
        value: the pytree.
        is_leaf: passed to ``tree_map`` (not available with the ``**ω`` form).

    Example:
        >>> a, b = {"x": jnp.ones(2)}, {"x": jnp.arange(2.0)}
        >>> (a**ω + 2 * b**ω).ω
        {'x': Array([1., 3.], dtype=float32)}
    """

    def __init__(self, value, is_leaf=None):
        self.ω = value
        self.is_leaf = is_leaf

    def __repr__(self):
        return f"ω({self.ω})"

    def _map(self, fn, *others):
        return ω(tree_map(fn, self.ω, *others, is_leaf=self.is_leaf), is_leaf=self.is_leaf)

    def __getitem__(self, item):
        return self._map(lambda x: x[item])

    def call(self, fn):
        return self._map(fn)

    @property
    def at(self):
        return _AtHelper(self.ω, self.is_leaf)


def _same_code(f, g) -> bool:
    """Whether two ``is_leaf`` functions have the same code (None with None)."""
    def code(fn):
        return getattr(getattr(fn, "__code__", None), "co_code", None)

    return type(f) is type(g) if code(f) is None or code(g) is None else code(f) == code(g)


def _binary(name, op, tree_of):
    """The method ``name``: ``op(self, leaf, other's leaf)`` (or ``other`` itself, a scalar
    or an array) over the leaves of ``tree_of(self)``."""

    def method(self, other):
        tree, is_leaf = tree_of(self)
        if isinstance(other, ω):
            if tree_structure(tree) != tree_structure(other.ω):
                raise ValueError("PyTree structures must match.")
            if not _same_code(is_leaf, other.is_leaf):
                raise ValueError("`is_leaf` must match.")
            out = tree_map(lambda x, y: op(self, x, y), tree, other.ω, is_leaf=is_leaf)
        elif isinstance(other, _SCALARS):
            out = tree_map(lambda x: op(self, x, other), tree, is_leaf=is_leaf)
        else:
            raise RuntimeError("Type of `other` not understood.")
        return ω(out, is_leaf=is_leaf)

    method.__name__ = name
    return method


def _omega_tree(self):
    return self.ω, self.is_leaf


_BINARY = [(f"__{n}__", getattr(operator, n + "_" if n in ("and", "or") else n))
           for n in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow",
                     "lshift", "rshift", "and", "xor", "or", "lt", "le", "eq", "ne", "gt",
                     "ge")]
for _name, _op in _BINARY:
    setattr(ω, _name, _binary(_name, (lambda op: lambda s, x, y: op(x, y))(_op), _omega_tree))
for _name, _op in _BINARY[:13]:  # the reflected arithmetic: other <op> self
    _rname = f"__r{_name[2:]}"
    setattr(ω, _rname, _binary(_rname, (lambda op: lambda s, x, y: op(y, x))(_op),
                               _omega_tree))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(ω, f"__{_name}__", (lambda op: lambda self: self._map(op))(getattr(operator, _name)))


class _AtHelper:
    def __init__(self, value, is_leaf):
        self.value = value
        self.is_leaf = is_leaf

    def __getitem__(self, item):
        return _AtRef(self.value, item, self.is_leaf)


class _AtRef:
    def __init__(self, value, item, is_leaf):
        self.value = value
        self.item = item
        self.is_leaf = is_leaf


def _at_tree(self):
    return self.value, self.is_leaf


for _name in ("set", "add", "multiply", "divide", "power", "min", "max"):
    setattr(_AtRef, _name, _binary(
        _name, (lambda n: lambda s, x, y: getattr(x.at[s.item], n)(y))(_name), _at_tree))

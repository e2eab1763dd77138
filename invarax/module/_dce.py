"""Equinox's ``debug.store_dce``, ``debug.inspect_dce`` and ``internal.assert_dce``: whether
the compiler removed a value as dead code.

``store_dce`` wraps each array of its argument in a ``dce_probe`` (the identity); when the
enclosing program is compiled, the probes left in it after dead-code elimination record
their shape and dtype, and ``inspect_dce`` prints the others as ``<DCE'd>``.
"""

from __future__ import annotations

from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import Tracer
from ..ops.checks import EquinoxRuntimeError, dce_probe_p, nan_like
from ._errors import resolve_on_error
from ._filters import combine, is_array, partition
from ._pretty import _short
from ._tree import tree_pprint

_records: dict = {}  # name -> [_Record, ...], in the order of the calls


def _staging() -> bool:
    """Whether the caller is being traced into a program (``jit``, a ``cond`` branch, ...)."""
    from .. import numpy as jnp

    return isinstance(jnp.array(1) + 1, Tracer)


class _Record:
    """One call of ``store_dce``: its arrays' tree, its other leaves, and, for each array
    that a compiled program kept, its ``(shape, dtype)``."""

    __slots__ = ("treedef", "static", "live")

    def __init__(self, treedef, static):
        self.treedef, self.static, self.live = treedef, static, {}

    def run(self, x):
        return x

    def alive(self, index: int, aval) -> None:
        self.live[index] = aval

    def __repr__(self):  # as the probe's parameter in a printed program
        return f"<store_dce {id(self):#x}>"

    def tree(self):
        leaves = [_Shown(_short(self.live[i], structs=True).removeprefix("weak_")
                         if i in self.live else "<DCE'd>")
                  for i in range(self.treedef.num_leaves)]
        return combine(tree_unflatten(self.treedef, leaves), self.static)


class _Shown:
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text


def store_dce(x, name=None):
    """``x``, unchanged; records whether the compiler removed each of its arrays as dead
    code, for ``inspect_dce`` to print.

    Used inside a ``jit``-compiled function: when that function is compiled (its first call
    for these argument shapes), each array of ``x`` still needed by the program is recorded
    with its shape and dtype; the others were dead-code eliminated. Non-array leaves are kept
    as they are. Under ``vmap`` the recorded shape is the batched one.

    Arguments:
        x: any pytree.
        name: any hashable value naming this call site, for ``inspect_dce(name)``.

    Returns:
        ``x``.

    Raises:
        RuntimeError: outside of ``jit`` (nothing is compiled, so nothing is eliminated).

    Example:
        >>> @jit
        ... def f(x):
        ...     a, _ = store_dce((x**2, x + 1), name="doc")
        ...     return a
        >>> _ = f(1.0)
        >>> inspect_dce("doc")
        Found 1 call to `equinox.debug.store_dce`.
        Entry 0:
        (f32[], <DCE'd>)
    """
    if not _staging():
        raise RuntimeError("`equinox.debug.store_dce` should be used inside of JIT: "
                           "only a compiled program has its dead code eliminated.")

    def record(treedef, static):
        made = _Record(treedef, static)
        _records.setdefault(name, []).append(made)
        return made

    return _probed(x, record)


def _probed(x, record):
    """``x`` with each of its arrays through a ``dce_probe`` of the record that
    ``record(treedef, static)`` makes (from the structure of the arrays and the other
    leaves)."""
    dynamic, static = partition(x, is_array)
    leaves, treedef = tree_flatten(dynamic)
    made = record(treedef, static)
    leaves = [dce_probe_p.bind(leaf, record=made, index=i) for i, leaf in enumerate(leaves)]
    return combine(tree_unflatten(treedef, leaves), static)


def inspect_dce(name=None) -> None:
    """Print, for each call of ``store_dce(..., name=name)`` traced so far, its argument with
    each array shown as ``f32[3]`` if a compiled program kept it, ``<DCE'd>`` if not.

    Arguments:
        name: the ``name`` given to ``store_dce``.

    Returns:
        None (the report is printed).

    Raises:
        RuntimeError: inside of ``jit``.
    """
    if _staging():
        raise RuntimeError("`equinox.debug.inspect_dce` should be used outside of JIT: the "
                           "program's dead code is eliminated once it is compiled.")
    records = _records.get(name, [])
    print(f"Found {len(records)} call{'' if len(records) == 1 else 's'} to "
          "`equinox.debug.store_dce`.")
    for i, record in enumerate(records):
        print(f"Entry {i}:")
        tree_pprint(record.tree())


def assert_dce(x, msg: str, *, on_error: str = "default"):
    """``x``; inside ``jit``, raises ``EquinoxRuntimeError(msg)`` when the compiled program
    runs if the program still computes an array of ``x`` (it was not removed as dead code).

    Outside of ``jit`` nothing is checked (nothing is eliminated): ``x`` is returned.

    Arguments:
        x: any pytree.
        msg: the error message.
        on_error: ``"raise"``, ``"nan"`` (the arrays of ``x`` become NaN instead), ``"off"``,
            or ``"default"`` (the ``EQX_ON_ERROR`` environment variable, else ``"raise"``).

    Returns:
        ``x``.

    Example:
        >>> @jit
        ... def f(x):
        ...     unused = assert_dce(x + 1, "x + 1 should be unused")
        ...     return x * 2
        >>> f(1.0)
        Array(2., dtype=float32, weak_type=True)
    """
    on_error = resolve_on_error(on_error)
    if on_error == "off" or not _staging():
        return x
    return _probed(x, lambda treedef, static: _Assertion(msg, on_error))


class _Assertion:
    """``assert_dce``'s check: running means the value was not eliminated."""

    __slots__ = ("msg", "on_error")

    def __init__(self, msg: str, on_error: str):
        self.msg, self.on_error = msg, on_error

    def run(self, x):
        if self.on_error == "nan":
            return nan_like(x)
        raise EquinoxRuntimeError(self.msg)

    def alive(self, index: int, aval) -> None:
        pass

    def __repr__(self):
        return f"<assert_dce {self.msg!r}>"

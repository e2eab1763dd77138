"""``Enumeration``: named outcomes that are int32 arrays, usable under ``jit``, as Equinox's."""

from __future__ import annotations

import warnings

import numpy as np

from ..core.trace import Tracer
from ..transforms._eval_context import ensure_compile_time_eval
from ._errors import branched_error_if
from ._module import Module, field


class EnumerationItem(Module):
    """One item of an ``Enumeration``: an int32 scalar (maybe traced) and its enumeration."""

    _value: object
    _enumeration: object = field(static=True)

    def _check_same(self, other):
        if not (isinstance(other, EnumerationItem) and other._enumeration is self._enumeration):
            raise ValueError("Can only compare items of the same Enumeration, got "
                             f"{self!r} and {other!r}")

    def __eq__(self, other):
        from .. import numpy as jnp

        self._check_same(other)
        with ensure_compile_time_eval():  # known items compare to a known bool, as Equinox
            return jnp.asarray(self._value == other._value)

    def __ne__(self, other):
        from .. import numpy as jnp

        self._check_same(other)
        with ensure_compile_time_eval():
            return jnp.asarray(self._value != other._value)

    __hash__ = None

    def __repr__(self):
        cls = self._enumeration
        return f"{cls.__module__}.{cls.__qualname__}<{cls[self]}>"

    def error_if(self, token, pred):
        """``branched_error_if(token, pred, item, messages)``: raise this item's message."""
        return branched_error_if(token, pred, self._value, self._enumeration._index_to_message)

    def is_traced(self) -> bool:
        """Whether the item's value is traced (its message is then unknown)."""
        return isinstance(self._value, Tracer)


def _store(cls, name, message, items, messages) -> int:
    if name in items:
        index = int(items[name]._value)
        if messages[index] != message:
            warnings.warn(f"Enumeration has duplicate incompatible values for {name}. Using "
                          f"the latest, which is {message!r}.", stacklevel=3)
        messages[index] = message
        return index
    items[name] = EnumerationItem(np.array(len(messages), dtype=np.int32), cls)
    messages.append(message)
    return len(messages) - 1


def _magic(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class _EnumerationMeta(type):
    def __new__(mcs, name, bases, namespace):
        for reserved in ("promote", "where"):
            if reserved in namespace and bases:
                raise ValueError(f"An Enumeration cannot have an item named {reserved!r}: it "
                                 "is a classmethod of Enumeration")
        items, messages, offsets = {}, [], {}
        body = {k: v for k, v in namespace.items() if _magic(k) or not bases}
        cls = super().__new__(mcs, name, bases, {**body, "_name_to_item": items,
                                                 "_index_to_message": messages,
                                                 "_base_offsets": offsets})
        for base in bases:
            for ancestor in base.__mro__[:-2]:  # not Enumeration nor object
                if not isinstance(ancestor, _EnumerationMeta):
                    raise ValueError("Cannot subclass enumerations with non-enumerations.")
                if ancestor in offsets:
                    continue
                table = np.zeros(len(ancestor), dtype=np.int32)
                for item_name, item in ancestor._name_to_item.items():
                    old = int(item._value)
                    table[old] = _store(cls, item_name, ancestor._index_to_message[old],
                                        items, messages)
                offsets[ancestor] = table
        for key, message in namespace.items():
            if not _magic(key) and bases:
                _store(cls, key, message, items, messages)
        return cls

    def __getattr__(cls, item):
        try:
            return cls.__dict__["_name_to_item"][item]
        except KeyError:
            raise AttributeError(f"Enumeration {cls.__name__} has no item {item!r}") from None

    def __getitem__(cls, item) -> str:
        if not isinstance(item, EnumerationItem) or item._enumeration is not cls:
            raise ValueError(f"{cls.__name__}[item] takes an item of {cls.__name__}, got "
                             f"{item!r:.60}")
        if item.is_traced():
            return "traced"
        value = np.asarray(item._value)
        return str(np.vectorize(lambda i: cls._index_to_message[i])(value))

    def __len__(cls):
        return len(cls._name_to_item)

    def __iter__(cls):
        return iter(cls._name_to_item.values())

    def __instancecheck__(cls, value):
        return isinstance(value, EnumerationItem) and value._enumeration is cls


class Enumeration(metaclass=_EnumerationMeta):
    """Named outcomes (say, of a solver) as int32 arrays, as ``equinox.Enumeration``.

    Subclass it with one class attribute per item, its value the item's message. Items
    compare with ``==``/``!=`` (giving bool arrays, so they work under ``jit``), are chosen
    with ``where``, and raise their message with ``item.error_if(x, pred)``. A subclass of
    an enumeration extends it; ``promote`` converts the parent's items.

    Example:
        >>> class RESULTS(Enumeration):
        ...     success = ""
        ...     diverged = "the iteration diverged"
        >>> item = RESULTS.where(jnp.array(True), RESULTS.diverged, RESULTS.success)
        >>> RESULTS[item], bool(item == RESULTS.success)
        ('the iteration diverged', False)
        >>> item.error_if(jnp.ones(2), item != RESULTS.success)
        Traceback (most recent call last):
        ...
        invarax.ops.checks.EquinoxRuntimeError: the iteration diverged
    """

    @classmethod
    def promote(cls, item):
        """The item of ``cls`` for an item of one of its parent enumerations."""
        if not isinstance(item, EnumerationItem):
            raise ValueError(f"promote takes an Enumeration item, got {item!r:.60}")
        if item._enumeration is cls or not issubclass(cls, item._enumeration):
            raise ValueError(f"{cls.__name__}.promote: {item!r} is not from a parent "
                             "enumeration")
        from .. import numpy as jnp

        table = jnp.asarray(cls._base_offsets[item._enumeration])
        return EnumerationItem(table[item._value], cls)

    @classmethod
    def where(cls, pred, a, b):
        """``a`` where the bool scalar ``pred`` holds, else ``b`` (items of ``cls``)."""
        from .. import numpy as jnp

        pred = jnp.asarray(pred)
        if pred.shape != () or pred.dtype != np.bool_:
            raise ValueError(f"{cls.__name__}.where needs a bool scalar predicate, got "
                             f"{pred.dtype}{list(pred.shape)}")
        for x in (a, b):
            if not isinstance(x, cls):
                raise ValueError(f"{cls.__name__}.where takes items of {cls.__name__}, got "
                                 f"{x!r:.60}")
        if a._value is b._value:
            return a
        with ensure_compile_time_eval():  # a known pred gives a known item, as Equinox
            return EnumerationItem(jnp.where(pred, a._value, b._value), cls)

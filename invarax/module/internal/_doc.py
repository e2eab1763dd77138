"""``doc_repr`` and ``doc_remove_args``: how an object shows in generated documentation.

Both act only while documentation is generated (``typing.GENERATING_DOCUMENTATION`` is
set, as Equinox's documentation build sets it); otherwise they return the object as it is.
"""

from __future__ import annotations

import inspect
import typing


def _generating_documentation() -> bool:
    return hasattr(typing, "GENERATING_DOCUMENTATION")


class _WithRepr(type):
    """A stand-in for ``obj`` (a type, so usable in annotations) whose repr is ``string``."""

    def __new__(mcs, obj, string):
        out = super().__new__(mcs, string, (), {})
        out.__module__ = "builtins"
        return out

    def __init__(cls, obj, string):
        cls.obj = obj
        cls.string = string

    def __repr__(cls):
        return cls.string

    def __call__(cls, *args, **kwargs):
        return cls.obj(*args, **kwargs)


def doc_repr(obj, string: str):
    """``obj``; while documentation is generated, a stand-in whose repr is ``string``.

    Example:
        >>> default = doc_repr(lambda x: x, "identity")
        >>> default(3)
        3
    """
    return _WithRepr(obj, string) if _generating_documentation() else obj


def doc_remove_args(*args):
    """A decorator hiding the parameters ``args`` from the signature shown in
    documentation (a no-op otherwise)."""

    def remove(fn):
        if _generating_documentation():
            sig = inspect.signature(fn)
            sig = sig.replace(parameters=[p for p in sig.parameters.values()
                                          if p.name not in args])
            object.__setattr__(fn, "__signature__", sig)
        return fn

    return remove

"""The import alias: a ``sys.meta_path`` finder serving JAX's, Equinox's and optax's modules
from invarax's, and the module objects it serves.

A served module (``AliasModule``) forwards each attribute to its invarax module, once, and
keeps it. It serves a submodule only through the table (``_table.MODULES``), so invarax's
internals never appear under JAX's names; anything else is an ``AttributeError`` (an
``ImportError`` on import) that names what invarax does not provide.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from . import _table

_HELP = "the list of what the alias serves is in invarax's docs/porting.md"


def _missing(name: str) -> str:
    return f"invarax does not provide {name} yet ({_HELP})"


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


class AliasModule(types.ModuleType):
    """A module of JAX, Equinox or optax, served by an invarax module."""

    def __init__(self, name: str, target: types.ModuleType):
        super().__init__(name, target.__doc__)
        self.__dict__["__invarax_module__"] = target
        self.__file__ = getattr(target, "__file__", None)
        if name in _table.VERSIONS:
            self.__version__ = _table.VERSIONS[name]
        if hasattr(target, "__all__"):
            self.__all__ = list(target.__all__)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = _lookup(self, name)
        self.__dict__[name] = value
        return value

    def __dir__(self):
        target = self.__invarax_module__
        names = {n for n in dir(target)
                 if not isinstance(getattr(target, n, None), types.ModuleType)}
        names |= set(_table.EXTRA.get(self.__name__, ()))
        prefix = self.__name__ + "."
        names |= {m[len(prefix):] for m in _table.MODULES
                  if m.startswith(prefix) and "." not in m[len(prefix):]}
        return sorted(names | set(self.__dict__))

    def __repr__(self):
        return f"<module {self.__name__!r} (invarax's {self.__invarax_module__.__name__})>"


def _lookup(module: AliasModule, name: str):
    """Attribute ``name`` of served module ``module``, or an AttributeError naming it."""
    full = f"{module.__name__}.{name}"
    extra = _table.EXTRA.get(module.__name__, {}).get(name)
    if extra is not None:
        source, attribute = extra.split(":")
        return getattr(importlib.import_module(source), attribute)
    value = getattr(module.__invarax_module__, name, _table)  # (_table: a "missing" marker)
    if value is not _table and not isinstance(value, types.ModuleType):
        return value
    target = _table.invarax_module(full)
    if target is not None and (full in _table.MODULES or value is not _table
                               or _module_exists(target)):
        try:
            return importlib.import_module(full)
        except ModuleNotFoundError as err:
            raise AttributeError(str(err)) from None
    raise AttributeError(_missing(full))


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return AliasModule(spec.name, importlib.import_module(_table.invarax_module(spec.name)))

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Finds every module under ``jax``, ``equinox`` and ``optax``: invarax's, or an error."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in _table.ROOTS:
            return None
        served = _table.invarax_module(fullname)
        if served is None or not _module_exists(served):
            # name=None: ``from jax import foo`` reports this message, not a generic one.
            raise ModuleNotFoundError(_missing(fullname))
        return importlib.machinery.ModuleSpec(fullname, _LOADER, is_package=True)


_LOADER = _Loader()
_FINDER = _Finder()


def install() -> None:
    """Serve ``jax``, ``equinox`` and ``optax`` (and their submodules) from invarax.

    Call it before anything imports those libraries: every later ``import jax``, in your
    code or in a library you use, gets invarax's modules. Calling it again does nothing.

    Raises:
        RuntimeError: if the real JAX, Equinox or optax is imported already.

    Example (first thing in a program, before any ``import jax``)::

        import invarax.compat
        invarax.compat.install()

        import jax.numpy as jnp  # invarax.numpy
        import equinox as eqx    # invarax's module layer
    """
    if _FINDER in sys.meta_path:
        return
    for name, module in list(sys.modules.items()):
        root = name.partition(".")[0]
        if root in _table.ROOTS and not isinstance(module, AliasModule):
            where = getattr(sys.modules.get(root, module), "__file__", None)
            raise RuntimeError(
                f"the real {root} is imported already ({where}), "
                "so invarax cannot serve it: install the alias before anything imports JAX, "
                "Equinox or optax (call invarax.compat.install() first, or run the program "
                "with `python -m invarax.compat script.py`)"
            )
    sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Undo ``install``: forget the served modules, so the next import is the real library."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n, m in sys.modules.items() if isinstance(m, AliasModule)]:
        del sys.modules[name]


def installed() -> bool:
    """Whether the alias is installed."""
    return _FINDER in sys.meta_path

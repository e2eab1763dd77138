"""``invarax.extend.linear_util``: JAX's ``jax.extend.linear_util``, functions wrapped with
transformations applied when they are called (``wrap_init``, ``WrappedFun``,
``transformation2``, ``transformation_with_aux2``, ``Store``, ``cache``).

Example:
    >>> from invarax.extend import linear_util as lu
    >>> def scale(f, k, *args):
    ...     return [k * y for y in f(*args)]
    >>> wrapped = lu.wrap_init(lambda x: [x + 1])
    >>> scale_by_2 = lu.transformation2(scale)
    >>> scale_by_2(wrapped, 2).call_wrapped(3)
    [8]
"""

from __future__ import annotations

import functools


class StoreException(Exception):
    """A ``Store`` was read before it was filled, or filled twice."""


class Store:
    """One value a transformation stores while the function runs (``transformation_with_aux2``)."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self):
        self._val = Store._EMPTY

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __nonzero__(self):
        return self._val is not Store._EMPTY

    __bool__ = __nonzero__


class WrappedFun:
    """A function ``f`` with ``params`` (keyword arguments) and the transformations to apply
    around it, innermost first; ``call_wrapped`` runs them."""

    def __init__(self, f, params=(), transforms=(), debug_info=None):
        self.f = f
        self.params = tuple(params)
        self.transforms = tuple(transforms)
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, gen, gen_static_args) -> WrappedFun:
        """Add one transformation ``gen(f, *gen_static_args, *args, **kwargs)``."""
        return WrappedFun(self.f, self.params, (*self.transforms, (gen, gen_static_args)),
                          self.debug_info)

    def call_wrapped(self, *args, **kwargs):
        fun = functools.partial(self.f, **dict(self.params))
        for gen, static in self.transforms:
            fun = functools.partial(gen, fun, *static)
        return fun(*args, **kwargs)

    def __eq__(self, other):
        return (type(other) is WrappedFun and self.f == other.f
                and self.params == other.params and self.transforms == other.transforms)

    def __hash__(self):
        return hash((self.f, self.params, self.transforms))

    def __repr__(self):
        return f"Wrapped function {self.__name__} with {len(self.transforms)} transformations"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    """``f`` as a ``WrappedFun`` with no transformation; ``params`` are keyword arguments."""
    return WrappedFun(f, tuple(sorted((params or {}).items())), (), debug_info)


def transformation2(gen):
    """A transformation from ``gen(f, *static_args, *args, **kwargs)``: applying it to a
    ``WrappedFun`` (``transform(fun, *static_args)``) wraps ``fun``'s call in ``gen``."""
    return lambda fun, *static_args: fun.wrap(gen, static_args)


def transformation_with_aux2(gen):
    """As ``transformation2``, ``gen(f, store, *static_args, *args, **kwargs)`` also gets a
    ``Store``; applying it returns ``(fun, thunk)``, ``thunk()`` reading the stored value."""

    def transform(fun, *static_args):
        store = Store()
        return fun.wrap(gen, (store, *static_args)), lambda: store.val

    return transform


def cache(call):
    """Memoise ``call(fun, *args)`` on ``(fun, args)`` (``fun`` a ``WrappedFun``)."""
    return functools.lru_cache(maxsize=None)(call)


__all__ = [
    "Store", "StoreException", "WrappedFun", "cache", "transformation2",
    "transformation_with_aux2", "wrap_init",
]

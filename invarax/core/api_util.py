"""Argument handling shared by the function transformations: static arguments and flattening."""

from __future__ import annotations

import inspect

import numpy as np

from .array import Array, borrow, concrete_scalar, is_python_scalar, to_array
from .pytree import keystr, tree_flatten, tree_flatten_with_path


def fun_name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


class StaticArgs:
    """Which positional and keyword arguments of ``fun`` are static (hashed, not traced).

    As in JAX, ``static_argnums`` and ``static_argnames`` complete each other through
    ``fun``'s signature, so a static argument may be passed by position or by name.
    """

    def __init__(self, fun, static_argnums=(), static_argnames=()):
        argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        argnames = (
            (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        )
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [
            p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        for i in argnums:
            if -len(positional) <= i < len(positional):
                name = positional[i]
                if params[positional.index(name)].kind != inspect.Parameter.POSITIONAL_ONLY:
                    argnames += (name,)
        argnums += tuple(positional.index(n) for n in argnames if n in positional)
        self.argnums = frozenset(argnums)
        self.argnames = frozenset(argnames)
        self.name = fun_name(fun)

    def split(self, args, kwargs):
        """Return ``(dynamic_args, dynamic_kwargs, static_key)`` for one call."""
        if not self.argnums and not self.argnames:
            return args, kwargs, ()
        n = len(args)
        static_pos = {i % n for i in self.argnums if -n <= i < n}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.argnames}
        static = [(i, args[i]) for i in sorted(static_pos)]
        static += sorted((k, v) for k, v in kwargs.items() if k in self.argnames)
        for where, value in static:
            try:
                hash(value)
            except TypeError:
                label = f"argument {where}" if isinstance(where, int) else f"argument {where!r}"
                raise ValueError(
                    f"Static {label} of {self.name} has unhashable type "
                    f"{type(value).__name__}. Static arguments are hashed to key the cache: "
                    "pass a hashable value (a tuple instead of a list, a frozen dataclass), "
                    "or make the argument a traced array by removing it from "
                    "static_argnums/static_argnames."
                ) from None
        return dyn_args, dyn_kwargs, tuple(static)

    def merge(self, dyn_args, dyn_kwargs, static):
        """Rebuild the full ``(args, kwargs)`` from ``split``'s results."""
        args, kwargs = list(dyn_args), dict(dyn_kwargs)
        for where, value in static:
            if isinstance(where, int):
                args.insert(where, value)
            else:
                kwargs[where] = value
        return tuple(args), kwargs


def flatten_args(args, kwargs, fun_name: str, borrowed: list | None = None):
    """Flatten ``(args, kwargs)`` to ``(leaves, treedef)``, leaves converted to ``Array``s.

    Python scalars become weakly typed arrays; NumPy arrays are copied (``to_array``),
    except that with a list ``borrowed`` those ``borrow`` accepts are viewed without a
    copy and their leaf indices appended to it: the caller must then keep no result that
    shares their memory. Anything that is not an array or a scalar raises a TypeError
    naming its position and how to pass it instead.
    """
    leaves, treedef = tree_flatten((args, kwargs))
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Array):
            continue
        if borrowed is not None and type(leaf) is np.ndarray:
            view = borrow(leaf)
            if view is not None:
                leaves[i] = view
                borrowed.append(i)
                continue
        leaves[i] = _convert_leaf(leaf, i, args, kwargs, fun_name)
    return leaves, treedef


def _convert_leaf(leaf, index, args, kwargs, fun_name):
    if is_python_scalar(leaf):
        return concrete_scalar(leaf)
    if isinstance(leaf, (np.ndarray, np.generic)):
        return to_array(leaf)
    path, _ = tree_flatten_with_path((args, kwargs))[0][index]
    top, where, *inner = path
    name = f"args[{where.idx}]" if top.idx == 0 else repr(where.key)
    raise TypeError(
        f"Argument {name}{keystr(inner)} of {fun_name} is a {type(leaf).__name__} "
        f"({leaf!r:.40}), which is not an array. Pass arrays (or scalars) as traced arguments; "
        "mark other values static with static_argnums=/static_argnames=."
    )

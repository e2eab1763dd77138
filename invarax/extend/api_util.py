"""``invarax.extend.api_util``: the names of JAX's ``jax.api_util`` that libraries use:
``shaped_abstractify``, ``safe_map``, ``flatten_fun`` and ``flatten_fun_nokwargs``."""

from __future__ import annotations

from ..core.aval import ShapedArray, ShapeDtypeStruct
from ..core.pytree import tree_flatten, tree_unflatten
from . import linear_util as lu
from .core import get_aval


def shaped_abstractify(x) -> ShapedArray:
    """The ``ShapedArray`` of ``x``: an array, a scalar, or a ``ShapeDtypeStruct``."""
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return get_aval(x)


def safe_map(f, *args) -> list:
    """``list(map(f, *args))``, the sequences required to have one length."""
    lengths = {len(a) for a in args}
    if len(lengths) > 1:
        raise ValueError(f"safe_map: sequences of different lengths {sorted(lengths)}")
    return list(map(f, *args))


def _flatten_fun(f, store, in_tree, *args_flat):
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out


def _flatten_fun_nokwargs(f, store, in_tree, *args_flat):
    out, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out


def flatten_fun(fun: lu.WrappedFun, in_tree):
    """``fun`` taking the leaves of ``(args, kwargs)`` (structure ``in_tree``) and returning
    its output's leaves; returns ``(flat_fun, out_tree_thunk)``."""
    return lu.transformation_with_aux2(_flatten_fun)(fun, in_tree)


def flatten_fun_nokwargs(fun: lu.WrappedFun, in_tree):
    """As ``flatten_fun``, for ``in_tree`` the structure of the positional arguments only."""
    return lu.transformation_with_aux2(_flatten_fun_nokwargs)(fun, in_tree)


__all__ = ["flatten_fun", "flatten_fun_nokwargs", "safe_map", "shaped_abstractify"]

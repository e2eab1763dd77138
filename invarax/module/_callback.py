"""``filter_pure_callback``: ``pure_callback`` over pytrees with any leaves, as Equinox's."""

from __future__ import annotations

from ..transforms._callbacks import pure_callback
from ._filters import combine, is_array, partition
from ._tree_equal import tree_equal


def _is_struct(x) -> bool:
    """A stand-in for an output array (a ``ShapeDtypeStruct`` or anything with a shape and
    a dtype), or an array, whose shape and dtype are taken."""
    return is_array(x) or (hasattr(x, "shape") and hasattr(x, "dtype"))


def filter_pure_callback(callback, *args, result_shape_dtypes, sharding=None,
                         vmap_method=None, vectorized=None, **kwargs):
    """Call a Python function from inside ``jit``/``vmap`` with any pytrees as inputs and
    outputs, as Equinox's ``filter_pure_callback``.

    The array leaves of the arguments are passed to ``pure_callback`` (the callback sees
    them as NumPy arrays); every other leaf is passed as it is. The callback must return
    the structure of ``result_shape_dtypes``: an array of the declared shape and dtype
    where it has a ``ShapeDtypeStruct``, and equal (``tree_equal``) values elsewhere.

    Arguments:
        callback: the Python function, called as ``callback(*args, **kwargs)``; it must be
            pure (the compiler may drop an unused call or merge identical ones).
        *args, **kwargs: its arguments, any pytrees.
        result_shape_dtypes: (keyword only) the output's pytree, with a
            ``ShapeDtypeStruct`` in place of each array.
        sharding: accepted as Equinox's (one device).
        vmap_method: how ``vmap`` batches the call, as for ``pure_callback``.
        vectorized: JAX's deprecated flag: True means ``vmap_method="expand_dims"``, False
            ``"sequential"``.

    Returns:
        The callback's output, its arrays as invarax arrays.

    Raises:
        ValueError: if the callback returns other non-array values than declared (or
            other shapes and dtypes, as ``pure_callback``).

    Example:
        >>> import numpy as np, invarax
        >>> out = (invarax.ShapeDtypeStruct((3,), jnp.float32), "cumsum")
        >>> f = invarax.filter_jit(lambda x, how: filter_pure_callback(
        ...     lambda x, how: (getattr(np, how)(x), how), x, how, result_shape_dtypes=out))
        >>> f(jnp.array([1.0, 2.0, 3.0]), "cumsum")
        (Array([1., 3., 6.], dtype=float32), 'cumsum')
    """
    if not callable(callback):
        raise TypeError(f"filter_pure_callback: callback must be callable, got "
                        f"{type(callback).__name__}")
    if vectorized is not None:
        if vmap_method is not None:
            raise ValueError("filter_pure_callback: pass vmap_method or vectorized, not both")
        vmap_method = "expand_dims" if vectorized else "sequential"
    dynamic, static = partition((args, kwargs), is_array)
    dynamic_struct, static_struct = partition(result_shape_dtypes, _is_struct)

    def call(dynamic_in):
        a, k = combine(dynamic_in, static)
        out = callback(*a, **k)
        dynamic_out, static_out = partition(out, is_array)
        if not tree_equal(static_out, static_struct):
            raise ValueError(
                "filter_pure_callback: the callback returned other non-array values than "
                f"result_shape_dtypes declares: got {static_out!r}, expected "
                f"{static_struct!r}")
        return dynamic_out

    dynamic_out = pure_callback(call, dynamic_struct, dynamic, sharding=sharding,
                                vmap_method=vmap_method)
    return combine(dynamic_out, static_struct)

"""``pure_callback`` and ``io_callback``: call Python functions of NumPy arrays from traced
code."""

from __future__ import annotations

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.pytree import tree_flatten, tree_unflatten
from ..ops.callbacks import VMAP_METHODS, io_callback_p, pure_callback_p


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call ``callback(*args, **kwargs)``, a pure function of NumPy arrays, as JAX does.

    Arguments:
        callback: a Python function receiving NumPy arrays and returning arrays with the
            structure, shapes and dtypes of ``result_shape_dtypes``. It must be pure:
            the compiler may drop an unused call or merge two identical ones.
        result_shape_dtypes: a pytree of ``ShapeDtypeStruct``s (anything with ``.shape``
            and ``.dtype``) describing the results.
        *args, **kwargs: pytrees of arrays passed to ``callback``.
        sharding: accepted as JAX's (one device).
        vmap_method: how ``vmap`` batches the call: ``"sequential"`` (the default, as
            JAX's deprecated default: one call per example), ``"expand_dims"`` (one call;
            unbatched arguments get a leading axis of size 1), ``"broadcast_all"`` (one
            call; unbatched arguments are broadcast to the batch size).

    Returns:
        The results, as arrays with the declared structure, shapes and dtypes.

    Raises:
        ValueError: if the callback's results do not match ``result_shape_dtypes``; under
            differentiation with respect to an argument (use ``custom_jvp``).

    Example:
        >>> import invarax, numpy as np
        >>> out = invarax.ShapeDtypeStruct((3,), jnp.float32)
        >>> f = invarax.jit(lambda x: invarax.pure_callback(np.cumsum, out, x))
        >>> f(jnp.array([1.0, 2.0, 3.0]))
        Array([1., 3., 6.], dtype=float32)
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {list(VMAP_METHODS)}, "
                         f"got {vmap_method!r}")
    return _bind(pure_callback_p, "pure_callback", callback, result_shape_dtypes, args, kwargs,
                 vmap_method=vmap_method)


def effects_barrier() -> None:
    """Wait until the effects of the calls made so far have happened, as JAX's: in invarax
    they always have (a callback runs while its program runs, before the call returns).

    Example:
        >>> f = invarax.jit(lambda x: invarax.debug.print("x = {}", x))
        >>> f(1.0); invarax.effects_barrier()
        x = 1.0
    """


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Call ``callback(*args, **kwargs)``, a Python function with effects, as JAX does.

    As ``pure_callback``, but the call is an effect: ``jit`` never removes, merges or
    folds it, and runs it each time the program runs, in program order. It cannot be
    differentiated; under ``vmap`` it is called once per example (not if ``ordered``).

    Arguments:
        callback: a Python function of NumPy arrays returning arrays of
            ``result_shape_dtypes`` (``None`` for no result).
        result_shape_dtypes: a pytree of ``ShapeDtypeStruct``s describing the results.
        *args, **kwargs: pytrees of arrays passed to ``callback``.
        sharding: accepted as JAX's (one device).
        ordered: whether the calls must keep their order relative to other ordered effects
            (invarax keeps every effect in program order).

    Example:
        >>> import invarax, numpy as np
        >>> seen = []
        >>> f = invarax.jit(lambda x: io_callback(seen.append, None, x) or x + 1)
        >>> f(jnp.array(1.0)), f(jnp.array(2.0)), len(seen)
        (Array(2., dtype=float32, weak_type=True), Array(3., dtype=float32, weak_type=True), 2)
    """
    return _bind(io_callback_p, "io_callback", callback, result_shape_dtypes, args, kwargs,
                 ordered=bool(ordered))


def _bind(prim, name, callback, result_shape_dtypes, args, kwargs, **params):
    """Bind callback primitive ``prim`` on the arrays of ``args``/``kwargs``."""
    leaves, in_tree = tree_flatten((args, kwargs))
    arrays = [to_array(x, f"a {name} argument") for x in leaves]
    result_leaves, out_tree = tree_flatten(result_shape_dtypes)
    avals = []
    for i, r in enumerate(result_leaves):
        if not (hasattr(r, "shape") and hasattr(r, "dtype")):
            raise TypeError(f"{name}: result_shape_dtypes leaf {i} is a "
                            f"{type(r).__name__}; give ShapeDtypeStruct(shape, dtype)s")
        avals.append(ShapedArray(r.shape, dtypes.canonicalize(r.dtype)))

    def flat_callback(*values):
        a, k = tree_unflatten(in_tree, list(values))
        out_leaves, tree = tree_flatten(callback(*a, **k))
        if tree != out_tree:
            raise ValueError(f"{name}: the callback returned the structure {tree}, "
                             f"result_shape_dtypes declares {out_tree}")
        return out_leaves

    outs = prim.bind(*arrays, callback=flat_callback, result_avals=tuple(avals), **params)
    return tree_unflatten(out_tree, outs)

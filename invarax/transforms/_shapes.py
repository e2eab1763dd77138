"""Shapes without values: ``ShapeDtypeStruct``, ``eval_shape``, ``typeof``, and
``default_backend``."""

from __future__ import annotations

from ..core import dtypes
from ..core.array import Array, concrete_scalar, is_python_scalar, to_array
from ..core.aval import ShapedArray, ShapeDtypeStruct
from ..core.pytree import tree_flatten, tree_flatten_with_path, tree_unflatten
from ..core.pytree_registry import keystr
from ..distributed import types as _types
from ..interpreters.staging import flatten_fun, trace_to_jaxpr


def _aval_of(leaf, path, fun_name: str) -> ShapedArray:
    if isinstance(leaf, Array):
        return leaf.aval
    if isinstance(leaf, ShapeDtypeStruct):
        return ShapedArray(leaf.shape, leaf.dtype, leaf.weak_type)
    if is_python_scalar(leaf):
        return concrete_scalar(leaf).aval
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return ShapedArray(leaf.shape, dtypes.canonicalize(leaf.dtype))
    raise TypeError(
        f"eval_shape of {fun_name}: the argument at {keystr(path) or 'the top'} is a "
        f"{type(leaf).__name__} ({leaf!r:.40}), which has no shape and dtype. Pass arrays, "
        "scalars or ShapeDtypeStructs; bind other values with functools.partial.")


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)``, computed without any arithmetic.

    Arguments:
        fun: a function of arrays (pytrees and keyword arguments allowed).
        *args, **kwargs: pytrees whose leaves are arrays, scalars or anything with
            ``.shape`` and ``.dtype`` (``ShapeDtypeStruct``).

    Returns:
        ``fun``'s output pytree with a ``ShapeDtypeStruct`` for each array (a
        ``ShapeDtypeStruct`` that ``fun`` returns comes back as it is).

    Example:
        >>> eval_shape(lambda x: jnp.sum(x, axis=0), ShapeDtypeStruct((4, 3), jnp.float32))
        ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    name = getattr(fun, "__name__", type(fun).__name__)
    pairs, in_tree = tree_flatten_with_path((args, kwargs))
    avals = [_aval_of(leaf, path, name) for path, leaf in pairs]
    structs, out_tree = {}, []

    def traced(*args, **kwargs):  # ShapeDtypeStructs among the outputs are not traced
        leaves, tree = tree_flatten(fun(*args, **kwargs))
        out_tree.append(tree)
        structs.update((i, x) for i, x in enumerate(leaves) if isinstance(x, ShapeDtypeStruct))
        return [x for i, x in enumerate(leaves) if i not in structs]

    flat_fun, _ = flatten_fun(traced, in_tree)
    closed = trace_to_jaxpr(flat_fun, avals, f"eval_shape of {name}")
    traced_out = iter(ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in closed.out_avals)
    return tree_unflatten(out_tree[0], [structs[i] if i in structs else next(traced_out)
                                        for i in range(out_tree[0].num_leaves)])


def typeof(x) -> ShapedArray:
    """The abstract value of ``x``: its shape, dtype and weak type, and where it lives, as
    ``jax.typeof``.

    Arguments:
        x: an array, a tracer, a scalar or a NumPy array.

    Returns:
        A ``ShapedArray`` with ``.sharding`` (the mesh axes of type ``Explicit`` splitting
        each dimension) and ``.vma`` (inside ``shard_map``, the mesh axes along which the
        value varies); printed as JAX prints it (docs/distributed.md).

    Example:
        >>> typeof(jnp.ones((2, 3)))
        ShapedArray(float32[2,3])
        >>> print(typeof(jnp.ones((2, 3))))
        float32[2,3]
    """
    x = to_array(x, "typeof's argument")
    return _types.typeof(x, x.aval)


__all__ = ["ShapeDtypeStruct", "eval_shape", "typeof"]

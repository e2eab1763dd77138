"""``invarax.flatten_util``: JAX's ``ravel_pytree``, a pytree of arrays as one flat vector."""

from __future__ import annotations

import dataclasses

import numpy as np

from . import lax
from .core.pytree import tree_flatten, tree_unflatten
from .dtypes import result_type
from .numpy import asarray, zeros


def ravel_pytree(pytree):
    """Ravel a pytree of arrays and scalars into one 1-D array, as JAX's ``ravel_pytree``.

    The leaves are raveled and concatenated in ``tree_flatten``'s order, converted to the
    dtype their dtypes promote to; an empty pytree gives an empty float32 array.

    Arguments:
        pytree: a pytree whose leaves are arrays or scalars.

    Returns:
        ``(flat, unravel)``: the vector, and a function mapping a vector of the same length
        (and dtype, where the leaves had several) back to a pytree of ``pytree``'s
        structure, each leaf with its shape and dtype. ``unravel`` is hashable (equal for
        equal structures), so it can be a static argument.

    Example:
        >>> import invarax.numpy as jnp
        >>> flat, unravel = ravel_pytree({"b": jnp.ones(2), "w": jnp.zeros((1, 2))})
        >>> flat
        Array([1., 1., 0., 0.], dtype=float32)
        >>> unravel(flat * 2)["w"]
        Array([[0., 0.]], dtype=float32)
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return zeros((0,), np.float32), _Unravel(treedef, (), (), (), None)
    leaves = [asarray(x) for x in leaves]
    from_dtypes = tuple(x.dtype for x in leaves)
    to_dtype = result_type(*from_dtypes)
    mixed = any(d != to_dtype for d in from_dtypes)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype) if mixed else x,
                                        (x.size,)) for x in leaves], 0)
    shapes = tuple(x.shape for x in leaves)
    return flat, _Unravel(treedef, tuple(x.size for x in leaves), shapes,
                          from_dtypes if mixed else (), to_dtype if mixed else None)


@dataclasses.dataclass(frozen=True)
class _Unravel:
    """``ravel_pytree``'s inverse for one structure (hashable, as JAX's)."""

    treedef: object
    sizes: tuple
    shapes: tuple
    from_dtypes: tuple  # () where every leaf had the flat vector's dtype (any dtype goes)
    to_dtype: object

    def __call__(self, flat):
        flat = asarray(flat)
        if self.to_dtype is not None and flat.dtype != self.to_dtype:
            raise TypeError(f"unravel function given array of dtype {flat.dtype}, but "
                            f"expected dtype {self.to_dtype}")
        if flat.shape != (sum(self.sizes),):
            raise ValueError(f"unravel function given an array of shape {flat.shape}, but "
                             f"expected shape ({sum(self.sizes)},)")
        chunks = lax.split(flat, self.sizes) if self.sizes else []
        leaves = [lax.reshape(c, s) for c, s in zip(chunks, self.shapes, strict=True)]
        if self.from_dtypes:
            leaves = [_convert(x, d) for x, d in zip(leaves, self.from_dtypes, strict=True)]
        return tree_unflatten(self.treedef, leaves)


def _convert(x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = lax.real(x)  # JAX drops the imaginary part here without its warning
    return lax.convert_element_type(x, dtype)


__all__ = ["ravel_pytree"]

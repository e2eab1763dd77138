"""``vmap``: vectorise a function over an axis of its arguments."""

from __future__ import annotations

import functools

import numpy as np

from ..core.api_util import fun_name
from ..core.array import Array, is_python_scalar, to_array
from ..core.pytree import tree_flatten, tree_structure, tree_unflatten
from ..interpreters import batching
from ..ops._util import canonicalize_axis

_INT = (int,)


def _broadcast_prefix(prefix, tree, what: str, fun):
    """One entry of the prefix pytree ``prefix`` per leaf of ``tree``."""
    if prefix is None or isinstance(prefix, _INT):
        return [prefix] * len(tree_flatten(tree)[0])
    prefix_leaves, prefix_tree = tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except ValueError as err:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value; "
            f"got {what}={prefix!r} for {fun_name(fun)}, whose {what[:-5] or 'value'} has "
            f"structure {tree_structure(tree)}. Details: {err}"
        ) from None
    out = []
    for axis, sub in zip(prefix_leaves, subtrees, strict=True):
        if axis is not None and not isinstance(axis, _INT):
            raise TypeError(f"vmap {what} entries must be ints or None, got {axis!r}")
        out += [axis] * len(tree_flatten(sub)[0])
    return out


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorise ``fun`` over an axis of its arguments.

    Arguments:
        fun: a function of arrays (pytrees allowed).
        in_axes: an int, None, or a pytree prefix of the positional arguments
            (a tuple with one entry per argument) giving the batch axis of each
            input (None: not batched; negative axes count from the end).
        out_axes: the same for the outputs.
        axis_name: a name for the batch axis, for collectives (``lax.psum``, ...).
        axis_size: the batch size, needed when no input is batched.

    Returns:
        The batched function. Row ``i`` of each output is bitwise ``fun`` applied to
        row ``i`` of the inputs (N1).

    Example:
        >>> vmap(lambda x: x.sum())(jnp.ones((3, 4)))
        Array([4., 4., 4.], dtype=float32)
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    name = fun_name(fun)

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if kwargs:
            # Keyword arguments are batched along axis 0, as JAX does.
            return vmap(lambda *a: fun(*a[:-1], **a[-1]),
                        in_axes=(*_positional(in_axes, len(args)), 0),
                        out_axes=out_axes, axis_name=axis_name, axis_size=axis_size)(
                *args, kwargs)
        axes = in_axes
        if isinstance(axes, tuple) and len(axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                f"the positional arguments passed to the function, but got len(in_axes)="
                f"{len(axes)}, len(args)={len(args)}"
            )
        leaves, in_tree = tree_flatten(args)
        dims = _broadcast_prefix(axes, args, "in_axes", fun)
        # As JAX: an unbatched leaf that is not an array (a function, a string) is passed
        # to ``fun`` as it is; every other leaf is an array.
        static = {i: x for i, (x, d) in enumerate(zip(leaves, dims, strict=True))
                  if d is None and not _array_like(x)}
        leaves = [to_array(x, f"an argument of vmapped {name}")
                  for i, x in enumerate(leaves) if i not in static]
        dims = [d for i, d in enumerate(dims) if i not in static]
        dims = [
            None if d is None else canonicalize_axis(d, x.ndim, f"vmap in_axes {d} of an input")
            for x, d in zip(leaves, dims, strict=True)
        ]
        size = _axis_size(leaves, dims, args, axis_size, name)
        out_tree = []

        def flat(ins):
            ins = iter(ins)
            ins = [static[i] if i in static else next(ins) for i in range(in_tree.num_leaves)]
            out = fun(*tree_unflatten(in_tree, ins))
            out_leaves, tree = tree_flatten(out)
            out_tree.append((tree, out))
            return out_leaves

        outs, out_dims = batching.batch_flat(flat, leaves, dims, size, axis_name,
                                             f"vmap of {name}")
        tree, example = out_tree[0]
        targets = _broadcast_prefix(out_axes, _shape_tree(tree), "out_axes", fun)
        moved = [
            _place(o, d, t, size) for o, d, t in zip(outs, out_dims, targets, strict=True)
        ]
        return tree_unflatten(tree, moved)

    return vmapped


def _array_like(x) -> bool:
    return isinstance(x, (Array, np.ndarray, np.generic)) or is_python_scalar(x)


def _positional(in_axes, n):
    return in_axes if isinstance(in_axes, tuple) else (in_axes,) * n


def _shape_tree(tree):
    return tree_unflatten(tree, [0] * tree.num_leaves)


def _axis_size(leaves, dims, args, axis_size, name):
    sizes = {x.shape[d] for x, d in zip(leaves, dims, strict=True) if d is not None}
    if axis_size is not None:
        sizes.add(int(axis_size))
    if not sizes:
        raise ValueError(
            f"vmap of {name} has no batched input (every in_axes is None); pass axis_size= "
            "to say how many examples there are"
        )
    if len(sizes) > 1:
        lines = []
        for i, (x, d) in enumerate(zip(leaves, dims, strict=True)):
            if d is not None:
                lines.append(f"  input {i} of shape {x.shape} has size {x.shape[d]} on axis {d}")
        given = [] if axis_size is None else [f"  axis_size={axis_size}"]
        raise ValueError(
            "vmap got inconsistent sizes for the mapped axis:\n" + "\n".join(lines + given)
            + "\nEvery batched input must have the same size on its in_axes axis."
        )
    return sizes.pop()


def _place(x, bdim, target, size):
    if target is None:
        if bdim is not None:
            raise ValueError(
                "vmap out_axes=None requires the output not to depend on the batch axis, but "
                f"an output of shape {x.shape} does; use an int out_axes"
            )
        return x
    target = canonicalize_axis(target, x.ndim + (bdim is None), "vmap out_axes")
    return batching.move_batch_axis(x, bdim, target, size)

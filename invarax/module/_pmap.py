"""``filter_pmap`` (``pmap`` over pytrees with any leaves; non-array leaves are static) and
``filter_shard`` (the array leaves of a pytree placed with shardings).

As ``filter_jit``, the arguments are partitioned into their array leaves (mapped over the
devices or broadcast, by ``in_axes``) and the rest, which is hashed into ``pmap``'s cache
key through a ``Static``; non-array outputs (functions, strings, a Module's static fields)
come back as the Python values the traced call produced, so ``filter_pmap`` of a
constructor builds one Module whose arrays are stacked over the devices.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.array import ArrayImpl
from ..core.pytree import tree_flatten, tree_unflatten
from ..distributed.constraint import with_sharding_constraint
from ..transforms._pmap import pmap
from ._filters import combine, if_array, is_array, partition
from ._static import Static
from ._vmap import _map_axes


def _run(dynamic, static: Static):
    fun, args, kwargs = combine(dynamic, static.value)
    out_dynamic, out_static = partition(fun(*args, **kwargs), is_array)
    return out_dynamic, Static(out_static)


def filter_pmap(fun=None, *, in_axes=if_array(0), out_axes=if_array(0), axis_name=None,  # noqa: B008
                axis_size=None, donate="none"):
    """Map ``fun`` over devices, over pytrees with any leaves; non-array leaves are static.

    Arguments:
        fun: any function of pytrees (a Module's bound method too).
        in_axes: as ``filter_vmap``'s: an int, None, a callable of one leaf (``if_array(0)``),
            or a pytree prefix of the positional arguments. Keyword arguments are mapped
            with ``if_array(0)``; the arrays of ``fun`` itself are broadcast.
        out_axes: the same for the outputs; non-array outputs are returned as they are.
        axis_name: a name for the mapped axis, for collectives.
        axis_size: unused (the size comes from the arguments), accepted as in Equinox.
        donate: ``"none"`` (the only choice: host memory is shared, nothing to donate).

    Returns:
        The mapped function; slice ``i`` of each mapped output is bitwise
        ``filter_vmap(fun)``'s row ``i``.

    Example:
        >>> f = filter_pmap(lambda x, tag: (x.sum(), tag))
        >>> f(jnp.ones((1, 3)), "sum")
        (Array([3.], dtype=float32), 'sum')
    """
    if fun is None:
        return functools.partial(filter_pmap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name, axis_size=axis_size, donate=donate)
    if donate != "none":
        raise ValueError(f"filter_pmap(donate={donate!r}): only donate='none' is supported")
    cache = {}  # in_axes of the dynamic part -> the pmapped _run

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        spec = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args),
                {k: if_array(0) for k in kwargs})
        axes = _map_axes(spec, (args, kwargs), "in_axes")
        fun_leaves, fun_tree = tree_flatten(fun)
        _, arg_tree = tree_flatten((args, kwargs))
        axes_tree = (tree_unflatten(fun_tree, [None] * len(fun_leaves)),
                     *tree_unflatten(arg_tree, axes))
        dynamic, static = partition((fun, args, kwargs), is_array)
        key = tuple(axes)
        run = cache.get(key)
        if run is None:
            run = cache[key] = pmap(_run, axis_name=axis_name, in_axes=(axes_tree, None))
        out_dynamic, out_static = run(dynamic, Static(static))
        out = combine(out_dynamic, out_static.value)
        return _place(out, out_axes)

    return pmapped


def _place(out, out_axes):
    """``out`` (arrays mapped on axis 0) with each array leaf moved to its ``out_axes``."""
    leaves, tree = tree_flatten(out)
    targets = _map_axes(out_axes, out, "out_axes")
    placed = []
    for leaf, target in zip(leaves, targets, strict=True):
        if not is_array(leaf) or target == 0:
            placed.append(leaf)
        elif target is None:
            placed.append(ArrayImpl(np.asarray(leaf)[0], leaf.weak_type))
        else:
            placed.append(ArrayImpl(np.moveaxis(np.asarray(leaf), 0, target), leaf.weak_type))
    return tree_unflatten(tree, placed)


def filter_shard(x, device_or_shardings):
    """``x`` with its array leaves placed with ``device_or_shardings``; other leaves unchanged
    (Equinox's: ``lax.with_sharding_constraint`` of the arrays).

    Arguments:
        x: any pytree.
        device_or_shardings: a device (one of ``invarax.devices()``), or a sharding (a
            ``NamedSharding``, ...) or pytree prefix of ``x`` of shardings. Host memory is
            shared by the CPU devices, so placing copies nothing and the values are
            unchanged, bit for bit; inside ``jit`` an output returned through
            ``filter_shard`` is placed with its sharding.

    Returns:
        ``x``, its arrays placed (``leaf.sharding``).

    Example:
        >>> filter_shard((jnp.ones(2), "tag"), invarax.devices()[0])[1]
        'tag'
    """
    dynamic, static = partition(x, is_array)
    return combine(with_sharding_constraint(dynamic, device_or_shardings), static)

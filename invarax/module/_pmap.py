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

from ..compiler.stages import check_compiler_options
from ..core.array import ArrayImpl, to_array
from ..core.pytree import tree_flatten, tree_unflatten
from ..distributed.constraint import with_sharding_constraint
from ..ops._util import canonicalize_axis
from ..transforms._make_jaxpr import make_jaxpr
from ..transforms._pmap import pmap
from ..transforms._shapes import eval_shape
from ..transforms._vmap import vmap
from ._filters import combine, if_array, is_array, is_array_like, partition
from ._static import Static
from ._vmap import _map_axes, _named_in_axes


def _run(dynamic, static: Static):
    fun, args, kwargs = combine(dynamic, static.value)
    out_dynamic, out_static = partition(fun(*args, **kwargs), is_array)
    return out_dynamic, Static(out_static)


# The calls (function, static arguments, shapes) whose output shapes have been traced, as
# Equinox's cache of them: the most recent _SHAPED_MAX, oldest first.
_SHAPED = {}
_SHAPED_MAX = 512


def _remember(signature) -> None:
    _SHAPED[signature] = None
    if len(_SHAPED) > _SHAPED_MAX:
        del _SHAPED[next(iter(_SHAPED))]


def filter_pmap(fun=None, *, in_axes=if_array(0), out_axes=if_array(0), axis_name=None,  # noqa: B008
                axis_size=None, donate="none", **pmapkwargs):
    """Map ``fun`` over devices, over pytrees with any leaves; non-array leaves are static.

    Arguments:
        fun: any function of pytrees (a Module's bound method too).
        in_axes: as ``filter_vmap``'s: an int, None, a callable of one leaf (``if_array(0)``),
            or a pytree prefix of the positional arguments. Keyword arguments are mapped
            with ``if_array(0)``; the arrays of ``fun`` itself are broadcast.
        out_axes: the same for the outputs; non-array outputs are returned as they are.
        axis_name: a name for the mapped axis, for collectives.
        axis_size: the size of the mapped axis when no array is mapped (Equinox's).
        donate: ``"all"`` (or ``"warn"``) deletes the arrays of the arguments and of
            ``fun`` after the call, as ``pmap(donate_argnums=...)``; ``"none"`` (default).
        **pmapkwargs: passed to ``pmap``, as Equinox does: ``devices=[...]``, ``backend``.

    Returns:
        The mapped function; slice ``i`` of each mapped output is bitwise
        ``filter_vmap(fun)``'s row ``i``. ``.lower(*args, **kwargs)`` gives Equinox's
        stages: ``.as_text()`` (the program, as ``make_jaxpr`` prints it) and ``.compile()``
        (the mapped function itself: it compiles per signature when called).

    Example:
        >>> f = filter_pmap(lambda x, tag: (x.sum(), tag), devices=invarax.devices()[:1])
        >>> f(jnp.ones((1, 3)), "sum")
        (Array([3.], dtype=float32), 'sum')
    """
    if fun is None:
        return functools.partial(filter_pmap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name, axis_size=axis_size, donate=donate,
                                 **pmapkwargs)
    if donate not in ("all", "warn", "none"):
        raise ValueError(f"filter_pmap: donate must be 'all', 'warn' or 'none', got "
                         f"{donate!r}")
    donate_argnums = () if donate == "none" else (0,)
    cache = {}  # in_axes of the dynamic part -> the pmapped _run

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        if isinstance(in_axes, dict):
            spec = _named_in_axes(fun, in_axes, args, kwargs)
        else:
            spec = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args),
                    {k: if_array(0) for k in kwargs})
        axes = _map_axes(spec, (args, kwargs), "in_axes")
        fun_leaves, fun_tree = tree_flatten(fun)
        arg_leaves, arg_tree = tree_flatten((args, kwargs))
        size = next((np.shape(x)[canonicalize_axis(a, np.ndim(x), "filter_pmap in_axes")]
                     for x, a in zip(arg_leaves, axes, strict=True)
                     if a is not None and is_array(x)), axis_size)
        axes_tree = (tree_unflatten(fun_tree, [None] * len(fun_leaves)),
                     *tree_unflatten(arg_tree, axes))
        dynamic, static = partition((fun, args, kwargs), is_array)
        key = tuple(axes)
        signature = (key, Static(static), axis_name, size, repr(pmapkwargs), tuple(
            (np.shape(x), np.result_type(x)) for x in tree_flatten(dynamic)[0]))
        if signature not in _SHAPED:
            # As Equinox: the output's shapes first (one trace, under vmap), then pmap's trace
            eval_shape(vmap(_run, in_axes=(axes_tree, None), axis_name=axis_name,
                            axis_size=size), dynamic, Static(static))
            _remember(signature)
        run = cache.get(key)
        if run is None:
            run = cache[key] = pmap(_run, axis_name=axis_name, in_axes=(axes_tree, None),
                                    axis_size=axis_size, donate_argnums=donate_argnums,
                                    **pmapkwargs)
        out_dynamic, out_static = run(dynamic, Static(static))
        out = combine(out_dynamic, out_static.value)
        return _place(out, out_axes, size)

    pmapped.lower = lambda *args, **kwargs: _Lowered(pmapped, args, kwargs)
    return pmapped


class _Lowered:
    """``filter_pmap(f).lower(*args, **kwargs)``: Equinox's ahead-of-time stage."""

    def __init__(self, pmapped, args, kwargs):
        self._pmapped = pmapped
        dynamic, static = partition((args, kwargs), is_array)

        def arrays_out(dynamic):
            a, k = combine(dynamic, static)
            return partition(pmapped(*a, **k), is_array)[0]

        self._text = str(make_jaxpr(arrays_out)(dynamic))

    def as_text(self) -> str:
        """The program, as ``make_jaxpr`` prints it."""
        return self._text

    def compile(self, compiler_options=None):
        """The mapped function (compiled per signature when called); ``compiler_options``
        (XLA's) are checked and ignored."""
        check_compiler_options(compiler_options)
        return self._pmapped


def _place(out, out_axes, size):
    """``out`` (arrays mapped on axis 0) with each array leaf moved to its ``out_axes``; a
    Python or NumPy scalar with an int ``out_axes`` becomes an array of ``size`` copies, as
    in Equinox (and ``filter_vmap``)."""
    leaves, tree = tree_flatten(out)
    targets = _map_axes(out_axes, out, "out_axes")
    placed = []
    for leaf, target in zip(leaves, targets, strict=True):
        if not is_array(leaf):
            if target is not None and is_array_like(leaf) and size is not None:
                value = to_array(leaf)
                leaf = ArrayImpl(np.broadcast_to(np.asarray(value), (size,)), value.weak_type)
            placed.append(leaf)
        elif target == 0:
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

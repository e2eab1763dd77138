"""``filter_vmap``: ``vmap`` with per-leaf axes; non-array leaves pass through as static.

The map is split from the filtering: ``_map_axes`` resolves a prefix spec of ints, None
and callables to one axis per leaf, and ``filter_vmap`` runs the batching interpreter on
the array leaves only. A later ``filter_pmap`` reuses ``_map_axes`` the same way.
"""

from __future__ import annotations

import functools
import inspect

from ..core.api_util import fun_name
from ..core.array import to_array
from ..core.pytree import tree_flatten, tree_unflatten
from ..interpreters import batching
from ..ops._util import canonicalize_axis
from ..transforms._vmap import _axis_size, _place
from ._filters import if_array, is_array, is_array_like
from ._wrappers import Transformed


def _map_axes(spec, tree, what: str) -> list:
    """One axis (an int or None) per leaf of ``tree``, from the prefix pytree ``spec``."""
    # As Equinox: a pytree node in the spec (a Module, callable or not) is a prefix node,
    # not a callable entry; callable entries are leaves (functions, ``if_array``).
    specs, spec_tree = tree_flatten(spec, is_leaf=lambda s: s is None)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except ValueError as err:
        raise ValueError(f"filter_vmap {what} must be a pytree prefix of the value: {err}") \
            from None
    axes = []
    for s, sub in zip(specs, subtrees, strict=True):
        for leaf in tree_flatten(sub)[0]:
            axis = s(leaf) if callable(s) else s
            if axis is not None and not isinstance(axis, int):
                raise TypeError(f"filter_vmap {what} entries must give an int or None, "
                                f"got {axis!r}")
            if axis is not None and what == "in_axes" and not is_array(leaf):
                raise ValueError(
                    f"filter_vmap {what} maps axis {axis} over a non-array leaf {leaf!r:.40}; "
                    "use if_array(axis) to map arrays only and keep other leaves static"
                )
            axes.append(axis)
    return axes


def _named_in_axes(fun, in_axes: dict, args, kwargs):
    """Equinox's dict ``in_axes``: entries by parameter name, ``if_array(0)`` for the others.

    A name may be a positional parameter (bound by position, as in Equinox) or a keyword
    argument of the call."""
    axes = dict(in_axes)
    params = list(inspect.signature(fun).parameters)
    positional = tuple(axes.pop(name, if_array(0)) for name, _ in zip(params, args,
                                                                       strict=False))
    positional += (if_array(0),) * (len(args) - len(positional))
    keyword = {k: axes.pop(k, if_array(0)) for k in kwargs}
    if axes:
        raise ValueError(f"The following `in_axes` did not correspond to any argument: "
                         f"{tuple(axes)}; the arguments of this call are {params[:len(args)]}"
                         f" and keywords {list(kwargs)}")
    return positional, keyword


def _batched_output(leaf, axis) -> bool:
    """Whether an output leaf goes through the batching: arrays, and Python scalars given an
    int axis (broadcast into an array, as Equinox); other leaves are returned as they are."""
    return is_array(leaf) or (axis is not None and is_array_like(leaf))


def _unbatched(fun, args, kwargs, out_axes, name):
    """As Equinox: no input batched and no ``axis_size``, so ``fun`` is called once; its
    outputs must all be unbatched (``out_axes`` None for each array)."""
    out = fun(*args, **kwargs)
    targets = _map_axes(out_axes, out, "out_axes")
    if any(t is not None and _batched_output(x, t)
           for x, t in zip(tree_flatten(out)[0], targets, strict=True)):
        raise ValueError(
            f"filter_vmap of {name}: no input is batched (every in_axes is None) and "
            "axis_size is not given, so an output with a non-None out_axes has no batch "
            "size; pass axis_size=, batch an input, or give such outputs out_axes=None")
    return out


def filter_vmap(fun=None, in_axes=if_array(0), out_axes=if_array(0), axis_name=None,  # noqa: B008
                axis_size=None):
    """Vectorise ``fun`` over pytrees with any leaves; non-array leaves are static.

    Arguments:
        fun: any function of pytrees (a Module's bound method too). Without it
            (``@filter_vmap(in_axes=...)``, as Equinox), a decorator.
        in_axes: an int, None, a callable of one leaf returning either (``if_array(0)``:
            axis 0 for arrays, None otherwise), or a pytree prefix of the positional
            arguments (a tuple, one entry per argument) with those as leaves, or a dict
            naming parameters (Equinox's form: the named ones take their entry, the others
            ``if_array(0)``; a name may also be a keyword argument of the call). Keyword
            arguments are otherwise mapped with ``if_array(0)``.
        out_axes: the same for the outputs. A Python scalar output given an int axis is
            broadcast into an array (as Equinox); other non-array outputs (strings,
            functions, None, a Module's static fields) are returned as they are (Equinox
            raises for strings and functions), so ``fun`` may build a whole Module:
            vmapping a constructor builds an ensemble.
        axis_name: a name for the mapped axis, for collectives.
        axis_size: the batch size, needed when no input is mapped.

    Returns:
        The vectorised function; row ``i`` of each mapped output is bitwise ``fun``
        applied to row ``i`` of the inputs (N1). It is a pytree holding ``fun`` (equal
        for equal ``fun`` and axes, as Equinox's), so ``filter_jit(filter_vmap(f))``
        re-created per call traces once.

    Example:
        >>> f = filter_vmap(lambda x, name: (x.sum(), name), in_axes=(0, None))
        >>> f(jnp.ones((3, 2)), "sum")
        (Array([2., 2., 2.], dtype=float32), 'sum')
        >>> @filter_vmap(in_axes=(None, 0))
        ... def scale(w, x):
        ...     return w * x
        >>> scale(2.0, jnp.arange(3.0))
        Array([0., 2., 4.], dtype=float32)
    """
    if fun is None:
        return functools.partial(filter_vmap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name, axis_size=axis_size)
    if not callable(fun):
        raise TypeError(f"filter_vmap: fun must be callable, got {type(fun).__name__}; "
                        "pass the axes by keyword (filter_vmap(in_axes=...)) to get a "
                        "decorator")
    return Transformed(fun, _vmap, (("axis_name", axis_name), ("axis_size", axis_size)),
                       (("in_axes", in_axes), ("out_axes", out_axes)))


def _vmap(fun, in_axes, out_axes, axis_name, axis_size):
    """``filter_vmap`` of ``fun`` as a plain closure."""
    name = fun_name(fun)

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, dict):
            spec = _named_in_axes(fun, in_axes, args, kwargs)
        else:
            spec = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args),
                    {k: if_array(0) for k in kwargs})
        leaves, in_tree = tree_flatten((args, kwargs))
        axes = _map_axes(spec, (args, kwargs), "in_axes")
        dynamic = [i for i, leaf in enumerate(leaves) if is_array(leaf)]
        values = [to_array(leaves[i]) for i in dynamic]
        dims = [None if axes[i] is None else
                canonicalize_axis(axes[i], x.ndim, "filter_vmap in_axes")
                for i, x in zip(dynamic, values, strict=True)]
        if axis_size is None and all(d is None for d in dims):
            return _unbatched(fun, args, kwargs, out_axes, name)
        size = _axis_size(values, dims, args, axis_size, name)
        out_info = []

        def flat(ins):
            full = list(leaves)
            for i, x in zip(dynamic, ins, strict=True):
                full[i] = x
            a, k = tree_unflatten(in_tree, full)
            out = fun(*a, **k)
            out_leaves, out_tree = tree_flatten(out)
            targets = _map_axes(out_axes, out, "out_axes")
            batched = [_batched_output(x, t) for x, t in zip(out_leaves, targets, strict=True)]
            out_info.append((out_leaves, out_tree, targets, batched))
            return [to_array(x) for x, b in zip(out_leaves, batched, strict=True) if b]

        outs, out_dims = batching.batch_flat(flat, values, dims, size, axis_name,
                                             f"filter_vmap of {name}")
        out_leaves, out_tree, targets, batched = out_info[0]
        placed = iter(_place(o, d, t, size) for o, d, t in zip(
            outs, out_dims, [t for t, b in zip(targets, batched, strict=True) if b],
            strict=True))
        return tree_unflatten(out_tree, [next(placed) if b else x
                                         for x, b in zip(out_leaves, batched, strict=True)])

    return vmapped

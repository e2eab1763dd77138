"""Collectives over a named axis: psum, pmean, pmax, pmin, all_gather, axis_index (and, in
``collectives_more``, ppermute, psum_scatter, all_to_all).

A collective names an axis bound by an enclosing ``vmap(..., axis_name=...)`` or
``pmap``. Under ``vmap`` it reduces over the batch axis with the canonical reduction
kernels, so ``psum`` over ``n`` examples adds them in the order that ``jnp.sum`` uses for
a length-``n`` axis (docs/numerics.md), whatever the other dimensions. On ``pmap``'s
devices its impl gathers every device's value in device order (``_device_axes.Exchange``)
and reduces the stack with the same kernel over its leading axis: the same bits as under
``vmap`` (N7). An axis name that no transformation binds is an error.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.pytree import tree_map
from ..core.trace import Primitive, current_trace
from ..interpreters.ad import Zero, defjvp, deflinear
from ..interpreters.batching import BatchTrace, batching_rules, moveaxis, not_mapped
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from ._device_axes import lookup


def _names(axis_name) -> tuple:
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _unbound(name):
    def fail(*args, axis_name, **params):
        raise NameError(
            f"unbound axis name: {axis_name!r}. lax.{name} needs an enclosing "
            f"vmap(..., axis_name={_names(axis_name)[0]!r}) (or pmap) that binds it"
        )

    return fail


def axis_size(name: str, axis_name) -> int:
    """The size of the named axis, bound by an enclosing transformation (else NameError)."""
    trace = current_trace()
    while trace is not None:
        if isinstance(trace, BatchTrace) and trace.axis_name == axis_name:
            return trace.axis_size
        trace = trace.parent
    axis = lookup(axis_name)
    if axis is not None:
        return axis.size
    _unbound(name)(axis_name=axis_name)


def on_devices(name: str, compute, needs_values: bool = True):
    """The impl of collective ``name``: on ``pmap``'s devices, ``compute(stack, index,
    **params)`` from every device's operand stacked in device order (shared by the
    devices: never written into) and this device's index; anywhere else the unbound-axis
    error (vmap handles its own names by batching)."""
    fail = _unbound(name)

    def impl(*args, axis_name, **params):
        names = _names(axis_name)
        axis = lookup(names[0]) if len(names) == 1 else None
        if axis is None or axis.exchange is None:
            if len(names) > 1 and any(lookup(n) is not None for n in names):
                raise NotImplementedError(
                    f"lax.{name} over several pmap axes {names}: invarax runs one pmap level "
                    "on devices; map the inner level with vmap"
                )
            return fail(*args, axis_name=axis_name, **params)
        values = axis.exchange.gather(axis.slot, args[0]) if needs_values else None
        return compute(values, axis.index, **params)

    return impl


def _same_aval(name):
    def abstract_eval(x, *, axis_name):
        for n in _names(axis_name):
            axis_size(name, n)
        return x

    return abstract_eval


def defcollective(name: str, reduce, combine_unbatched, reduce_p):
    """A collective that reduces over the named batch axis with ``reduce(x, axes)``.

    ``combine_unbatched(x, size)`` gives the result for a value that is the same in
    every example, with the bits that ``reduce`` gives for ``size`` copies of it
    (``psum``: the copies summed; ``pmax``: ``x``). On devices, ``reduce_p``'s impl
    reduces the stacked values of every device over their leading axis.
    """
    prim = Primitive(name)
    prim.def_impl(on_devices(name, lambda stack, index: reduce_p.impl(stack, axes=(0,))))
    prim.def_abstract_eval(_same_aval(name))
    register_lowering(prim)

    def batch(vals, dims, *, trace, axis_name):
        (x,), (d,) = vals, dims
        if trace.axis_name not in _names(axis_name):
            return prim.bind(x, axis_name=axis_name), d
        rest = tuple(n for n in _names(axis_name) if n != trace.axis_name)
        out = combine_unbatched(x, trace.axis_size) if d is not_mapped else reduce(x, (d,))
        return (prim.bind(out, axis_name=rest) if rest else out), not_mapped

    batch.needs_trace = True
    batching_rules[prim] = batch
    return prim


def _summed_copies(x, size):
    # Not x * size (one rounding): the sum of size copies in the canonical order, so the
    # bits do not depend on whether vmap knows that the examples' values are equal.
    copies = sh.broadcast_in_dim(x, (size, *x.shape), tuple(range(1, x.ndim + 1)))
    return red.reduce_sum(copies, (0,))


psum_p = defcollective("psum", red.reduce_sum, _summed_copies, red.reduce_sum_p)
pmax_p = defcollective("pmax", red.reduce_max, lambda x, size: x, red.reduce_max_p)
pmin_p = defcollective("pmin", red.reduce_min, lambda x, size: x, red.reduce_min_p)

# psum is linear; each example's cotangent reaches every example's input.
deflinear(psum_p, lambda ct, x, *, axis_name: [None if isinstance(ct, Zero)
                                                else psum_p.bind(ct, axis_name=axis_name)])


def _extremum_jvp(prim):
    def rule(t, out, x, *, axis_name):
        hit = ew.convert_element_type(ew.eq(x, out), t.dtype)
        picked = psum_p.bind(ew.mul(t, hit), axis_name=axis_name)
        return ew.div(picked, psum_p.bind(hit, axis_name=axis_name))

    defjvp(prim, rule)


_extremum_jvp(pmax_p)
_extremum_jvp(pmin_p)


def _collective(prim, doc):
    def op(x, axis_name):
        return tree_map(lambda leaf: prim.bind(to_array(leaf, f"lax.{prim.name} operand"),
                                               axis_name=axis_name), x)

    op.__name__ = prim.name
    op.__doc__ = doc
    return op


psum = _collective(psum_p, """Sum ``x`` (a pytree) over the named axis.

    Example:
        >>> vmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.arange(3.0))
        Array([3., 3., 3.], dtype=float32)
    """)
pmax = _collective(pmax_p, "The maximum of ``x`` (a pytree) over the named axis.")
pmin = _collective(pmin_p, "The minimum of ``x`` (a pytree) over the named axis.")


def pmean(x, axis_name):
    """The mean of ``x`` (a pytree) over the named axis: ``psum(x) / axis size``."""
    size = psum(1.0, axis_name)
    return tree_map(lambda leaf: ew.div(leaf, size.astype(to_array(leaf).dtype)),
                    psum(x, axis_name))


# all_gather: every example sees the whole stack of examples along ``axis``.
all_gather_p = Primitive("all_gather")
all_gather_p.def_impl(on_devices("all_gather", lambda stack, index, axis, tiled: _placed(
    stack, axis, tiled)))


def _placed(stack, axis: int, tiled: bool):
    """The stacked values with their stacking axis at ``axis`` (``tiled``: merged into it)."""
    moved = np.moveaxis(stack, 0, axis)
    if tiled:
        shape = list(moved.shape)
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        moved = moved.reshape(shape)
    return np.array(moved)  # a copy: the stack is shared by the devices


def _all_gather_abstract_eval(x, *, axis_name, axis, tiled):
    size = axis_size("all_gather", axis_name)
    shape = list(x.shape)
    if tiled:
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return x.update(shape=tuple(shape))


all_gather_p.def_abstract_eval(_all_gather_abstract_eval)
register_lowering(all_gather_p)


def _all_gather_batch(vals, dims, *, trace, axis_name, axis, tiled):
    (x,), (d,) = vals, dims
    if trace.axis_name != axis_name:
        if d is not_mapped:
            return all_gather_p.bind(x, axis_name=axis_name, axis=axis, tiled=tiled), d
        x = moveaxis(x, d, 0)  # the example axis stays first; gather inside each example
        return all_gather_p.bind(x, axis_name=axis_name, axis=axis + 1, tiled=tiled), 0
    if d is not_mapped:
        x = sh.broadcast_in_dim(x, (trace.axis_size, *x.shape), tuple(range(1, x.ndim + 1)))
        d = 0
    out = moveaxis(x, d, axis)
    if tiled:
        shape = list(out.shape)
        merged = shape[axis] * shape[axis + 1]
        out = sh.reshape(out, (*shape[:axis], merged, *shape[axis + 2:]))
    return out, not_mapped


_all_gather_batch.needs_trace = True
batching_rules[all_gather_p] = _all_gather_batch
deflinear(all_gather_p, lambda ct, x, **params: [_all_gather_transpose(ct, x, **params)])


def _all_gather_transpose(ct, x, *, axis_name, axis, tiled):
    # This example's slot of the cotangent, summed over every example that saw it.
    if isinstance(ct, Zero):
        return None
    from .dynamic_slicing import dynamic_slice

    summed = psum_p.bind(ct, axis_name=axis_name)
    width = x.aval.shape[axis] if tiled else 1
    starts = [0] * ct.ndim
    starts[axis] = ew.mul(axis_index(axis_name), width)
    sizes = list(ct.shape)
    sizes[axis] = width
    slot = dynamic_slice(summed, starts, sizes)
    return slot if tiled else sh.squeeze(slot, (axis,))


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False):
    """Gather ``x`` (a pytree) from every example of the named axis, stacked at ``axis``.

    Example:
        >>> vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(jnp.arange(2.0))
        Array([[0., 1.],
               [0., 1.]], dtype=float32)
    """
    return tree_map(lambda leaf: all_gather_p.bind(
        to_array(leaf, "lax.all_gather operand"), axis_name=axis_name, axis=int(axis),
        tiled=bool(tiled)), x)


# axis_index: this example's position along the named axis.
axis_index_p = Primitive("axis_index")
axis_index_p.def_impl(on_devices("axis_index", lambda stack, index: np.int32(index),
                                  needs_values=False))
axis_index_p.def_abstract_eval(
    lambda *, axis_name: (_size("axis_index", axis_name), ShapedArray((), dtypes.int32))[1]
)
register_lowering(axis_index_p)


def _size(name: str, axis_name) -> int:
    """The size of the named axis, or the product of the sizes of a tuple of names."""
    return math.prod(axis_size(name, n) for n in _names(axis_name))


def _axis_index_batch(vals, dims, *, trace, axis_name):
    # Over a tuple of names, the position in their product, the first name outermost.
    names = _names(axis_name)
    k = names.index(trace.axis_name)
    outer, inner = names[:k], names[k + 1:]
    index = sh.iota(dtypes.int32, trace.axis_size)
    if inner:
        index = ew.add(ew.mul(index, np.int32(_size("axis_index", inner))),
                       axis_index_p.bind(axis_name=_one_or_tuple(inner)))
    if outer:
        stride = np.int32(trace.axis_size * _size("axis_index", inner))
        index = ew.add(index, ew.mul(axis_index_p.bind(axis_name=_one_or_tuple(outer)), stride))
    return index, 0


def _one_or_tuple(names: tuple):
    return names[0] if len(names) == 1 else names


_axis_index_batch.needs_trace = True
batching_rules[axis_index_p] = _axis_index_batch


def size_of_axis(axis_name) -> int:
    """The size of the named axis (of a tuple of names: the product of their sizes), bound
    by an enclosing ``vmap``, ``pmap`` or ``shard_map`` (JAX's ``lax.axis_size``).

    Example:
        >>> vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(jnp.ones(3))
        Array([3., 3., 3.], dtype=float32)
    """
    return _size("axis_size", axis_name)


def axis_index(axis_name):
    """The index of the current example along the named axis (an int32 scalar).

    Example:
        >>> vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(jnp.ones(3))
        Array([0., 1., 2.], dtype=float32)
    """
    return axis_index_p.bind(axis_name=axis_name)


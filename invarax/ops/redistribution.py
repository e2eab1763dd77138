"""Collectives that move data between the members of a named axis: ppermute, psum_scatter,
all_to_all.

As the reducing collectives (``collectives.py``), each is batched by ``vmap`` over its own
axis and, on ``pmap``'s devices, computed from every device's value in device order; both
give the same bits (``psum_scatter`` sums with the canonical ``reduce_sum`` kernel). Each
is linear: its JVP applies it to the tangent, and its transpose is its inverse movement.
"""

from __future__ import annotations

import numpy as np

from ..core.array import to_array
from ..core.lowering import register_lowering
from ..core.pytree import tree_map
from ..core.trace import Primitive
from ..interpreters.ad import Zero, deflinear
from ..interpreters.batching import batching_rules, moveaxis, not_mapped
from . import reductions as red
from . import shape as sh
from .collectives import all_gather_p, axis_size, on_devices


def _single(name: str, axis_name):
    if isinstance(axis_name, tuple):
        if len(axis_name) != 1:
            raise NotImplementedError(f"lax.{name} over several axis names {axis_name}; "
                                      "apply it once per axis")
        axis_name = axis_name[0]
    return axis_name


def _defredistribution(name, abstract_eval, device, batch_own, batch_other, transpose):
    """The primitive ``name`` with its rules; ``batch_own(x, d, size, **params)`` batches it
    over its own axis (``d`` None for a value the same in every example), ``batch_other(x,
    d, **params)`` under another axis (returns the rebound result and its batch axis)."""
    prim = Primitive(name)
    prim.def_impl(on_devices(name, device))
    prim.def_abstract_eval(lambda x, *, axis_name, **params: abstract_eval(
        x, axis_size(name, axis_name), **params))
    register_lowering(prim)

    def batch(vals, dims, *, trace, axis_name, **params):
        (x,), (d,) = vals, dims
        if trace.axis_name != axis_name:
            if d is not_mapped:
                return prim.bind(x, axis_name=axis_name, **params), d
            return batch_other(prim, x, d, axis_name=axis_name, **params)
        example = x.aval if d is not_mapped else x.aval.update(
            shape=tuple(n for i, n in enumerate(x.shape) if i != d))
        abstract_eval(example, trace.axis_size, **params)  # the checks, with vmap's axis size
        if d is not_mapped:
            x = sh.broadcast_in_dim(x, (trace.axis_size, *x.shape), tuple(range(1, x.ndim + 1)))
            d = 0
        return batch_own(moveaxis(x, d, 0), trace.axis_size, **params)

    batch.needs_trace = True
    batching_rules[prim] = batch
    deflinear(prim, lambda ct, x, **params: [None if isinstance(ct, Zero)
                                             else transpose(ct, **params)])
    return prim


# ---------------------------------------------------------------------------------------
# ppermute: member ``dst`` receives ``src``'s value for each pair; the others get zeros.


def _sources(perm, size: int) -> dict:
    """``{dst: src}`` of ``perm``, checked: indices in range, each used once per side."""
    sources = {}
    for pair in perm:
        src, dst = pair
        if not (0 <= src < size and 0 <= dst < size):
            raise ValueError(f"lax.ppermute perm pair {pair} is out of range for an axis of "
                             f"size {size}: indices must be in [0, {size})")
        if dst in sources or src in sources.values():
            raise ValueError(f"lax.ppermute perm {perm} uses a source or a destination twice; "
                             "each device sends at most once and receives at most once")
        sources[dst] = src
    return sources


def _ppermute_eval(x, size, *, perm):
    _sources(perm, size)
    return x


def _ppermute_device(stack, index, *, perm):
    src = _sources(perm, len(stack)).get(index)
    return np.zeros_like(stack[index]) if src is None else np.array(stack[src])


def _ppermute_own(x, size, *, perm):
    sources = _sources(perm, size)
    zero = sh.broadcast_in_dim(to_array(0, "zero").astype(x.dtype), (1, *x.shape[1:]), ())
    rows = [zero if i not in sources else sh.slice_in_dim(x, sources[i], sources[i] + 1)
            for i in range(size)]
    return sh.concatenate(rows, 0), 0


def _ppermute_other(prim, x, d, **params):
    return prim.bind(x, **params), d


ppermute_p = _defredistribution(
    "ppermute", _ppermute_eval, _ppermute_device, _ppermute_own, _ppermute_other,
    lambda ct, *, axis_name, perm: ppermute_p.bind(
        ct, axis_name=axis_name, perm=tuple((dst, src) for src, dst in perm)))


def ppermute(x, axis_name, perm):
    """Send ``x`` (a pytree) between the members of the named axis along ``perm``.

    Arguments:
        x: a pytree of arrays.
        axis_name: the name of a ``pmap`` or ``vmap`` axis.
        perm: ``(source, destination)`` index pairs; each index at most once per side.
            A member that no pair sends to receives zeros.

    Returns:
        ``x`` as received by this member.

    Example:
        >>> shift = lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
        >>> vmap(shift, axis_name="i")(jnp.arange(3.0))
        Array([2., 0., 1.], dtype=float32)
    """
    perm = tuple((int(src), int(dst)) for src, dst in perm)
    return tree_map(lambda leaf: ppermute_p.bind(to_array(leaf, "lax.ppermute operand"),
                                                 axis_name=_single("ppermute", axis_name),
                                                 perm=perm), x)


# ---------------------------------------------------------------------------------------
# psum_scatter: the psum, of which member i keeps block i along ``scatter_dimension``.


def _split_shape(name: str, what: str, x, axis: int, size: int, tiled: bool) -> list:
    """``x``'s shape with ``axis`` split between ``size`` members: removed (untiled: its
    length must be ``size``) or divided (tiled: a multiple of ``size``)."""
    n = x.shape[axis]
    if (n % size) if tiled else (n != size):
        need = f"a multiple of {size}" if tiled else f"{size}"
        raise ValueError(
            f"lax.{name} needs {what} {axis} of its operand (shape {x.shape}) to be {need}, "
            f"the axis size (tiled={tiled})"
        )
    shape = list(x.shape)
    if tiled:
        shape[axis] //= size
    else:
        del shape[axis]
    return shape


def _scatter_eval(x, size, *, scatter_dimension, tiled):
    shape = _split_shape("psum_scatter", "dimension", x, scatter_dimension, size, tiled)
    return x.update(shape=tuple(shape))


def _block(x, index, axis, size, tiled):
    """Block ``index`` of ``x`` along ``axis`` (of ``size`` blocks; untiled: one element)."""
    if not tiled:
        return np.take(x, index, axis)
    width = x.shape[axis] // size
    return np.take(x, np.arange(index * width, (index + 1) * width), axis)


def _scatter_device(stack, index, *, scatter_dimension, tiled):
    total = red.reduce_sum_p.impl(stack, axes=(0,))
    return _block(total, index, scatter_dimension, len(stack), tiled)


def _split_leading(x, axis, size):
    """``x`` with ``axis`` split into ``(size, rest)`` and the ``size`` part moved first."""
    shape = list(x.shape)
    shape[axis:axis + 1] = [size, shape[axis] // size]
    return moveaxis(sh.reshape(x, tuple(shape)), axis, 0)


def _scatter_own(x, size, *, scatter_dimension, tiled):
    total = red.reduce_sum(x, (0,))
    if not tiled:
        return moveaxis(total, scatter_dimension, 0), 0
    return _split_leading(total, scatter_dimension, size), 0


def _scatter_other(prim, x, d, *, scatter_dimension, **params):
    out = prim.bind(moveaxis(x, d, 0), scatter_dimension=scatter_dimension + 1, **params)
    return out, 0


psum_scatter_p = _defredistribution(
    "psum_scatter", _scatter_eval, _scatter_device, _scatter_own, _scatter_other,
    lambda ct, *, axis_name, scatter_dimension, tiled: all_gather_p.bind(
        ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled))


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum`` of ``x`` (a pytree) over the named axis, member ``i`` keeping block ``i``.

    Arguments:
        x: a pytree of arrays whose ``scatter_dimension`` has the axis size (or, with
            ``tiled=True``, a multiple of it).
        axis_name: the name of a ``pmap`` or ``vmap`` axis.
        scatter_dimension: the dimension split between the members.
        tiled: keep the dimension (each member gets a block of it) instead of removing it.

    Returns:
        This member's block of the sum.

    Example:
        >>> vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(jnp.ones((2, 2)))
        Array([2., 2.], dtype=float32)
    """
    _no_groups("psum_scatter", axis_index_groups)
    return tree_map(lambda leaf: psum_scatter_p.bind(
        to_array(leaf, "lax.psum_scatter operand"), axis_name=_single("psum_scatter", axis_name),
        scatter_dimension=int(scatter_dimension), tiled=bool(tiled)), x)


# ---------------------------------------------------------------------------------------
# all_to_all: member i sends block j of ``split_axis`` to member j, and stacks (tiled:
# concatenates) what it receives along ``concat_axis``, in member order.


def _a2a_eval(x, size, *, split_axis, concat_axis, tiled):
    shape = _split_shape("all_to_all", "split_axis", x, split_axis, size, tiled)
    if tiled:
        shape[concat_axis] *= size
    else:
        shape.insert(concat_axis, size)
    return x.update(shape=tuple(shape))


def _a2a_device(stack, index, *, split_axis, concat_axis, tiled):
    blocks = [_block(v, index, split_axis, len(stack), tiled) for v in stack]
    return np.concatenate(blocks, concat_axis) if tiled else np.stack(blocks, concat_axis)


def _a2a_own(x, size, *, split_axis, concat_axis, tiled):
    # x[j] is member j's operand; member i's result gathers block i of every x[j].
    if not tiled:
        y = moveaxis(x, split_axis + 1, 0)          # y[i, j] = block i of member j
        return moveaxis(y, 1, concat_axis + 1), 0
    y = _split_leading(x, split_axis + 1, size)     # y[i, j, ...] with a block-sized axis
    z = moveaxis(y, 1, concat_axis + 1)
    shape = list(z.shape)
    shape[concat_axis + 1:concat_axis + 3] = [shape[concat_axis + 1] * shape[concat_axis + 2]]
    return sh.reshape(z, tuple(shape)), 0


def _a2a_other(prim, x, d, *, split_axis, concat_axis, **params):
    out = prim.bind(moveaxis(x, d, 0), split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                    **params)
    return out, 0


all_to_all_p = _defredistribution(
    "all_to_all", _a2a_eval, _a2a_device, _a2a_own, _a2a_other,
    lambda ct, *, axis_name, split_axis, concat_axis, tiled: all_to_all_p.bind(
        ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis, tiled=tiled))


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Exchange blocks of ``x`` (a pytree) between the members of the named axis.

    Arguments:
        x: a pytree of arrays whose ``split_axis`` has the axis size (``tiled``: a multiple).
        axis_name: the name of a ``pmap`` or ``vmap`` axis.
        split_axis: the axis whose block ``j`` is sent to member ``j``.
        concat_axis: where the received blocks are stacked (``tiled``: concatenated), in
            member order.
        tiled: split and concatenate existing axes instead of removing and inserting one.

    Returns:
        The blocks this member received.

    Example:
        >>> f = vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")
        >>> f(jnp.arange(4.0).reshape(2, 2))
        Array([[0., 2.],
               [1., 3.]], dtype=float32)
    """
    _no_groups("all_to_all", axis_index_groups)

    def one(leaf):
        leaf = to_array(leaf, "lax.all_to_all operand")
        split = _axis(split_axis, leaf.ndim, "split_axis")
        concat = _axis(concat_axis, leaf.ndim, "concat_axis")
        return all_to_all_p.bind(leaf, axis_name=_single("all_to_all", axis_name),
                                 split_axis=split, concat_axis=concat, tiled=bool(tiled))

    return tree_map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with positional ``axis`` of ``x``: ``all_to_all`` splitting and
    stacking on ``axis``, as JAX's ``lax.pswapaxes``.

    Example:
        >>> f = vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")
        >>> f(jnp.arange(4.0).reshape(2, 2))
        Array([[0., 2.],
               [1., 3.]], dtype=float32)
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def _axis(axis, ndim, what):
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"lax.all_to_all {what}={axis} is out of range for rank {ndim}")
    return axis % max(ndim, 1)


def _no_groups(name, groups):
    if groups is not None:
        raise NotImplementedError(f"lax.{name} with axis_index_groups is not supported; "
                                  "split the axis with vmap instead")

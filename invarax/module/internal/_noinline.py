"""``noinline``: a function kept out of the programs that call it, as Equinox's.

A call binds ``noinline[...] index *arrays``: the enclosing program holds one equation,
typed by the function's abstract evaluation (cached on shapes), and the function itself
is compiled on its own (``filter_jit``, once per transformation and shapes) and called
when the program runs. Its transformations are the function's, applied inside the
equation: JVP, transpose (by the function's VJP, which is its transpose since it is linear
there) and ``vmap`` append a transform to the equation's list, so the enclosing program
still holds one equation.
"""

from __future__ import annotations

import functools

import numpy as np

from ...core.aval import ShapedArray, ShapeDtypeStruct
from ...core.lowering import register_lowering
from ...core.pytree import tree_flatten, tree_map, tree_unflatten
from ...core.trace import Primitive
from ...interpreters import ad, batching
from .._ad import filter_jvp, filter_vjp
from .._filters import combine, filter, is_array, partition  # noqa: A004
from .._jit import filter_jit
from .._make_jaxpr import filter_eval_shape
from .._module import Module, field
from .._vmap import filter_vmap
from .._wrappers import module_update_wrapper
from ._misc import hashable_combine, hashable_partition
from ._primitive import (
    filter_primitive_batching,
    filter_primitive_bind,
    filter_primitive_def,
    filter_primitive_jvp,
    filter_primitive_transpose,
    materialise_zeros,
)

_index_to_fn = []  # the static part of each noinline'd function, by index
_fn_to_index = {}


def _is_none(x) -> bool:
    return x is None


def _is_undefined(x) -> bool:
    return isinstance(x, ad.UndefinedPrimal)


def _is_shapedarray(x) -> bool:
    return isinstance(x, ShapedArray)


def _impl_transform(static_fn):
    def impl(args):
        dynamic_fn, fargs, kwargs = args
        return hashable_combine(dynamic_fn, static_fn)(*fargs, **kwargs)

    return impl


def _abstract_transform(abstract_fn):
    def abstract(args):
        dynamic_fn, fargs, kwargs = args
        return abstract_fn(dynamic_fn, *fargs, **kwargs)

    return abstract


def _jvp_transform(static_fn):
    def jvp(args):
        primals, tangents = args
        # Python scalars are constants here (their materialised zero tangents dropped).
        fixed_leaf = tree_map(lambda p, t: t is None or not is_array(p), primals, tangents,
                              is_leaf=_is_none)
        fixed, moving = partition(primals, fixed_leaf, is_leaf=_is_none)
        tangents = filter(tangents, fixed_leaf, inverse=True, is_leaf=_is_none)
        return filter_jvp(lambda m: static_fn(combine(m, fixed)), (moving,), (tangents,))[1]

    return jvp


class _TransposeTransform(Module):
    undefined: object  # the linear inputs' ShapedArrays (None elsewhere)

    def __call__(self, static_fn):
        def transpose(args):
            from ... import numpy as jnp

            defined, cts_out = args
            zeros = tree_map(lambda a: jnp.zeros(a.shape, a.dtype), self.undefined)
            _, pullback = filter_vjp(lambda u: static_fn(combine(defined, u)), zeros)
            return pullback(cts_out)[0]

        return transpose


class _BatchTransform(Module):
    batch_axes: object

    def __call__(self, static_fn):
        return filter_vmap(static_fn, in_axes=(self.batch_axes,))


def _build(index, transforms):
    fn = _index_to_fn[index]
    for transform in transforms:
        fn = transform(fn)
    return filter_jit(fn)


@functools.lru_cache(maxsize=256)
def _compiled(index, treedef, leaves):
    return _build(index, tree_unflatten(treedef, leaves))


@filter_primitive_def
def _noinline_impl(dynamic_index, abstract_fn, transforms, args):
    # Keyed by the transforms' structure and leaves: a transform holding a container that
    # cannot be hashed itself (the {} of no keyword arguments in vmap's axes) still finds
    # the program every call site of the same function and transforms shares.
    leaves, treedef = tree_flatten(transforms)
    key = int(dynamic_index), treedef, tuple(leaves)
    try:
        hash(key)
    except TypeError:  # a transform holding an unhashable leaf: compiled for this call only
        return _build(int(dynamic_index), transforms)(args)
    return _compiled(*key)(args)


@functools.lru_cache(maxsize=128)
def _cached_eval_shape(shapes, treedef, static):
    leaves = [ShapeDtypeStruct(shape, dtype) for shape, dtype in shapes]
    abstract_fn, transforms, args = hashable_combine(tree_unflatten(treedef, leaves), static)
    fn = _abstract_transform(abstract_fn)
    for transform in transforms[1:]:  # the first is _impl_transform
        fn = transform(fn)
    return filter_eval_shape(fn, args)


@filter_primitive_def
def _noinline_abstract(dynamic_index, abstract_fn, transforms, args):
    dynamic, static = hashable_partition((abstract_fn, transforms, args), _is_shapedarray)
    leaves, treedef = tree_flatten(dynamic)
    out = _cached_eval_shape(tuple((x.shape, x.dtype) for x in leaves), treedef, static)
    return tree_map(lambda s: ShapedArray(s.shape, s.dtype) if isinstance(s, ShapeDtypeStruct)
                    else s, out)


@filter_primitive_jvp
def _noinline_jvp(primals, tangents):
    index, abstract_fn, transforms, args = primals
    t_args = tree_map(materialise_zeros, args, tangents[3], is_leaf=_is_none)
    outs = filter_primitive_bind(noinline_p, *primals)
    t_outs = filter_primitive_bind(noinline_p, index, abstract_fn,
                                   [*transforms, _jvp_transform], (args, t_args))
    return outs, t_outs


@filter_primitive_transpose(materialise_zeros=True)
def _noinline_transpose(inputs, cts_out):
    index, abstract_fn, transforms, args = inputs
    undefined, defined = partition(args, _is_undefined, is_leaf=_is_undefined)
    undefined = tree_map(lambda x: x.aval, undefined, is_leaf=_is_undefined)
    cts = filter_primitive_bind(noinline_p, index, abstract_fn,
                                [*transforms, _TransposeTransform(undefined)],
                                (defined, cts_out))
    return None, None, tree_map(lambda _: None, transforms), cts


@filter_primitive_batching
def _noinline_batch(inputs, batch_axes):
    index, abstract_fn, transforms, args = inputs
    if batch_axes[0] is not None:  # a cond batched on its predicate broadcast the index
        index = index[0]
    args = tree_map(lambda x, b: x if b is None else batching.moveaxis(x, b, 0), args,
                    batch_axes[3], is_leaf=_is_none)
    axes = tree_map(lambda b: None if b is None else 0, batch_axes[3], is_leaf=_is_none)
    out = filter_primitive_bind(noinline_p, index, abstract_fn,
                                [*transforms, _BatchTransform(axes)], args)
    return out, tree_map(lambda _: 0, out)


noinline_p = Primitive("noinline", multiple_results=True)
noinline_p.def_impl(_noinline_impl)
noinline_p.def_abstract_eval(_noinline_abstract)
register_lowering(noinline_p)
ad.jvp_rules[noinline_p] = _noinline_jvp
ad.transpose_rules[noinline_p] = _noinline_transpose
batching.batching_rules[noinline_p] = _noinline_batch


class _NoInlineWrapper(Module):
    dynamic_index: object
    abstract_fn: object = field(static=True)
    dynamic_fn: object

    @property
    def __wrapped__(self):
        return self.abstract_fn

    def __call__(self, *args, **kwargs):
        return filter_primitive_bind(noinline_p, self.dynamic_index, self.abstract_fn,
                                     [_impl_transform], (self.dynamic_fn, args, kwargs))


def noinline(fn, abstract_fn=None):
    """``fn``, called as one equation of the programs that call it and compiled on its own.

    Arguments:
        fn: any callable pytree; its arrays are inputs of the equation.
        abstract_fn: ``abstract_fn(arrays of fn, *args, **kwargs)`` gives the output's
            shapes (default: ``fn`` itself). Functions sharing it can replace each other
            in a compiled caller without recompiling it.

    Returns:
        The wrapped function (a Module).

    Example:
        >>> f = noinline(lambda x, y: x * y + 1)
        >>> jit(lambda x: f(x, 2.0) + f(x, 3.0))(jnp.float32(1.0))
        Array(7., dtype=float32)
        >>> grad(lambda x: f(x, 2.0))(jnp.float32(1.0))
        Array(2., dtype=float32)
    """
    dynamic_fn, static_fn = hashable_partition(fn, is_array)
    if abstract_fn is None:
        def abstract_fn(__dynamic_fn, *args, **kwargs):
            return hashable_combine(__dynamic_fn, static_fn)(*args, **kwargs)

    index = _fn_to_index.get(static_fn)
    if index is None:
        index = _fn_to_index[static_fn] = len(_index_to_fn)
        _index_to_fn.append(static_fn)
    return module_update_wrapper(_NoInlineWrapper(np.array(index), abstract_fn, dynamic_fn))


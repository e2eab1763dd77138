"""Primitives of any pytrees: Equinox's ``filter_primitive_*`` wrappers and
``filter_primitive_bind``.

A filtered primitive is bound on the arrays of its arguments (its operands); everything
else travels in its parameters: ``treedef`` (of all the arguments), ``static`` (the
non-array leaves, ``_MISSING`` where an array goes) and ``flatten`` (a ``Flatten``, which
records the structure and the non-array part of the output the first time a rule
returns). The wrappers turn invarax's rule conventions (flat lists of arrays, ``Zero``,
``UndefinedPrimal``, batch dimensions) into rules of whole pytrees with ``None`` for "no
tangent", "no cotangent" or "not batched", as Equinox's do.

An impl runs on NumPy values when the program runs; its rule then gets invarax arrays and
runs eagerly (under the evaluation trace, whatever the caller's), and its arrays go back
to NumPy. Called on tracers (finalisation inlines an impl), it just traces.
"""

from __future__ import annotations

import numpy as np

from ...core.array import Array, ArrayImpl, to_array
from ...core.aval import ShapedArray, ShapeDtypeStruct
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import EVAL_TRACE, Tracer, set_current_trace
from ...interpreters import ad
from .._filters import combine, is_array, is_array_like, partition
from .._tree_equal import tree_equal

_MISSING = object()  # where an operand goes among the static leaves
_UNSET = object()


class _WrappedPrimal:
    """An ``UndefinedPrimal`` hidden in a pytree (not a pytree node; an array-like leaf)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _is_none(x) -> bool:
    return x is None


def _is_dynamic(x) -> bool:
    return is_array(x) or isinstance(x, (ShapedArray, _WrappedPrimal))


def _aval(x) -> ShapedArray:
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype)
    return to_array(x).aval


def _zero(x):
    return ad.Zero(ad.tangent_aval(_aval(x)))


def _combine(dynamic, static) -> list:
    it = iter(dynamic)
    out = [next(it) if s is _MISSING else s for s in static]
    if next(it, _UNSET) is not _UNSET:
        raise AssertionError("internal error: more operands than a filtered primitive takes")
    return out


class Flatten:
    """The output flattener of one bind: records the output's structure and non-array
    part when first called, and checks every later call against them."""

    __slots__ = ("treedef_out", "static_out", "__weakref__")

    def called(self) -> bool:
        return hasattr(self, "treedef_out")

    def get(self):
        return self.treedef_out, self.static_out

    def _record(self, treedef, static):
        if not self.called():
            self.treedef_out, self.static_out = treedef, static
        elif treedef != self.treedef_out or tree_equal(static, self.static_out) is not True:
            raise ValueError(
                "A filtered primitive's rules returned outputs of different structures: "
                f"{self.treedef_out} then {treedef}. Its impl, abstract-eval, JVP and batching "
                "rules must agree on the output's structure and its non-array leaves.")

    def __call__(self, out, like=_UNSET):
        """``out``'s arrays, flat; with ``like`` (a pytree of ``out``'s structure, None for
        a leaf without counterpart) also ``like``'s leaves at those arrays."""
        if like is _UNSET:
            dynamic, static = partition(out, _is_dynamic)
            flat, treedef = tree_flatten(dynamic)
            self._record(treedef, static)
            return flat
        out_leaves, out_tree = tree_flatten(out, is_leaf=_is_none)
        like_leaves, like_tree = tree_flatten(like, is_leaf=_is_none)
        if out_tree != like_tree:
            raise ValueError(f"A filtered primitive's rule returned {like_tree} where the "
                             f"structure of its primal output, {out_tree}, was expected")
        spec = [y is not None or _is_dynamic(x) for x, y in zip(out_leaves, like_leaves,
                                                                 strict=True)]
        dynamic, static = partition(out, tree_unflatten(out_tree, spec), is_leaf=_is_none)
        flat, treedef = tree_flatten(dynamic)
        self._record(treedef, static)
        flat_like = [y for y, s in zip(like_leaves, spec, strict=True) if s]
        return flat, flat_like


def _concrete(values) -> bool:
    return all(not isinstance(v, (ShapedArray, Tracer)) for v in values)


def _as_array(x):
    if isinstance(x, np.ndarray):
        return ArrayImpl(x.view() if x.flags.writeable else x)
    return x


def _to_numpy(x):
    return np.asarray(x) if isinstance(x, Array) and not isinstance(x, Tracer) else x


def run_eagerly(fn, values):
    """``fn(values)``: on NumPy values (a primitive's impl when the program runs) under the
    evaluation trace on invarax arrays, with NumPy arrays out; else (abstract values,
    tracers) as it is."""
    if not (values and _concrete(values)):
        return fn(list(values))
    with set_current_trace(EVAL_TRACE):
        return [_to_numpy(o) for o in fn([_as_array(v) for v in values])]


def filter_primitive_def(rule):
    """An impl or abstract-eval rule from ``rule(*args)`` on the arguments as bound.

    ``rule`` returns any pytree: arrays (as impl) or ``ShapedArray``s (as abstract eval)
    are the primitive's outputs, other leaves are passed through ``filter_primitive_bind``.
    """

    def _wrapper(*dynamic, treedef, static, flatten):
        def call(values):
            return flatten(rule(*tree_unflatten(treedef, _combine(values, static))))

        return run_eagerly(call, dynamic)

    return _wrapper


def filter_primitive_jvp(rule):
    """A JVP rule from ``rule(primals, tangents) -> (primals_out, tangents_out)``.

    ``tangents`` has the structure of ``primals`` with None for symbolic zeros and for
    every leaf that is not an array; ``tangents_out`` has the structure of
    ``primals_out``, None for a zero tangent.
    """

    def _wrapper(primals, tangents, *, treedef, static, flatten):
        tangents = [None if isinstance(t, ad.Zero) else t for t in tangents]
        no_tangent = [s if s is _MISSING else None for s in static]
        primals = tree_unflatten(treedef, _combine(primals, static))
        tangents = tree_unflatten(treedef, _combine(tangents, no_tangent))
        primals_out, tangents_out = rule(primals, tangents)
        flat_out, flat_t = flatten(primals_out, tangents_out)
        return flat_out, [_zero(p) if t is None else t
                          for p, t in zip(flat_out, flat_t, strict=True)]

    return _wrapper


def filter_primitive_transpose(rule=_UNSET, *, materialise_zeros: bool = False):
    """A transpose rule from ``rule(inputs, cts_out) -> cts_in``.

    ``inputs`` are the arguments with ``UndefinedPrimal`` at the linear ones;
    ``cts_out`` has the structure of the primal output, None for a zero cotangent (with
    ``materialise_zeros=True`` zeros are arrays instead); ``cts_in`` has the structure of
    ``inputs``, None where no cotangent flows. Usable as ``@filter_primitive_transpose``
    or ``@filter_primitive_transpose(materialise_zeros=True)``.
    """
    if rule is _UNSET:
        return lambda r: filter_primitive_transpose(r, materialise_zeros=materialise_zeros)

    def _wrapper(cts_out, *dynamic, treedef, static, flatten):
        treedef_out, _ = flatten.get()
        cts_out = [ad.instantiate(c) if materialise_zeros else
                   (None if isinstance(c, ad.Zero) else c) for c in cts_out]
        cts_out = tree_unflatten(treedef_out, cts_out)
        wrapped = [_WrappedPrimal(x) if isinstance(x, ad.UndefinedPrimal) else x
                   for x in dynamic]
        wrapped_inputs = tree_unflatten(treedef, _combine(wrapped, static))
        inputs = tree_unflatten(treedef, [x.value if isinstance(x, _WrappedPrimal) else x
                                          for x in _combine(wrapped, static)])
        flat_in, flat_cts = Flatten()(wrapped_inputs, rule(inputs, cts_out))
        if len(flat_cts) != len(dynamic):
            raise ValueError("A filtered transpose rule gave a cotangent for a leaf that is "
                             "not an array; give None there")
        return [None if c is None or not isinstance(x, _WrappedPrimal) else c
                for x, c in zip(flat_in, flat_cts, strict=True)]

    return _wrapper


def filter_primitive_batching(rule):
    """A batching rule from ``rule(inputs, batch_axes) -> (out, out_axes)``: ``batch_axes``
    has the structure of ``inputs`` (None: not batched, and for every non-array leaf)."""

    def _wrapper(dynamic, batch_axes, *, treedef, static, flatten):
        no_axis = [s if s is _MISSING else None for s in static]
        inputs = tree_unflatten(treedef, _combine(dynamic, static))
        axes = tree_unflatten(treedef, _combine(list(batch_axes), no_axis))
        out, out_axes = rule(inputs, axes)
        return flatten(out, out_axes)

    return _wrapper


def filter_primitive_bind(prim, *args):
    """Bind ``prim`` (defined with the wrappers above, ``multiple_results=True``) on any
    pytrees; returns its output pytree.

    Example:
        >>> from invarax.core.trace import Primitive, PRIMITIVES
        >>> from invarax.core.aval import ShapedArray
        >>> scale_p = Primitive("scale_example", multiple_results=True)
        >>> _ = scale_p.def_impl(filter_primitive_def(lambda x, k: {"y": x * k["by"]}))
        >>> _ = scale_p.def_abstract_eval(filter_primitive_def(lambda x, k: {"y": x}))
        >>> filter_primitive_bind(scale_p, jnp.ones(2), {"by": 3.0})
        {'y': Array([3., 3.], dtype=float32)}
        >>> del PRIMITIVES["scale_example"]
    """
    if not prim.multiple_results:
        raise ValueError(f"filter_primitive_bind needs a primitive with multiple_results=True, "
                         f"got {prim}")
    flat, treedef = tree_flatten(args)
    dynamic = [to_array(x) for x in flat if is_array(x)]
    static = tuple(_MISSING if is_array(x) else x for x in flat)
    flatten = Flatten()
    out = prim.bind(*dynamic, treedef=treedef, static=static, flatten=flatten)
    treedef_out, static_out = flatten.get()
    return combine(tree_unflatten(treedef_out, out), static_out)


def materialise_zeros(primal, tangent, allow_struct: bool = False):
    """``tangent``, or zeros of ``primal``'s tangent type where it is None and ``primal`` is
    array-like (or, with ``allow_struct``, a ``ShapeDtypeStruct``)."""
    arraylike = is_array_like(primal) or (allow_struct and isinstance(primal, ShapeDtypeStruct))
    if tangent is None and arraylike:
        return ad.instantiate(_zero(primal))
    return tangent

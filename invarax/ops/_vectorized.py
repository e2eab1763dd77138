"""The elementwise family's helpers: ``defvectorized``, its batching rule, lax wrappers,
weak constants."""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import emitted
from ..interpreters.batching import axis_size_of, batching_rules, moveaxis, not_mapped
from ._util import ANY, broadcast_shapes_strict, check_kinds, check_same_dtypes, lax_operands


def defvectorized(name: str, impl, kinds: str = ANY, out_dtype=None, **lowering) -> Primitive:
    """An elementwise primitive of any arity: equal dtypes, equal shapes or 0-d scalars.

    Arguments:
        name: the primitive's name.
        impl: a NumPy function of the operands.
        kinds: the dtype kinds accepted (``"fc"``: floating and complex).
        out_dtype: the output dtype if it is not the operands' (``bool`` for comparisons).
        lowering: the fields of its CPU lowering (``core.lowering.Lowering``) but ``impl``:
            ``fusible`` (default True: fusion groups may chunk it), ``c`` (its
            per-element C form), ``operator`` (on 0-d operands), ``kernel_of`` (the kernel
            its impl calls for a dtype, if it dispatches on it), ...

    Returns:
        The primitive, with impl, abstract-eval and CPU lowering rules defined.
    """
    prim = Primitive(name)

    def abstract_eval(*avals):
        check_same_dtypes(name, avals)
        check_kinds(name, avals[0], kinds)
        shape = broadcast_shapes_strict(name, avals)
        weak = all(a.weak_type for a in avals)  # as JAX, comparisons included
        return ShapedArray(shape, avals[0].dtype if out_dtype is None else out_dtype, weak)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    register_lowering(prim, **{"fusible": True, **lowering})
    return prim


def _const(x, value):
    """``value`` as a weak scalar of ``x``'s dtype (a literal in jaxprs)."""
    return ArrayImpl(np.asarray(value, x.dtype), True)


def _broadcast_like(t, out):
    return t if t.shape == out.shape else emitted.broadcast_in_dim(t, out.shape, ())


# Batching: every elementwise primitive maps over a batch axis by moving it to the front
# (a view) and broadcasting the operands that lack it; each element's bits are unchanged.


def _vectorized_batch_rule(prim, scalars_stay=lambda i: True):
    """``scalars_stay(i)``: whether an unbatched 0-d operand ``i`` may stay 0-d (lax ops
    broadcast it), or must be broadcast like the others (select_n's cases)."""

    def rule(vals, dims, **params):
        size = axis_size_of(vals, dims)
        shapes = [v.shape if d is not_mapped else v.shape[:d] + v.shape[d + 1:]
                  for v, d in zip(vals, dims, strict=True)]
        shape = next((s for s in shapes if s), ())
        args = []
        for i, (v, d, s) in enumerate(zip(vals, dims, shapes, strict=True)):
            if d is not_mapped:
                keep = s == () and scalars_stay(i)
                args.append(v if keep else emitted.broadcast_in_dim(
                    v, (size, *shape), tuple(range(len(shape) - len(s) + 1, len(shape) + 1))))
            else:
                v = moveaxis(v, d, 0)
                args.append(v if s == shape else emitted.broadcast_in_dim(v, (size, *shape), (0,)))
        return prim.bind(*args, **params), 0

    batching_rules[prim] = rule


def _unary(prim):
    """The lax wrapper ``op(x)`` of a one-operand elementwise primitive."""
    name = prim.name

    def op(x):
        return prim.bind(to_array(x, f"lax.{name} operand"))

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` (the ``{name}`` primitive)."
    return op


def _binary(prim):
    """The lax wrapper ``op(x, y)`` of a two-operand elementwise primitive."""

    def op(x, y):
        return prim.bind(*lax_operands(prim.name, (x, y)))

    op.__name__ = prim.name
    op.__doc__ = f"Elementwise ``{prim.name}`` of two arrays of equal dtype and shape."
    return op

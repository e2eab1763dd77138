"""``jax.interpreters.ad``: the differentiation rule tables, under JAX's names and contracts.

``primitive_jvps`` and ``primitive_transposes`` are invarax's own tables (not copies): a rule
put there is the one ``jvp``, ``grad`` and ``vjp`` use. The contracts are JAX's: a JVP rule
``rule(primals, tangents, **params) -> (primal_out, tangent_out)`` gets ``Zero`` for a
tangent that is zero; a transpose rule ``rule(ct, *args, **params)`` gets ``UndefinedPrimal``
for its linear inputs and returns one cotangent per argument (``None`` for the others).
"""

from __future__ import annotations

import functools

from ...interpreters import emitted
from ...interpreters.ad import JVPTrace, JVPTracer, UndefinedPrimal, Zero, zeros_like_aval
from ...interpreters.ad import defjvp as _defjvp_with_output
from ...interpreters.ad import instantiate as instantiate_zeros
from ...interpreters.ad import jvp_rules as primitive_jvps
from ...interpreters.ad import transpose_rules as primitive_transposes


def is_undefined_primal(x) -> bool:
    """Whether ``x`` is a linear input of the equation being transposed."""
    return isinstance(x, UndefinedPrimal)


def add_tangents(x, y):
    """``x + y`` for tangents, either of which may be a symbolic ``Zero``."""
    if isinstance(x, Zero):
        return y
    if isinstance(y, Zero):
        return x
    return emitted.add(x, y)


add_jaxvals = add_tangents


def get_primitive_transpose(p):
    """The transpose rule of primitive ``p``."""
    try:
        return primitive_transposes[p]
    except KeyError:
        raise NotImplementedError(f"transpose rule for '{p}' is not implemented") from None


def defjvp(primitive, *jvprules):
    """The JVP from one rule per argument, ``rule(g, *primals, **params)``, summed (JAX's)."""
    _defjvp_with_output(primitive, *(None if r is None else functools.partial(_drop_output, r)
                                     for r in jvprules))


def _drop_output(rule, g, out, *primals, **params):
    return rule(g, *primals, **params)


def defjvp2(primitive, *jvprules):
    """As ``defjvp``, each rule also given the output: ``rule(g, out, *primals, **params)``."""
    _defjvp_with_output(primitive, *jvprules)


def _linear_jvp(primitive, primals, tangents, **params):
    out = primitive.bind(*primals, **params)
    if all(isinstance(t, Zero) for t in tangents):
        outs = out if primitive.multiple_results else [out]
        zeros = [Zero(o.aval) for o in outs]
        return out, zeros if primitive.multiple_results else zeros[0]
    return out, primitive.bind(*map(instantiate_zeros, tangents), **params)


def _zero_cts(args):
    return [Zero(x.aval) if isinstance(x, UndefinedPrimal) else None for x in args]


def deflinear(primitive, transpose_rule):
    """A primitive linear in all its arguments; ``transpose_rule(ct, **params)`` returns
    the list of the arguments' cotangents."""
    primitive_jvps[primitive] = functools.partial(_linear_jvp, primitive)
    primitive_transposes[primitive] = lambda ct, *args, **params: (
        _zero_cts(args) if isinstance(ct, Zero) else transpose_rule(ct, **params))


def deflinear2(primitive, transpose_rule):
    """As ``deflinear``, the transpose rule also given the arguments:
    ``transpose_rule(ct, *args, **params)``."""
    primitive_jvps[primitive] = functools.partial(_linear_jvp, primitive)
    primitive_transposes[primitive] = lambda ct, *args, **params: (
        _zero_cts(args) if isinstance(ct, Zero) else transpose_rule(ct, *args, **params))


def defbilinear(prim, lhs_rule, rhs_rule):
    """A primitive linear in each of its two arguments; ``lhs_rule(ct, x, y, **params)``
    is the cotangent of an undefined ``x`` (``rhs_rule`` likewise for ``y``)."""
    defjvp(prim, lambda g, x, y, **kw: prim.bind(g, y, **kw),
           lambda g, x, y, **kw: prim.bind(x, g, **kw))

    def transpose(ct, x, y, **params):
        if is_undefined_primal(x):
            return [Zero(x.aval) if isinstance(ct, Zero) else lhs_rule(ct, x, y, **params), None]
        return [None, Zero(y.aval) if isinstance(ct, Zero) else rhs_rule(ct, x, y, **params)]

    primitive_transposes[prim] = transpose


__all__ = [
    "JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_tangents",
    "defbilinear", "defjvp", "defjvp2", "deflinear", "deflinear2", "get_primitive_transpose",
    "instantiate_zeros", "is_undefined_primal", "primitive_jvps", "primitive_transposes",
    "zeros_like_aval",
]

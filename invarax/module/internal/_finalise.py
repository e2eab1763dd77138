"""Finalisation, as Equinox's: a program with its custom primitives replaced by what
their impl computes (``unvmap_any`` becomes an ``any`` over its operand, and so on), and
``custom_jvp`` calls and ``stop_gradient`` inlined; for export or for reading.

A primitive opts in with ``register_impl_finalisation(prim)`` (its impl, called on
tracers, is traced into the program) or an entry ``primitive_finalisations[prim] =
rule``. Transform nothing after finalising: the derivative and batching rules of the
custom primitives are gone.
"""

from __future__ import annotations

import functools

from ...core.aval import ShapeDtypeStruct
from ...core.eval import eval_jaxpr
from ...core.ir import ClosedJaxpr, Jaxpr, Literal
from ...core.pytree import tree_unflatten
from ...interpreters.staging import trace_fun, trace_to_jaxpr
from ...ops.elementwise import stop_gradient_p
from ...transforms._custom_jvp import custom_jvp_call_p
from ._nontraceable import nonbatchable_p, nondifferentiable_backward_p, nontraceable_p
from ._unvmap import unvmap_all_p, unvmap_any_p, unvmap_max_p

primitive_finalisations = {}


def register_impl_finalisation(prim) -> None:
    """Finalise ``prim`` by tracing its impl (which must accept tracers)."""
    primitive_finalisations[prim] = functools.partial(_impl_finalisation, prim)


def _impl_finalisation(prim, *args, **params):
    return prim.impl(*args, **params)


def _finalise_param(value):
    if isinstance(value, ClosedJaxpr):
        return finalise_jaxpr(value)
    if isinstance(value, Jaxpr) and not value.constvars:
        return finalise_jaxpr(ClosedJaxpr(value, [])).jaxpr
    if type(value) is tuple:
        return tuple(_finalise_param(v) for v in value)
    return value


def finalise_eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """``eval_jaxpr``, finalising: each equation's registered finalisation runs instead of
    binding its primitive (sub-programs in its parameters finalised first)."""
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[id(v)]

    for var, val in zip((*jaxpr.constvars, *jaxpr.invars), (*consts, *args), strict=True):
        env[id(var)] = val
    for eqn in jaxpr.eqns:
        params = {k: _finalise_param(v) for k, v in eqn.params.items()}
        rule = primitive_finalisations.get(eqn.primitive, eqn.primitive.bind)
        outs = rule(*map(read, eqn.invars), **params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        for var, val in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = val
    return [read(v) for v in jaxpr.outvars]


def finalise_jaxpr_as_fn(jaxpr: ClosedJaxpr):
    """The finalised program as a function of its inputs."""
    return functools.partial(finalise_eval_jaxpr, jaxpr.jaxpr, jaxpr.consts)


def finalise_jaxpr(jaxpr: ClosedJaxpr) -> ClosedJaxpr:
    """The program ``jaxpr``, finalised (traced again, with the same inputs)."""
    fn = finalise_jaxpr_as_fn(jaxpr)
    return trace_to_jaxpr(lambda args: fn(*args), jaxpr.in_avals, "finalise_jaxpr")


def finalise_fn(fn):
    """``fn`` (of arrays) traced and run finalised.

    Example:
        >>> from invarax.module.internal import unvmap_any
        >>> finalise_fn(lambda x: unvmap_any(x > 1))(jnp.arange(3))
        Array(True, dtype=bool)
    """

    def finalised(*args):
        closed, leaves, out_tree = trace_fun(fn, args, {}, "finalise_fn")
        return tree_unflatten(out_tree, finalise_eval_jaxpr(closed.jaxpr, closed.consts, *leaves))

    return finalised


def finalise_make_jaxpr(fn, *, return_shape: bool = False):
    """As ``make_jaxpr``, then finalised; with ``return_shape`` also the output's
    structure as ``ShapeDtypeStruct``s.

    Example:
        >>> from invarax.module.internal import unvmap_any
        >>> print(finalise_make_jaxpr(lambda x: unvmap_any(x > 1))(jnp.arange(3)))
        { lambda ; a:i32[3]. let
            b:bool[3] = gt a 1:i32[]
            c:bool[] = reduce_or[axes=(0,)] b
          in (c,) }
    """

    def make(*args):
        closed, _, out_tree = trace_fun(fn, args, {}, "finalise_make_jaxpr")
        closed = finalise_jaxpr(closed)
        if not return_shape:
            return closed
        structs = [ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
        return closed, tree_unflatten(out_tree, structs)

    return make


def _call_finalisation(*args, call_jaxpr, **params):
    """A custom_jvp call, inlined: its body (finalised with the other parameters) evaluated
    on its operands."""
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _reduction(name):
    def rule(x):
        from ... import numpy as jnp

        return getattr(jnp, name)(x)

    return rule


primitive_finalisations.update({
    unvmap_any_p: _reduction("any"),
    unvmap_all_p: _reduction("all"),
    unvmap_max_p: _reduction("max"),
    stop_gradient_p: lambda x: x,
    custom_jvp_call_p: _call_finalisation,
})
for _prim in (nonbatchable_p, nondifferentiable_backward_p, nontraceable_p):
    primitive_finalisations[_prim] = lambda x, **params: x

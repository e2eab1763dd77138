"""``eval_jaxpr``: run a jaxpr by binding each equation, so the run can itself be traced."""

from __future__ import annotations

from .array import to_array
from .ir import ClosedJaxpr, Jaxpr, Literal


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, substitute=None):
    """Evaluate ``jaxpr`` on ``consts`` and ``args``; return the list of outputs.

    Each equation is bound under the current trace, so evaluating a jaxpr inside a
    transformation transforms it. ``substitute(var, value)``, if given, may replace the
    value of each equation output (checkpoint's saved values use it).

    Example:
        >>> closed = make_jaxpr(jnp.sin)(1.0)
        >>> eval_jaxpr(closed.jaxpr, closed.consts, 0.5)
        [Array(0.47942555, dtype=float32, weak_type=True)]
    """
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[id(v)]

    values = (*consts, *(to_array(x, "an eval_jaxpr argument") for x in args))
    for var, val in zip((*jaxpr.constvars, *jaxpr.invars), values, strict=True):
        env[id(var)] = val
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for var, val in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = val if substitute is None else substitute(var, val)
    return [read(v) for v in jaxpr.outvars]


def eval_closed(closed: ClosedJaxpr, *args):
    """``eval_jaxpr`` of a closed jaxpr."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)

"""Equinox's ``announce_transform``: the identity on a pytree, announcing each transformation
applied to it.

Its arrays go through one ``announce_jaxpr`` equation, whose rules each announce their
step, the steps that led there joined by ``:``: ``impl`` (evaluated eagerly, or as a
compiled program runs on a GPU, whose operations are eager ones), ``abstract`` (staged
into a program; invarax's check of the staged program's types announces it once more),
``jvp_p`` and ``jvp_t`` (the primal and tangent sides of a derivative), ``transpose``, ``vmap``, and
``mlir`` (the name JAX gives it: a program holding it was compiled, after dead-code
elimination).
"""

from __future__ import annotations

from ...core.effects import ON_COMPILE
from ...core.lowering import register_lowering
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import EVAL_TRACE, Primitive, current_trace
from ...interpreters import ad, batching
from ...interpreters.staging import StagingTrace
from .._filters import combine, is_array, partition

announce_jaxpr_p = Primitive("announce_jaxpr", multiple_results=True)


def _announce(step, stack, name, announce):
    announce(name + ":".join((*stack, step)))


def _abstract_eval(*avals, stack, name, intermediates, announce):
    # Eager evaluation checks its operands' types here before running the impl: the one
    # place that tells an eager run (``impl``) from a compiled one (which calls the impl
    # directly, silently) and from staging (``abstract``).
    trace = current_trace()
    if trace is EVAL_TRACE or isinstance(trace, StagingTrace):
        _announce("impl" if trace is EVAL_TRACE else "abstract", stack, name, announce)
    return list(avals)


announce_jaxpr_p.def_impl(lambda *xs, **params: list(xs))
announce_jaxpr_p.def_abstract_eval(_abstract_eval)
register_lowering(announce_jaxpr_p)
register_lowering(announce_jaxpr_p, platform="cuda")
ON_COMPILE[announce_jaxpr_p] = lambda eqn: _announce(
    "mlir", eqn.params["stack"], eqn.params["name"], eqn.params["announce"])


def _bind_nonzero(values, step, stack, params):
    """``values`` with those that are not symbolic zeros through one equation whose stack
    ends in ``step``."""
    nonzero = [v for v in values if not isinstance(v, ad.Zero)]
    outs = iter(announce_jaxpr_p.bind(*nonzero, stack=(*stack, step), **params)
                if nonzero else [])
    return [v if isinstance(v, ad.Zero) else next(outs) for v in values]


def _jvp(primals, tangents, *, stack, **params):
    if params["intermediates"]:
        _announce("jvp", stack, params["name"], params["announce"])
    return (announce_jaxpr_p.bind(*primals, stack=(*stack, "jvp_p"), **params),
            _bind_nonzero(tangents, "jvp_t", stack, params))


def _transpose(cts, *args, stack, **params):
    if params["intermediates"]:
        _announce("transpose", stack, params["name"], params["announce"])
    outs = _bind_nonzero(cts, "transpose", stack, params)
    return [None if isinstance(ct, ad.Zero) or not isinstance(a, ad.UndefinedPrimal) else ct
            for ct, a in zip(outs, args, strict=True)]


def _batch(vals, dims, *, stack, **params):
    if params["intermediates"]:
        _announce("vmap", stack, params["name"], params["announce"])
    return announce_jaxpr_p.bind(*vals, stack=(*stack, "vmap"), **params), list(dims)


ad.jvp_rules[announce_jaxpr_p] = _jvp
ad.transpose_rules[announce_jaxpr_p] = _transpose
batching.batching_rules[announce_jaxpr_p] = _batch


def announce_transform(x, name=None, intermediates: bool = False, announce=print):
    """``x``, unchanged; announces each transformation applied to it (for debugging).

    Arguments:
        x: any pytree (its arrays are followed; other leaves pass through).
        name: shown in front of each announcement, as ``(name) ``.
        intermediates: also announce the transformations still under way (``vmap``
            before its ``vmap:impl``, ``jvp``, ``transpose``).
        announce: called with each announcement; ``print`` by default.

    Returns:
        ``x``.

    Example:
        >>> _ = announce_transform(jnp.ones(2), name="x")
        (x) impl
        >>> _ = vmap(lambda v: announce_transform(v))(jnp.ones(2))
        vmap:impl
        >>> _ = jvp(lambda v: announce_transform(v), (jnp.ones(2),), (jnp.ones(2),))
        jvp_p:impl
        jvp_t:impl
    """
    dynamic, static = partition(x, is_array)
    leaves, treedef = tree_flatten(dynamic)
    leaves = announce_jaxpr_p.bind(*leaves, stack=(), name="" if name is None else
                                       f"({name}) ", intermediates=intermediates,
                                       announce=announce)
    return combine(tree_unflatten(treedef, leaves), static)

"""Rematerialization: ``checkpoint`` (alias ``remat``) and its call primitive.

A checkpointed function is traced to a jaxpr and bound as one ``checkpoint`` equation
(its closed-over values become leading operands), sharing the call-primitive helpers of
``_custom_derivatives``. Eager evaluation runs the function itself; ``jit`` runs the
body. The JVP gives the output by the body and the tangent by a second ``checkpoint``
call, of the body's JVP, whose inputs are the primal inputs and the tangents. Under
``linearize`` only that call is staged, so the residuals are the inputs; transposing it
evaluates the body's JVP again (recomputing the forward pass) and transposes its
tangent part, adding to the cotangents already accumulated for its inputs in the order
the body inlined would (so a ``checkpoint`` around part of a function changes no bit of
its gradient). Under ``vmap`` the call stays one ``checkpoint`` call of the batched body,
its outputs batched at axis 0.
"""

from __future__ import annotations

from ..compiler.passes import dce
from ..core.api_util import StaticArgs
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.lowering import register_lowering
from ..core.pytree import tree_map, tree_unflatten
from ..core.trace import EVAL_TRACE, Primitive, current_trace
from ..interpreters import ad, batching
from ..interpreters.staging import trace_fun, trace_to_jaxpr
from ._autodiff import wraps
from ._custom_common import batch_call_jaxpr, closure_convert, def_call

checkpoint_p = Primitive("checkpoint", multiple_results=True)
def_call(checkpoint_p, "jaxpr")


def _checkpoint_jvp(primals, tangents, *, jaxpr, policy, prevent_cse):
    saved = _saved_vars(jaxpr.jaxpr, policy)
    if saved:
        return _checkpoint_jvp_saving(primals, tangents, saved, jaxpr=jaxpr, policy=policy,
                                      prevent_cse=prevent_cse)
    outs = checkpoint_p.bind(*primals, jaxpr=jaxpr, policy=policy, prevent_cse=prevent_cse)
    nonzero = [t for t in tangents if not isinstance(t, ad.Zero)]
    zero_outs = []

    def tangent_part(ins):  # the body's JVP at (primals, tangents), tangent outputs only
        ps, ts = ins[: len(primals)], iter(ins[len(primals):])
        ts = [t if isinstance(t, ad.Zero) else next(ts) for t in tangents]
        _, touts = ad.jvp_flat(lambda xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs), ps, ts)
        zero_outs.extend(isinstance(t, ad.Zero) for t in touts)
        return [t for t in touts if not isinstance(t, ad.Zero)]

    closed = trace_to_jaxpr(tangent_part, [x.aval for x in (*primals, *nonzero)],
                            "checkpoint (JVP)")
    tangent_jaxpr, consts = closure_convert(closed)
    touts = iter(checkpoint_p.bind(*consts, *primals, *nonzero, jaxpr=tangent_jaxpr,
                                   policy=policy, prevent_cse=prevent_cse))
    return outs, [ad.Zero(ad.tangent_aval(o.aval)) if z else next(touts)
                  for o, z in zip(outs, zero_outs, strict=True)]


def _saved_vars(jaxpr, policy) -> list:
    """The body's values that ``policy`` saves: outputs of equations it accepts."""
    if policy is None:
        return []
    saved = []
    for eqn in jaxpr.eqns:
        if policy(eqn.primitive, *(v.aval for v in eqn.invars), **eqn.params):
            saved += [v for v in eqn.outvars if v not in saved]
    return saved


def _checkpoint_jvp_saving(primals, tangents, saved, *, jaxpr, policy, prevent_cse):
    # The forward call also returns the values the policy saves; the tangent call takes
    # them as inputs (under linearize: residuals) instead of computing them again.
    body = jaxpr.jaxpr
    forward = ClosedJaxpr(Jaxpr(body.constvars, body.invars, [*body.outvars, *saved],
                                body.eqns), jaxpr.consts)
    results = checkpoint_p.bind(*primals, jaxpr=forward, policy=policy,
                                prevent_cse=prevent_cse)
    outs, values = results[: len(body.outvars)], results[len(body.outvars):]
    nonzero = [t for t in tangents if not isinstance(t, ad.Zero)]
    zero_outs = []
    n_p, n_s = len(primals), len(saved)

    def tangent_part(ins):
        ps, ss, ts = ins[:n_p], ins[n_p: n_p + n_s], iter(ins[n_p + n_s:])
        ts = [t if isinstance(t, ad.Zero) else next(ts) for t in tangents]
        replace = {id(v): s for v, s in zip(saved, ss, strict=True)}
        _, touts = ad.jvp_flat(
            lambda xs: _eval_with_saved(body, jaxpr.consts, xs, replace), ps, ts)
        zero_outs.extend(isinstance(t, ad.Zero) for t in touts)
        return [t for t in touts if not isinstance(t, ad.Zero)]

    closed = trace_to_jaxpr(tangent_part, [x.aval for x in (*primals, *values, *nonzero)],
                            "checkpoint (JVP)")
    closed, values = _drop_unread(dce(closed), values, n_p)  # what nobody reads goes
    tangent_jaxpr, consts = closure_convert(closed)
    touts = iter(checkpoint_p.bind(*consts, *primals, *values, *nonzero, jaxpr=tangent_jaxpr,
                                   policy=policy, prevent_cse=prevent_cse))
    return outs, [ad.Zero(ad.tangent_aval(o.aval)) if z else next(touts)
                  for o, z in zip(outs, zero_outs, strict=True)]


def _drop_unread(closed, values, start):
    """``closed`` without its inputs ``start, start + 1, ...`` (one per value of
    ``values``) that no equation or output reads, and the values still read."""
    j = closed.jaxpr
    read = {id(v) for eqn in j.eqns for v in eqn.invars} | {id(v) for v in j.outvars}
    slots = j.invars[start: start + len(values)]
    keep = [id(v) in read for v in slots]
    invars = [*j.invars[:start], *(v for v, k in zip(slots, keep, strict=True) if k),
              *j.invars[start + len(values):]]
    kept = [x for x, k in zip(values, keep, strict=True) if k]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns), closed.consts), kept


def _eval_with_saved(jaxpr, consts, args, replace):
    """``eval_jaxpr`` under a JVP trace, but each saved value's primal is the one given
    (its tangent is still computed by its equation's JVP rule)."""
    trace = current_trace()

    def substitute(var, out):
        if id(var) not in replace:
            return out
        return trace.pack(replace[id(var)], trace.unpack(out)[1])

    return eval_jaxpr(jaxpr, consts, *args, substitute=substitute)


def _checkpoint_transpose(cts, *args, jaxpr, policy, prevent_cse):
    # The body is linear in its undefined inputs (a tangent part from _checkpoint_jvp):
    # the backward pass evaluates its other equations again, then transposes.
    return ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, list(args), list(cts))


def _checkpoint_transpose_accumulating(cts, args, accs, same, *, jaxpr, policy, prevent_cse):
    # As above, the backward pass starting from the accumulated cotangents (see
    # ad.accumulating_transpose_rules): the body's contributions are added in the order
    # its equations inlined would add them.
    cts_in = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, list(args), list(cts), accs, same)
    return [None if ct is None or same[i] != i else ct for i, ct in enumerate(cts_in)]


def _checkpoint_batch(vals, dims, *, trace, jaxpr, policy, prevent_cse):
    body, consts = batch_call_jaxpr(jaxpr, vals, dims, trace, "checkpoint")
    outs = checkpoint_p.bind(*consts, *vals, jaxpr=body, policy=policy, prevent_cse=prevent_cse)
    return outs, [0] * len(outs)


_checkpoint_batch.needs_trace = True
ad.jvp_rules[checkpoint_p] = _checkpoint_jvp
ad.transpose_rules[checkpoint_p] = _checkpoint_transpose
ad.accumulating_transpose_rules[checkpoint_p] = _checkpoint_transpose_accumulating
batching.batching_rules[checkpoint_p] = _checkpoint_batch


# ---------------------------------------------------------------------------------------
# Names for checkpoint policies: ``checkpoint_name(x, "h")`` marks a value that a policy
# such as ``save_only_these_names("h")`` may save. An identity, as JAX's ``name``.

name_p = Primitive("name")
name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda x, *, name: x)
register_lowering(name_p)


def _name_jvp(primals, tangents, *, name):
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t  # the tangent is not named (as JAX)


ad.jvp_rules[name_p] = _name_jvp
batching.batching_rules[name_p] = lambda vals, dims, *, name: (name_p.bind(*vals, name=name),
                                                               dims[0])


def checkpoint_name(x, name: str):
    """Name the arrays of pytree ``x`` for checkpoint policies (the values are unchanged).

    Arguments:
        x: a pytree of arrays.
        name: the name ``checkpoint_policies.save_only_these_names`` and the like test.

    Returns:
        ``x``.

    Example:
        >>> from invarax import checkpoint_policies as cp
        >>> def f(x):
        ...     h = checkpoint_name(jnp.sin(x), "h")
        ...     return jnp.sum(jnp.cos(h))
        >>> f = checkpoint(f, policy=cp.save_only_these_names("h"))
        >>> _, f_jvp = linearize(f, jnp.ones(3))
        >>> [c.shape for c in f_jvp.jaxpr.consts]  # the input and the saved h
        [(3,), (3,)]
    """
    from ..core.array import to_array

    return tree_map(lambda leaf: name_p.bind(to_array(leaf, "checkpoint_name's value"),
                                             name=name), x)


def checkpoint(fun, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """Rematerialize ``fun`` under differentiation: save its inputs, not its intermediates.

    The forward pass runs as usual. Under ``linearize``/``vjp``/``grad``, none of
    ``fun``'s intermediate values are kept for the backward pass: it evaluates ``fun``
    again from the saved inputs. The gradient has the bits it has without checkpoint
    (the same operations run on the same values), but for one thing: the cotangent of a
    value used both inside and outside ``fun`` is summed inside first, so its terms may
    be added in another order (as in JAX).

    Arguments:
        fun: a function of arrays (pytrees and keyword arguments allowed).
        prevent_cse: accepted as in JAX and recorded on the ``checkpoint`` equation.
        policy: which intermediate values to save for the backward pass instead of
            recomputing them, as JAX's: a function ``(primitive, *avals, **params) ->
            bool`` applied to each equation of ``fun``, e.g. from
            ``invarax.checkpoint_policies``. None (the default) saves the inputs only
            (``nothing_saveable``). Whatever the policy, the gradient's bits are the same.
        static_argnums: arguments passed through as Python values.

    Returns:
        A function with ``fun``'s signature and results.

    Example:
        >>> f = checkpoint(lambda x: jnp.sin(jnp.sin(x)))
        >>> _, f_jvp = linearize(f, jnp.ones(3))
        >>> [c.shape for c in f_jvp.jaxpr.consts]  # the residuals: the input only
        [(3,)]
    """
    static = StaticArgs(fun, static_argnums, ())

    @wraps(fun)
    def checkpointed(*args, **kwargs):
        if current_trace() is EVAL_TRACE:
            return fun(*args, **kwargs)
        dyn_args, dyn_kwargs, static_vals = static.split(args, kwargs)

        def dyn_fun(*a, **k):
            full_args, full_kwargs = static.merge(a, k, static_vals)
            return fun(*full_args, **full_kwargs)

        closed, leaves, out_tree = trace_fun(dyn_fun, dyn_args, dyn_kwargs,
                                             f"checkpoint of {static.name}")
        jaxpr, consts = closure_convert(closed)
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, policy=policy,
                                 prevent_cse=prevent_cse)
        return tree_unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint

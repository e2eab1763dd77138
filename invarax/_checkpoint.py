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

from ._autodiff import wraps
from ._custom_derivatives import _batch_call_jaxpr, _closure_convert, _def_call
from .core.api_util import StaticArgs
from .core.eval import eval_jaxpr
from .core.pytree import tree_unflatten
from .core.trace import EVAL_TRACE, Primitive, current_trace
from .interpreters import ad, batching
from .interpreters.staging import trace_fun, trace_to_jaxpr

checkpoint_p = Primitive("checkpoint", multiple_results=True)
_def_call(checkpoint_p, "jaxpr")


def _checkpoint_jvp(primals, tangents, *, jaxpr, policy, prevent_cse):
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
    tangent_jaxpr, consts = _closure_convert(closed)
    touts = iter(checkpoint_p.bind(*consts, *primals, *nonzero, jaxpr=tangent_jaxpr,
                                   policy=policy, prevent_cse=prevent_cse))
    return outs, [ad.Zero(ad.tangent_aval(o.aval)) if z else next(touts)
                  for o, z in zip(outs, zero_outs, strict=True)]


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
    body, consts = _batch_call_jaxpr(jaxpr, vals, dims, trace, "checkpoint")
    outs = checkpoint_p.bind(*consts, *vals, jaxpr=body, policy=policy, prevent_cse=prevent_cse)
    return outs, [0] * len(outs)


_checkpoint_batch.needs_trace = True
ad.jvp_rules[checkpoint_p] = _checkpoint_jvp
ad.transpose_rules[checkpoint_p] = _checkpoint_transpose
ad.accumulating_transpose_rules[checkpoint_p] = _checkpoint_transpose_accumulating
batching.batching_rules[checkpoint_p] = _checkpoint_batch


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
        policy: accepted as in JAX and recorded; invarax saves the inputs only (JAX's
            ``nothing_saveable``) whatever the policy.
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
        jaxpr, consts = _closure_convert(closed)
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, policy=policy,
                                 prevent_cse=prevent_cse)
        return tree_unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint

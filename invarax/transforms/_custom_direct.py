"""``custom_jvp``/``custom_vjp`` calls that JAX does not trace: under ``jvp``/``grad``.

A JVP trace that owns an argument of a custom function calls its rule (``custom_jvp``)
or its ``fwd`` and, through ``custom_lin``, its ``bwd`` (``custom_vjp``) on the primal
values in the parent trace, as JAX's ``process_custom_jvp_call``/``process_custom_vjp_call``
do; on concrete values under such traces the function itself runs eagerly. So a function
or rule with Python control flow on its arguments differentiates there, as in JAX. The
classes (``_custom_derivatives``) fall back to tracing the body where this gives ``TRACE``.
"""

from __future__ import annotations

from ..core.api_util import fun_name
from ..core.array import to_array
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import EVAL_TRACE, Tracer, current_trace, set_current_trace
from ..interpreters import ad

TRACE = object()  # direct_call's answer when the call must be traced and bound


def _closes_over_tracer(fun) -> bool:
    """Whether ``fun`` holds a tracer in its closure cells or defaults (then it is traced,
    so that a closed-over value being differentiated is detected)."""
    cells = [c.cell_contents for c in getattr(fun, "__closure__", None) or ()
             if c.cell_contents is not fun]
    held = [*cells, *(getattr(fun, "__defaults__", None) or ())]
    try:
        leaves = tree_flatten(held)[0]
    except Exception:  # noqa: BLE001  (an odd object in a closure: trace to be safe)
        return True
    return any(isinstance(x, Tracer) for x in leaves)


def direct_call(fun, args, nondiff, by_rule):
    """``fun(*args)`` without tracing its body where JAX does so too, else ``TRACE``.

    As JAX: under ``jvp``/``grad`` the rules are called on the primal values (in the
    parent trace; ``by_rule(trace)`` does it for the JVP trace that owns an argument), and
    on concrete values the function runs eagerly, so a body with Python control flow on
    its arguments works there. Under ``jit``, ``vmap`` and ``make_jaxpr`` (or when the
    body closes over a tracer) the body is traced instead.
    """
    leaves = [x for i, a in enumerate(args) if i not in nondiff for x in tree_flatten(a)[0]]
    if _closes_over_tracer(fun):
        return TRACE
    trace = current_trace()
    while trace is not EVAL_TRACE:
        if not isinstance(trace, (ad.JVPTrace, ad.PartialEvalTrace)):
            return TRACE  # staging, batching: the body is traced
        if isinstance(trace, ad.JVPTrace) and any(trace.owns(x) for x in leaves):
            return by_rule(trace)
        if any(isinstance(x, Tracer) and trace.owns(x) for x in leaves):
            return TRACE  # an unknown (tangent) value of a linearization
        trace = trace.parent
    return fun(*args)  # every argument concrete: run the body on its values


def _primals_and_tangents(trace, split, name):
    """The differentiable arguments' flat primals and tangents at ``trace`` (``ad.Zero``
    for those it does not differentiate), and their structure."""
    flat, tree = tree_flatten([split.args[i] for i in split.diff])
    primals, tangents = [], []
    for x in flat:
        if trace.owns(x):
            primals.append(x.primal)
            tangents.append(x.tangent)
        else:
            x = to_array(x, f"an argument of {name}")
            primals.append(x)
            tangents.append(ad.Zero(ad.tangent_aval(x.aval)))
    return primals, tangents, tree


def jvp_by_rule(f, trace, args, nondiff):
    """The outputs of ``f(*args)`` as ``trace``'s tracers, from the rule of ``f`` called on
    the primals and tangents of ``args`` in the parent trace (JAX's
    ``process_custom_jvp_call`` of a JVP trace)."""
    from ._custom_derivatives import _check_tangents, _Split, rule_tangents

    split = _Split(args, nondiff)
    primals, tangents, tree = _primals_and_tangents(trace, split, f.__name__)
    tangents = rule_tangents(tangents, f._symbolic_zeros)
    rule, name = f._jvp, f.__name__
    what = f"the custom JVP rule {fun_name(rule)} of {name}"
    with set_current_trace(trace.parent):
        res = rule(*split.nondiff, tuple(tree_unflatten(tree, primals)),
                   tuple(tree_unflatten(tree, tangents)))
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"{what} must return a pair (primal_out, tangent_out), got "
                        f"{type(res).__name__}")
    out_leaves, out_tree = tree_flatten(res[0])
    outs = [to_array(x, f"the primal output of {what}") for x in out_leaves]
    touts = _check_tangents(res[1], out_tree, outs, what)
    return tree_unflatten(out_tree, [trace.pack(o, t) for o, t in zip(outs, touts, strict=True)])


def vjp_by_rules(f, trace, args, nondiff):
    """The outputs of ``f(*args)`` as ``trace``'s tracers: ``fwd`` called on the primals in
    the parent trace, the tangent through ``custom_lin`` (whose transpose calls ``bwd``), as
    JAX's ``process_custom_vjp_call`` of a JVP trace."""
    from ._custom_derivatives import _check_bwd_output, _Split, custom_lin_p

    split = _Split(args, nondiff)
    name, fwd, bwd = f.__name__, f._fwd, f._bwd
    primals, tangents, tree = _primals_and_tangents(trace, split, name)
    tangents = [ad.instantiate(t) for t in tangents]
    fwd_what = f"the fwd rule {fun_name(fwd)} of custom_vjp function {name}"
    with set_current_trace(trace.parent):
        res = fwd(*split.full(tree_unflatten(tree, primals)))
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(f"{fwd_what} must return a pair (output, residuals), got "
                            f"{type(res).__name__}")
        out_leaves, out_tree = tree_flatten(res[0])
        outs = [to_array(x, f"the output of {fwd_what}") for x in out_leaves]
        res_leaves, res_tree = tree_flatten(res[1])
        res_leaves = [to_array(r, f"a residual of {fwd_what}") for r in res_leaves]

        def flat_bwd(res, cts):
            cts_in = bwd(*split.nondiff, tree_unflatten(res_tree, res),
                         tree_unflatten(out_tree, cts))
            return _check_bwd_output(cts_in, split, primals, f"{fun_name(bwd)} of {name}")

        flat_bwd.__name__ = fun_name(bwd)
        out_avals = tuple(ad.tangent_aval(o.aval) for o in outs)
        touts = custom_lin_p.bind(*res_leaves, *tangents, num_res=len(res_leaves), bwd=flat_bwd,
                                  out_avals=out_avals)
    touts = [t if ad.is_differentiable(t.aval) else ad.Zero(t.aval) for t in touts]
    return tree_unflatten(out_tree, [trace.pack(o, t) for o, t in zip(outs, touts, strict=True)])

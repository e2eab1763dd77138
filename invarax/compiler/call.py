"""The ``jit`` primitive: a call of a closed jaxpr, run compiled, and its rules.

``jit_p``'s impl runs the optimised program of its jaxpr (``executable``, cached by the
jaxpr's identity). Under a transformation a call stays one ``jit`` equation of a derived
jaxpr (JVP, partial evaluation, transposition and batching below), so the work still runs
compiled. ``trace_call`` and ``split_known`` are shared with the control-flow
primitives, whose bodies are jaxprs too.
"""

from __future__ import annotations

import functools

from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ..core.lowering import register_lowering
from ..core.trace import Primitive, Tracer
from ..interpreters import ad, batching
from ..interpreters.staging import trace_to_jaxpr
from .lower import compile_jaxpr
from .passes import dce, optimize

jit_p = Primitive("jit", multiple_results=True)

def compile_program(jaxpr: Jaxpr, donated: tuple):
    """The program of ``jaxpr``; ``donated`` marks the inputs whose buffers it may reuse."""
    return compile_jaxpr(jaxpr, donated=donated if any(donated) else None)


@functools.lru_cache(maxsize=4096)
def executable(closed: ClosedJaxpr):
    """``(run, consts)`` of the optimised ``closed`` (consts as NumPy arrays)."""
    opt = optimize(closed)
    return compile_program(opt.jaxpr, ()), [c._value for c in opt.consts]


def _jit_impl(*args, name: str, jaxpr: ClosedJaxpr):
    run, consts = executable(jaxpr)
    return run(*consts, *args)


def _jit_abstract_eval(*avals, name: str, jaxpr: ClosedJaxpr):
    expected = jaxpr.in_avals
    if list(avals) != expected:
        raise TypeError(
            f"jit of {name} was traced for {[a.str_short() for a in expected]} "
            f"but called with {[a.str_short() for a in avals]}"
        )
    return jaxpr.out_avals


# ---------------------------------------------------------------------------------------
# Transformations of a call. Each keeps it one ``jit`` equation of a derived jaxpr (as JAX
# keeps ``pjit``), so under grad or vmap of a jitted function the work still runs compiled:
#
# - JVP: a call of the body's JVP, over the primals and the tangents that are not
#   symbolic zeros; its outputs are the primal outputs, then the nonzero tangents.
# - partial evaluation (linearize, and the forward sweep of ``backward_pass``): a call of
#   the known inputs computing the known outputs and the residuals, run at once, and a
#   call of the residuals and the unknown inputs (the linear tangent part), staged.
# - transposition: a call of the body's backward pass, over the residuals, the
#   cotangents that are not symbolic zeros and the cotangents already accumulated for
#   its linear inputs, which the body's backward pass adds to in the order the body's
#   equations inlined would (its results replace them): so a ``jit`` around part of a
#   function changes no bit of its gradient.
# - batching: a call of the batched body.
#
# Derived jaxprs are cached on the jaxpr they come from (by identity, as ``_executable``
# caches programs), so a repeated ``grad(jit(f))`` traces nothing and compiles nothing.

_derived = {}  # (kind, jaxpr, ...) -> derived jaxpr and what the rule needs besides
_DERIVED_MAX = 4096


def _memo(key, make):
    """``make()``, cached under ``key`` unless its jaxpr holds hoisted tracers."""
    value = _derived.get(key)
    if value is None:
        value = make()
        if not value[1]:  # no tracer of an enclosing transformation: reusable
            if len(_derived) >= _DERIVED_MAX:
                _derived.clear()
            _derived[key] = value
    return value


def trace_call(fun, in_avals, description):
    """``(closed, tracer_consts, ...)``: ``fun`` traced; its consts that are tracers of an
    enclosing transformation become leading inputs (passed as ``tracer_consts``)."""
    return hoist_tracer_consts(trace_to_jaxpr(fun, in_avals, description))


def hoist_tracer_consts(closed: ClosedJaxpr):
    """``(closed', tracers)``: ``closed`` with its consts that are tracers of an enclosing
    transformation turned into leading inputs (in order), and those tracers."""
    is_tracer = [isinstance(c, Tracer) for c in closed.consts]
    if not any(is_tracer):
        return closed, []
    j = closed.jaxpr
    hoisted = [v for v, t in zip(j.constvars, is_tracer, strict=True) if t]
    kept = [v for v, t in zip(j.constvars, is_tracer, strict=True) if not t]
    consts = [c for c, t in zip(closed.consts, is_tracer, strict=True) if not t]
    tracers = [c for c, t in zip(closed.consts, is_tracer, strict=True) if t]
    return ClosedJaxpr(Jaxpr(kept, hoisted + j.invars, j.outvars, j.eqns), consts), tracers


def _body(closed: ClosedJaxpr):
    return lambda ins: eval_jaxpr(closed.jaxpr, closed.consts, *ins)


def _jvp_call(closed: ClosedJaxpr, tangent_avals: tuple, name: str):
    """The JVP jaxpr of ``closed`` for tangents of ``tangent_avals`` (``None``: a zero)."""
    n = len(closed.in_avals)
    zero_outs = []

    def jvp(ins):
        primals, nonzero = ins[:n], iter(ins[n:])
        tangents = [ad.Zero(ad.tangent_aval(a)) if t is None else next(nonzero)
                    for a, t in zip(closed.in_avals, tangent_avals, strict=True)]
        outs, touts = ad.jvp_flat(_body(closed), primals, tangents, f"jvp of jit of {name}")
        zero_outs.extend(isinstance(t, ad.Zero) for t in touts)
        return [*outs, *(t for t in touts if not isinstance(t, ad.Zero))]

    avals = [*closed.in_avals, *(t for t in tangent_avals if t is not None)]
    jaxpr, tracers = trace_call(jvp, avals, f"jvp of jit of {name}")
    return jaxpr, tracers, tuple(zero_outs)


def _jit_jvp(primals, tangents, *, name: str, jaxpr: ClosedJaxpr):
    tangent_avals = tuple(None if isinstance(t, ad.Zero) else t.aval for t in tangents)
    body, tracers, zero_outs = _memo(("jvp", jaxpr, tangent_avals),
                                     lambda: _jvp_call(jaxpr, tangent_avals, name))
    nonzero = [t for t in tangents if not isinstance(t, ad.Zero)]
    outs = jit_p.bind(*tracers, *primals, *nonzero, name=name, jaxpr=body)
    n = len(jaxpr.out_avals)
    touts = iter(outs[n:])
    return outs[:n], [ad.Zero(ad.tangent_aval(a)) if z else next(touts)
                      for a, z in zip(jaxpr.out_avals, zero_outs, strict=True)]


@functools.lru_cache(maxsize=4096)
def split_known(closed: ClosedJaxpr, unknown: tuple):
    """Partial evaluation of ``closed`` with the inputs ``unknown`` unknown.

    Returns ``(known, staged, out_unknown, forwarded, residual_avals)``: ``known`` maps
    the known inputs to the known outputs and the computed residuals; ``staged`` maps
    the forwarded residuals (known inputs, by position in ``closed``'s inputs), the
    computed residuals and the unknown inputs to the unknown outputs. ``known`` is
    ``None`` when it computes nothing. Both are dead-code eliminated: the residuals are
    the known values the unknown outputs need.
    """
    j = closed.jaxpr
    unk = {id(v) for v, u in zip(j.invars, unknown, strict=True) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in j.eqns:
        eqn_unknown = [isinstance(v, Var) and id(v) in unk for v in eqn.invars]
        if not any(eqn_unknown):
            known_eqns.append(eqn)
            continue
        rule = ad.partial_eval_eqn_rules.get(eqn.primitive)
        known_eqn, eqn = rule(eqn, eqn_unknown) if rule is not None else (None, eqn)
        if known_eqn is not None:  # a nested call's known part
            known_eqns.append(known_eqn)
        if eqn is not None:
            unk.update(id(v) for v in eqn.outvars)
            unknown_eqns.append(eqn)
    out_unknown = tuple(isinstance(v, Var) and id(v) in unk for v in j.outvars)
    staged_outs = [v for v, u in zip(j.outvars, out_unknown, strict=True) if u]
    live = {id(v) for v in staged_outs}
    live_eqns = []
    for eqn in reversed(unknown_eqns):
        if any(id(v) in live for v in eqn.outvars):
            live_eqns.append(eqn)
            live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    live_eqns.reverse()
    # The known values the staged part reads: consts stay consts, known inputs are
    # forwarded as they are, values the known part computes are its extra outputs.
    consts = [(v, c) for v, c in zip(j.constvars, closed.consts, strict=True) if id(v) in live]
    forwarded = [i for i, (v, u) in enumerate(zip(j.invars, unknown, strict=True))
                 if not u and id(v) in live]
    residuals = [v for e in known_eqns for v in e.outvars if id(v) in live]
    known_invars = [v for v, u in zip(j.invars, unknown, strict=True) if not u]
    known_outs = [v for v, u in zip(j.outvars, out_unknown, strict=True) if not u]
    known = None
    if known_outs or residuals:
        known = dce(ClosedJaxpr(Jaxpr(j.constvars, known_invars, known_outs + residuals,
                                      known_eqns), closed.consts))
    unknown_invars = [v for v, u in zip(j.invars, unknown, strict=True) if u]
    staged = ClosedJaxpr(
        Jaxpr([v for v, _ in consts], [*(j.invars[i] for i in forwarded), *residuals,
                                      *unknown_invars], staged_outs, live_eqns),
        [c for _, c in consts])
    return known, staged, out_unknown, tuple(forwarded), [v.aval for v in residuals]


def _jit_partial_eval(eqn: Eqn, unknown):
    """Split a ``jit`` equation (see ``ad.partial_eval_eqn_rules``)."""
    name, closed = eqn.params["name"], eqn.params["jaxpr"]
    known, staged, out_unknown, forwarded, res_avals = split_known(closed, tuple(unknown))
    if known is None and all(out_unknown):
        return None, eqn  # nothing to compute before the unknown inputs are known
    residuals = [Var(a) for a in res_avals]
    known_eqn = None
    if known is not None:
        outs = [v for v, u in zip(eqn.outvars, out_unknown, strict=True) if not u]
        ins = [v for v, u in zip(eqn.invars, unknown, strict=True) if not u]
        known_eqn = Eqn(jit_p, ins, outs + residuals, dict(name=name, jaxpr=known))
    staged_eqn = None
    if any(out_unknown):
        ins = [*(eqn.invars[i] for i in forwarded), *residuals,
               *(v for v, u in zip(eqn.invars, unknown, strict=True) if u)]
        outs = [v for v, u in zip(eqn.outvars, out_unknown, strict=True) if u]
        staged_eqn = Eqn(jit_p, ins, outs, dict(name=name, jaxpr=staged))
    return known_eqn, staged_eqn


def _transpose_call(closed: ClosedJaxpr, undefined: tuple, ct_avals: tuple, acc_avals: tuple,
                    same: tuple, name: str):
    """The backward pass of the linear ``closed`` as a jaxpr over its defined inputs, the
    nonzero cotangents (``ct_avals``: ``None`` for a zero) and the accumulators its linear
    inputs start from (``acc_avals``: ``None`` for none; see
    ``ad.accumulating_transpose_rules``, as is ``same``). Its outputs are the final
    accumulators of the linear inputs that are first occurrences, the nonzero ones."""
    defined = [a for a, u in zip(closed.in_avals, undefined, strict=True) if not u]
    n_cts = sum(c is not None for c in ct_avals)
    zero_outs = []

    def backward(ins):
        vals, cts = iter(ins[:len(defined)]), iter(ins[len(defined):len(defined) + n_cts])
        accs_in = iter(ins[len(defined) + n_cts:])
        args = [ad.UndefinedPrimal(a) if u else next(vals)
                for a, u in zip(closed.in_avals, undefined, strict=True)]
        cts_out = [ad.Zero(a) if c is None else next(cts)
                   for a, c in zip(closed.out_avals, ct_avals, strict=True)]
        accs = [None if a is None else next(accs_in) for a in acc_avals]
        cts_in = ad.backward_pass(closed.jaxpr, closed.consts, args, cts_out, accs, same)
        cts_in = [c for i, (c, u) in enumerate(zip(cts_in, undefined, strict=True))
                  if u and same[i] == i]
        zero_outs.extend(isinstance(c, ad.Zero) for c in cts_in)
        return [c for c in cts_in if not isinstance(c, ad.Zero)]

    avals = [*defined, *(c for c in ct_avals if c is not None),
             *(a for a in acc_avals if a is not None)]
    jaxpr, tracers = trace_call(backward, avals, f"transpose of jit of {name}")
    return jaxpr, tracers, tuple(zero_outs)


def _jit_transpose_accumulating(cts, args, accs, same, *, name: str, jaxpr: ClosedJaxpr):
    """The transpose of a linear ``jit`` call (``ad.accumulating_transpose_rules``): one
    ``jit`` of the body's backward pass, which starts each linear input's accumulator from
    ``accs`` and returns the final ones (one per first occurrence of an outer variable)."""
    undefined = tuple(isinstance(a, ad.UndefinedPrimal) for a in args)
    if all(isinstance(c, ad.Zero) for c in cts):
        return [None] * len(args)
    ct_avals = tuple(None if isinstance(c, ad.Zero) else c.aval for c in cts)
    accs = [None if isinstance(a, ad.Zero) else a for a in accs]
    acc_avals = tuple(None if a is None else a.aval for a in accs)
    body, tracers, zero_outs = _memo(
        ("transpose", jaxpr, undefined, ct_avals, acc_avals, same),
        lambda: _transpose_call(jaxpr, undefined, ct_avals, acc_avals, same, name))
    defined = [a for a in args if not isinstance(a, ad.UndefinedPrimal)]
    nonzero = [c for c in cts if not isinstance(c, ad.Zero)]
    given = [a for a in accs if a is not None]
    outs = iter(jit_p.bind(*tracers, *defined, *nonzero, *given, name=name, jaxpr=body))
    zeros = iter(zero_outs)
    return [None if not u or same[i] != i else (ad.Zero(a.aval) if next(zeros) else next(outs))
            for i, (a, u) in enumerate(zip(args, undefined, strict=True))]


def _jit_transpose(cts, *args, name: str, jaxpr: ClosedJaxpr):
    """The plain transpose rule: no accumulators, each input its own."""
    return _jit_transpose_accumulating(cts, args, [None] * len(args), tuple(range(len(args))),
                                       name=name, jaxpr=jaxpr)


def _batch_call(closed: ClosedJaxpr, in_avals, dims, size, axis_name, description):
    """The batched jaxpr of ``closed`` for inputs of ``in_avals`` batched at ``dims``."""
    out_dims = []

    def batched(ins):
        outs, odims = batching.batch_flat(_body(closed), ins, list(dims), size, axis_name,
                                          description)
        out_dims.extend(odims)
        return outs

    jaxpr, tracers = trace_call(batched, list(in_avals), description)
    return jaxpr, tracers, tuple(out_dims)


def _jit_batch(vals, dims, *, trace, name: str, jaxpr: ClosedJaxpr):
    in_avals = tuple(v.aval for v in vals)
    key = ("batch", jaxpr, in_avals, tuple(dims), trace.axis_size, trace.axis_name,
           trace.description)
    body, tracers, out_dims = _memo(key, lambda: _batch_call(
        jaxpr, in_avals, dims, trace.axis_size, trace.axis_name, trace.description))
    return jit_p.bind(*tracers, *vals, name=name, jaxpr=body), list(out_dims)


_jit_batch.needs_trace = True


jit_p.def_impl(_jit_impl)
jit_p.def_abstract_eval(_jit_abstract_eval)
register_lowering(jit_p)
ad.jvp_rules[jit_p] = _jit_jvp
ad.partial_eval_eqn_rules[jit_p] = _jit_partial_eval
ad.transpose_rules[jit_p] = _jit_transpose
ad.accumulating_transpose_rules[jit_p] = _jit_transpose_accumulating
batching.batching_rules[jit_p] = _jit_batch

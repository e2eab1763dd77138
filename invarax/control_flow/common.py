"""Jaxpr-to-jaxpr transformations shared by the control-flow primitives (``cond``, ``scan``,
``while``), whose parameters hold closed jaxprs.

A body's jaxpr never holds a tracer: the user's function is traced with the tracers it
closes over hoisted into leading operands (``trace_body``); the jaxprs derived from a body
(its JVP, its known and staged parts, its transpose, its batched version) are traced from
``eval_jaxpr`` of it, so their consts are concrete arrays too. Each body runs compiled:
``run_body`` gives the optimised program of a jaxpr, compiled once (cached on the jaxpr).
"""

from __future__ import annotations

import functools

from ..compiler.call import executable, split_known, trace_call
from ..compiler.lower import compile_loop, compile_while
from ..compiler.passes import optimize
from ..core.config import config
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Jaxpr, Var
from ..core.trace import Tracer
from ..interpreters import ad, batching
from ..interpreters.staging import trace_to_jaxpr


def run_body(closed: ClosedJaxpr):
    """``run(*args) -> list``: ``closed`` optimised and compiled once (cached on it)."""
    run, consts = executable(closed)
    if not consts:
        return run
    return lambda *args: run(*consts, *args)


def scan_loop(closed: ClosedJaxpr, num_consts: int, num_carry: int):
    """``loop(*consts, *carry, *xs, *ys, order) -> carry``: the ``scan`` of ``closed``
    optimised and compiled once into one loop (``compiler.lower.compile_loop``; native if
    the config flag ``invarax_native_loops`` is on and the body allows)."""
    return _scan_loop(closed, num_consts, num_carry, config.read("invarax_native_loops"))


@functools.lru_cache(maxsize=1024)
def _scan_loop(closed: ClosedJaxpr, num_consts: int, num_carry: int, native: bool):
    opt = optimize(closed)
    loop = compile_loop(opt.jaxpr, num_consts, num_carry, native)
    consts = [c._value for c in opt.consts]
    if not consts:
        return loop

    def run(*args):
        return loop(*consts, *args)

    run.native = loop.native
    return run


def while_loop_program(cond: ClosedJaxpr, body: ClosedJaxpr, cond_nconsts: int,
                       body_nconsts: int):
    """``loop(*cond_consts, *body_consts, *carry) -> carry``: the ``while`` of ``cond`` and
    ``body``, optimised and compiled once into one loop (``compiler.lower.compile_while``;
    native as ``scan_loop``)."""
    return _while_loop_program(cond, body, cond_nconsts, body_nconsts,
                               config.read("invarax_native_loops"))


@functools.lru_cache(maxsize=1024)
def _while_loop_program(cond: ClosedJaxpr, body: ClosedJaxpr, cond_nconsts: int,
                        body_nconsts: int, native: bool):
    oc, ob = optimize(cond), optimize(body)
    loop = compile_while(oc.jaxpr, ob.jaxpr, cond_nconsts, body_nconsts, native)
    cc, bc = [c._value for c in oc.consts], [c._value for c in ob.consts]
    if not cc and not bc:
        return loop

    def run(*args):
        return loop(*cc, *args[:cond_nconsts], *bc, *args[cond_nconsts:])

    run.native = loop.native
    return run


def trace_body(fun, in_avals, description: str):
    """``(closed, hoisted)``: ``fun`` (flat list in and out) traced at ``in_avals``; the
    tracers of enclosing transformations it closes over become its leading inputs, and are
    returned (``hoisted``) to be passed as the primitive's leading operands."""
    return trace_call(fun, list(in_avals), description)


def derive(fun, in_avals, description: str) -> ClosedJaxpr:
    """``fun`` (flat list in and out) traced at ``in_avals``, for a jaxpr derived from a body
    (whose consts are concrete: no tracer can be closed over)."""
    closed = trace_to_jaxpr(fun, list(in_avals), description)
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise AssertionError(f"internal error: {description} closed over a tracer")
    return closed


def body_fun(closed: ClosedJaxpr):
    """``closed`` as a function of a flat list (binding each equation: it can be traced)."""
    return lambda ins: eval_jaxpr(closed.jaxpr, closed.consts, *ins)


def cast_like(x, aval):
    """``x`` with the weak type of ``aval`` (the same dtype and shape: no bit changes)."""
    from ..ops.elementwise import convert_element_type

    if x.aval == aval:
        return x
    if x.shape != aval.shape or x.dtype != aval.dtype:
        raise AssertionError(f"internal error: {x.aval.str_short()} given for {aval.str_short()}")
    return convert_element_type(x, aval.dtype, weak_type=aval.weak_type)


def typematch(a, b) -> bool:
    """Equal shapes and dtypes (weak types may differ, as JAX's ``typematch``)."""
    return a.shape == b.shape and a.dtype == b.dtype


def permute(closed: ClosedJaxpr, in_order, out_order=None) -> ClosedJaxpr:
    """``closed`` with its inputs (and outputs) reordered: input ``k`` is old ``in_order[k]``."""
    j = closed.jaxpr
    outs = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[i] for i in in_order], outs, j.eqns,
                             check=False), closed.consts)


# ---------------------------------------------------------------------------------------
# JVP


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros, instantiate, description: str):
    """The JVP of ``closed`` for tangents that are nonzero where ``nonzeros``.

    Returns ``(jvp, out_nonzeros)``: ``jvp`` maps the primals, then the nonzero tangents,
    to the primal outputs, then the output tangents that are nonzero or ``instantiate``d
    (zeros); ``out_nonzeros`` says which output tangents it gives.
    """
    n = len(closed.in_avals)
    out_nz = []

    def fun(ins):
        it = iter(ins[n:])
        tangents = [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                    for a, nz in zip(closed.in_avals, nonzeros, strict=True)]
        outs, touts = ad.jvp_flat(body_fun(closed), ins[:n], tangents, description)
        keep = [not isinstance(t, ad.Zero) or inst
                for t, inst in zip(touts, instantiate, strict=True)]
        out_nz[:] = keep
        return [*outs, *(cast_like(ad.instantiate(t), ad.tangent_aval(o.aval))
                         for t, o, k in zip(touts, outs, keep, strict=True) if k)]

    avals = [*closed.in_avals, *(ad.tangent_aval(a) for a, nz in
                                 zip(closed.in_avals, nonzeros, strict=True) if nz)]
    return derive(fun, avals, description), list(out_nz)


def jvp_nonzeros(closed: ClosedJaxpr, nonzeros, description: str):
    """Which output tangents of ``closed`` are nonzero for nonzero input tangents ``nonzeros``."""
    return jvp_jaxpr(closed, nonzeros, [False] * len(closed.out_avals), description)[1]


# ---------------------------------------------------------------------------------------
# Partial evaluation


def partial_eval_jaxpr(closed: ClosedJaxpr, unknown, instantiate):
    """Split ``closed`` into a part of its known inputs and a part that needs the others.

    Arguments:
        closed: the jaxpr.
        unknown: one bool per input.
        instantiate: one bool per output: made an output of the staged part even if known.

    Returns:
        ``(known, staged, out_unknown, num_res)``: ``known`` maps the known inputs to the
        known outputs (those not instantiated), then ``num_res`` residuals; ``staged`` maps
        the residuals, then the unknown inputs, to the outputs marked in ``out_unknown``
        (unknown or instantiated). A residual that is a known input is that input itself
        (an outvar of ``known`` that is one of its invars).
    """
    known, staged, out_uk, forwarded, _ = split_known(closed, tuple(unknown))
    j = closed.jaxpr
    known_invars = [v for v, u in zip(j.invars, unknown, strict=True) if not u]
    n_known_out = out_uk.count(False)
    if known is None:
        known = ClosedJaxpr(Jaxpr([], known_invars, [], [], check=False), [])
    k_outs = known.jaxpr.outvars[:n_known_out]
    computed = known.jaxpr.outvars[n_known_out:]
    known_out_pos = [i for i, u in enumerate(out_uk) if not u]
    inst_known = [o for o, i in zip(k_outs, known_out_pos, strict=True) if instantiate[i]]
    kept_known = [o for o, i in zip(k_outs, known_out_pos, strict=True) if not instantiate[i]]
    fwd = [j.invars[i] for i in forwarded]
    residuals = [*fwd, *computed, *inst_known]
    known2 = ClosedJaxpr(Jaxpr(known.jaxpr.constvars, known_invars, kept_known + residuals,
                               known.jaxpr.eqns), known.consts)
    s = staged.jaxpr
    n_fwd_res = len(fwd) + len(computed)
    fresh = [Var(v.aval) for v in inst_known]
    s_outs, inst_it, fresh_it = iter(s.outvars), iter(inst_known), iter(fresh)
    outvars, final_uk = [], []
    for i, u in enumerate(out_uk):
        if u:
            outvars.append(next(s_outs))
        elif instantiate[i]:
            next(inst_it)
            outvars.append(next(fresh_it))
        final_uk.append(u or instantiate[i])
    invars = [*s.invars[:n_fwd_res], *fresh, *s.invars[n_fwd_res:]]
    staged2 = ClosedJaxpr(Jaxpr(s.constvars, invars, outvars, s.eqns), staged.consts)
    return known2, staged2, final_uk, len(residuals)


# ---------------------------------------------------------------------------------------
# Transposition


def transpose_jaxpr(closed: ClosedJaxpr, linear, ct_nonzero, description: str,
                    acc_linear=None):
    """The backward pass of ``closed``, linear in the inputs marked ``linear``.

    The result maps the other (defined) inputs, the nonzero output cotangents
    (``ct_nonzero``) and, for the linear inputs marked in ``acc_linear``, an accumulator
    each, to the cotangent of every linear input (zeros instantiated): an accumulated
    input's is its accumulator plus its contributions, added in the order the body's
    equations inlined would add them.
    """
    acc_linear = acc_linear or [False] * len(linear)
    in_avals, out_avals = closed.in_avals, closed.out_avals
    n_def = linear.count(False)
    n_ct = sum(ct_nonzero)

    def fun(ins):
        vals, cts = iter(ins[:n_def]), iter(ins[n_def:n_def + n_ct])
        acc_in = iter(ins[n_def + n_ct:])
        args = [ad.UndefinedPrimal(a) if lin else next(vals)
                for a, lin in zip(in_avals, linear, strict=True)]
        cts_out = [next(cts) if nz else ad.Zero(a)
                   for a, nz in zip(out_avals, ct_nonzero, strict=True)]
        accs = [next(acc_in) if acc else None for acc in acc_linear]
        cts_in = ad.backward_pass(closed.jaxpr, closed.consts, args, cts_out, accs)
        return [cast_like(ad.instantiate(c), a)
                for c, a, lin in zip(cts_in, in_avals, linear, strict=True) if lin]

    avals = [*(a for a, lin in zip(in_avals, linear, strict=True) if not lin),
             *(a for a, nz in zip(out_avals, ct_nonzero, strict=True) if nz),
             *(a for a, acc in zip(in_avals, acc_linear, strict=True) if acc)]
    return derive(fun, avals, description)


# ---------------------------------------------------------------------------------------
# Batching


def batch_jaxpr(closed: ClosedJaxpr, batched, force, trace, description: str):
    """``closed`` batched along axis 0 of the inputs marked ``batched``.

    Returns ``(jaxpr, out_batched)``: outputs batched at axis 0 where ``out_batched``; an
    output marked in ``force`` is batched (broadcast) even if it does not vary.
    """
    out_b = []
    size = trace.axis_size

    def fun(ins):
        dims = [0 if b else batching.not_mapped for b in batched]
        outs, odims = batching.batch_flat(body_fun(closed), ins, dims, size, trace.axis_name,
                                          description)
        res = []
        out_b.clear()
        for o, d, f in zip(outs, odims, force, strict=True):
            b = d is not batching.not_mapped or f
            out_b.append(b)
            res.append(batching.move_batch_axis(o, d, 0, size) if b else o)
        return res

    avals = [a.update(shape=(size, *a.shape)) if b else a
             for a, b in zip(closed.in_avals, batched, strict=True)]
    jaxpr = derive(fun, avals, description)
    return jaxpr, list(out_b)


def batch_operands(vals, dims, batched, size, axis=0):
    """``vals`` with the batch axis at ``axis`` where ``batched`` (broadcast if unbatched),
    unchanged elsewhere."""
    return [batching.move_batch_axis(v, d, axis, size) if b else v
            for v, d, b in zip(vals, dims, batched, strict=True)]

"""The ``while`` primitive: run a closed jaxpr on a carry while another one returns True.

``while[body_jaxpr=... body_nconsts=m cond_jaxpr=... cond_nconsts=k] cond_consts
body_consts carry`` evaluates ``body_jaxpr(body_consts, carry)`` while
``cond_jaxpr(cond_consts, carry)`` is True. Both run compiled (optimised once), eagerly and
under ``jit``. Rules:

- JVP: a ``while`` of the body's JVP (carry tangents nonzero at a fixed point), whose
  condition ignores the tangents.
- partial evaluation: the carries that depend only on known values (if the condition
  does) run in a known ``while``; the staged ``while`` computes the rest, from scratch.
- transpose: none, as in JAX: reverse mode raises a clear error pointing at ``scan``,
  ``fori_loop`` with concrete bounds, and ``checkpointed_while_loop``.
- batching: an unbatched predicate keeps one ``while`` of the batched body. A batched one
  runs until every example's predicate is False: each iteration runs the batched body and
  keeps an example's new carry only where its predicate is still True (``select_n``), so a
  finished example's carry is frozen, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..core.ir import Eqn, Var
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import ad, batching
from . import common as cf

while_p = Primitive("while", multiple_results=True)


def _while_impl(*args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    loop = cf.while_loop_program(cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    return [np.asarray(c) for c in loop(*args)]


def _while_abstract_eval(*avals, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cc = avals[:cond_nconsts]
    bc = avals[cond_nconsts:cond_nconsts + body_nconsts]
    carry = avals[cond_nconsts + body_nconsts:]
    ok = (len(cond_jaxpr.in_avals) == len(cc) + len(carry)
          and len(body_jaxpr.in_avals) == len(bc) + len(carry)
          and all(cf.typematch(a, b) for a, b in zip(cond_jaxpr.in_avals, (*cc, *carry),
                                                     strict=True))
          and all(cf.typematch(a, b) for a, b in zip(body_jaxpr.in_avals, (*bc, *carry),
                                                     strict=True))
          and all(cf.typematch(a, b) for a, b in zip(body_jaxpr.out_avals, carry,
                                                     strict=True))
          and [(a.shape, a.dtype.name) for a in cond_jaxpr.out_avals] == [((), "bool")])
    if not ok:
        raise TypeError(
            f"internal error: a while of cond {cond_jaxpr.in_avals} -> {cond_jaxpr.out_avals} "
            f"and body {body_jaxpr.in_avals} -> {body_jaxpr.out_avals} bound to {avals}")
    return list(carry)


while_p.def_impl(_while_impl)
while_p.def_abstract_eval(_while_abstract_eval)
register_lowering(while_p)


def _split3(seq, cond_nconsts, body_nconsts):
    seq = list(seq)
    n = cond_nconsts + body_nconsts
    return seq[:cond_nconsts], seq[cond_nconsts:n], seq[n:]


def _while_jvp(primals, tangents, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    pc, pb, pk = _split3(primals, cond_nconsts, body_nconsts)
    _, tb, tk = _split3(tangents, cond_nconsts, body_nconsts)
    bc_nz = [not isinstance(t, ad.Zero) for t in tb]
    carry_nz = [not isinstance(t, ad.Zero) for t in tk]
    while True:
        out_nz = cf.jvp_nonzeros(body_jaxpr, bc_nz + carry_nz, "jvp of while")
        new = [a or b for a, b in zip(carry_nz, out_nz, strict=True)]
        if new == carry_nz:
            break
        carry_nz = new
    body, _ = cf.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz, "jvp of while")
    nb, nk, n_bt, n_kt = len(pb), len(pk), sum(bc_nz), sum(carry_nz)
    # body: (bc, carry, bc tangents, carry tangents) -> (carry, carry tangents); the while
    # wants (bc, bc tangents, carry, carry tangents).
    body = cf.permute(body, [*range(nb), *range(nb + nk, nb + nk + n_bt),
                             *range(nb, nb + nk), *range(nb + nk + n_bt, nb + nk + n_bt + n_kt)])
    n_cond_in = len(cond_jaxpr.in_avals)
    t_avals = [ad.tangent_aval(p.aval) for p, z in zip(pk, carry_nz, strict=True) if z]
    cond = cf.derive(lambda ins: cf.body_fun(cond_jaxpr)(ins[:n_cond_in]),
                     [*cond_jaxpr.in_avals, *t_avals], "jvp of while")
    init_t = [cf.cast_like(ad.instantiate(t), p.aval)
              for t, p, z in zip(tk, pk, carry_nz, strict=True) if z]
    outs = while_p.bind(*pc, *pb, *(t for t in tb if not isinstance(t, ad.Zero)), *pk, *init_t,
                        body_jaxpr=body, body_nconsts=nb + n_bt, cond_jaxpr=cond,
                        cond_nconsts=cond_nconsts)
    touts = iter(outs[nk:])
    return outs[:nk], [next(touts) if z else ad.Zero(ad.tangent_aval(p.aval))
                       for p, z in zip(pk, carry_nz, strict=True)]


def _while_partial_eval(eqn, unknown):
    p = eqn.params
    cc_uk, bc_uk, carry_uk = _split3(unknown, p["cond_nconsts"], p["body_nconsts"])
    if any(cc_uk):
        return None, eqn
    while True:
        out_uk = cf.partial_eval_jaxpr(p["body_jaxpr"], bc_uk + carry_uk, carry_uk)[2]
        new = [a or b for a, b in zip(carry_uk, out_uk, strict=True)]
        if new == carry_uk:
            break
        carry_uk = new
    if all(carry_uk) or cf.partial_eval_jaxpr(p["cond_jaxpr"], cc_uk + carry_uk, [False])[2][0]:
        return None, eqn  # the known carries cannot be computed on their own
    n_known = carry_uk.count(False)
    cond_known = cf.partial_eval_jaxpr(p["cond_jaxpr"], cc_uk + carry_uk, [False])[0]
    body_known = cf.partial_eval_jaxpr(p["body_jaxpr"], bc_uk + carry_uk, carry_uk)[0]
    body_known = cf.permute(body_known, range(len(body_known.in_avals)), range(n_known))
    cc, bc, carry = _split3(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    known_bc = [v for v, u in zip(bc, bc_uk, strict=True) if not u]
    known_eqn = Eqn(while_p, [*cc, *known_bc, *(v for v, u in zip(carry, carry_uk, strict=True)
                                                if not u)],
                    [v for v, u in zip(eqn.outvars, carry_uk, strict=True) if not u],
                    dict(p, body_jaxpr=body_known, body_nconsts=len(known_bc),
                         cond_jaxpr=cond_known))
    # The staged loop recomputes every carry (the known ones' outputs are left unused).
    outvars = [v if u else Var(v.aval) for v, u in zip(eqn.outvars, carry_uk, strict=True)]
    return known_eqn, Eqn(while_p, eqn.invars, outvars, p)


def _while_transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or lax.fori_loop with static "
        "start/stop, or invarax.lax.checkpointed_while_loop(cond_fun, body_fun, init_val, "
        "max_steps=...), which differentiates a while loop by recomputation.")


def _while_batch(vals, dims, *, trace, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    from ..ops.elementwise import select_n
    from ..ops.reductions import reduce_or
    from ..ops.shape import broadcast_in_dim

    size = trace.axis_size
    b = [d is not batching.not_mapped for d in dims]
    cc_b, bc_b, carry_b = _split3(b, cond_nconsts, body_nconsts)
    while True:
        out_b = cf.batch_jaxpr(body_jaxpr, bc_b + carry_b, carry_b, trace, "vmap of while")[1]
        pred_b = cf.batch_jaxpr(cond_jaxpr, cc_b + carry_b, [False], trace,
                                "vmap of while")[1][0]
        new = [True] * len(carry_b) if pred_b else [
            x or y for x, y in zip(carry_b, out_b, strict=True)]
        if new == carry_b:
            break
        carry_b = new
    body, _ = cf.batch_jaxpr(body_jaxpr, bc_b + carry_b, carry_b, trace, "vmap of while")
    cond, _ = cf.batch_jaxpr(cond_jaxpr, cc_b + carry_b, [pred_b], trace, "vmap of while")
    vc, vb, vk = _split3(vals, cond_nconsts, body_nconsts)
    dc, db, dk = _split3(dims, cond_nconsts, body_nconsts)
    vc = cf.batch_operands(vc, dc, cc_b, size)
    vb = cf.batch_operands(vb, db, bc_b, size)
    vk = cf.batch_operands(vk, dk, carry_b, size)
    out_dims = [0 if x else batching.not_mapped for x in carry_b]
    if not pred_b:
        outs = while_p.bind(*vc, *vb, *vk, body_jaxpr=body, body_nconsts=body_nconsts,
                            cond_jaxpr=cond, cond_nconsts=cond_nconsts)
        return outs, out_dims
    # A batched predicate, carried beside the carry: loop while any example goes on; a
    # finished example keeps its carry (its predicate, of the same carry, stays False).
    nc = len(vc)
    pred = cf.body_fun(cond)([*vc, *vk])[0]
    any_cond = cf.derive(lambda ins: [reduce_or(ins[0], (0,))],
                         [pred.aval, *body.in_avals[len(vb):]], "vmap of while")

    def step(ins):
        pred, carry = ins[nc + len(vb)], ins[nc + len(vb) + 1:]
        new = cf.body_fun(body)([*ins[nc:nc + len(vb)], *carry])
        new = [select_n(broadcast_in_dim(pred, old.shape, (0,)), old, n)
               for old, n in zip(carry, new, strict=True)]
        return [cf.body_fun(cond)([*ins[:nc], *new])[0], *new]

    step_body = cf.derive(step, [*cond.in_avals[:nc], *body.in_avals[:len(vb)], pred.aval,
                                 *body.in_avals[len(vb):]], "vmap of while")
    outs = while_p.bind(*vc, *vb, pred, *vk, body_jaxpr=step_body,
                        body_nconsts=nc + len(vb), cond_jaxpr=any_cond, cond_nconsts=0)
    return outs[1:], out_dims


_while_batch.needs_trace = True
ad.jvp_rules[while_p] = _while_jvp
ad.partial_eval_eqn_rules[while_p] = _while_partial_eval
ad.transpose_rules[while_p] = _while_transpose
batching.batching_rules[while_p] = _while_batch

"""The ``while_grad`` primitive: the backward pass of ``lax.checkpointed_while_loop``, by
binomial checkpointing (Griewank's revolve).

``while_grad[body=... checkpoints=K] body_consts init n cts`` reverses ``n`` steps of
``body`` (body_consts, carry -> carry) started from ``init``: it returns the cotangents of
the body consts and of ``init`` for the cotangents ``cts`` of the final carry. Only
``init`` is stored by the forward pass; the impl, which knows ``n`` (also under ``jit``:
it runs when the program runs), recomputes the states it needs keeping at most ``K``
snapshots besides ``init`` (memory O(K) carries): with ``t`` the least integer such that
``binom(K + t, K) >= n``, each step runs forward at most ``t`` times. Each step's
cotangents come from the body's VJP (a compiled jaxpr); a body const's cotangent is
accumulated over the steps from the last to the first, each step's contributions added as
its equations inlined would add them (as ``scan``'s transpose does).

Under ``vmap`` the examples, whose trip counts differ, reverse together over the largest
count: an example's extra steps are the identity (the forward loop froze its carry), so
its cotangents pass through them unchanged.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import ad, batching
from . import common as cf

while_grad_p = Primitive("while_grad", multiple_results=True)


@functools.lru_cache(maxsize=256)
def _vjp_jaxpr(body, num_consts: int):
    """``(consts, carry, cts, const accumulators) -> (const accumulators, carry cts)``: one
    step's VJP; the accumulators and cotangents of non-differentiable values are zeros."""
    in_avals, out_avals = body.in_avals, body.out_avals
    diff = [ad.is_differentiable(a) for a in in_avals]
    n_in = len(in_avals)

    def fun(ins):
        primals, cts = ins[:n_in], ins[n_in:n_in + len(out_avals)]
        accs = ins[n_in + len(out_avals):]
        _, lin = ad.linearize_flat(cf.body_fun(body), primals, "checkpointed_while_loop")
        cts = [c if ad.is_differentiable(a) else ad.Zero(a)
               for c, a in zip(cts, out_avals, strict=True)]
        undefined = [ad.UndefinedPrimal(a) for a in lin.in_avals]
        # one accumulator per const (non-differentiable ones too): each to its own const
        acc_list = [accs[i] if i < num_consts else None for i, d in enumerate(diff) if d]
        got = iter(ad.backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts, undefined, cts,
                                    acc_list))
        full = [cf.cast_like(ad.instantiate(next(got)), a) if d else ad.zeros_like_aval(a)
                for a, d in zip(in_avals, diff, strict=True)]
        return [*full[:num_consts], *full[num_consts:]]

    avals = [*in_avals, *out_avals, *in_avals[:num_consts]]
    return cf.derive(fun, avals, "checkpointed_while_loop (backward step)")


def _binomial(s: int, t: int) -> int:
    return math.comb(s + t, s)


def _first_step(length: int, snaps: int) -> int:
    """Revolve's first checkpoint: after it, the rest needs ``snaps - 1`` snapshots and the
    part before it ``snaps`` snapshots, each with one repetition fewer."""
    t = 0
    while _binomial(snaps, t) < length:
        t += 1
    return max(1, length - _binomial(snaps - 1, t))


def revolve(state, length, snaps, ct, advance, back):
    """The cotangent of ``state`` for the cotangent ``ct`` of the state ``length`` steps
    later, keeping at most ``snaps`` states besides ``state`` (binomial checkpointing).

    ``advance(state, k)`` runs ``k`` steps forward; ``back(state, ct)`` is one step's VJP.
    The steps are reversed from the last to the first.
    """
    while length > 1:
        if snaps == 0:  # no snapshot left: recompute each state from ``state``
            for k in range(length - 1, -1, -1):
                ct = back(advance(state, k), ct)
            return ct
        m = _first_step(length, snaps)
        ct = revolve(advance(state, m), length - m, snaps - 1, ct, advance, back)
        length = m
    return back(state, ct) if length == 1 else ct


def _while_grad_impl(*args, body, checkpoints):
    num_consts = len(body.in_avals) - len(body.out_avals)
    nk = len(body.out_avals)
    consts, init = list(args[:num_consts]), list(args[num_consts:num_consts + nk])
    n = int(args[num_consts + nk])
    cts = list(args[num_consts + nk + 1:])
    step = cf.run_body(body)
    vjp = cf.run_body(_vjp_jaxpr(body, num_consts))
    accs = [np.zeros(a.shape, a.dtype) for a in body.in_avals[:num_consts]]

    def advance(state, k):
        for _ in range(k):
            state = step(*consts, *state)
        return state

    def back(state, ct):  # one step
        nonlocal accs
        outs = vjp(*consts, *state, *ct, *accs)
        accs = outs[:num_consts]
        return outs[num_consts:]

    ct = revolve(init, n, checkpoints, cts, advance, back)
    return [*(np.asarray(a) for a in accs), *(np.asarray(c) for c in ct)]


def _while_grad_abstract_eval(*avals, body, checkpoints):
    nk = len(body.out_avals)
    num_consts = len(body.in_avals) - nk
    ok = (len(avals) == num_consts + 2 * nk + 1
          and all(cf.typematch(a, b) for a, b in zip(avals[:num_consts + nk], body.in_avals,
                                                     strict=True))
          and avals[num_consts + nk].shape == () and avals[num_consts + nk].dtype == np.int32)
    if not ok:
        raise TypeError(f"internal error: while_grad of {body.in_avals} bound to {avals}")
    return list(body.in_avals)


while_grad_p.def_impl(_while_grad_impl)
while_grad_p.def_abstract_eval(_while_grad_abstract_eval)
register_lowering(while_grad_p)


def _while_grad_batch(vals, dims, *, trace, body, checkpoints):
    """All examples reverse over the largest trip count; an example past its own count
    takes identity steps (its counter, carried beside the state, selects the old carry)."""
    from ..ops.elementwise import lt, select_n
    from ..ops.reductions import reduce_max
    from ..ops.shape import broadcast_in_dim

    size = trace.axis_size
    nk = len(body.out_avals)
    num_consts = len(body.in_avals) - nk
    n, n_dim = vals[num_consts + nk], dims[num_consts + nk]
    b_consts = [True] * num_consts  # per-example cotangents, also of unbatched consts
    batched_body, _ = cf.batch_jaxpr(body, b_consts + [True] * nk, [True] * nk, trace,
                                     "vmap of checkpointed_while_loop")
    n_b = batching.move_batch_axis(n, n_dim, 0, size)
    # The frozen step: (consts, n per example, counter, carry) -> (counter + 1, carry').
    avals = [*batched_body.in_avals[:num_consts], n_b.aval, n_b.aval,
             *batched_body.in_avals[num_consts:]]

    def frozen(ins):
        consts, nn, i, carry = (ins[:num_consts], ins[num_consts], ins[num_consts + 1],
                                ins[num_consts + 2:])
        new = cf.body_fun(batched_body)([*consts, *carry])
        go = lt(i, nn)
        return [i + np.int32(1), *(select_n(broadcast_in_dim(go, o.shape, (0,)), o, x)
                                  for o, x in zip(carry, new, strict=True))]

    step = cf.derive(frozen, avals, "vmap of checkpointed_while_loop")
    consts = cf.batch_operands(vals[:num_consts], dims[:num_consts], b_consts, size)
    init = cf.batch_operands(vals[num_consts:num_consts + nk], dims[num_consts:num_consts + nk],
                             [True] * nk, size)
    cts = cf.batch_operands(vals[num_consts + nk + 1:], dims[num_consts + nk + 1:],
                            [True] * nk, size)
    zero = broadcast_in_dim(np.int32(0), (size,), ())
    outs = while_grad_p.bind(*consts, n_b, zero, *init, reduce_max(n_b, (0,)),
                             zero, *cts, body=step, checkpoints=checkpoints)
    return [*outs[:num_consts], *outs[num_consts + 2:]], [0] * (num_consts + nk)


_while_grad_batch.needs_trace = True
batching.batching_rules[while_grad_p] = _while_grad_batch

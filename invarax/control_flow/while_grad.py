"""The primitives of ``lax.checkpointed_while_loop``'s reverse mode, on Equinox's schedule.

``checkpointed_while[cond=... body=... checkpoints=K max_steps=M] cond_consts body_consts
init`` is the forward pass: the ``while`` of ``cond`` and ``body`` (at most ``M`` steps)
that also stores up to ``K`` of the carries it passes through. It returns the final
carry, the number of steps ``n``, the step number of each stored carry (int32[K],
ascending; an unused slot holds int32's maximum) and the ``K`` carries themselves, slot
after slot. Where it stores them is online binomial checkpointing (``n`` is not known in
advance): Stumm and Walther's Algorithm I up to step ``(K + 1)(K + 2)/2 - 1``, Wang and
Moin's minimal-repetition dynamic checkpointing after it (``OnlinePlacement``).

``while_grad[body=... checkpoints=K] body_consts n steps carries cts`` is the backward
pass: it returns the cotangents of the body consts and of the initial carry for the
cotangents ``cts`` of the final carry, from the stored carries (``treeverse``). Each
step's cotangents come from the body's VJP (a compiled jaxpr); a body const's cotangent is
accumulated over the steps from the last to the first, each step's contributions added as
its equations inlined would add them (as ``scan``'s transpose does).

Both run the body on the host, one compiled step at a time, eagerly and under ``jit``.
They recompute and store exactly the steps Equinox's ``while_loop(kind="checkpointed")``
does, for any ``K`` and ``n``: a loop whose body prints its step prints the same sequence.

Under ``vmap`` the examples, whose trip counts differ, run and reverse together over the
largest count: an example's extra steps are the identity (its carry is frozen), so its
cotangents pass through them unchanged.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import ad, batching
from . import common as cf

UNUSED = int(np.iinfo(np.int32).max)  # the step number of a slot that holds no carry


class OnlinePlacement:
    """Where the forward pass stores its carries, step by step, without knowing how many
    steps there will be: ``slot(step)`` is the slot (``0 .. checkpoints - 1``) that the
    carry entering ``step`` replaces, or None; ``steps[j]`` is the step slot ``j`` holds.

    With ``K = checkpoints``: before step ``(K + 1)(K + 2)/2 - 1`` the placement is Stumm
    and Walther's Algorithm I ("New algorithms for optimal online checkpointing", 2010):
    the first ``K`` steps fill the slots, then rounds of ``K``, ``K - 1``, ..., 1 steps
    store each of their steps but the first over an older one (slot 0 keeps the initial
    carry). Beyond, it is Wang and Moin's dynamic checkpointing (2008): each slot has a
    level, and every step is stored (if ``K > 1``): into the latest slot marked dispensable
    (at level 0), else over the latest stored step (one level up, making every slot of a
    lower level dispensable).

    Example:
        >>> p = OnlinePlacement(2)
        >>> [p.slot(s) for s in range(8)], p.steps
        ([0, 1, None, 1, None, 1, 1, 1], [0, 7])
    """

    def __init__(self, checkpoints: int):
        k = checkpoints
        self.steps = [UNUSED] * k
        self._switch = (k + 1) * (k + 2) // 2 - 1
        # Algorithm I: the next slot to fill, the length of the current round, the step
        # that starts the next round, and whether this round still stores.
        self._next, self._round, self._end, self._storing = 0, k, k, True
        # Dynamic checkpointing: slot 0 (the initial carry) sits above every level.
        self._levels = [math.inf] + [0] * (k - 1)
        self._dispensable = [False] * k

    def slot(self, step: int):
        j = self._stumm_walther(step) if step < self._switch else self._wang_moin()
        if j is not None:
            self.steps[j] = step
        return j

    def _stumm_walther(self, step):
        j = self._next if self._storing else None
        if self._storing:
            self._next = 1 if self._next + 1 > self._round else self._next + 1
        if step + 1 == self._end:
            self._storing = False
        if step == self._end:
            self._end += self._round
            self._round -= 1
            self._next = self._round
            self._storing = self._round > 0
        return j

    def _wang_moin(self):
        if len(self.steps) == 1:  # the one slot keeps the initial carry
            return None
        free = [j for j, d in enumerate(self._dispensable) if d]
        if free:
            j = max(free, key=self.steps.__getitem__)
            self._dispensable[j] = False
            level = 0
        else:
            j = self.steps.index(max(self.steps))
            old = self._levels[j]
            level = old + 1
            self._dispensable = [d or lv < old for d, lv in
                                 zip(self._dispensable, self._levels, strict=True)]
        self._levels[j] = level
        return j


def _next_store(at: int, goal: int, free: int, checkpoints: int):
    """The step whose carry the backward pass stores next, having reloaded the carry of
    step ``at`` to reverse step ``goal - 1``, with slots ``free ..`` unused (None: none).
    One step ahead it stores nothing; where the remaining steps fit in the free slots it
    stores each, else it halves the distance."""
    if free == checkpoints or goal - at <= 2:
        return None
    return at + 1 if goal - at - 2 <= checkpoints - free else at + (goal - at) // 2


def treeverse(n: int, checkpoints: int, saved, ct, step, back):
    """The cotangent of the initial carry for the cotangent ``ct`` of the carry after
    ``n`` steps, reversing the steps from the last to the first.

    Arguments:
        n: the number of steps.
        checkpoints: the number of slots.
        saved: the forward pass's ``(step number, carry)`` per slot, ascending; the first
            ``min(n, checkpoints)`` are used (the first is step 0: the initial carry).
        ct: the cotangent of the final carry.
        step: ``step(carry) -> carry``, one step forward.
        back: ``back(carry, ct) -> ct``, one step's VJP at ``carry``.

    Returns:
        The cotangent of the initial carry.

    Example (the steps run, forward or back, for 8 steps and 2 slots):
        >>> trail = []
        >>> def step(s):
        ...     trail.append(s)
        ...     return s + 1
        >>> def back(s, ct):
        ...     trail.append(s)
        ...     return ct
        >>> treeverse(8, 2, [(0, 0), (7, 7)], None, step, back)
        >>> trail
        [7, 0, 1, 2, 3, 4, 5, 6, 3, 4, 5, 3, 4, 3, 0, 1, 2, 1, 0]
    """
    slots = list(saved)
    free, goal = min(n, checkpoints), n

    def reload(free):
        at, carry = slots[free - 1]
        return at, carry, free - 1 if at + 1 == goal else free  # its last use frees it

    if n:
        at, carry, free = reload(free)
        target = _next_store(at, goal, free, checkpoints)
    while goal:
        if at + 1 == goal:
            ct = back(carry, ct)
            goal -= 1
            if goal:
                at, carry, free = reload(free)
                target = _next_store(at, goal, free, checkpoints)
        else:
            carry, at = step(carry), at + 1
            if at == target:
                slots[free] = (at, carry)
                free += 1
                target = _next_store(at, goal, free, checkpoints)
    return ct


# ---------------------------------------------------------------------------------------
# checkpointed_while: the forward pass

checkpointed_while_p = Primitive("checkpointed_while", multiple_results=True)


def _split(body, cond):
    """``(number of carries, of cond consts, of body consts)``."""
    nk = len(body.out_avals)
    return nk, len(cond.in_avals) - nk, len(body.in_avals) - nk


def _checkpointed_while_impl(*args, cond, body, checkpoints, max_steps):
    nk, ncc, nbc = _split(body, cond)
    cc, bc, carry = args[:ncc], args[ncc:ncc + nbc], list(args[ncc + nbc:])
    more, advance = cf.run_body(cond), cf.run_body(body)
    placement, slots, n = OnlinePlacement(checkpoints), [None] * checkpoints, 0
    while bool(more(*cc, *carry)[0]) and n < max_steps:
        j = placement.slot(n)
        if j is not None:
            slots[j] = carry
        carry, n = advance(*bc, *carry), n + 1
    order = sorted(range(checkpoints), key=placement.steps.__getitem__)
    blank = [np.zeros(a.shape, a.dtype) for a in body.out_avals]
    return [*(np.asarray(x) for x in carry), np.int32(n),
            np.asarray([placement.steps[j] for j in order], np.int32),
            *(np.asarray(x) for j in order for x in (slots[j] or blank))]


def _checkpointed_while_abstract_eval(*avals, cond, body, checkpoints, max_steps):
    nk, ncc, nbc = _split(body, cond)
    carry = list(avals[ncc + nbc:])
    ok = (len(carry) == nk and cond.out_avals[0].shape == () and len(cond.out_avals) == 1
          and all(cf.typematch(a, b) for a, b in zip(avals[:ncc], cond.in_avals[:ncc],
                                                     strict=True))
          and all(cf.typematch(a, b) for a, b in zip(avals[ncc:], body.in_avals, strict=True))
          and all(cf.typematch(a, b) for a, b in zip(carry, cond.in_avals[ncc:], strict=True))
          and all(cf.typematch(a, b) for a, b in zip(carry, body.out_avals, strict=True)))
    if not ok:
        raise TypeError(f"internal error: checkpointed_while of {cond.in_avals} and "
                        f"{body.in_avals} bound to {avals}")
    scalar = ShapedArray((), np.dtype(np.int32))
    steps = ShapedArray((checkpoints,), np.dtype(np.int32))
    return [*carry, scalar, steps, *carry * checkpoints]


checkpointed_while_p.def_impl(_checkpointed_while_impl)
checkpointed_while_p.def_abstract_eval(_checkpointed_while_abstract_eval)
register_lowering(checkpointed_while_p)


def _checkpointed_while_batch(vals, dims, *, trace, cond, body, checkpoints, max_steps):
    """Every carry batched. An unbatched predicate keeps the loop; a batched one runs until
    every example's is False, an example that has finished keeping its carry, and its
    count of steps (the ``n`` the backward pass reverses) is carried beside it."""
    from ..ops.elementwise import convert_element_type, select_n
    from ..ops.reductions import reduce_or
    from ..ops.shape import broadcast_in_dim

    size = trace.axis_size
    nk, ncc, nbc = _split(body, cond)
    b = [d is not batching.not_mapped for d in dims]
    cond_b, (pred_b,) = cf.batch_jaxpr(cond, b[:ncc] + [True] * nk, [False], trace,
                                       "vmap of checkpointed_while_loop")
    body_b, _ = cf.batch_jaxpr(body, b[ncc:ncc + nbc] + [True] * nk, [True] * nk, trace,
                               "vmap of checkpointed_while_loop")
    cc = cf.batch_operands(vals[:ncc], dims[:ncc], b[:ncc], size)
    bc = cf.batch_operands(vals[ncc:ncc + nbc], dims[ncc:ncc + nbc], b[ncc:ncc + nbc], size)
    carry = cf.batch_operands(vals[ncc + nbc:], dims[ncc + nbc:], [True] * nk, size)
    params = dict(checkpoints=checkpoints, max_steps=max_steps)
    if not pred_b:
        outs = checkpointed_while_p.bind(*cc, *bc, *carry, cond=cond_b, body=body_b, **params)
        return outs, [0] * nk + [batching.not_mapped] * 2 + [0] * (nk * checkpoints)
    # The carry becomes (predicate, count, carry): the predicate of each value is
    # evaluated once, as by the loop unbatched.
    pred = cf.body_fun(cond_b)([*cc, *carry])[0]
    count = broadcast_in_dim(np.int32(0), (size,), ())
    lead = [pred.aval, count.aval]
    any_more = cf.derive(lambda ins: [reduce_or(ins[0], (0,))],
                         [*lead, *body_b.out_avals], "vmap of checkpointed_while_loop")

    def frozen(ins):
        nc = ncc + nbc
        consts, (go, i), old = ins[:nc], ins[nc:nc + 2], ins[nc + 2:]
        new = cf.body_fun(body_b)([*consts[ncc:], *old])
        new = [select_n(broadcast_in_dim(go, o.shape, (0,)), o, x)
               for o, x in zip(old, new, strict=True)]
        return [cf.body_fun(cond_b)([*consts[:ncc], *new])[0],
                i + convert_element_type(go, np.int32), *new]

    step = cf.derive(frozen, [*cond_b.in_avals[:ncc], *body_b.in_avals[:nbc], *lead,
                              *body_b.out_avals], "vmap of checkpointed_while_loop")
    outs = checkpointed_while_p.bind(*cc, *bc, pred, count, *carry, cond=any_more,
                                     body=step, **params)
    k2 = nk + 2  # the loop's own count is the largest example's: each example's is kept
    final, steps, saved = outs[:k2], outs[k2 + 1], outs[k2 + 2:]
    kept = [x for j in range(checkpoints) for x in saved[j * k2 + 2:(j + 1) * k2]]
    return ([*final[2:], final[1], steps, *kept],
            [0] * nk + [0, batching.not_mapped] + [0] * (nk * checkpoints))


_checkpointed_while_batch.needs_trace = True
batching.batching_rules[checkpointed_while_p] = _checkpointed_while_batch


# ---------------------------------------------------------------------------------------
# while_grad: the backward pass

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


def _grad_split(body):
    """``(number of consts, of carries)``; the operands are consts, n, steps, the stored
    carries and the cotangents."""
    nk = len(body.out_avals)
    return len(body.in_avals) - nk, nk


def _while_grad_impl(*args, body, checkpoints):
    num_consts, nk = _grad_split(body)
    consts, n, steps = list(args[:num_consts]), int(args[num_consts]), args[num_consts + 1]
    carries = args[num_consts + 2:num_consts + 2 + nk * checkpoints]
    cts = list(args[num_consts + 2 + nk * checkpoints:])
    advance = cf.run_body(body)
    vjp = cf.run_body(_vjp_jaxpr(body, num_consts))
    accs = [np.zeros(a.shape, a.dtype) for a in body.in_avals[:num_consts]]
    saved = [(int(steps[j]), list(carries[j * nk:(j + 1) * nk])) for j in range(checkpoints)]

    def back(carry, ct):  # one step
        nonlocal accs
        outs = vjp(*consts, *carry, *ct, *accs)
        accs = outs[:num_consts]
        return outs[num_consts:]

    ct = treeverse(n, checkpoints, saved, cts, lambda c: advance(*consts, *c), back)
    return [*(np.asarray(a) for a in accs), *(np.asarray(c) for c in ct)]


def _while_grad_abstract_eval(*avals, body, checkpoints):
    num_consts, nk = _grad_split(body)
    consts, rest = avals[:num_consts], avals[num_consts:]
    carry_avals = body.in_avals[num_consts:]
    ok = (len(rest) == 2 + nk * (checkpoints + 1)
          and all(cf.typematch(a, b) for a, b in zip(consts, body.in_avals[:num_consts],
                                                     strict=True))
          and rest[0].shape == () and rest[0].dtype == np.int32
          and rest[1].shape == (checkpoints,) and rest[1].dtype == np.int32
          and all(cf.typematch(a, b) for a, b in zip(rest[2:], carry_avals * (checkpoints + 1),
                                                     strict=True)))
    if not ok:
        raise TypeError(f"internal error: while_grad of {body.in_avals} bound to {avals}")
    return list(body.in_avals)


while_grad_p.def_impl(_while_grad_impl)
while_grad_p.def_abstract_eval(_while_grad_abstract_eval)
register_lowering(while_grad_p)


def _while_grad_batch(vals, dims, *, trace, body, checkpoints):
    """All examples reverse over the largest trip count; an example past its own count
    takes identity steps (a counter, carried beside the carry, the step number, selects
    its old carry)."""
    from ..ops.elementwise import lt, select_n
    from ..ops.reductions import reduce_max
    from ..ops.shape import broadcast_in_dim, reshape, slice

    size = trace.axis_size
    num_consts, nk = _grad_split(body)
    n, steps = vals[num_consts], vals[num_consts + 1]
    if dims[num_consts + 1] is not batching.not_mapped:
        raise NotImplementedError("vmap of checkpointed_while_loop's backward pass over "
                                  "its schedule: differentiate inside the vmap")
    b_consts = [True] * num_consts  # per-example cotangents, also of unbatched consts
    batched_body, _ = cf.batch_jaxpr(body, b_consts + [True] * nk, [True] * nk, trace,
                                     "vmap of checkpointed_while_loop")
    n_b = batching.move_batch_axis(n, dims[num_consts], 0, size)
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
    start = num_consts + 2
    saved = cf.batch_operands(vals[start:start + nk * checkpoints],
                              dims[start:start + nk * checkpoints],
                              [True] * (nk * checkpoints), size)
    cts = cf.batch_operands(vals[start + nk * checkpoints:], dims[start + nk * checkpoints:],
                            [True] * nk, size)
    counted = []
    for j in range(checkpoints):  # each stored carry with its step number as the counter
        at = reshape(slice(steps, (j,), (j + 1,)), ())
        counted += [broadcast_in_dim(at, (size,), ()), *saved[j * nk:(j + 1) * nk]]
    zero = broadcast_in_dim(np.int32(0), (size,), ())
    outs = while_grad_p.bind(*consts, n_b, reduce_max(n_b, (0,)), steps, *counted, zero,
                             *cts, body=step, checkpoints=checkpoints)
    return [*outs[:num_consts], *outs[num_consts + 2:]], [0] * (num_consts + nk)


_while_grad_batch.needs_trace = True
batching.batching_rules[while_grad_p] = _while_grad_batch

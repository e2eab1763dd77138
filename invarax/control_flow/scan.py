"""The ``scan`` primitive: a loop over the leading axis of arrays, with a carry.

``scan[jaxpr=... length=n linear=... num_carry=c num_consts=k reverse=r unroll=u]
consts carry xs`` runs ``jaxpr`` (consts, carry, x slices -> new carry, y slices) ``n``
times and returns the final carry and the stacked ys. The body is optimised and compiled
once (``jit``'s passes and fusion, which change no bit) and run in a tight loop, eagerly
and under ``jit`` alike. Rules:

- JVP: a ``scan`` of the body's JVP; carry tangents nonzero in the body's view of some
  iteration (a fixed point) are instantiated.
- partial evaluation: the body is split (the unknown carries a fixed point); the known
  ``scan`` returns the residuals stacked as extra ys, except a residual that is a loop
  constant or a slice of ``xs`` (passed to the staged ``scan`` as it is), or one computed
  from loop constants alone (such as ``W.T``): the staged body computes it again from
  those constants, once, before its loop, instead of a copy being stacked per iteration.
  Large stacked outputs reuse pooled buffers that nothing references any more
  (``core/buffers.py``).
- transpose: a ``scan`` in the other direction of the body's backward pass, carrying the
  cotangents of the carry and of the linear consts. A const's cotangent is accumulated in
  the order an unrolled loop's backward pass adds it: starting from the cotangent already
  accumulated for it after the loop (zero if none: ``accumulating_transpose_rules``), each
  iteration's contributions added one by one, from the last iteration to the first, each
  iteration's in its equations' reverse order. So the gradient is bitwise the unrolled
  loop's (tested with a weight used before, inside and after two loops), but for
  ``0 + (-0.0) = +0.0`` where no cotangent was accumulated before the loop.
- batching: one ``scan`` of the batched body (the batched carries a fixed point); batched
  xs and ys have their batch axis at 1.
"""

from __future__ import annotations

import numpy as np

from ..core import buffers
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import ad, batching
from . import common as cf

scan_p = Primitive("scan", multiple_results=True)


def _scan_impl(*args, jaxpr, length, linear, num_carry, num_consts, reverse, unroll):
    loop = cf.scan_loop(jaxpr, num_consts, num_carry)
    xs = args[num_consts + num_carry:]
    ys = [buffers.take((length, *a.shape), a.dtype) for a in jaxpr.out_avals[num_carry:]]
    order = range(length - 1, -1, -1) if reverse else range(length)
    carry = loop(*args[:num_consts + num_carry], *xs, *ys, order)
    for y in ys:  # filled: the pool hands it out again once its readers have dropped it
        buffers.give(y)
    return [*(np.asarray(c) for c in carry), *ys]


def _scan_abstract_eval(*avals, jaxpr, length, linear, num_carry, num_consts, reverse, unroll):
    body_in = jaxpr.in_avals
    xs = avals[num_consts + num_carry:]
    given = [*avals[:num_consts + num_carry], *(x.update(shape=x.shape[1:]) for x in xs)]
    if len(body_in) != len(avals) or any(x.shape[:1] != (length,) for x in xs) or not all(
            cf.typematch(a, b) for a, b in zip(body_in, given, strict=True)):
        raise TypeError(
            f"internal error: a scan body of {[a.str_short() for a in body_in]} (length "
            f"{length}) bound to {[a.str_short() for a in avals]}")
    carry_in = avals[num_consts:num_consts + num_carry]
    carry_out = jaxpr.out_avals[:num_carry]
    if not all(cf.typematch(a, b) for a, b in zip(carry_in, carry_out, strict=True)):
        raise TypeError(f"internal error: a scan body maps the carry "
                        f"{[a.str_short() for a in carry_in]} to "
                        f"{[a.str_short() for a in carry_out]}")
    return [*carry_in, *(y.update(shape=(length, *y.shape))
                         for y in jaxpr.out_avals[num_carry:])]


scan_p.def_impl(_scan_impl)
scan_p.def_abstract_eval(_scan_abstract_eval)
register_lowering(scan_p)


def _split3(seq, num_consts, num_carry):
    seq = list(seq)
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _scan_jvp(primals, tangents, *, jaxpr, length, linear, num_carry, num_consts, reverse,
              unroll):
    nz = [not isinstance(t, ad.Zero) for t in tangents]
    const_nz, carry_nz, xs_nz = _split3(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:
        out_nz = cf.jvp_nonzeros(jaxpr, const_nz + carry_nz + xs_nz, "jvp of scan")
        new = [a or b for a, b in zip(carry_nz, out_nz[:num_carry], strict=True)]
        if new == carry_nz:
            break
        carry_nz = new
    body, out_nz = cf.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz,
                                carry_nz + [False] * n_ys, "jvp of scan")
    ys_nz = out_nz[num_carry:]
    # The JVP body takes primals then tangents; the scan wants consts, carry, xs each
    # followed by its tangents.
    n_in = len(primals)
    tan_pos = {}
    for i, z in enumerate(const_nz + carry_nz + xs_nz):
        if z:
            tan_pos[i] = n_in + len(tan_pos)
    c, k, x = _split3(range(n_in), num_consts, num_carry)
    order = [*c, *(tan_pos[i] for i in c if i in tan_pos), *k,
             *(tan_pos[i] for i in k if i in tan_pos), *x, *(tan_pos[i] for i in x if i in tan_pos)]
    n_out = len(jaxpr.out_avals)
    n_ct = sum(carry_nz)
    out_order = [*range(num_carry), *range(n_out, n_out + n_ct), *range(num_carry, n_out),
                 *range(n_out + n_ct, n_out + n_ct + sum(ys_nz))]
    body = cf.permute(body, order, out_order)
    carry_tangents = [ad.instantiate(t) if z else None
                      for t, z in zip(tangents[num_consts:num_consts + num_carry], carry_nz,
                                      strict=True)]
    carry_tangents = [cf.cast_like(t, p.aval) for t, p in
                      zip(carry_tangents, primals[num_consts:num_consts + num_carry],
                          strict=True) if t is not None]
    pc, pk, px = _split3(primals, num_consts, num_carry)
    tc, _, tx = _split3(tangents, num_consts, num_carry)
    args = [*pc, *(t for t in tc if not isinstance(t, ad.Zero)), *pk, *carry_tangents,
            *px, *(t for t in tx if not isinstance(t, ad.Zero))]
    lin_c, lin_k, lin_x = _split3(linear, num_consts, num_carry)
    new_linear = (*lin_c, *[True] * sum(const_nz), *lin_k, *[True] * n_ct,
                  *lin_x, *[True] * sum(xs_nz))
    outs = scan_p.bind(*args, jaxpr=body, length=length, linear=new_linear,
                       num_carry=num_carry + n_ct, num_consts=num_consts + sum(const_nz),
                       reverse=reverse, unroll=unroll)
    carry_out, carry_t = outs[:num_carry], iter(outs[num_carry:num_carry + n_ct])
    ys, ys_t = outs[num_carry + n_ct:num_carry + n_ct + n_ys], iter(outs[num_carry + n_ct + n_ys:])
    out_avals = [o.aval for o in (*carry_out, *ys)]
    t_out = [next(carry_t) if z else ad.Zero(ad.tangent_aval(a))
             for z, a in zip(carry_nz, out_avals[:num_carry], strict=True)]
    t_out += [next(ys_t) if z else ad.Zero(ad.tangent_aval(a))
              for z, a in zip(ys_nz, out_avals[num_carry:], strict=True)]
    return [*carry_out, *ys], t_out


def _scan_partial_eval(eqn, unknown):
    p = eqn.params
    jaxpr, num_consts, num_carry, length = (p["jaxpr"], p["num_consts"], p["num_carry"],
                                            p["length"])
    const_uk, carry_uk, xs_uk = _split3(unknown, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:
        out_uk = cf.partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk,
                                       carry_uk + [False] * n_ys)[2]
        new = [a or b for a, b in zip(carry_uk, out_uk[:num_carry], strict=True)]
        if new == carry_uk:
            break
        carry_uk = new
    body_uk = const_uk + carry_uk + xs_uk
    known, staged, out_uk, num_res = cf.partial_eval_jaxpr(jaxpr, body_uk,
                                                           carry_uk + [False] * n_ys)
    kj = known.jaxpr
    n_known_out = out_uk.count(False)
    k_consts = num_consts - sum(const_uk)
    k_carry = num_carry - sum(carry_uk)
    known_outer = [v for v, u in zip(eqn.invars, body_uk, strict=True) if not u]
    # Each residual: a loop constant (passed as a const), a slice of known xs (the xs passed
    # as they are), a value computed from loop constants alone (computed again by the staged
    # body from those constants, where it runs once, before the loop: the same operations on
    # the same values) or another value (stacked as an extra ys of the known scan).
    position = {id(v): i for i, v in enumerate(kj.invars)}
    invariant = _invariant_values(kj, k_consts)
    res_consts, res_xs, stacked, remat = [], [], [], []
    for r, v in enumerate(kj.outvars[n_known_out:]):
        i = position.get(id(v)) if isinstance(v, Var) else None
        if i is not None and i < k_consts:
            res_consts.append((r, known_outer[i]))
        elif i is not None and i >= k_consts + k_carry:
            res_xs.append((r, known_outer[i]))
        elif id(v) in invariant:
            remat.append(r)
        else:
            stacked.append(r)
    staged_stacked = stacked  # the stacked residuals' positions among the staged's inputs
    if remat:
        staged, num_res, res_consts, res_xs, staged_stacked = _rematerialise(
            known, staged, num_res, k_consts, remat, res_consts, res_xs, stacked,
            known_outer[:k_consts])
    if all(out_uk) and not stacked:  # the known scan would compute nothing
        return None, eqn
    stacked_vars = [Var(kj.outvars[n_known_out + r].aval.update(
        shape=(length, *kj.outvars[n_known_out + r].aval.shape))) for r in stacked]
    known_body = cf.permute(known, range(len(kj.invars)),
                            [*range(n_known_out), *(n_known_out + r for r in stacked)])
    k_lin_c, k_lin_k, k_lin_x = _split3(
        [lin for lin, u in zip(p["linear"], body_uk, strict=True) if not u], k_consts, k_carry)
    known_eqn = Eqn(scan_p, known_outer,
                    [*(v for v, u in zip(eqn.outvars, out_uk, strict=True) if not u),
                     *stacked_vars],
                    dict(p, jaxpr=known_body, linear=(*k_lin_c, *k_lin_k, *k_lin_x),
                         num_consts=k_consts, num_carry=k_carry))
    # The staged body takes the residuals, then the unknown consts, carry and xs; as a scan
    # body it takes consts (residual consts, unknown consts), carry, then xs (residual xs,
    # stacked residuals, unknown xs).
    uk_c, uk_k = sum(const_uk), sum(carry_uk)
    rc = [r for r, _ in res_consts]
    rx = [r for r, _ in res_xs]
    base = num_res
    order = [*rc, *range(base, base + uk_c), *range(base + uk_c, base + uk_c + uk_k), *rx,
             *staged_stacked, *range(base + uk_c + uk_k, len(staged.in_avals))]
    staged_body = cf.permute(staged, order)
    uk_outer = [v for v, u in zip(eqn.invars, body_uk, strict=True) if u]
    ins = [*(v for _, v in res_consts), *uk_outer[:uk_c], *uk_outer[uk_c:uk_c + uk_k],
           *(v for _, v in res_xs), *stacked_vars, *uk_outer[uk_c + uk_k:]]
    lin_c, lin_k, lin_x = _split3(p["linear"], num_consts, num_carry)
    staged_linear = (*[False] * len(rc), *(lin for lin, u in zip(lin_c, const_uk, strict=True)
                                           if u),
                     *(lin for lin, u in zip(lin_k, carry_uk, strict=True) if u),
                     *[False] * (len(rx) + len(stacked)),
                     *(lin for lin, u in zip(lin_x, xs_uk, strict=True) if u))
    staged_eqn = Eqn(scan_p, ins, [v for v, u in zip(eqn.outvars, out_uk, strict=True) if u],
                     dict(p, jaxpr=staged_body, linear=staged_linear,
                          num_consts=len(rc) + uk_c, num_carry=uk_k))
    return known_eqn, staged_eqn


def _invariant_values(kj, k_consts) -> set:
    """The ids of the values of the known body ``kj`` computed from its first ``k_consts``
    inputs (the loop constants), its constvars and literals alone, by pure equations."""
    from ..core.effects import has_effect

    invariant = {id(v) for v in (*kj.constvars, *kj.invars[:k_consts])}
    for e in kj.eqns:
        if not has_effect(e) and all(not isinstance(v, Var) or id(v) in invariant
                                     for v in e.invars):
            invariant.update(id(v) for v in e.outvars)
    return invariant


def _rematerialise(known, staged, num_res, k_consts, remat, res_consts, res_xs, stacked,
                   const_vars):
    """The staged body computing the loop-invariant residuals ``remat`` itself from the
    known loop constants, which become its leading residuals (passed as consts): returns
    ``(staged, num_res, res_consts, res_xs, stacked)`` renumbered."""
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - num_res
    targets = [kj.outvars[n_known_out + r] for r in remat]
    invariant = _invariant_values(kj, k_consts)
    sub = ClosedJaxpr(Jaxpr(kj.constvars, kj.invars[:k_consts], targets,
                            [e for e in kj.eqns if all(id(v) in invariant for v in e.outvars)],
                            check=False), known.consts)
    keep = [r for r in range(num_res) if r not in remat]
    n_uk = len(staged.in_avals) - num_res

    def body(ins):
        consts, rest = ins[:k_consts], ins[k_consts:]
        values = dict(zip(remat, cf.body_fun(sub)(consts), strict=True))
        values.update(zip(keep, rest[:len(keep)], strict=True))
        return cf.body_fun(staged)([*(values[r] for r in range(num_res)), *rest[len(keep):]])

    in_avals = [*(v.aval for v in kj.invars[:k_consts]),
                *(staged.in_avals[r] for r in keep), *staged.in_avals[num_res:]]
    new = cf.derive(body, in_avals, "partial evaluation of scan")
    assert len(new.in_avals) == k_consts + len(keep) + n_uk
    pos = {r: k_consts + i for i, r in enumerate(keep)}
    res_consts = [*((i, v) for i, v in enumerate(const_vars)),
                  *((pos[r], v) for r, v in res_consts)]
    res_xs = [(pos[r], v) for r, v in res_xs]
    return new, k_consts + len(keep), res_consts, res_xs, [pos[r] for r in stacked]


def _scan_transpose(cts, *args, **params):
    return _scan_backward(cts, args, [None] * len(args), **params)


def _scan_transpose_accumulating(cts, args, accs, same, **params):
    """The transpose starting each linear const's accumulator from the one already
    accumulated outside (``ad.accumulating_transpose_rules``), so the loop adds its terms to
    it one by one, as the unrolled loop's backward pass would; the cotangents of the carry
    and xs are added to theirs."""
    from ..ops.elementwise import add

    n, nc = len(args), params["num_consts"]
    lin = [isinstance(a, ad.UndefinedPrimal) for a in args]
    accs = [None if isinstance(a, ad.Zero) else a for a in accs]
    start = [accs[i] if i < nc and lin[i] and same[i] == i else None for i in range(n)]
    got = _scan_backward(cts, args, start, **params)
    out = [None] * n
    for i in range(n):
        ct = None if got[i] is None or isinstance(got[i], ad.Zero) else got[i]
        if not lin[i]:
            continue
        if start[i] is None and same[i] == i and accs[i] is not None:
            ct = accs[i] if ct is None else add(accs[i], ct)
        j = same[i]
        if j == i:
            out[i] = ct
        elif ct is not None:
            out[j] = ct if out[j] is None else add(out[j], ct)
    return out


def _scan_backward(cts, args, acc_start, *, jaxpr, length, linear, num_carry, num_consts,
                   reverse, unroll):
    """The transposed scan; the accumulator of linear const ``i`` starts from
    ``acc_start[i]`` (zeros where None)."""
    consts, carry, xs = _split3(args, num_consts, num_carry)
    const_lin = [isinstance(c, ad.UndefinedPrimal) for c in consts]
    xs_lin = [isinstance(x, ad.UndefinedPrimal) for x in xs]
    # The carry is linear (a defined carry is a known offset: its cotangent is dropped).
    body_lin = const_lin + [True] * num_carry + xs_lin
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    ys_nz = [not isinstance(c, ad.Zero) for c in ct_ys]
    t_body = cf.transpose_jaxpr(jaxpr, body_lin, [True] * num_carry + ys_nz,
                                "transpose of scan", acc_linear=const_lin + [False] * (
                                    num_carry + len(xs)))
    # t_body: (defined consts, defined xs, ct carry, ct ys, const accumulators) ->
    # (ct of linear consts, ct carry, ct of linear xs); as a scan body: consts = defined
    # consts; carry = (const accumulators, ct carry); xs = (defined xs, ct ys).
    n_dc, n_dx = const_lin.count(False), xs_lin.count(False)
    n_lc, n_ys = sum(const_lin), sum(ys_nz)
    ins = [*range(n_dc), *range(n_dc + n_dx + num_carry + n_ys, n_dc + n_dx + num_carry + n_ys
                                + n_lc),
           *range(n_dc + n_dx, n_dc + n_dx + num_carry), *range(n_dc, n_dc + n_dx),
           *range(n_dc + n_dx + num_carry, n_dc + n_dx + num_carry + n_ys)]
    t_body = cf.permute(t_body, ins)
    carry_avals = jaxpr.in_avals[num_consts:num_consts + num_carry]
    c_init = [ad.instantiate(c) if isinstance(c, ad.Zero) else c for c in ct_carry]
    c_init = [cf.cast_like(c, a) for c, a in zip(c_init, carry_avals, strict=True)]
    acc_init = [ad.zeros_like_aval(c.aval) if a is None else cf.cast_like(a, c.aval)
                for c, a in zip(consts, acc_start[:num_consts], strict=True)
                if isinstance(c, ad.UndefinedPrimal)]
    t_args = [*(c for c in consts if not isinstance(c, ad.UndefinedPrimal)), *acc_init,
              *c_init, *(x for x in xs if not isinstance(x, ad.UndefinedPrimal)),
              *(c for c in ct_ys if not isinstance(c, ad.Zero))]
    outs = scan_p.bind(*t_args, jaxpr=t_body, length=length,
                       linear=(*[False] * n_dc, *[True] * (n_lc + num_carry),
                               *[False] * n_dx, *[True] * n_ys),
                       num_carry=n_lc + num_carry, num_consts=n_dc, reverse=not reverse,
                       unroll=unroll)
    ct_consts, ct_carry_in, ct_xs = (iter(outs[:n_lc]), outs[n_lc:n_lc + num_carry],
                                     iter(outs[n_lc + num_carry:]))
    res = [next(ct_consts) if lin else None for lin in const_lin]
    res += [ct if isinstance(c, ad.UndefinedPrimal) else None
            for c, ct in zip(carry, ct_carry_in, strict=True)]
    res += [next(ct_xs) if lin else None for lin in xs_lin]
    return res


def _scan_batch(vals, dims, *, trace, jaxpr, length, linear, num_carry, num_consts, reverse,
                unroll):
    size = trace.axis_size
    b = [d is not batching.not_mapped for d in dims]
    const_b, carry_b, xs_b = _split3(b, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:
        _, out_b = cf.batch_jaxpr(jaxpr, const_b + carry_b + xs_b, carry_b + [False] * n_ys,
                                  trace, "vmap of scan")
        new = [x or y for x, y in zip(carry_b, out_b[:num_carry], strict=True)]
        if new == carry_b:
            break
        carry_b = new
    body, out_b = cf.batch_jaxpr(jaxpr, const_b + carry_b + xs_b, carry_b + [False] * n_ys,
                                 trace, "vmap of scan")
    vc, vk, vx = _split3(vals, num_consts, num_carry)
    dc, dk, dx = _split3(dims, num_consts, num_carry)
    args = [*cf.batch_operands(vc, dc, const_b, size), *cf.batch_operands(vk, dk, carry_b, size),
            *cf.batch_operands(vx, dx, xs_b, size, axis=1)]
    outs = scan_p.bind(*args, jaxpr=body, length=length, linear=linear, num_carry=num_carry,
                       num_consts=num_consts, reverse=reverse, unroll=unroll)
    out_dims = [0 if x else batching.not_mapped for x in carry_b]
    out_dims += [1 if x else batching.not_mapped for x in out_b[num_carry:]]
    return outs, out_dims


_scan_batch.needs_trace = True
ad.jvp_rules[scan_p] = _scan_jvp
ad.partial_eval_eqn_rules[scan_p] = _scan_partial_eval
ad.transpose_rules[scan_p] = _scan_transpose
ad.accumulating_transpose_rules[scan_p] = _scan_transpose_accumulating
ad.not_forwarding.add(scan_p)
batching.batching_rules[scan_p] = _scan_batch

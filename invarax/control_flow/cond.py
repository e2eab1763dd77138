"""The ``cond`` primitive: run one of several closed jaxprs (``branches``), chosen by an index.

``cond[branches=(b0, b1, ...)] index *operands`` runs ``branches[index]`` on the operands
(``lax.cond`` and ``lax.switch`` clamp the index first, as JAX). Every branch has the same
input and output types. Rules:

- JVP: one ``cond`` of the branches' JVPs, over the primals and the tangents that are
  nonzero in some branch's view; output tangents nonzero in any branch are instantiated.
- partial evaluation: each branch is split into a known and a staged part; every known
  branch returns the residuals of all branches (zeros in the others' slots), so the
  staged ``cond`` takes them all and picks its own by the same index.
- transpose: one ``cond`` of the branches' backward passes.
- batching: an unbatched index keeps one ``cond`` of the batched branches; a batched
  index runs every branch on the whole batch and selects each example's result with
  ``select_n`` (JAX's semantics: each output is bitwise the chosen branch's).
"""

from __future__ import annotations

from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import ad, batching
from . import common as cf

cond_p = Primitive("cond", multiple_results=True)


def _cond_impl(index, *operands, branches):
    return cf.run_body(branches[int(index)])(*operands)


def _cond_abstract_eval(index, *operands, branches):
    if index.shape != () or index.dtype.name != "int32":
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for b in branches:
        if len(b.in_avals) != len(operands) or not all(
                cf.typematch(a, o) for a, o in zip(b.in_avals, operands, strict=True)):
            raise TypeError(
                f"internal error: a cond branch takes {[a.str_short() for a in b.in_avals]}, "
                f"given {[a.str_short() for a in operands]}")
    return _joined_out_avals(branches)


def _joined_out_avals(branches):
    """The branches' output avals (weakly typed only where every branch's output is)."""
    first = branches[0].out_avals
    for b in branches[1:]:
        if len(b.out_avals) != len(first) or not all(
                cf.typematch(a, o) for a, o in zip(b.out_avals, first, strict=True)):
            raise TypeError(
                "internal error: cond branches return "
                f"{[[a.str_short() for a in b.out_avals] for b in branches]}")
    return [a.update(weak_type=all(b.out_avals[i].weak_type for b in branches))
            for i, a in enumerate(first)]


cond_p.def_impl(_cond_impl)
cond_p.def_abstract_eval(_cond_abstract_eval)
register_lowering(cond_p)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nonzero = [not isinstance(t, ad.Zero) for t in tangents[1:]]
    n_out = len(branches[0].out_avals)
    out_nz = [False] * n_out
    for b in branches:
        out_nz = [a or z for a, z in zip(out_nz, cf.jvp_nonzeros(b, nonzero, "jvp of cond"),
                                         strict=True)]
    jvps = tuple(cf.jvp_jaxpr(b, nonzero, out_nz, "jvp of cond")[0] for b in branches)
    nz_tangents = [t for t in tangents[1:] if not isinstance(t, ad.Zero)]
    outs = cond_p.bind(index, *ops, *nz_tangents, branches=jvps)
    touts = iter(outs[n_out:])
    avals = _joined_out_avals(branches)
    return outs[:n_out], [next(touts) if nz else ad.Zero(ad.tangent_aval(a))
                          for a, nz in zip(avals, out_nz, strict=True)]


def _cond_partial_eval(eqn, unknown):
    from ..core.ir import Eqn, Var

    branches = eqn.params["branches"]
    if unknown[0]:
        return None, eqn  # an unknown index: nothing can run before it is known
    ops_uk = list(unknown[1:])
    n_out = len(eqn.outvars)
    out_uk = [False] * n_out
    for b in branches:
        out_uk = [a or u for a, u in zip(out_uk, cf.partial_eval_jaxpr(b, ops_uk, out_uk)[2],
                                         strict=True)]
    splits = [cf.partial_eval_jaxpr(b, ops_uk, out_uk) for b in branches]
    if all(out_uk) and all(s[3] == 0 for s in splits):
        return None, eqn
    res_avals = [k.out_avals[out_uk.count(False):] for k, _, _, _ in splits]
    known_branches = tuple(_with_all_residuals(k, i, res_avals, out_uk.count(False))
                           for i, (k, _, _, _) in enumerate(splits))
    all_res = [a for avals in res_avals for a in avals]
    staged_branches = tuple(_reading_own_residuals(s, i, res_avals)
                            for i, (_, s, _, _) in enumerate(splits))
    index = eqn.invars[0]
    known_ins = [v for v, u in zip(eqn.invars[1:], ops_uk, strict=True) if not u]
    res_vars = [Var(a) for a in all_res]
    known_outs = [v for v, u in zip(eqn.outvars, out_uk, strict=True) if not u]
    known_eqn = Eqn(cond_p, [index, *known_ins], known_outs + res_vars,
                    dict(branches=known_branches))
    staged_eqn = None
    if any(out_uk):
        uk_ins = [v for v, u in zip(eqn.invars[1:], ops_uk, strict=True) if u]
        staged_eqn = Eqn(cond_p, [index, *res_vars, *uk_ins],
                         [v for v, u in zip(eqn.outvars, out_uk, strict=True) if u],
                         dict(branches=staged_branches))
    return known_eqn, staged_eqn


def _with_all_residuals(known, i, res_avals, n_known_out):
    """Branch ``i``'s known part, returning zeros for the other branches' residuals."""
    def fun(ins):
        outs = cf.body_fun(known)(ins)
        res = []
        for j, avals in enumerate(res_avals):
            if j == i:
                res += [cf.cast_like(o, a) for o, a in
                        zip(outs[n_known_out:], avals, strict=True)]
            else:
                res += [ad.zeros_like_aval(a) for a in avals]
        return [*outs[:n_known_out], *res]

    return cf.derive(fun, known.in_avals, "partial evaluation of cond")


def _reading_own_residuals(staged, i, res_avals):
    """Branch ``i``'s staged part, taking every branch's residuals and reading its own."""
    before = sum(len(a) for a in res_avals[:i])
    n_all = sum(len(a) for a in res_avals)
    mine = len(res_avals[i])

    def fun(ins):
        return cf.body_fun(staged)([*ins[before:before + mine], *ins[n_all:]])

    avals = [a for avals in res_avals for a in avals] + staged.in_avals[mine:]
    return cf.derive(fun, avals, "partial evaluation of cond")


def _cond_transpose(cts, index, *ops, branches):
    if isinstance(index, ad.UndefinedPrimal):
        raise AssertionError("internal error: the index of a cond cannot be linear")
    linear = [isinstance(o, ad.UndefinedPrimal) for o in ops]
    ct_nz = [not isinstance(c, ad.Zero) for c in cts]
    if not any(ct_nz):
        return [None] * (1 + len(ops))
    t_branches = tuple(cf.transpose_jaxpr(b, linear, ct_nz, "transpose of cond")
                       for b in branches)
    defined = [o for o in ops if not isinstance(o, ad.UndefinedPrimal)]
    outs = iter(cond_p.bind(index, *defined, *(c for c in cts if not isinstance(c, ad.Zero)),
                            branches=t_branches))
    return [None, *(next(outs) if lin else None for lin in linear)]


def _cond_batch(vals, dims, *, trace, branches):
    from ..ops.elementwise import select_n
    from ..ops.shape import broadcast_in_dim

    size = trace.axis_size
    index, ops = vals[0], vals[1:]
    batched = [d is not batching.not_mapped for d in dims[1:]]
    ops = cf.batch_operands(ops, dims[1:], batched, size)
    if dims[0] is batching.not_mapped:
        n_out = len(branches[0].out_avals)
        out_b = [False] * n_out
        for b in branches:
            out_b = [a or o for a, o in zip(out_b, cf.batch_jaxpr(
                b, batched, out_b, trace, "vmap of cond")[1], strict=True)]
        new = tuple(cf.batch_jaxpr(b, batched, out_b, trace, "vmap of cond")[0]
                    for b in branches)
        outs = cond_p.bind(index, *ops, branches=new)
        return outs, [0 if b else batching.not_mapped for b in out_b]
    # A batched index: every branch runs on the whole batch; select each example's result.
    index = batching.moveaxis(index, dims[0], 0)
    results = []
    for b in branches:
        jaxpr, _ = cf.batch_jaxpr(b, batched, [True] * len(b.out_avals), trace,
                                  "vmap of cond")
        results.append(cf.body_fun(jaxpr)(ops))
    outs = []
    for cases in zip(*results, strict=True):
        which = broadcast_in_dim(index, cases[0].shape, (0,))
        outs.append(select_n(which, *cases))
    return outs, [0] * len(outs)


_cond_batch.needs_trace = True
ad.jvp_rules[cond_p] = _cond_jvp
ad.partial_eval_eqn_rules[cond_p] = _cond_partial_eval
ad.transpose_rules[cond_p] = _cond_transpose
batching.batching_rules[cond_p] = _cond_batch

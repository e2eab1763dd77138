"""``create_vprim``: a primitive whose batching rule is derived from its other rules, as
Equinox's.

Batched, a vprim binds ``vprim[prim=... axis_size batch_axes params]``, whose impl,
abstract eval, JVP and transpose are the primitive's own rules run under ``vmap`` (its
outputs batched along axis 0). ``vprim`` is itself a vprim, so nested ``vmap``s nest.
"""

from __future__ import annotations

import functools

from ...core.lowering import register_lowering
from ...core.trace import Primitive
from ...interpreters import ad, batching
from ._primitive import run_eagerly

_RULES = {}  # prim -> (impl, abstract_eval, jvp, transpose), as created


def create_vprim(name: str, impl, abstract_eval, jvp, transpose) -> Primitive:
    """A ``multiple_results`` primitive ``name`` with these rules and a batching rule that
    runs them under ``vmap``.

    Arguments:
        name: the primitive's name (unique).
        impl, abstract_eval: ``rule(*operands, **params)``, as ``def_impl`` takes.
        jvp: ``rule(primals, tangents, **params)``; transpose:
            ``rule(cts, *operands, **params)`` (invarax's ``ad`` conventions, JAX's).

    Returns:
        The primitive. Rules written with ``vmap``-able operations batch correctly; the
        impl used when batched is the one given here (a later ``def_impl`` changes only
        the unbatched impl, as in Equinox).

    Example:
        >>> from invarax.core.trace import PRIMITIVES
        >>> from invarax.interpreters import ad
        >>> def impl(x): return [jnp.cumsum(x)]
        >>> def jvp(p, t): return cumsum_p.bind(*p), cumsum_p.bind(ad.instantiate(t[0]))
        >>> cumsum_p = create_vprim("cumsum_example", impl, lambda x: [x], jvp, None)
        >>> vmap(lambda x: cumsum_p.bind(x)[0])(jnp.ones((2, 3)))
        Array([[1., 2., 3.],
               [1., 2., 3.]], dtype=float32)
        >>> del PRIMITIVES["cumsum_example"]
    """
    prim = Primitive(name, multiple_results=True)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    ad.jvp_rules[prim] = jvp
    if transpose is not None:
        ad.transpose_rules[prim] = transpose
    register_lowering(prim)

    def batch_rule(vals, dims, *, trace, **params):
        out = vprim_p.bind(*vals, prim=prim, axis_size=trace.axis_size,
                           axis_name=trace.axis_name, batch_axes=tuple(dims),
                           params=tuple(params.items()))
        return out, [0] * len(out)

    batch_rule.needs_trace = True
    batching.batching_rules[prim] = batch_rule
    _RULES[prim] = (impl, abstract_eval, jvp, transpose)
    return prim


def _mapped(aval, axis):
    if axis is batching.not_mapped:
        return aval
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def _unmapped(aval, size):
    return aval.update(shape=(size, *aval.shape))


def _to_front(outs, dims, size):
    return [batching.move_batch_axis(o, d, 0, size) for o, d in zip(outs, dims, strict=True)]


def _vprim_impl(*inputs, prim, axis_size, axis_name, batch_axes, params):
    impl = functools.partial(_RULES[prim][0], **dict(params))

    def run(values):
        outs, dims = batching.batch_flat(lambda ins: impl(*ins), values, list(batch_axes),
                                         axis_size, axis_name, f"vmap of {prim}")
        return _to_front(outs, dims, axis_size)

    return run_eagerly(run, inputs)


def _vprim_abstract_eval(*avals, prim, axis_size, axis_name, batch_axes, params):
    mapped = [_mapped(a, b) for a, b in zip(avals, batch_axes, strict=True)]
    outs = _RULES[prim][1](*mapped, **dict(params))
    return [_unmapped(a, axis_size) for a in outs]


def _vprim_jvp(primals, tangents, *, prim, axis_size, axis_name, batch_axes, params):
    jvp = _RULES[prim][2]
    n = len(primals)
    nonzero = [not isinstance(t, ad.Zero) for t in tangents]
    zero_out = []

    def run(ins):
        it = iter(ins[n:])
        ts = [next(it) if nz else ad.Zero(_mapped(t.aval, b))
              for t, nz, b in zip(tangents, nonzero, batch_axes, strict=True)]
        outs, touts = jvp(list(ins[:n]), ts, **dict(params))
        zero_out[:] = [isinstance(t, ad.Zero) for t in touts]
        return [*outs, *(t for t in touts if not isinstance(t, ad.Zero))]

    args = [*primals, *(t for t, nz in zip(tangents, nonzero, strict=True) if nz)]
    dims = [*batch_axes, *(b for b, nz in zip(batch_axes, nonzero, strict=True) if nz)]
    outs, out_dims = batching.batch_flat(run, args, dims, axis_size, axis_name,
                                         f"vmap of the JVP of {prim}")
    outs = _to_front(outs, out_dims, axis_size)
    n_out = len(zero_out)
    primals_out, it = outs[:n_out], iter(outs[n_out:])
    return primals_out, [ad.Zero(ad.tangent_aval(p.aval)) if z else next(it)
                         for p, z in zip(primals_out, zero_out, strict=True)]


def _vprim_transpose(cts, *inputs, prim, axis_size, axis_name, batch_axes, params):
    transpose = _RULES[prim][3]
    if transpose is None:
        raise NotImplementedError(f"transpose rule for '{prim}' is not implemented")
    undefined = [isinstance(x, ad.UndefinedPrimal) for x in inputs]
    nonzero = [not isinstance(c, ad.Zero) for c in cts]
    flows = []  # per undefined input: whether a cotangent came back

    def run(ins):
        it = iter(ins)
        cs = [next(it) if nz else ad.Zero(_mapped(c.aval, 0))
              for c, nz in zip(cts, nonzero, strict=True)]
        vals = [ad.UndefinedPrimal(_mapped(x.aval, b)) if u else next(it)
                for x, u, b in zip(inputs, undefined, batch_axes, strict=True)]
        got = [r for r, u in zip(transpose(cs, *vals, **dict(params)), undefined, strict=True)
               if u]
        flows[:] = [r is not None and not isinstance(r, ad.Zero) for r in got]
        return [r for r, f in zip(got, flows, strict=True) if f]

    args = [*(c for c, nz in zip(cts, nonzero, strict=True) if nz),
            *(x for x, u in zip(inputs, undefined, strict=True) if not u)]
    dims = [*[0] * sum(nonzero), *(b for b, u in zip(batch_axes, undefined, strict=True)
                                   if not u)]
    outs, out_dims = batching.batch_flat(run, args, dims, axis_size, axis_name,
                                         f"vmap of the transpose of {prim}")
    results = iter(zip(outs, out_dims, strict=True))
    flow = iter(flows)
    cts_in = []
    for u, b in zip(undefined, batch_axes, strict=True):
        if not u or not next(flow):
            cts_in.append(None)
            continue
        ct, d = next(results)
        if b is batching.not_mapped:  # an unbatched input: its examples' cotangents add up
            from ...ops.reductions import reduce_sum

            cts_in.append(ct if d is batching.not_mapped else reduce_sum(ct, (d,)))
        else:
            cts_in.append(batching.move_batch_axis(ct, d, b, axis_size))
    return cts_in


vprim_p = create_vprim("vprim", _vprim_impl, _vprim_abstract_eval, _vprim_jvp,
                       _vprim_transpose)

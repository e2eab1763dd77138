"""``custom_vjp``: a function with its own forward and backward passes.

The decorated function is traced to a jaxpr and bound as one ``custom_vjp_call``; its JVP
runs ``fwd`` for the output and the residuals, and emits the tangent through the linear
primitive ``custom_lin``, whose transpose calls ``bwd``. ``custom_lin`` cannot run
forwards: forward mode raises, as in JAX. Under a JVP trace that owns an argument ``fwd``
runs directly on the primal values (``vjp_by_rules``).
"""


from __future__ import annotations

from ..core.api_util import fun_name
from ..core.array import Array, to_array
from ..core.lowering import register_lowering
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ..core.trace import EVAL_TRACE, Primitive, Tracer, current_trace, set_current_trace
from ..interpreters import ad, batching
from ..interpreters.batching import move_batch_axis, not_mapped
from ..ops.reductions import reduce_sum
from ._autodiff import wraps
from ._custom_common import (
    TRACE,
    CustomVJPPrimal,
    Split,
    SymbolicZero,
    batch_as,
    batch_call_jaxpr,
    batched_name,
    check_no_closure_tangents,
    check_outputs,
    def_call,
    direct_call,
    nondiff_positions,
    primals_and_tangents,
    resolve_kwargs,
    rule_tangents,
)

# ---------------------------------------------------------------------------------------
# custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
def_call(custom_vjp_call_p, "call_jaxpr")
custom_lin_p = Primitive("custom_lin", multiple_results=True)

_NO_FORWARD_MODE = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_lin_impl(*args, **params):
    raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_jvp(primals, tangents, **params):
    raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    # ``bwd`` takes the cotangents with their symbolic zeros (``ad.Zero``)
    return [None] * num_res + bwd(args[:num_res], list(cts))


def _batched_bwd(bwd, res_dims, in_dims, trace):
    """``bwd(res, cts)`` for residuals batched at ``res_dims`` (a list, read when called)
    and cotangents batched at 0: each input's cotangent batched at its ``in_dims`` entry,
    summed over the examples for an unbatched input."""
    zeros = []
    ct_zeros = []  # per cotangent: its per-example Zero, or None (batched at 0, given)

    def flat(ins):
        given = iter(ins[len(res_dims):])
        cts = [next(given) if z is None else z for z in ct_zeros]
        cts_in = bwd(ins[: len(res_dims)], cts)
        zeros[:] = [ct.aval if isinstance(ct, ad.Zero) else None for ct in cts_in]
        return [ct for ct in cts_in if not isinstance(ct, ad.Zero)]

    def batched_bwd(res, cts):
        size = trace.axis_size
        ct_zeros[:] = [ad.Zero(ct.aval.update(shape=ct.aval.shape[1:]))
                       if isinstance(ct, ad.Zero) else None for ct in cts]
        cts = [ct for ct in cts if not isinstance(ct, ad.Zero)]
        vals, dims = batch_as(trace, flat, [*res, *cts], [*res_dims, *[0] * len(cts)])
        vals, dims = iter(vals), iter(dims)
        out = []
        for zero, d in zip(zeros, in_dims, strict=True):
            if zero is not None:
                out.append(ad.Zero(zero if d is not_mapped else
                                   zero.update(shape=(*zero.shape[:d], size, *zero.shape[d:]))))
                continue
            ct, ct_dim = next(vals), next(dims)
            if d is not_mapped and ct_dim is not not_mapped:
                out.append(reduce_sum(ct, (ct_dim,)))
            else:
                out.append(ct if d is not_mapped else move_batch_axis(ct, ct_dim, d, size))
        return out

    batched_bwd.__name__ = batched_name(bwd)
    return batched_bwd


def _custom_lin_batch(vals, dims, *, trace, num_res, bwd, out_avals):
    # Only ever transposed: the outputs (tangents) are taken as batched, so their
    # cotangents are.
    size = trace.axis_size
    out_avals = tuple(a.update(shape=(size, *a.shape)) for a in out_avals)
    outs = custom_lin_p.bind(*vals, num_res=num_res, out_avals=out_avals,
                             bwd=_batched_bwd(bwd, dims[:num_res], dims[num_res:], trace))
    return outs, [0] * len(outs)


_custom_lin_batch.needs_trace = True
custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(lambda *avals, num_res, bwd, out_avals: list(out_avals))
register_lowering(custom_lin_p)  # its impl raises: custom_vjp has no forward mode
ad.jvp_rules[custom_lin_p] = _custom_lin_jvp
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
batching.batching_rules[custom_lin_p] = _custom_lin_batch


def _custom_vjp_call_jvp(primals, tangents, *, name, call_jaxpr, fwd, bwd, num_consts):
    check_no_closure_tangents(tangents[:num_consts], "custom_vjp", name)
    perturbed = [not isinstance(t, ad.Zero) for t in tangents[num_consts:]]
    outs, res = fwd(primals[num_consts:], perturbed)
    tangents = [ad.instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(ad.tangent_aval(o.aval) for o in outs)
    touts = custom_lin_p.bind(*res, *tangents, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return outs, [t if ad.is_differentiable(t.aval) else ad.Zero(t.aval) for t in touts]


def _custom_vjp_call_batch(vals, dims, *, trace, name, call_jaxpr, fwd, bwd, num_consts):
    body, consts = batch_call_jaxpr(call_jaxpr, vals, dims, trace, f"custom_vjp of {name}")
    num_out = len(call_jaxpr.out_avals)
    in_dims = dims[num_consts:]
    res_dims = []  # the residuals keep their batch axes; batched_fwd records them

    def batched_fwd(primals, perturbed):
        def fwd_flat(ins):
            outs, res = fwd(ins, perturbed)
            return [*outs, *res]

        vals, dims = batch_as(trace, fwd_flat, primals, in_dims)
        res_dims[:] = dims[num_out:]
        outs = [move_batch_axis(v, d, 0, trace.axis_size)
                for v, d in zip(vals[:num_out], dims[:num_out], strict=True)]
        return outs, vals[num_out:]

    batched_fwd.__name__ = batched_name(fwd)
    outs = custom_vjp_call_p.bind(*consts, *vals, name=name, call_jaxpr=body, fwd=batched_fwd,
                                  bwd=_batched_bwd(bwd, res_dims, in_dims, trace),
                                  num_consts=len(consts) + num_consts)
    return outs, [0] * len(outs)


_custom_vjp_call_batch.needs_trace = True
ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
batching.batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch


class custom_vjp:
    """A function with a custom VJP (reverse-mode) rule: ``fwd`` and ``bwd``.

    Forward-mode differentiation (``jvp``, ``jacfwd``) of it raises, as in JAX.

    Arguments:
        fun: the function; its arguments and outputs may be pytrees of arrays.
        nondiff_argnums: positions of arguments that are not differentiated and are not
            arrays (functions, Python numbers, configuration). ``fwd`` takes all the
            arguments as ``fun`` does; ``bwd`` takes these first:
            ``bwd(*nondiff_args, residuals, cotangent)``.

    Returns:
        The decorated function; define its rule with ``defvjp``.

    Example:
        >>> @custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None),
        ...                      lambda res, g: (jnp.clip(g, -1.0, 1.0),))
        >>> grad(lambda x: 3.0 * clip_gradient(x))(2.0)
        Array(1., dtype=float32, weak_type=True)
    """

    def __init__(self, fun, nondiff_argnums=()):
        wraps(fun)(self)
        self._fun = fun
        self._nondiff_argnums = tuple(nondiff_argnums)
        self._fwd = self._bwd = None
        self._symbolic = False

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False):
        """Define the forward and backward rules.

        Arguments:
            fwd: ``fwd(*args) -> (out, residuals)``: the function's output and any pytree
                of arrays that ``bwd`` needs.
            bwd: ``bwd(*nondiff_args, residuals, cotangent) -> tuple``: one cotangent per
                differentiable argument (``None`` for zero), each with its argument's
                structure, shapes and dtypes.
            symbolic_zeros: as JAX's: ``fwd`` receives each leaf of the differentiable
                arguments as a ``CustomVJPPrimal`` (``.value``, and ``.perturbed``:
                whether it is differentiated in this call), and ``bwd`` receives a
                ``SymbolicZero`` for each output whose cotangent is zero (unused).

        Returns:
            None.

        Example:
            >>> f = custom_vjp(lambda x, y: x * y)
            >>> f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (res[1] * g, res[0] * g))
            >>> grad(f, argnums=1)(2.0, 3.0)
            Array(2., dtype=float32, weak_type=True)
        """
        self._fwd, self._bwd, self._symbolic = fwd, bwd, bool(symbolic_zeros)

    def __call__(self, *args, **kwargs):
        name = self.__name__
        if self._fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name}; use defvjp.")
        args = resolve_kwargs(self._fun, args, kwargs)
        nondiff = nondiff_positions(self._nondiff_argnums, args, name)
        for i in nondiff:
            if any(isinstance(x, Tracer) for x in tree_flatten(args[i])[0]):
                raise TypeError(
                    f"argument {i} of custom_vjp function {name} is marked non-differentiable "
                    "by nondiff_argnums but is a traced array. nondiff_argnums is for values "
                    "that are not arrays (functions, Python numbers); pass arrays as ordinary "
                    "arguments (bwd may return None as their cotangent)."
                )
        if current_trace() is EVAL_TRACE:
            return self._fun(*args)
        direct = direct_call(self._fun, args, nondiff,
                             lambda trace: vjp_by_rules(self, trace, args, nondiff))
        if direct is not TRACE:
            return direct
        split = Split(args, nondiff)
        jaxpr, consts, leaves, out_tree = split.trace(self._fun, f"custom_vjp of {name}")
        fwd, bwd = self._fwd, self._bwd
        fwd_what = f"the fwd rule {fun_name(fwd)} of custom_vjp function {name}"

        res_tree = []  # the residuals' structure, recorded by flat_fwd for flat_bwd

        def flat_fwd(primals, perturbed):
            res = fwd(*split.full(split.unflatten(_rule_primals(primals, perturbed,
                                                                self._symbolic))))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"{fwd_what} must return a pair (output, residuals), got "
                                f"{type(res).__name__}")
            outs = check_outputs(res[0], out_tree, jaxpr.out_avals, f"the output of {fwd_what}")
            res_leaves, tree = tree_flatten(res[1])
            res_tree[:] = [tree]
            return outs, [to_array(r, f"a residual of {fwd_what}") for r in res_leaves]

        def flat_bwd(res, cts):
            cts_in = bwd(*split.nondiff, tree_unflatten(res_tree[0], res),
                         tree_unflatten(out_tree, rule_tangents(cts, self._symbolic)))
            return _check_bwd_output(cts_in, split, leaves, f"{fun_name(bwd)} of {name}")

        flat_fwd.__name__, flat_bwd.__name__ = fun_name(fwd), fun_name(bwd)
        outs = custom_vjp_call_p.bind(*consts, *leaves, name=name, call_jaxpr=jaxpr,
                                      fwd=flat_fwd, bwd=flat_bwd, num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _rule_primals(primals, perturbed, symbolic: bool) -> list:
    """The primal leaves ``fwd`` receives: as they are, or with ``symbolic_zeros`` each as a
    ``CustomVJPPrimal`` saying whether it is differentiated."""
    if not symbolic:
        return list(primals)
    return [CustomVJPPrimal(p, bool(d)) for p, d in zip(primals, perturbed, strict=True)]


def _check_bwd_output(cts_in, split: Split, leaves, who):
    """The flat cotangents of the differentiable leaves (``Zero`` where none) from ``bwd``."""
    n = len(split.diff)
    if isinstance(cts_in, list) and len(cts_in) == n:
        cts_in = tuple(cts_in)
    if not isinstance(cts_in, tuple) or len(cts_in) != n:
        if isinstance(cts_in, tuple):
            got = f"a tuple of length {len(cts_in)}"
        elif isinstance(cts_in, Array):
            got = "an array (for one argument, return a tuple of one: (ct,))"
        else:
            got = f"a {type(cts_in).__name__}"
        raise TypeError(
            f"the custom_vjp bwd rule {who} must return a tuple with one cotangent per "
            f"differentiable argument ({n}: arguments {split.diff}), but it returned {got}"
        )
    flat, avals = [], iter(x.aval for x in leaves)
    for pos, ct in zip(split.diff, cts_in, strict=True):
        arg = split.args[pos]
        paths = [p for p, _ in tree_flatten_with_path(arg)[0]]
        if ct is None:
            flat += [ad.Zero(ad.tangent_aval(next(avals))) for _ in paths]
            continue
        arg_tree = tree_flatten(arg)[1]
        try:
            subtrees = arg_tree.flatten_up_to(ct)
            if any(sub is not None and tree_flatten(sub)[0] != [sub] for sub in subtrees):
                raise ValueError("a container where the argument has an array")
        except ValueError as e:
            raise TypeError(
                f"the custom_vjp bwd rule {who} returned a cotangent for argument {pos} that "
                f"does not have the argument's structure {arg_tree}: {e}"
            ) from None
        for path, sub in zip(paths, subtrees, strict=True):
            aval = next(avals)
            if sub is None or isinstance(sub, SymbolicZero) or not ad.is_differentiable(aval):
                flat.append(ad.Zero(ad.tangent_aval(aval)))
                continue
            sub = to_array(sub, f"the cotangent of argument {pos}{keystr(path)} from {who}")
            if sub.shape != aval.shape or sub.dtype != aval.dtype:
                raise ValueError(
                    f"the custom_vjp bwd rule {who} returned a cotangent of shape/dtype "
                    f"{sub.aval.str_short()} for argument {pos}{keystr(path)}, which has "
                    f"shape/dtype {aval.str_short()}; each cotangent must match its argument"
                )
            flat.append(sub)
    return flat


def vjp_by_rules(f, trace, args, nondiff):
    """The outputs of ``f(*args)`` as ``trace``'s tracers: ``fwd`` called on the primals in
    the parent trace, the tangent through ``custom_lin`` (whose transpose calls ``bwd``), as
    JAX's ``process_custom_vjp_call`` of a JVP trace."""
    split = Split(args, nondiff)
    name, fwd, bwd = f.__name__, f._fwd, f._bwd
    primals, tangents, tree = primals_and_tangents(trace, split, name)
    perturbed = [not isinstance(t, ad.Zero) for t in tangents]
    tangents = [ad.instantiate(t) for t in tangents]
    fwd_what = f"the fwd rule {fun_name(fwd)} of custom_vjp function {name}"
    with set_current_trace(trace.parent):
        res = fwd(*split.full(tree_unflatten(tree, _rule_primals(primals, perturbed,
                                                                 f._symbolic))))
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(f"{fwd_what} must return a pair (output, residuals), got "
                            f"{type(res).__name__}")
        out_leaves, out_tree = tree_flatten(res[0])
        outs = [to_array(x, f"the output of {fwd_what}") for x in out_leaves]
        res_leaves, res_tree = tree_flatten(res[1])
        res_leaves = [to_array(r, f"a residual of {fwd_what}") for r in res_leaves]

        def flat_bwd(res, cts):
            cts_in = bwd(*split.nondiff, tree_unflatten(res_tree, res),
                         tree_unflatten(out_tree, rule_tangents(cts, f._symbolic)))
            return _check_bwd_output(cts_in, split, primals, f"{fun_name(bwd)} of {name}")

        flat_bwd.__name__ = fun_name(bwd)
        out_avals = tuple(ad.tangent_aval(o.aval) for o in outs)
        touts = custom_lin_p.bind(*res_leaves, *tangents, num_res=len(res_leaves), bwd=flat_bwd,
                                  out_avals=out_avals)
    touts = [t if ad.is_differentiable(t.aval) else ad.Zero(t.aval) for t in touts]
    return tree_unflatten(out_tree, [trace.pack(o, t) for o, t in zip(outs, touts, strict=True)])

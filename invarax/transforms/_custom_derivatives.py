"""Custom derivative rules (``custom_jvp``, ``custom_vjp``), and the call-primitive helpers
they share with rematerialization (``checkpoint``, in ``_checkpoint``).

Each decorated function is traced to a jaxpr and bound as one call primitive whose
parameters carry the jaxpr and the user's rules, so staging (``make_jaxpr``, ``jit``)
shows one equation, eager evaluation and ``jit`` run the function's own ops, and the
differentiation rules below take over under ``jvp``/``linearize``/``grad``:

- ``custom_jvp_call``: the JVP calls the user's rule (tangents instantiated) and checks
  what it returns against the function's outputs.
- ``custom_vjp_call``: the JVP runs ``fwd`` for the output and the residuals, and emits
  the tangent through the linear primitive ``custom_lin``, whose transpose calls
  ``bwd``. ``custom_lin`` cannot run forwards: forward mode raises, as in JAX.

Under ``vmap`` each call stays one call of the same primitive, so the rules survive in
either order (``vmap(grad(f))``, ``grad(vmap(f))``): the body is batched into a new
jaxpr and each rule is wrapped into its batched version (``batch_flat`` of it, outputs
batched at axis 0). Every output of a batched call is batched at axis 0. A cotangent
that ``bwd`` returns for an unbatched input is summed over the examples, as JAX does.

A function's closed-over values (constants, and tracers of enclosing transformations)
become leading operands of its call (``num_consts`` of them), so the traced jaxpr never
holds a tracer. A closed-over value must not be one being differentiated: pass it as an
argument instead (JAX raises too).
"""

from __future__ import annotations

import functools
import inspect

from ..compiler.call import jit_p
from ..core.api_util import fun_name
from ..core.array import Array, to_array
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten
from ..core.trace import EVAL_TRACE, Primitive, Tracer, current_trace
from ..interpreters import ad, batching
from ..interpreters.batching import move_batch_axis, not_mapped
from ..interpreters.staging import trace_fun, trace_to_jaxpr
from ..ops.elementwise import add, stop_gradient
from ..ops.reductions import reduce_sum
from ._autodiff import wraps
from ._custom_direct import TRACE, direct_call, jvp_by_rule, vjp_by_rules

# ---------------------------------------------------------------------------------------
# Shared: closure conversion, the call primitives' impl and abstract eval, arguments


def _closure_convert(closed: ClosedJaxpr):
    """``(jaxpr, consts)``: ``closed`` with its constants turned into leading inputs."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns), []), closed.consts


def _def_call(prim: Primitive, jaxpr_param: str):
    """Impl (the body, compiled as ``jit`` compiles it) and abstract eval of a call primitive."""

    def impl(*args, **params):
        return jit_p.impl(*args, name=prim.name, jaxpr=params[jaxpr_param])

    def abstract_eval(*avals, **params):
        jaxpr = params[jaxpr_param]
        if list(avals) != jaxpr.in_avals:
            raise TypeError(
                f"internal error: {prim} was traced for {[a.str_short() for a in jaxpr.in_avals]}"
                f" but bound to {[a.str_short() for a in avals]}"
            )
        return jaxpr.out_avals

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)


def _batch_as(trace, fun, ins, dims):
    """``batch_flat`` of ``fun`` over the axis of ``trace``, the ``BatchTrace`` that
    batched a call, whose tracers ``fun`` may close over (a rule defined inside the vmapped
    function); this may run after that trace has ended."""
    return batching.batch_flat(fun, ins, dims, trace.axis_size, trace.axis_name,
                               trace.description, trace.tag)


def _batched(fun, dims, trace):
    """``fun`` (flat lists) on inputs batched at ``dims``; its outputs batched at axis 0."""

    def batched(ins):
        outs, out_dims = _batch_as(trace, fun, ins, dims)
        return [move_batch_axis(o, d, 0, trace.axis_size)
                for o, d in zip(outs, out_dims, strict=True)]

    return batched


def _batch_call_jaxpr(jaxpr: ClosedJaxpr, vals, dims, trace, what):
    """``(jaxpr, consts)``: ``jaxpr`` batched for operands ``vals`` (batched at ``dims``),
    closure-converted; its outputs are batched at axis 0."""
    body = _batched(lambda ins: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *ins), dims, trace)
    closed = trace_to_jaxpr(body, [v.aval for v in vals], f"{trace.description} of {what}")
    return _closure_convert(closed)


def _batched_name(fun) -> str:
    return f"vmap({fun_name(fun)})"


def _resolve_kwargs(fun, args, kwargs):
    """All arguments as positional ones, defaults included (custom rules see them so)."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except ValueError:  # no signature (a builtin): positional arguments only
        if kwargs:
            raise TypeError(f"keyword arguments to {fun_name(fun)} could not be resolved") from None
        return args
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"keyword arguments {sorted(bound.kwargs)} of {fun_name(fun)} could not be resolved "
            "to positions; custom_jvp/custom_vjp functions take positional arguments"
        )
    return bound.args


def _nondiff_positions(nondiff_argnums, args, name):
    """The positions ``nondiff_argnums`` names, in its order (the rules receive them so)."""
    positions = []
    for i in nondiff_argnums:
        if not -len(args) <= i < len(args):
            raise TypeError(
                f"nondiff_argnums={tuple(nondiff_argnums)} is out of range for {name} called "
                f"with {len(args)} argument(s)"
            )
        if i % len(args) not in positions:
            positions.append(i % len(args))
    return positions


class _Split:
    """One call's arguments: the differentiable ones (traced) and the others (Python values)."""

    def __init__(self, args, nondiff):
        self.args = args
        self.diff = [i for i in range(len(args)) if i not in nondiff]
        self.nondiff = [args[i] for i in nondiff]
        self.tree = tree_flatten(([args[i] for i in self.diff], {}))[1]

    def full(self, diff_args):
        """All arguments, with ``diff_args`` in the differentiable positions."""
        full = list(self.args)
        for i, v in zip(self.diff, diff_args, strict=True):
            full[i] = v
        return full

    def unflatten(self, leaves):
        """The differentiable arguments (a list) from their flat leaves."""
        return tree_unflatten(self.tree, leaves)[0]

    def trace(self, fun, description):
        """Trace ``fun`` of all arguments over the differentiable ones.

        Returns ``(jaxpr, consts, leaves, out_tree)``: the closure-converted jaxpr, its
        leading operands, the differentiable leaves as arrays, and the output structure.
        """
        closed, leaves, out_tree = trace_fun(
            lambda *d: fun(*self.full(d)), [self.args[i] for i in self.diff], {}, description
        )
        jaxpr, consts = _closure_convert(closed)
        return jaxpr, consts, leaves, out_tree


def _check_no_closure_tangents(tangents, kind, name):
    if any(not isinstance(t, ad.Zero) for t in tangents):
        raise TypeError(
            f"{kind} function {name} closes over a value that is being differentiated; its "
            "derivative would be ignored. Pass the value as an argument of the function."
        )


def _check_outputs(outs, out_tree, avals, what):
    """Flat arrays of the pytree ``outs``, checked against the structure and shapes/dtypes."""
    leaves, tree = tree_flatten(outs)
    if tree != out_tree:
        raise TypeError(f"{what} must have the function's output structure {out_tree}, got {tree}")
    leaves = [to_array(x, what) for x in leaves]
    for x, aval in zip(leaves, avals, strict=True):
        if x.shape != aval.shape or x.dtype != aval.dtype:
            raise TypeError(
                f"{what} must have the shapes and dtypes of the function's outputs, but has "
                f"{[y.aval.str_short() for y in leaves]} for {[a.str_short() for a in avals]}"
            )
    return leaves


class SymbolicZero:
    """A zero tangent that was never materialised, as ``jax.custom_derivatives.SymbolicZero``:
    what a ``custom_jvp`` rule defined with ``symbolic_zeros=True`` receives for an input
    that is not differentiated. It has the tangent's ``aval``, ``shape`` and ``dtype``.

    Arguments:
        aval: the tangent's abstract value.

    Example:
        >>> from invarax.core.aval import ShapedArray
        >>> z = SymbolicZero(ShapedArray((2,), jnp.float32))
        >>> z, z.shape, z.instantiate()
        (SymbolicZero, (2,), Array([0., 0.], dtype=float32))
    """

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return "SymbolicZero"

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def instantiate(self):
        """The zeros it stands for."""
        return ad.zeros_like_aval(self.aval)

    @staticmethod
    def from_primal_value(value):
        """The symbolic zero tangent of ``value``."""
        return SymbolicZero(ad.tangent_aval(to_array(value).aval))


def rule_tangents(tangents, symbolic: bool) -> list:
    """The tangents a custom JVP rule receives: ``SymbolicZero`` for each ``ad.Zero`` with
    ``symbolic``, else every zero materialised."""
    if symbolic:
        return [SymbolicZero(t.aval) if isinstance(t, ad.Zero) else t for t in tangents]
    return [ad.instantiate(t) for t in tangents]


# ---------------------------------------------------------------------------------------
# custom_jvp

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
_def_call(custom_jvp_call_p, "call_jaxpr")


def _custom_jvp_call_jvp(primals, tangents, *, name, call_jaxpr, jvp, num_consts):
    _check_no_closure_tangents(tangents[:num_consts], "custom_jvp", name)
    return jvp(primals[num_consts:], list(tangents[num_consts:]))  # ad.Zero kept: see rule


def _custom_jvp_call_batch(vals, dims, *, trace, name, call_jaxpr, jvp, num_consts):
    body, consts = _batch_call_jaxpr(call_jaxpr, vals, dims, trace, f"custom_jvp of {name}")
    num_out = len(call_jaxpr.out_avals)
    in_avals = call_jaxpr.in_avals[num_consts:]
    zero_outs = []

    def batched_jvp(primals, tangents):
        # Zero tangents stay symbolic: the batched rule takes the others only.
        zero_ins = [isinstance(t, ad.Zero) for t in tangents]

        def rule(ins):  # primals and nonzero tangents in, outputs and nonzero tangents out
            given = iter(ins[len(primals):])
            ts = [ad.Zero(ad.tangent_aval(a)) if z else next(given)
                  for a, z in zip(in_avals, zero_ins, strict=True)]
            outs, touts = jvp(ins[: len(primals)], ts)
            zero_outs[:] = [isinstance(t, ad.Zero) for t in touts]
            return [*outs, *(t for t in touts if not isinstance(t, ad.Zero))]

        # A tangent has its primal's shape, so its batch axis is its primal's.
        in_dims = dims[num_consts:]
        t_dims = [d for d, z in zip(in_dims, zero_ins, strict=True) if not z]
        batched_rule = _batched(rule, [*in_dims, *t_dims], trace)
        res = batched_rule([*primals, *(t for t in tangents if not isinstance(t, ad.Zero))])
        outs, touts = res[:num_out], iter(res[num_out:])
        return outs, [ad.Zero(ad.tangent_aval(o.aval)) if z else next(touts)
                      for o, z in zip(outs, zero_outs, strict=True)]

    batched_jvp.__name__ = _batched_name(jvp)
    outs = custom_jvp_call_p.bind(*consts, *vals, name=name, call_jaxpr=body, jvp=batched_jvp,
                                  num_consts=len(consts) + num_consts)
    return outs, [0] * len(outs)


_custom_jvp_call_batch.needs_trace = True
ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
batching.batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch


class custom_jvp:
    """A function with a custom JVP (forward-mode) rule, from which reverse mode follows.

    Arguments:
        fun: the function; its arguments and outputs may be pytrees of arrays.
        nondiff_argnums: positions of arguments that are not differentiated (Python
            values such as functions, or arrays treated as constants). The rule receives
            them first: ``rule(*nondiff_args, primals, tangents)``, with ``primals`` and
            ``tangents`` holding the other arguments.

    Returns:
        The decorated function; define its rule with ``defjvp`` (or ``defjvps``).

    Example:
        >>> @custom_jvp
        ... def log1pexp(x):
        ...     return jnp.log(1.0 + jnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))
        >>> float(grad(log1pexp)(100.0))  # the plain formula would give nan
        1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        wraps(fun)(self)
        self._fun = fun
        self._nondiff_argnums = tuple(nondiff_argnums)
        self._jvp = None
        self._symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        """Define the JVP rule.

        Arguments:
            jvp: ``jvp(primals, tangents) -> (primal_out, tangent_out)`` (after the
                nondiff arguments, if any); ``primals`` and ``tangents`` are tuples of
                the arguments and of their tangents (zeros where an argument is not
                differentiated); ``tangent_out`` has ``primal_out``'s structure, shapes
                and dtypes (a ``SymbolicZero`` in it stands for zeros).
            symbolic_zeros: as JAX's: the tangent of an argument that is not
                differentiated comes as a ``SymbolicZero`` instead of zeros.

        Returns:
            ``jvp``, so that ``defjvp`` can be used as a decorator.

        Example:
            >>> f = custom_jvp(lambda x: x ** 3)
            >>> _ = f.defjvp(lambda p, t: (f(p[0]), 3.0 * p[0] ** 2 * t[0]))
            >>> jvp(f, (2.0,), (1.0,))[1]
            Array(12., dtype=float32, weak_type=True)
        """
        self._jvp = jvp
        self._symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        """Define the JVP rule by one function per argument, whose contributions add up.

        Arguments:
            jvps: for each argument, ``None`` (no derivative) or ``f(t, primal_out,
                *primals)``, giving that argument's contribution to the output tangent for
                its tangent ``t``.

        Returns:
            None.

        Example:
            >>> f = custom_jvp(lambda x, y: jnp.sin(x) * y)
            >>> f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y,
            ...           lambda t, ans, x, y: jnp.sin(x) * t)
            >>> [float(g) for g in grad(f, argnums=(0, 1))(0.0, 2.0)]
            [2.0, 0.0]
        """
        if self._nondiff_argnums:
            raise TypeError("defjvps cannot be used with nondiff_argnums; use defjvp")

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise TypeError(
                    f"defjvps of {self.__name__} was given {len(jvps)} rule(s) for a call "
                    f"with {len(primals)} argument(s); give one (or None) per argument"
                )
            out = self(*primals)
            terms = [rule(t, out, *primals)
                     for rule, t in zip(jvps, tangents, strict=True) if rule is not None]
            if not terms:
                zero = lambda x: ad.zeros_like_aval(ad.tangent_aval(to_array(x).aval))
                return out, tree_map(zero, out)
            return out, functools.reduce(lambda a, b: tree_map(add, a, b), terms)

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = self.__name__
        if self._jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name}; use defjvp.")
        args = _resolve_kwargs(self._fun, args, kwargs)
        nondiff = _nondiff_positions(self._nondiff_argnums, args, name)
        if current_trace() is EVAL_TRACE:
            return self._fun(*args)
        args = tuple(tree_map(lambda x: stop_gradient(x) if isinstance(x, Array) else x, a)
                     if i in nondiff else a for i, a in enumerate(args))
        direct = direct_call(self._fun, args, nondiff,
                             lambda trace: jvp_by_rule(self, trace, args, nondiff))
        if direct is not TRACE:
            return direct
        split = _Split(args, nondiff)
        jaxpr, consts, leaves, out_tree = split.trace(self._fun, f"custom_jvp of {name}")
        rule, symbolic = self._jvp, self._symbolic_zeros

        def flat_rule(primals, tangents):
            what = f"the custom JVP rule {fun_name(rule)} of {name}"
            tangents = rule_tangents(tangents, symbolic)
            res = rule(*split.nondiff, tuple(split.unflatten(primals)),
                       tuple(split.unflatten(tangents)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"{what} must return a pair (primal_out, tangent_out), got "
                                f"{type(res).__name__}")
            outs = _check_outputs(res[0], out_tree, jaxpr.out_avals, f"the primal output of {what}")
            touts = _check_tangents(res[1], out_tree, outs, what)
            return outs, touts

        flat_rule.__name__ = fun_name(rule)
        outs = custom_jvp_call_p.bind(*consts, *leaves, name=name, call_jaxpr=jaxpr,
                                      jvp=flat_rule, num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _check_tangents(touts, out_tree, outs, what):
    """The tangent outputs of a custom JVP rule, flat; zero for non-float outputs."""
    leaves, tree = tree_flatten(touts)
    if tree != out_tree:
        raise TypeError(
            f"{what} must return a tangent output with the primal output's structure "
            f"{out_tree}, got {tree}"
        )
    checked = []
    for (path, t), out in zip(tree_flatten_with_path(touts)[0], outs, strict=True):
        if not ad.is_differentiable(out.aval):
            checked.append(ad.Zero(out.aval))
            continue
        if isinstance(t, SymbolicZero):
            t = t.instantiate()
        t = to_array(t, f"a tangent output of {what}")
        if t.shape != out.shape or t.dtype != out.dtype:
            raise TypeError(
                f"{what} must return tangents with the shapes and dtypes of the primal outputs, "
                f"but the tangent output{keystr(path)} is {t.aval.str_short()} for a primal "
                f"output {out.aval.str_short()}"
            )
        checked.append(t)
    return checked


# ---------------------------------------------------------------------------------------
# custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
_def_call(custom_vjp_call_p, "call_jaxpr")
custom_lin_p = Primitive("custom_lin", multiple_results=True)

_NO_FORWARD_MODE = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_lin_impl(*args, **params):
    raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_jvp(primals, tangents, **params):
    raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    cts = [ad.instantiate(ct) for ct in cts]
    return [None] * num_res + bwd(args[:num_res], cts)


def _batched_bwd(bwd, res_dims, in_dims, trace):
    """``bwd(res, cts)`` for residuals batched at ``res_dims`` (a list, read when called)
    and cotangents batched at 0: each input's cotangent batched at its ``in_dims`` entry,
    summed over the examples for an unbatched input."""
    zeros = []

    def flat(ins):
        cts_in = bwd(ins[: len(res_dims)], ins[len(res_dims) :])
        zeros[:] = [ct.aval if isinstance(ct, ad.Zero) else None for ct in cts_in]
        return [ct for ct in cts_in if not isinstance(ct, ad.Zero)]

    def batched_bwd(res, cts):
        size = trace.axis_size
        vals, dims = _batch_as(trace, flat, [*res, *cts], [*res_dims, *[0] * len(cts)])
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

    batched_bwd.__name__ = _batched_name(bwd)
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
ad.jvp_rules[custom_lin_p] = _custom_lin_jvp
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
batching.batching_rules[custom_lin_p] = _custom_lin_batch


def _custom_vjp_call_jvp(primals, tangents, *, name, call_jaxpr, fwd, bwd, num_consts):
    _check_no_closure_tangents(tangents[:num_consts], "custom_vjp", name)
    outs, res = fwd(primals[num_consts:])
    tangents = [ad.instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(ad.tangent_aval(o.aval) for o in outs)
    touts = custom_lin_p.bind(*res, *tangents, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return outs, [t if ad.is_differentiable(t.aval) else ad.Zero(t.aval) for t in touts]


def _custom_vjp_call_batch(vals, dims, *, trace, name, call_jaxpr, fwd, bwd, num_consts):
    body, consts = _batch_call_jaxpr(call_jaxpr, vals, dims, trace, f"custom_vjp of {name}")
    num_out = len(call_jaxpr.out_avals)
    in_dims = dims[num_consts:]
    res_dims = []  # the residuals keep their batch axes; batched_fwd records them

    def fwd_flat(ins):
        outs, res = fwd(ins)
        return [*outs, *res]

    def batched_fwd(primals):
        vals, dims = _batch_as(trace, fwd_flat, primals, in_dims)
        res_dims[:] = dims[num_out:]
        outs = [move_batch_axis(v, d, 0, trace.axis_size)
                for v, d in zip(vals[:num_out], dims[:num_out], strict=True)]
        return outs, vals[num_out:]

    batched_fwd.__name__ = _batched_name(fwd)
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

    def defvjp(self, fwd, bwd):
        """Define the forward and backward rules.

        Arguments:
            fwd: ``fwd(*args) -> (out, residuals)``: the function's output and any pytree
                of arrays that ``bwd`` needs.
            bwd: ``bwd(*nondiff_args, residuals, cotangent) -> tuple``: one cotangent per
                differentiable argument (``None`` for zero), each with its argument's
                structure, shapes and dtypes.

        Returns:
            None.

        Example:
            >>> f = custom_vjp(lambda x, y: x * y)
            >>> f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (res[1] * g, res[0] * g))
            >>> grad(f, argnums=1)(2.0, 3.0)
            Array(2., dtype=float32, weak_type=True)
        """
        self._fwd, self._bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        name = self.__name__
        if self._fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name}; use defvjp.")
        args = _resolve_kwargs(self._fun, args, kwargs)
        nondiff = _nondiff_positions(self._nondiff_argnums, args, name)
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
        split = _Split(args, nondiff)
        jaxpr, consts, leaves, out_tree = split.trace(self._fun, f"custom_vjp of {name}")
        fwd, bwd = self._fwd, self._bwd
        fwd_what = f"the fwd rule {fun_name(fwd)} of custom_vjp function {name}"

        res_tree = []  # the residuals' structure, recorded by flat_fwd for flat_bwd

        def flat_fwd(primals):
            res = fwd(*split.full(split.unflatten(primals)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"{fwd_what} must return a pair (output, residuals), got "
                                f"{type(res).__name__}")
            outs = _check_outputs(res[0], out_tree, jaxpr.out_avals, f"the output of {fwd_what}")
            res_leaves, tree = tree_flatten(res[1])
            res_tree[:] = [tree]
            return outs, [to_array(r, f"a residual of {fwd_what}") for r in res_leaves]

        def flat_bwd(res, cts):
            cts_in = bwd(*split.nondiff, tree_unflatten(res_tree[0], res),
                         tree_unflatten(out_tree, cts))
            return _check_bwd_output(cts_in, split, leaves, f"{fun_name(bwd)} of {name}")

        flat_fwd.__name__, flat_bwd.__name__ = fun_name(fwd), fun_name(bwd)
        outs = custom_vjp_call_p.bind(*consts, *leaves, name=name, call_jaxpr=jaxpr,
                                      fwd=flat_fwd, bwd=flat_bwd, num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _check_bwd_output(cts_in, split: _Split, leaves, who):
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
            if sub is None or not ad.is_differentiable(aval):
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

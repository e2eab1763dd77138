"""What ``custom_jvp`` and ``custom_vjp`` (and ``checkpoint``'s call primitive) share:
closure conversion, the call primitives' impl and abstract eval, batching a call, argument
handling and checks, ``SymbolicZero``; and the direct call of a custom function under a JVP
trace that owns an argument (``direct_call``), as JAX's ``process_custom_jvp_call`` and
``process_custom_vjp_call`` do: there the function's rule runs on the primal values in the
parent trace, so a function or rule with Python control flow on its arguments
differentiates as in JAX; where that cannot be done the call is traced (``TRACE``).
"""


from __future__ import annotations

import inspect

from ..compiler.call import jit_p
from ..core.api_util import fun_name
from ..core.array import to_array
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.lowering import register_lowering
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import EVAL_TRACE, Primitive, Tracer, current_trace
from ..interpreters import ad, batching
from ..interpreters.batching import move_batch_axis
from ..interpreters.staging import trace_fun, trace_to_jaxpr

TRACE = object()  # direct_call's answer when the call must be traced and bound


def _closes_over_tracer(fun) -> bool:
    """Whether ``fun`` holds a tracer in its closure cells or defaults (then it is traced,
    so that a closed-over value being differentiated is detected)."""
    cells = [c.cell_contents for c in getattr(fun, "__closure__", None) or ()
             if c.cell_contents is not fun]
    held = [*cells, *(getattr(fun, "__defaults__", None) or ())]
    try:
        leaves = tree_flatten(held)[0]
    except Exception:  # noqa: BLE001  (an odd object in a closure: trace to be safe)
        return True
    return any(isinstance(x, Tracer) for x in leaves)


def direct_call(fun, args, nondiff, by_rule):
    """``fun(*args)`` without tracing its body where JAX does so too, else ``TRACE``.

    As JAX: under ``jvp``/``grad`` the rules are called on the primal values (in the
    parent trace; ``by_rule(trace)`` does it for the JVP trace that owns an argument), and
    on concrete values the function runs eagerly, so a body with Python control flow on
    its arguments works there. Under ``jit``, ``vmap`` and ``make_jaxpr`` (or when the
    body closes over a tracer) the body is traced instead.
    """
    leaves = [x for i, a in enumerate(args) if i not in nondiff for x in tree_flatten(a)[0]]
    if _closes_over_tracer(fun):
        return TRACE
    trace = current_trace()
    while trace is not EVAL_TRACE:
        if not isinstance(trace, (ad.JVPTrace, ad.PartialEvalTrace)):
            return TRACE  # staging, batching: the body is traced
        if isinstance(trace, ad.JVPTrace) and any(trace.owns(x) for x in leaves):
            return by_rule(trace)
        if any(isinstance(x, Tracer) and trace.owns(x) for x in leaves):
            return TRACE  # an unknown (tangent) value of a linearization
        trace = trace.parent
    return fun(*args)  # every argument concrete: run the body on its values


def primals_and_tangents(trace, split, name, raw: bool = False):
    """The differentiable arguments' flat primals and tangents at ``trace`` (``ad.Zero``
    for those it does not differentiate), and their structure; with ``raw`` the Python
    scalars a tracer was made from, where it was (what JAX gives a custom JVP rule)."""
    flat, tree = tree_flatten([split.args[i] for i in split.diff])
    primals, tangents = [], []
    for x in flat:
        if trace.owns(x):
            p, t = x.raw if raw and x.raw is not None else (x.primal, x.tangent)
            primals.append(p)
            tangents.append(t)
        else:
            x = to_array(x, f"an argument of {name}")
            primals.append(x)
            tangents.append(ad.Zero(ad.tangent_aval(x.aval)))
    return primals, tangents, tree


# ---------------------------------------------------------------------------------------
# Shared: closure conversion, the call primitives' impl and abstract eval, arguments


def closure_convert(closed: ClosedJaxpr):
    """``(jaxpr, consts)``: ``closed`` with its constants turned into leading inputs."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns), []), closed.consts


def def_call(prim: Primitive, jaxpr_param: str):
    """Impl (the body, compiled as ``jit`` compiles it), abstract eval and CPU lowering (the
    impl) of a call primitive."""

    def impl(*args, **params):
        return jit_p.impl(*args, name=prim.name, jaxpr=params[jaxpr_param])

    def abstract_eval(*avals, **params):
        jaxpr = params[jaxpr_param]
        # (a weakly typed argument where the body was traced with a strong one, or the
        # reverse, computes the same values: JAX's call primitives accept it too)
        if [a.strip_weak_type() for a in avals] != [
                a.strip_weak_type() for a in jaxpr.in_avals]:
            raise TypeError(
                f"internal error: {prim} was traced for {[a.str_short() for a in jaxpr.in_avals]}"
                f" but bound to {[a.str_short() for a in avals]}"
            )
        return jaxpr.out_avals

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    register_lowering(prim)


def batch_as(trace, fun, ins, dims):
    """``batch_flat`` of ``fun`` over the axis of ``trace``, the ``BatchTrace`` that
    batched a call, whose tracers ``fun`` may close over (a rule defined inside the vmapped
    function); this may run after that trace has ended."""
    return batching.batch_flat(fun, ins, dims, trace.axis_size, trace.axis_name,
                               trace.description, trace.tag)


def batched(fun, dims, trace):
    """``fun`` (flat lists) on inputs batched at ``dims``; its outputs batched at axis 0."""

    def batched(ins):
        outs, out_dims = batch_as(trace, fun, ins, dims)
        return [move_batch_axis(o, d, 0, trace.axis_size)
                for o, d in zip(outs, out_dims, strict=True)]

    return batched


def batch_call_jaxpr(jaxpr: ClosedJaxpr, vals, dims, trace, what):
    """``(jaxpr, consts)``: ``jaxpr`` batched for operands ``vals`` (batched at ``dims``),
    closure-converted; its outputs are batched at axis 0."""
    body = batched(lambda ins: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *ins), dims, trace)
    closed = trace_to_jaxpr(body, [v.aval for v in vals], f"{trace.description} of {what}")
    return closure_convert(closed)


def batched_name(fun) -> str:
    return f"vmap({fun_name(fun)})"


def resolve_kwargs(fun, args, kwargs):
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


def nondiff_positions(nondiff_argnums, args, name):
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


class Split:
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
        jaxpr, consts = closure_convert(closed)
        return jaxpr, consts, leaves, out_tree


def check_no_closure_tangents(tangents, kind, name):
    if any(not isinstance(t, ad.Zero) for t in tangents):
        raise TypeError(
            f"{kind} function {name} closes over a value that is being differentiated; its "
            "derivative would be ignored. Pass the value as an argument of the function."
        )


def check_outputs(outs, out_tree, avals, what):
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


class CustomVJPPrimal:
    """An argument leaf as the ``fwd`` rule of a ``custom_vjp`` defined with
    ``symbolic_zeros=True`` receives it, as ``jax.custom_derivatives.CustomVJPPrimal``: its
    ``value`` and whether it is ``perturbed`` (differentiated) in this call.

    Arguments:
        value: the primal value.
        perturbed: whether a (nonzero) tangent flows into it.

    Example:
        >>> p = CustomVJPPrimal(jnp.ones(2), False)
        >>> p.value, p.perturbed
        (Array([1., 1.], dtype=float32), False)
    """

    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def rule_tangents(tangents, symbolic: bool) -> list:
    """The tangents a custom JVP rule (or cotangents a custom VJP ``bwd``) receives:
    ``SymbolicZero`` for each ``ad.Zero`` with ``symbolic``, else every zero materialised."""
    if symbolic:
        return [SymbolicZero(t.aval) if isinstance(t, ad.Zero) else t for t in tangents]
    return [ad.instantiate(t) for t in tangents]



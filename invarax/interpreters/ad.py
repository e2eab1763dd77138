"""Automatic differentiation: JVP, linearize (JVP + partial evaluation) and transposition.

Forward and reverse mode come from one set of JVP rules:

- ``JVPTrace`` carries a tangent beside each primal and applies each primitive's JVP
  rule. Tangents may be symbolic zeros (``Zero``), which cost nothing.
- ``linearize`` runs the JVP with the tangents unknown, under a partial-evaluation
  trace: primal work (whose inputs are all known) runs at once, tangent work is
  staged into a linear jaxpr whose constants are the residuals.
- ``backward_pass`` transposes that linear jaxpr, equation by equation in reverse,
  with each linear primitive's transpose rule. ``vjp`` is linearize then transpose.

Rule tables (filled in by ``invarax.ops``):

- ``jvp_rules[prim](primals, tangents, **params) -> (primal_out, tangent_out)``;
  tangents may be ``Zero``; run under the parent trace.
- ``transpose_rules[prim](ct, *args, **params) -> list`` of cotangents, one per
  argument (``None`` for arguments that are not linear inputs); linear inputs are
  passed as ``UndefinedPrimal``.
- ``partial_eval_eqn_rules[prim](eqn, unknown) -> (known_eqn, unknown_eqn)``, for call
  primitives (``jit``): split an equation some of whose inputs are unknown (``unknown``,
  one bool per input) into an equation of the known inputs (its outputs: the known
  outputs, then residuals) and one of the residuals and the unknown inputs (its
  outputs: the unknown ones); either may be ``None``. Without a rule, an equation with
  an unknown input is unknown as a whole. ``linearize`` runs the known equation at once
  and stages the other; ``backward_pass`` likewise, then transposes the unknown one.
- ``accumulating_transpose_rules[prim](cts, args, accs, same, **params) -> list``, for
  linear calls (``jit``, ``checkpoint``), used by ``backward_pass`` instead of the
  transpose rule: ``accs`` holds, per argument, the cotangent already accumulated for
  that linear input (``None`` where nothing has been, and for non-linear arguments);
  ``same[i]`` is the index of the first argument that is the same variable as argument
  ``i`` (``i`` itself if none). The rule starts the body's accumulator of each input
  from ``accs`` (duplicates share their first occurrence's), so the call adds its
  contributions exactly as the body's equations inlined would: ``(acc + c_k) + ...``.
  It returns the final accumulators, one per first occurrence (``None`` elsewhere),
  which replace the outer ones.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.eval import eval_jaxpr
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..core.trace import Trace, Tracer, current_trace, new_trace, set_current_trace
from . import emitted
from .staging import StagingTrace

jvp_rules = {}
transpose_rules = {}
accumulating_transpose_rules = {}
partial_eval_eqn_rules = {}
# Primitives with an accumulating transpose rule whose outputs are never their inputs passed
# through (loops: a body returning its input does not make the loop return it).
not_forwarding = set()


class Zero:
    """A symbolic zero tangent (or cotangent) of abstract value ``aval``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval


def zeros_like_aval(aval: ShapedArray):
    """A zero array of ``aval`` (a broadcast scalar: no memory is filled)."""
    zero = ArrayImpl(np.zeros((), aval.dtype), aval.weak_type)
    return emitted.broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def instantiate(t):
    """``t`` as an array: a symbolic zero becomes zeros."""
    return zeros_like_aval(t.aval) if isinstance(t, Zero) else t


def unbroadcast(aval: ShapedArray, ct):
    """``ct`` summed down to the shape of a 0-d operand that lax broadcast (else unchanged)."""
    if isinstance(ct, Zero) or ct.shape == aval.shape:
        return ct
    return emitted.reduce_sum(ct, tuple(range(ct.ndim)))


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The abstract value of a tangent of ``aval``: the same (weak types kept, as JAX)."""
    return aval


def is_differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


# ---------------------------------------------------------------------------------------
# JVP


class JVPTracer(Tracer):
    """A primal value with its tangent; ``raw``: the Python scalars ``(primal, tangent)``
    they were made from, where they were (JAX keeps them: ``jvp(lambda x: x, (2.0,),
    (3.0,))`` is ``(2.0, 3.0)``, and a custom JVP rule gets them as they were given)."""

    __slots__ = ("primal", "tangent", "raw")

    def __init__(self, trace, primal, tangent, raw=None):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.raw = raw

    @property
    def aval(self):
        return self.primal.aval

    def to_concrete_value(self):
        p = self.primal
        if isinstance(p, ArrayImpl):
            return p._value
        return p.to_concrete_value() if isinstance(p, Tracer) else None


class JVPTrace(Trace):
    """Applies JVP rules to the primitives bound on its tracers."""

    def __init__(self, parent, description: str = "jvp"):
        super().__init__(parent)
        self.description = description

    def describe(self) -> str:
        return self.description

    def process_primitive(self, primitive, args, params):
        primals, tangents = [], []
        for x in args:
            if self.owns(x):
                primals.append(x.primal)
                tangents.append(x.tangent)
            else:
                primals.append(x)
                tangents.append(Zero(tangent_aval(x.aval)))
        with set_current_trace(self.parent):
            if all(isinstance(t, Zero) for t in tangents):
                return primitive.bind(*primals, **params)
            rule = jvp_rules.get(primitive)
            if rule is None:
                raise NotImplementedError(
                    f"differentiation rule for '{primitive}' is not implemented"
                )
            out, tangent = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.pack(p, t) for p, t in zip(out, tangent, strict=True)]
        return self.pack(out, tangent)

    def pack(self, primal, tangent, raw=None):
        if isinstance(tangent, Zero):
            return primal
        return JVPTracer(self, primal, tangent, raw)

    def unpack(self, x, raw: bool = False):
        """``(primal, tangent)`` of an output (a constant has a zero tangent); with ``raw``
        the Python scalars a tracer was made from, where it was."""
        x = to_array(x, "a differentiated function's output")
        if self.owns(x):
            return x.raw if raw and x.raw is not None else (x.primal, x.tangent)
        return x, Zero(tangent_aval(x.aval))


def jvp_flat(fun, primals, tangents, description="jvp", raws=None):
    """JVP of ``fun`` (flat lists in and out); tangents may be ``Zero``.

    ``raws``: optional, per input, the Python scalars ``(primal, tangent)`` it was given as
    (or None); then an output that is such a tracer comes back as those scalars, as JAX.

    Returns ``(primals_out, tangents_out)``, tangents possibly ``Zero``.
    """
    trace = JVPTrace(current_trace(), description)
    keep = raws is not None
    raws = raws if keep else [None] * len(primals)
    with new_trace(trace):
        ins = [trace.pack(p, t, r) for p, t, r in zip(primals, tangents, raws, strict=True)]
        outs = [trace.unpack(x, raw=keep) for x in fun(ins)]
    return [p for p, _ in outs], [t for _, t in outs]


# ---------------------------------------------------------------------------------------
# Partial evaluation and linearize


class PartialEvalTrace(StagingTrace):
    """Stages only what depends on its own (unknown) tracers; runs the rest in the parent."""

    def process_primitive(self, primitive, args, params):
        unknown = [self.owns(x) for x in args]
        if not any(unknown):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        rule = partial_eval_eqn_rules.get(primitive)
        if rule is None:
            return super().process_primitive(primitive, args, params)
        # Split the call: its known part runs now (in the parent), the rest is staged.
        out = primitive.abstract_eval(*(x.aval for x in args), **params)
        invars = [Var(x.aval) for x in args]
        outvars = [Var(a) for a in out]
        known, staged = rule(Eqn(primitive, invars, outvars, params), unknown)
        env = {id(v): x for v, x in zip(invars, args, strict=True)}
        if known is not None:
            with set_current_trace(self.parent):
                _eval_eqn(env, known)
        if staged is not None:
            outs = super().process_primitive(
                primitive, [_read(env, v) for v in staged.invars], staged.params)
            env.update((id(v), o) for v, o in zip(staged.outvars, outs, strict=True))
        return [_read(env, v) for v in outvars]


class Linearized:
    """The linear map of ``linearize``: a jaxpr over tangents, with residuals as consts."""

    def __init__(self, jaxpr: ClosedJaxpr, in_avals, zero_outs):
        self.jaxpr = jaxpr
        self.in_avals = in_avals
        self.zero_outs = zero_outs

    def __call__(self, tangents):
        return eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *tangents)

    def transpose(self, cts):
        """Cotangents of the inputs for output cotangents ``cts`` (a list)."""
        undefined = [UndefinedPrimal(a) for a in self.in_avals]
        return backward_pass(self.jaxpr.jaxpr, self.jaxpr.consts, undefined, cts)


def linearize_flat(fun, primals, description="linearize"):
    """Evaluate ``fun`` at ``primals`` and stage its JVP's tangent part.

    Returns ``(primals_out, Linearized)``. Inputs that are not differentiable
    (integers) get symbolic zero tangents and no input of the linear jaxpr.
    """
    pe = PartialEvalTrace(current_trace(), f"{description} (linear part)")
    in_avals = [tangent_aval(p.aval) for p in primals]
    with new_trace(pe):
        tangents = [
            pe.new_arg(a) if is_differentiable(a) else Zero(a) for a in in_avals
        ]
        diff_avals = [a for a in in_avals if is_differentiable(a)]
        primals_out, tangents_out = jvp_flat(fun, primals, tangents, description)
        zero_outs = [isinstance(t, Zero) for t in tangents_out]
        jaxpr = pe.to_jaxpr([instantiate(t) for t in tangents_out])
    return primals_out, Linearized(jaxpr, diff_avals, zero_outs)


# ---------------------------------------------------------------------------------------
# Transposition


def backward_pass(jaxpr: Jaxpr, consts, args, cts_out, accs=None, same=None):
    """Transpose the linear ``jaxpr``: cotangents of its ``UndefinedPrimal`` inputs.

    Arguments:
        jaxpr: a jaxpr linear in the inputs marked ``UndefinedPrimal`` in ``args``.
        consts: values of its constvars (residuals).
        args: one per invar: ``UndefinedPrimal`` (linear) or a value.
        cts_out: one cotangent (array or ``Zero``) per output.
        accs: optional, one per invar: the cotangent its accumulator starts from
            (``None``: from nothing). Contributions are added to it in the order they
            come, as if the equations were inlined where the accumulator lives.
        same: optional, one per invar: the index of an invar it stands for (the same
            variable outside); its contributions go to that invar's accumulator.

    Returns:
        One cotangent per invar (``Zero`` where none flows, and for an invar that
        stands for another; ``None`` for values).
    """
    linear = set()
    env = {}
    for v, c in zip(jaxpr.constvars, consts, strict=True):
        env[id(v)] = c
    for v, a in zip(jaxpr.invars, args, strict=True):
        if isinstance(a, UndefinedPrimal):
            linear.add(id(v))
        else:
            env[id(v)] = a
    linear_eqns = []
    for eqn in jaxpr.eqns:  # which equations depend on the linear inputs; run the others
        unknown = [not isinstance(v, Literal) and id(v) in linear for v in eqn.invars]
        if not any(unknown):
            _eval_eqn(env, eqn)
            continue
        rule = partial_eval_eqn_rules.get(eqn.primitive)
        known, eqn = rule(eqn, unknown) if rule is not None else (None, eqn)
        if known is not None:  # a call's part that does not depend on the linear inputs
            _eval_eqn(env, known)
        if eqn is not None:
            linear.update(id(v) for v in eqn.outvars)
            linear_eqns.append(eqn)

    cts = {}
    alias = {}  # id of a variable standing for another -> that variable
    if same is not None:
        for v, i in zip(jaxpr.invars, same, strict=True):
            if jaxpr.invars[i] is not v:
                alias[id(v)] = jaxpr.invars[i]
    for eqn in linear_eqns:  # a linear call's output that is one of its linear inputs
        if eqn.primitive in accumulating_transpose_rules:
            for out, v in _forwarded(eqn):
                if not isinstance(v, Literal) and id(v) in linear:
                    alias[id(out)] = alias.get(id(v), v)
    if accs is not None:
        for v, acc in zip(jaxpr.invars, accs, strict=True):
            if acc is not None and not isinstance(acc, Zero) and id(v) in linear:
                cts[id(v)] = acc

    def add_ct(v, ct):
        if ct is None or isinstance(ct, Zero) or isinstance(v, Literal) or id(v) not in linear:
            return
        v = alias.get(id(v), v)
        prev = cts.get(id(v))
        cts[id(v)] = ct if prev is None else _add_cts(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out, strict=True):
        add_ct(v, ct)
    for eqn in reversed(linear_eqns):
        outs_ct = [cts.pop(id(v), None) for v in eqn.outvars]
        if all(ct is None for ct in outs_ct):
            continue
        outs_ct = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, outs_ct,
                                                                    strict=True)]
        is_linear = [not isinstance(v, Literal) and id(v) in linear for v in eqn.invars]
        invals = [UndefinedPrimal(v.aval) if lin else _read(env, v)
                  for v, lin in zip(eqn.invars, is_linear, strict=True)]
        ct_arg = outs_ct if eqn.primitive.multiple_results else outs_ct[0]
        accumulating = accumulating_transpose_rules.get(eqn.primitive)
        if accumulating is not None:
            _transpose_accumulating(accumulating, eqn, ct_arg, invals, is_linear, cts, alias)
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(f"transpose rule for '{eqn.primitive}' is not implemented")
        for v, ct in zip(eqn.invars, rule(ct_arg, *invals, **eqn.params), strict=True):
            add_ct(v, ct)
    return [
        cts.get(id(v), Zero(v.aval)) if isinstance(a, UndefinedPrimal) else None
        for v, a in zip(jaxpr.invars, args, strict=True)
    ]


def _forwarded(eqn):
    """``(outvar, invar)`` pairs of a call ``eqn`` whose body returns that input as it is,
    directly or through nested calls (their cotangents are the input's, added where the
    uses are, as inlined)."""
    body = eqn.params.get("jaxpr")
    if eqn.primitive in not_forwarding or not isinstance(body, ClosedJaxpr) or len(
            body.jaxpr.invars) != len(eqn.invars):
        return []
    return [(eqn.outvars[o], eqn.invars[i]) for o, i in _forwards(body)]


@functools.lru_cache(maxsize=4096)
def _forwards(body: ClosedJaxpr) -> tuple:
    """``(output index, input index)`` of the outputs of ``body`` that are its inputs."""
    j = body.jaxpr
    alias = {}
    for eqn in j.eqns:
        if eqn.primitive in accumulating_transpose_rules:
            for out, v in _forwarded(eqn):
                if isinstance(v, Var):
                    alias[id(out)] = alias.get(id(v), v)
    position = {id(v): i for i, v in enumerate(j.invars)}
    found = []
    for o, v in enumerate(j.outvars):
        v = alias.get(id(v), v) if isinstance(v, Var) else v
        if isinstance(v, Var) and id(v) in position:
            found.append((o, position[id(v)]))
    return tuple(found)


def _transpose_accumulating(rule, eqn, ct_arg, invals, is_linear, cts, alias):
    """Transpose a linear call ``eqn`` with ``rule`` (see ``accumulating_transpose_rules``):
    the accumulators of its linear inputs go in, the call's results replace them."""
    keys = [id(alias.get(id(v), v)) if lin else None
            for v, lin in zip(eqn.invars, is_linear, strict=True)]
    first = {}
    same = tuple(first.setdefault(k, i) if k is not None else i for i, k in enumerate(keys))
    accs = [cts.pop(k, None) if k is not None and same[i] == i else None
            for i, k in enumerate(keys)]
    outs = rule(ct_arg, invals, accs, same, **eqn.params)
    for i, (k, ct) in enumerate(zip(keys, outs, strict=True)):
        if k is None or same[i] != i:
            continue
        if ct is None or isinstance(ct, Zero):
            ct = accs[i]  # the call added nothing
        if ct is not None:
            cts[k] = ct


def _read(env, v):
    return v.val if isinstance(v, Literal) else env[id(v)]


def _eval_eqn(env, eqn):
    """Bind ``eqn`` (under the current trace) on its inputs in ``env``; store its outputs."""
    outs = eqn.primitive.bind(*(_read(env, v) for v in eqn.invars), **eqn.params)
    outs = outs if eqn.primitive.multiple_results else [outs]
    for v, o in zip(eqn.outvars, outs, strict=True):
        env[id(v)] = o


def _add_cts(a, b):
    return emitted.add(a, b)


# ---------------------------------------------------------------------------------------
# Rule families


def defjvp(primitive, *contributions):
    """A JVP rule from one function per argument: ``f(t, out, *primals, **params)``.

    Each gives that argument's contribution to the output tangent (``None`` for an
    argument with no derivative); the contributions are summed.
    """

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = None
        for f, t in zip(contributions, tangents, strict=True):
            if f is None or isinstance(t, Zero):
                continue
            term = f(t, out, *primals, **params)
            total = term if total is None else _add_cts(total, term)
        return out, Zero(tangent_aval(out.aval)) if total is None else total

    jvp_rules[primitive] = rule


def defjvp_zero(primitive):
    """The output does not depend differentiably on any input (comparisons, rounding)."""

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        outs = out if primitive.multiple_results else [out]
        zeros = [Zero(tangent_aval(o.aval)) for o in outs]
        return out, zeros if primitive.multiple_results else zeros[0]

    jvp_rules[primitive] = rule


def deflinear(primitive, transpose, linear_args=None):
    """A primitive linear in the arguments ``linear_args`` (all by default).

    Its JVP applies it to the tangents (zeros instantiated) with the other
    arguments as they are; ``transpose`` is its transpose rule.
    """

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        args = [
            instantiate(t) if linear_args is None or i in linear_args else p
            for i, (p, t) in enumerate(zip(primals, tangents, strict=True))
        ]
        return out, primitive.bind(*args, **params)

    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose


def defbilinear(primitive, transpose_lhs, transpose_rhs):
    """A primitive linear in each of its two arguments (``mul``, ``dot_general``).

    JVP: ``f(t_lhs, rhs) + f(lhs, t_rhs)``; the transposes give the cotangent of the
    undefined side: ``transpose_lhs(ct, lhs_aval, rhs, **params)`` and likewise.
    """

    def rule(primals, tangents, **params):
        lhs, rhs = primals
        t_lhs, t_rhs = tangents
        out = primitive.bind(lhs, rhs, **params)
        terms = []
        if not isinstance(t_lhs, Zero):
            terms.append(primitive.bind(t_lhs, rhs, **params))
        if not isinstance(t_rhs, Zero):
            terms.append(primitive.bind(lhs, t_rhs, **params))
        total = terms[0] if len(terms) == 1 else _add_cts(*terms)
        return out, total

    def transpose(ct, lhs, rhs, **params):
        if isinstance(ct, Zero):
            return [None, None]
        if isinstance(lhs, UndefinedPrimal) and isinstance(rhs, UndefinedPrimal):
            raise ValueError(f"{primitive} is not linear when both arguments are unknown")
        if isinstance(lhs, UndefinedPrimal):
            return [transpose_lhs(ct, lhs.aval, rhs, **params), None]
        return [None, transpose_rhs(ct, lhs, rhs.aval, **params)]

    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose

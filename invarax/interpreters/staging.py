"""Staging: trace a Python function to a typed jaxpr (what ``make_jaxpr`` and ``jit`` use)."""

from __future__ import annotations

from ..core.api_util import flatten_args, fun_name
from ..core.array import ArrayImpl, to_array
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import Trace, Tracer, current_trace, new_trace


class StagingTracer(Tracer):
    """A tracer that stands for one variable of the jaxpr being built."""

    __slots__ = ("_var",)

    def __init__(self, trace, var: Var):
        self._trace = trace
        self._var = var

    @property
    def aval(self):
        return self._var.aval


class StagingTrace(Trace):
    """Records each bound primitive as an equation instead of running it.

    Values that are not this trace's tracers are constants of the jaxpr: scalars
    become literals; arrays and tracers of enclosing transformations become
    constvars (``consts`` holds their values).
    """

    def __init__(self, parent, description: str):
        super().__init__(parent)
        self.description = description
        self.eqns = []
        self.invars = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}

    def describe(self) -> str:
        return self.description

    def new_arg(self, aval) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def getvar(self, x):
        if self.owns(x):
            return x._var
        if isinstance(x, ArrayImpl) and x.ndim == 0:
            return Literal(x, x.aval)
        var = self._const_ids.get(id(x))
        if var is None:
            var = self._const_ids[id(x)] = Var(x.aval)
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, primitive, args, params):
        invars = [self.getvar(x) for x in args]
        out = primitive.abstract_eval(*(v.aval for v in invars), **params)
        out_avals = out if primitive.multiple_results else [out]
        outvars = [Var(aval) for aval in out_avals]
        self.eqns.append(Eqn(primitive, invars, outvars, params))
        tracers = [StagingTracer(self, v) for v in outvars]
        return tracers if primitive.multiple_results else tracers[0]

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        outvars = [self.getvar(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.consts)


def trace_to_jaxpr(flat_fun, in_avals, description: str):
    """Trace ``flat_fun`` (a function of a flat list of arrays returning a flat list) to a jaxpr.

    Arguments:
        flat_fun: called with one tracer per aval; returns a list of arrays or scalars.
        in_avals: the abstract values of the inputs.
        description: how errors name this trace (``"jit of f"``).

    Returns:
        A ``ClosedJaxpr``. Its consts may hold tracers of enclosing transformations.
    """
    trace = StagingTrace(current_trace(), description)
    with new_trace(trace):
        args = [trace.new_arg(aval) for aval in in_avals]
        outs = [to_array(x, "a function output") for x in flat_fun(args)]
        return trace.to_jaxpr(outs)


def trace_fun(fun, args, kwargs, description: str):
    """Trace ``fun(*args, **kwargs)`` (dynamic arguments only) to a jaxpr.

    Returns ``(closed_jaxpr, leaves, out_tree)``: the jaxpr over the flattened
    arguments ``leaves``, and the structure of the output.
    """
    leaves, in_tree = flatten_args(args, kwargs, fun_name(fun))
    flat_fun, out_tree = flatten_fun(fun, in_tree)
    closed = trace_to_jaxpr(flat_fun, [x.aval for x in leaves], description)
    return closed, leaves, out_tree[0]


def flatten_fun(fun, in_tree):
    """``(flat_fun, out_tree)``: ``fun`` as a function of the flat leaves of
    ``(args, kwargs)`` (structure ``in_tree``) returning flat leaves; each call appends
    its output's structure to the list ``out_tree``."""
    out_tree = []

    def flat_fun(flat_args):
        f_args, f_kwargs = tree_unflatten(in_tree, flat_args)
        out_leaves, tree = tree_flatten(fun(*f_args, **f_kwargs))
        out_tree.append(tree)
        return out_leaves

    return flat_fun, out_tree

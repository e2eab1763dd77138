"""Primitives, traces and tracers, with one current trace per thread (stackless tracing).

``Primitive.bind`` hands its operands to the current trace. The eval trace runs
the primitive's impl; a transformation's trace (staging, JVP, batching) handles
its own tracers and defers to its ``parent`` for everything else. Tracers that
belong to another trace are constants to this one, so nested transformations never
confuse their values. A trace is marked dead when its transformation returns; a
tracer of a dead trace that turns up later has leaked, and is reported as such.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from . import backends, narrow
from .array import Array, ArrayImpl
from .aval import ShapedArray
from .dtypes import _ML_SET  # ml_dtypes' dtypes met so far (filled in place)
from .errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    concretization_error,
)

PRIMITIVES = {}  # name -> Primitive: every primitive, for the rule-coverage test


class Primitive:
    """An operation that transformations know how to handle.

    Arguments:
        name: the name printed in jaxprs.
        multiple_results: whether ``bind`` returns a list of arrays.

    The impl rule (``def_impl``) computes on NumPy arrays; the abstract-eval rule
    (``def_abstract_eval``) maps input ``ShapedArray``s to the output's, and raises
    the user-facing error for bad shapes or dtypes. Transformation rules live in
    the tables of ``invarax.interpreters``.

    Example:
        >>> cube_p = Primitive("cube_example")
        >>> _ = cube_p.def_impl(lambda x: x * x * x)
        >>> _ = cube_p.def_abstract_eval(lambda x: x)
        >>> cube_p.bind(jnp.float32(2.0))
        Array(8., dtype=float32)
        >>> del PRIMITIVES["cube_example"]  # (an example: unregister it again)
    """

    def __init__(self, name: str, multiple_results: bool = False):
        if name in PRIMITIVES:
            raise ValueError(f"a primitive named {name!r} exists already")
        self.name = name
        self.multiple_results = multiple_results
        self.impl = None
        self.abstract_eval = None
        PRIMITIVES[name] = self

    def def_impl(self, impl):
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule):
        self.abstract_eval = rule
        return rule

    def bind(self, *args, **params):
        return _ctx.trace.process_primitive(self, args, params)

    def __repr__(self):
        return self.name


class Trace:
    """Base class of traces. ``parent`` is the trace that receives what this one defers."""

    def __init__(self, parent: Trace | None):
        self.parent = parent
        self.tag = object()
        self.alive = True

    def process_primitive(self, primitive, args, params):
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def owns(self, x) -> bool:
        """Whether ``x`` is a live tracer of this trace; raise if it is a leaked tracer."""
        if isinstance(x, Tracer):
            if x._trace.tag is self.tag:
                return True
            if not x._trace.alive:
                raise leaked_tracer_error(x)
        return False


class EvalTrace(Trace):
    """The bottom trace: runs each primitive's impl on concrete NumPy values."""

    def __init__(self):
        super().__init__(None)

    def process_primitive(self, primitive, args, params):
        avals = []
        for x in args:
            if isinstance(x, Tracer):
                raise leaked_tracer_error(x)
            avals.append(x.aval)
        out_avals = primitive.abstract_eval(*avals, **params)
        if backends.RUNNER is not None or not backends._probed:
            runner = backends.runner()
            if runner is not None:
                outs = runner.run(primitive, args, params, out_avals)
                if outs is not None:
                    return outs
        return run_on_host(primitive, args, avals, params, out_avals)

    def describe(self) -> str:
        return "eager evaluation"


def run_on_host(primitive, args, avals, params, out_avals):
    """The outputs of ``primitive``'s impl on the host values of the concrete ``args``."""
    values = [x._value for x in args]
    with np.errstate(all="ignore"):
        if _ML_SET and (narrow.involves(avals) or narrow.involves(
                out_avals if primitive.multiple_results else (out_avals,))):  # bf16, ...
            outs = narrow.run(primitive, values, out_avals, params)
        else:
            outs = primitive.impl(*values, **params)
    if primitive.multiple_results:
        return [_wrap(o, a, primitive) for o, a in zip(outs, out_avals, strict=True)]
    return _wrap(outs, out_avals, primitive)


def _wrap(value, aval: ShapedArray, primitive) -> ArrayImpl:
    value = np.asarray(value)
    if value.dtype != aval.dtype or value.shape != aval.shape:
        raise AssertionError(
            f"internal error: impl of {primitive} gave {value.dtype}{list(value.shape)}, "
            f"its abstract eval {aval.str_short()}"
        )
    return ArrayImpl(value, aval.weak_type)


class _TraceContext(threading.local):
    def __init__(self):
        self.trace = EVAL_TRACE


EVAL_TRACE = EvalTrace()
_ctx = _TraceContext()


def current_trace() -> Trace:
    """The trace that ``Primitive.bind`` hands operands to in this thread."""
    return _ctx.trace


@contextmanager
def set_current_trace(trace: Trace):
    """Make ``trace`` current for the duration of the ``with`` block."""
    previous = _ctx.trace
    _ctx.trace = trace
    try:
        yield trace
    finally:
        _ctx.trace = previous


@contextmanager
def new_trace(trace: Trace):
    """Make ``trace`` current, and mark it dead when the block ends."""
    with set_current_trace(trace):
        try:
            yield trace
        finally:
            trace.alive = False


class Tracer(Array):
    """A stand-in for an array inside a transformation; it carries an abstract value."""

    __slots__ = ("_trace",)

    def to_concrete_value(self):
        """The concrete value if the trace knows it (as JVP of eager values does), else None."""
        return None

    def _concrete(self, cls, what):
        value = self.to_concrete_value()
        if value is None:
            raise concretization_error(cls, self, what)
        return value

    def __bool__(self):
        return bool(self._concrete(TracerBoolConversionError, "a Python bool"))

    def __int__(self):
        return int(self._concrete(ConcretizationTypeError, "a Python int"))

    def __index__(self):
        return self._concrete(TracerIntegerConversionError, "an index").__index__()

    def _no_value(self, cls, what):
        # A numeric value would leave the transformation: under jit/vmap it is unknown, and
        # under grad it would silently drop the derivative. Only discrete uses (bool, int,
        # index) may read a concrete primal.
        if self.to_concrete_value() is None:
            raise concretization_error(cls, self, what)
        raise cls(
            f"Attempted to convert a value being differentiated ({self.aval.str_short()}, "
            f"inside {self._trace.describe()}) to {what}, which would drop its derivative. "
            "Keep it an array and use jnp/lax functions on it; wrap it in "
            "lax.stop_gradient(...) first if a constant is really meant."
        )

    def __float__(self):
        self._no_value(ConcretizationTypeError, "a Python float")

    def __complex__(self):
        self._no_value(ConcretizationTypeError, "a Python complex")

    def __array__(self, dtype=None, copy=None):
        self._no_value(TracerArrayConversionError, "a NumPy array")

    def item(self, *args):
        self._no_value(ConcretizationTypeError, "a Python scalar")

    def tolist(self):
        self._no_value(ConcretizationTypeError, "a Python list")

    def block_until_ready(self):
        return self

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{self._trace.describe()}>"


def leaked_tracer_error(tracer: Tracer) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer {tracer.aval.str_short()} from "
        f"{tracer._trace.describe()}, used after that transformation returned (or outside it). "
        "A value computed inside jit/grad/vmap was stored somewhere that outlived the call "
        "(a global, a list, an attribute). Return the value from the transformed function "
        "instead of storing it."
    )


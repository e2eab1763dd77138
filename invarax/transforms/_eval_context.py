"""``ensure_compile_time_eval``: compute on concrete values at once, even while tracing."""

from __future__ import annotations

import contextlib

from ..core.trace import EVAL_TRACE, Trace, Tracer, current_trace, set_current_trace


class _CompileTimeEvalTrace(Trace):
    """Runs an operation of concrete values eagerly; one with a tracer goes to the trace that
    was current (``parent``), as if this trace were not there."""

    def process_primitive(self, primitive, args, params):
        if any(isinstance(x, Tracer) for x in args):
            with set_current_trace(self.parent):
                return self.parent.process_primitive(primitive, args, params)
        with set_current_trace(EVAL_TRACE):
            return EVAL_TRACE.process_primitive(primitive, args, params)

    def describe(self) -> str:
        return self.parent.describe()


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside this block, operations on concrete values run at once, even under ``jit``.

    As JAX's: code that builds constants (``jnp.arange(n)``, a table of values) inside a
    jitted function gets arrays, not tracers, so it can read them (``int(x)``, ``if``).
    Operations on traced values are traced as usual.

    Example:
        >>> import invarax, invarax.numpy as jnp
        >>> @invarax.jit
        ... def f(x):
        ...     with invarax.ensure_compile_time_eval():
        ...         n = int(jnp.sum(jnp.arange(4)))  # a concrete 6, even while tracing
        ...     return x * n
        >>> f(2.0)
        Array(12., dtype=float32, weak_type=True)
    """
    trace = current_trace()
    if trace is EVAL_TRACE or isinstance(trace, _CompileTimeEvalTrace):
        yield
        return
    with set_current_trace(_CompileTimeEvalTrace(trace)):
        yield

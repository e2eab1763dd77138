"""The error types invarax raises, with JAX's names so that ``except`` clauses port."""

from __future__ import annotations


class InvaraxTypeError(TypeError):
    """Base class of the tracing errors (a TypeError, as in JAX)."""


class ConcretizationTypeError(InvaraxTypeError):
    """A traced value was used where a concrete Python value is needed."""


class TracerBoolConversionError(ConcretizationTypeError):
    """A traced value was converted to ``bool`` (``if x > 0:`` under ``jit``)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """A traced value was converted to ``int`` or used as an index."""


class TracerArrayConversionError(ConcretizationTypeError):
    """A traced value was converted to a NumPy array."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that created it."""


_FIXES = (
    "This happens when a value that depends on a jit/vmap/grad argument meets Python control\n"
    "flow or a conversion to a Python value. Fixes:\n"
    "  - if the value should be fixed at trace time, mark the argument static:\n"
    "    jit(f, static_argnums=...) or static_argnames=...;\n"
    "  - for a choice between values, use jnp.where(cond, a, b) or lax.select;\n"
    "  - for a choice between computations, use lax.cond or lax.switch;\n"
    "  - for a loop whose trip count depends on the value, use lax.while_loop or\n"
    "    lax.fori_loop (lax.scan to carry state over an array);\n"
    "  - to inspect a value, return it from the function instead."
)


def concretization_error(cls, tracer, what: str):
    """Build the error for a tracer ``tracer`` converted to ``what`` (bool, int, ...)."""
    return cls(
        f"Attempted to convert a traced array ({tracer.aval.str_short()}) to {what}, "
        f"inside {tracer._trace.describe()}. The value is not known while tracing.\n{_FIXES}"
    )

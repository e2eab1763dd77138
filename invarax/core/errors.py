"""The error types invarax raises, with JAX's names so that ``except`` clauses port."""

from __future__ import annotations


class JAXTypeError(TypeError):
    """Base class of the tracing errors (a TypeError, as in JAX)."""


class JAXIndexError(IndexError):
    """Base class of the indexing errors of traced values (an IndexError, as in JAX)."""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where a concrete Python value is needed."""


class TracerBoolConversionError(ConcretizationTypeError):
    """A traced value was converted to ``bool`` (``if x > 0:`` under ``jit``)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """A traced value was used as an index (``operator.index``, ``range(x)``)."""


class TracerArrayConversionError(ConcretizationTypeError):
    """A traced value was converted to a NumPy array."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A traced boolean array was used as an index (the result's shape would be unknown)."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it."""


class KeyReuseError(JAXTypeError):
    """A random key was used twice (JAX raises it under its key-reuse checker)."""


class JaxprTypeError(TypeError):
    """An ill-typed jaxpr: always an internal error of invarax or of a transformation rule."""


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions has no definite answer (JAX's shape polymorphism)."""


class JaxRuntimeError(RuntimeError):
    """An error raised while a compiled program runs."""


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


_RUNTIME_CLASSES: dict = {}


def callback_error(err: Exception) -> JaxRuntimeError:
    """The error to raise for ``err``, raised by a user's callback while a program runs.

    As in JAX it is a ``JaxRuntimeError``; it is also an instance of ``err``'s class where
    Python allows it, so ``except ValueError`` still catches a callback's ValueError. An
    error that is a ``JaxRuntimeError`` already (a nested callback's) is returned as it is.
    """
    cls = type(err)
    if isinstance(err, JaxRuntimeError):
        return err
    message = f"the callback raised {cls.__name__}: {err}"
    if cls not in _RUNTIME_CLASSES:
        try:
            both = type(cls.__name__, (JaxRuntimeError, cls),
                        {"__module__": cls.__module__, "__str__": BaseException.__str__})
            both(message)
        except TypeError:  # a layout (OSError's) or constructor Python cannot combine
            both = JaxRuntimeError
        _RUNTIME_CLASSES[cls] = both
    return _RUNTIME_CLASSES[cls](message)

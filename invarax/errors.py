"""``invarax.errors``: JAX's ``jax.errors``, the error classes invarax raises where JAX does.

``except jax.errors.TracerBoolConversionError`` (or ``ConcretizationTypeError``, ...) works
unchanged: ``if x > 0:`` under ``jit`` raises ``TracerBoolConversionError``, ``int(x)`` and
``x.item()`` ``ConcretizationTypeError``, ``np.asarray(x)`` ``TracerArrayConversionError``,
``range(x)`` ``TracerIntegerConversionError``, ``x[mask]`` with a traced mask
``NonConcreteBooleanIndexError``, a leaked tracer ``UnexpectedTracerError``, and an error
raised inside a ``pure_callback`` while the program runs ``JaxRuntimeError``.

Example:
    >>> import invarax, invarax.errors
    >>> try:
    ...     invarax.jit(lambda x: 1 if x > 0 else 0)(1.0)
    ... except invarax.errors.TracerBoolConversionError:
    ...     print("traced bool")
    traced bool
"""

from .core.errors import (
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JaxprTypeError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError", "InconclusiveDimensionOperation", "JAXIndexError",
    "JAXTypeError", "JaxRuntimeError", "JaxprTypeError", "KeyReuseError",
    "NonConcreteBooleanIndexError", "TracerArrayConversionError", "TracerBoolConversionError",
    "TracerIntegerConversionError", "UnexpectedTracerError",
]

"""``invarax.experimental.checkify``: JAX's error categories and ``check``.

``check(pred, msg)`` on concrete values raises a ``JaxRuntimeError`` with the formatted
message when ``pred`` is false, as JAX's. The functional transformation ``checkify`` (errors
returned as values through ``jit``/``vmap``/``grad``) is not provided: under a
transformation use Equinox's ``error_if`` (``invarax.error_if``), which raises when the
program runs.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import JaxRuntimeError
from ..core.trace import Tracer

_NOT_PROVIDED = (
    "invarax does not provide jax.experimental.checkify.{} yet (errors as values through "
    "jit/vmap/grad); under a transformation use invarax.error_if(x, pred, msg) (Equinox's "
    "eqx.error_if), which raises when the program runs")


class JaxException(Exception):
    """Base class of checkify's error categories."""


class FailedCheckError(JaxException):
    """A user's ``check`` failed."""


class DivisionByZeroError(JaxException):
    """An integer division by zero."""


class NaNError(JaxException):
    """An operation produced a NaN."""


class OOBError(JaxException):
    """An out-of-bounds index."""


ErrorCategory = type[JaxException]
user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def check(pred, msg: str, *fmt_args, debug: bool = False, **fmt_kwargs) -> None:
    """Raise a ``JaxRuntimeError`` with ``msg.format(*fmt_args, **fmt_kwargs)`` if ``pred``
    (a concrete boolean) is false.

    Example:
        >>> check(True, "never shown")
        >>> try:
        ...     check(False, "x was {}", 3)
        ... except JaxRuntimeError as err:
        ...     print(err)
        x was 3
    """
    if isinstance(pred, Tracer) or any(isinstance(a, Tracer) for a in fmt_args):
        raise NotImplementedError(_NOT_PROVIDED.format("check under a transformation"))
    if not bool(np.all(np.asarray(pred))):
        raise JaxRuntimeError(msg.format(*fmt_args, **fmt_kwargs))


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """As ``check`` on concrete values; under a transformation it does nothing (as JAX's
    outside ``checkify``)."""
    if not isinstance(pred, Tracer):
        check(pred, msg, *fmt_args, **fmt_kwargs)


def checkify(f, errors=user_checks):
    """Not provided: raises ``NotImplementedError`` naming the alternative."""
    raise NotImplementedError(_NOT_PROVIDED.format("checkify"))


__all__ = [
    "DivisionByZeroError", "ErrorCategory", "FailedCheckError", "JaxException",
    "JaxRuntimeError", "NaNError", "OOBError", "all_checks", "automatic_checks", "check",
    "checkify", "debug_check", "div_checks", "float_checks", "index_checks", "nan_checks",
    "user_checks",
]

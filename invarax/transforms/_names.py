"""JAX's naming and logging helpers: ``named_call``, ``named_scope``, ``log_compiles``."""

from __future__ import annotations

import contextlib

from ..core.config import config


def named_call(fun, *, name: str | None = None):
    """``fun`` itself: JAX names its calls in profiles; invarax has no profiler names.

    Example:
        >>> named_call(abs, name="magnitude")(-2)
        2
    """
    if not callable(fun):
        raise TypeError(f"named_call: expected a function, got {type(fun).__name__}")
    return fun


@contextlib.contextmanager
def named_scope(name: str):
    """A ``with`` block naming the operations in it in JAX's profiles: a no-op in invarax."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: the name must be a str, got {type(name).__name__}")
    yield


def log_compiles(enable: bool = True):
    """Inside this ``with`` block, log each compilation of a jitted function (logger
    ``"invarax"``, WARNING, with the argument shapes), as JAX's ``log_compiles``.

    Example:
        >>> import invarax
        >>> with log_compiles():
        ...     _ = invarax.jit(lambda x: x + 1)(1.0)  # logs "Compiling <lambda> with ..."
    """
    return config.flag("jax_log_compiles", bool(enable))

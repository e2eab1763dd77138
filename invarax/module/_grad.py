"""``filter_grad`` and ``filter_value_and_grad``: gradients w.r.t. a pytree's float arrays."""

from __future__ import annotations

import functools

from ..transforms._autodiff import value_and_grad
from ._filters import combine, is_array, is_inexact_array, partition
from ._static import Static
from ._wrappers import Transformed


def _value_and_grad(fun, has_aux: bool):
    """``filter_value_and_grad(fun, has_aux=has_aux)`` as a plain closure."""
    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        if not args:
            how = ("by position, not keyword: f(x, ...), not f(x=...)" if kwargs else
                   "at all: f(x, ...)")
            raise TypeError(
                "Functions wrapped with filter_grad or filter_value_and_grad differentiate "
                f"their first argument, so it must be passed {how}")
        x, *args = args
        diff, nondiff = partition(x, is_inexact_array)

        def inner(diff_x):
            out = fun(combine(diff_x, nondiff), *args, **kwargs)
            if not has_aux:
                return out
            value, aux = out
            aux_arrays, aux_static = partition(aux, is_array)
            return value, (aux_arrays, Static(aux_static))

        value, grads = value_and_grad(inner, has_aux=has_aux)(diff)
        if has_aux:
            value, (aux_arrays, aux_static) = value
            value = (value, combine(aux_arrays, aux_static.value))
        return value, grads

    return value_and_grad_fun


def _grad(fun, has_aux: bool):
    """``filter_grad(fun, has_aux=has_aux)`` as a plain closure."""
    value_and_grad_fun = _value_and_grad(fun, has_aux)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        value, grads = value_and_grad_fun(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return grad_fun


def filter_value_and_grad(fun, *, has_aux: bool = False):
    """Like ``value_and_grad``, w.r.t. the inexact-array leaves of the first argument.

    Arguments:
        fun: a function whose first argument is any pytree (a Module, say) and which
            returns a scalar (or ``(scalar, aux)`` with ``has_aux``; aux may hold
            non-array leaves).
        has_aux: whether ``fun`` returns ``(output, aux)``.

    Returns:
        A function with ``fun``'s signature returning ``(value, grads)``; ``grads`` has
        the structure of the first argument, with None at its other leaves. It is a
        pytree holding ``fun`` (equal for equal ``fun`` and options, as Equinox's), so
        ``filter_jit(filter_value_and_grad(f))`` re-created per call traces once.

    Example:
        >>> f = filter_value_and_grad(lambda p: (p["w"] ** 2).sum() * p["n"])
        >>> f({"w": jnp.ones(2), "n": 3})
        (Array(6., dtype=float32), {'n': None, 'w': Array([6., 6.], dtype=float32)})
    """
    return Transformed(fun, _value_and_grad, (("has_aux", has_aux),))


def filter_grad(fun, *, has_aux: bool = False):
    """Like ``grad``, w.r.t. the inexact-array leaves of the first argument.

    Arguments:
        fun: as for ``filter_value_and_grad``.
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(grads, aux)`` is
            returned.

    Returns:
        A function returning the gradients: the structure of the first argument, None
        at its leaves that are not float arrays (ints, strings, integer arrays, ...).

    Example:
        >>> filter_grad(lambda p: (p[0] ** 2).sum())((jnp.ones(2), "relu"))
        (Array([2., 2.], dtype=float32), None)
    """
    return Transformed(fun, _grad, (("has_aux", has_aux),))

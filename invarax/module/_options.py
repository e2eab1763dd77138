"""Equinox's calling conventions for ``filter_jit``, ``filter_grad`` and
``filter_value_and_grad``: each is also a decorator factory (``@filter_grad(has_aux=True)``),
and ``filter_jit`` takes ``donate=``. The transforms themselves are in ``_jit.py`` and
``_grad.py``."""

from __future__ import annotations

import functools

from . import _grad, _jit


def filter_jit(fun=None, *, donate: str = "none"):
    """Compile ``fun``, tracing the array leaves of its arguments; other leaves are static.

    Non-array leaves (ints, strings, functions, a Module's static fields) are part of the
    cache key, so Python control flow on them works; outputs may hold non-array leaves.

    Arguments:
        fun: any function of pytrees (a bound method ``model.__call__`` too). Without it
            (``@filter_jit(donate="all")``), a decorator.
        donate: Equinox's donation modes: ``"all"`` donates the arrays of ``fun`` and
            of every argument, ``"all-except-first"`` all but the first argument's (as
            ``jit(donate_argnums=...)`` donates: each that an output of its shape and dtype
            can take is consumed), ``"warn"`` and ``"warn-except-first"`` the same with
            JAX's warning for a donated buffer no output can take, ``"none"`` nothing.

    Returns:
        The compiled function; results are bitwise those of calling ``fun`` (N3).
        ``.lower(*args, **kwargs)`` gives Equinox's ahead-of-time stages: ``.as_text()``
        and ``.compile()``, called with arguments like those.

    Example:
        >>> f = filter_jit(donate="all")(lambda x, name: (2 * x, name.upper()))
        >>> f(jnp.ones(2), "done")
        (Array([2., 2.], dtype=float32), 'DONE')
    """
    if donate not in _jit.DONATE:
        raise ValueError(f"filter_jit: donate must be one of {tuple(_jit.DONATE)}, got "
                         f"{donate!r}")
    if fun is None:
        return functools.partial(filter_jit, donate=donate)
    return _jit.filter_jit(fun, donate)


def filter_value_and_grad(fun=None, *, has_aux: bool = False):
    """Like ``value_and_grad``, w.r.t. the inexact-array leaves of the first argument.

    Arguments:
        fun: a function whose first argument is any pytree (a Module, say) and which
            returns a scalar (or ``(scalar, aux)`` with ``has_aux``). Without it
            (``@filter_value_and_grad(has_aux=True)``), a decorator.
        has_aux: whether ``fun`` returns ``(output, aux)``.

    Returns:
        A function returning ``(value, grads)``; ``grads`` has the structure of the first
        argument, with None at its leaves that are not float arrays.

    Example:
        >>> @filter_value_and_grad(has_aux=True)
        ... def f(p):
        ...     return (p["w"] ** 2).sum(), "aux"
        >>> f({"w": jnp.ones(2), "n": 3})
        ((Array(2., dtype=float32), 'aux'), {'n': None, 'w': Array([2., 2.], dtype=float32)})
    """
    if fun is None:
        return functools.partial(filter_value_and_grad, has_aux=has_aux)
    return _grad.filter_value_and_grad(fun, has_aux=has_aux)


def filter_grad(fun=None, *, has_aux: bool = False):
    """Like ``grad``, w.r.t. the inexact-array leaves of the first argument.

    Arguments:
        fun: as for ``filter_value_and_grad``. Without it (``@filter_grad(has_aux=True)``),
            a decorator.
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(grads, aux)``.

    Returns:
        A function returning the gradients: the structure of the first argument, None at
        its leaves that are not float arrays.

    Example:
        >>> filter_grad()(lambda p: (p[0] ** 2).sum())((jnp.ones(2), "relu"))
        (Array([2., 2.], dtype=float32), None)
    """
    if fun is None:
        return functools.partial(filter_grad, has_aux=has_aux)
    return _grad.filter_grad(fun, has_aux=has_aux)

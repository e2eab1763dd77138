"""``saved_residuals`` / ``print_saved_residuals``: what reverse mode keeps from the forward
pass, as JAX's ``jax.ad_checkpoint.print_saved_residuals``."""

from __future__ import annotations

import inspect

from ..core.array import to_array
from ..core.ir import Literal
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ..interpreters.ad import linearize_flat
from ..interpreters.staging import trace_to_jaxpr


def _argument_names(f, args, kwargs) -> list[str]:
    try:
        bound = inspect.signature(f).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # no signature (a builtin), or one that does not fit
        bound = {f"args[{i}]": a for i, a in enumerate(args)} | dict(kwargs)
    return [name + keystr(path) for name, value in bound.items()
            for path, _ in tree_flatten_with_path(value)[0]]


def saved_residuals(f, *args, **kwargs) -> list:
    """The residuals that ``grad``/``vjp`` of ``f`` at ``args`` save: ``(aval, source)``
    pairs, the source ``"from the argument x"``, ``"output of sin"``, ``"from a constant"``
    or ``"from a literal"``."""
    leaves, tree = tree_flatten((args, kwargs))
    leaves = [to_array(x, "a saved_residuals argument") for x in leaves]

    def residuals(xs):
        def flat_f(ys):
            a, k = tree_unflatten(tree, ys)
            return tree_flatten(f(*a, **k))[0]

        _, linear = linearize_flat(flat_f, list(xs), "saved_residuals")
        return linear.jaxpr.consts

    jaxpr = trace_to_jaxpr(residuals, [x.aval for x in leaves], "saved_residuals").jaxpr
    names = dict(zip(map(id, jaxpr.invars), _argument_names(f, args, kwargs), strict=False))
    producer = {id(v): eqn.primitive for eqn in jaxpr.eqns for v in eqn.outvars}
    found = []
    for v in jaxpr.outvars:
        if isinstance(v, Literal):
            source = "from a literal"
        elif id(v) in names:
            source = f"from the argument {names[id(v)]}"
        elif id(v) in producer:
            source = f"output of {producer[id(v)]}"
        else:
            source = "from a constant"
        found.append((v.aval, source))
    return found


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Print what reverse-mode differentiation of ``f`` at ``args`` saves, one line each.

    Example:
        >>> import invarax.numpy as jnp
        >>> print_saved_residuals(lambda x, y: jnp.sum(jnp.sin(x) * y), jnp.ones(3), jnp.ones(3))
        f32[3] output of cos
        f32[3] from the argument y
        f32[3] output of sin
    """
    for aval, source in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {source}")

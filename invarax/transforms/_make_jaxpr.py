"""``make_jaxpr``: the typed program a function traces to, as JAX prints it."""

from __future__ import annotations

import functools

from ..compiler.passes import optimize as optimize_jaxpr
from ..core import refs
from ..core.api_util import StaticArgs
from ..interpreters.staging import trace_fun


def make_jaxpr(fun, static_argnums=(), static_argnames=(), optimize=False):
    """A function that returns the jaxpr of ``fun`` for given example arguments.

    Arguments:
        fun: the function to trace; arguments and outputs may be pytrees.
        static_argnums, static_argnames: arguments passed through as Python values.
        optimize: if True, return the program after invarax's optimisation passes
            (dead-code and common-subexpression elimination, constant folding, no-op
            removal: ``invarax.compiler.passes``), which is what ``jit`` runs. Its
            results are bitwise those of the traced program. An invarax extension;
            the default (False) gives JAX's jaxpr.

    Returns:
        A function taking ``fun``'s arguments and returning a ``ClosedJaxpr``, whose
        ``str()`` is the program in JAX's format.

    Example:
        >>> print(make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0))
        { lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }
    """
    static = StaticArgs(fun, static_argnums, static_argnames)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        dyn_args, dyn_kwargs, static_vals = static.split(args, kwargs)

        def dyn_fun(*a, **k):
            full_args, full_kwargs = static.merge(a, k, static_vals)
            return refs.call_in_frame(fun, *full_args, **full_kwargs)[0]

        closed, _, _ = trace_fun(dyn_fun, dyn_args, dyn_kwargs, f"make_jaxpr of {static.name}")
        return optimize_jaxpr(closed) if optimize else closed

    return make

"""Custom derivative rules (``custom_jvp``, ``custom_vjp``), and the call-primitive helpers
they share with rematerialization (``checkpoint``, in ``_checkpoint``).

Each decorated function is traced to a jaxpr and bound as one call primitive whose
parameters carry the jaxpr and the user's rules, so staging (``make_jaxpr``, ``jit``)
shows one equation, eager evaluation and ``jit`` run the function's own ops, and the
differentiation rules below take over under ``jvp``/``linearize``/``grad``:

- ``custom_jvp_call``: the JVP calls the user's rule (tangents instantiated) and checks
  what it returns against the function's outputs.
- ``custom_vjp_call``: the JVP runs ``fwd`` for the output and the residuals, and emits
  the tangent through the linear primitive ``custom_lin``, whose transpose calls
  ``bwd``. ``custom_lin`` cannot run forwards: forward mode raises, as in JAX.

Under ``vmap`` each call stays one call of the same primitive, so the rules survive in
either order (``vmap(grad(f))``, ``grad(vmap(f))``): the body is batched into a new
jaxpr and each rule is wrapped into its batched version (``batch_flat`` of it, outputs
batched at axis 0). Every output of a batched call is batched at axis 0. A cotangent
that ``bwd`` returns for an unbatched input is summed over the examples, as JAX does.

A function's closed-over values (constants, and tracers of enclosing transformations)
become leading operands of its call (``num_consts`` of them), so the traced jaxpr never
holds a tracer. A closed-over value must not be one being differentiated: pass it as an
argument instead (JAX raises too).
"""

from ._custom_common import CustomVJPPrimal, SymbolicZero
from ._custom_jvp import custom_jvp
from ._custom_vjp import custom_vjp

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_jvp", "custom_vjp"]

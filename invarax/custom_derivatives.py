"""``invarax.custom_derivatives``: JAX's ``jax.custom_derivatives`` names that invarax has —
``custom_jvp``, ``custom_vjp``, ``SymbolicZero`` (what a ``custom_jvp`` rule defined with
``symbolic_zeros=True`` receives for an argument that is not differentiated, and a
``custom_vjp`` ``bwd`` so defined for an unused output), ``CustomVJPPrimal`` (an argument
as such a ``custom_vjp`` ``fwd`` receives it), and the
primitives their calls become in a jaxpr, ``custom_jvp_call_p`` and ``custom_vjp_call_p``."""

from .transforms._custom_derivatives import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp
from .transforms._custom_jvp import custom_jvp_call_p
from .transforms._custom_vjp import custom_vjp_call_p

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
           "custom_vjp_call_p"]

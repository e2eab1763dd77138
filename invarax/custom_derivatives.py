"""``invarax.custom_derivatives``: JAX's ``jax.custom_derivatives`` names that invarax has —
``custom_jvp``, ``custom_vjp`` and ``SymbolicZero`` (what a ``custom_jvp`` rule defined with
``symbolic_zeros=True`` receives for an argument that is not differentiated)."""

from .transforms._custom_derivatives import SymbolicZero, custom_jvp, custom_vjp

__all__ = ["SymbolicZero", "custom_jvp", "custom_vjp"]

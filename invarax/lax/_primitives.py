"""The primitive objects under JAX's names: ``lax.add_p``, ``lax.dot_general_p``, ...

Libraries compare an equation's primitive with them (``eqn.primitive is lax.mul_p``) or
bind them. JAX names each ``<name>_p`` after the primitive's printed name (``-`` as ``_``),
except the ones listed here.
"""

from __future__ import annotations

from ..core.trace import PRIMITIVES

_RENAMED = {"checkpoint": "remat_p"}


def primitive_named(module: str, attribute: str):
    """The primitive that JAX calls ``attribute`` in ``module``, or an AttributeError.

    Example:
        >>> primitive_named("invarax.lax", "scatter_add_p")
        scatter-add
    """
    if attribute.endswith("_p"):
        for name, prim in PRIMITIVES.items():
            if _RENAMED.get(name, name.replace("-", "_") + "_p") == attribute:
                return prim
    raise AttributeError(f"module {module!r} has no attribute {attribute!r}")

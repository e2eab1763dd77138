"""Effects: the primitives that the compiler's passes never remove, merge or fold.

Every invarax primitive is pure (random numbers are functions of their key), but for these:

- ``EFFECTFUL``: primitives with an effect (``debug_callback``), never removed, merged nor
  folded; an equation calling a sub-jaxpr that holds one is effectful too (``has_effect``);
- ``NO_FOLD``: pure primitives that run when the program runs, never folded
  (``pure_callback``: opaque, its function may be slow or have a side channel).

An op family adds its primitive to a set just under the primitive's other rules.
"""

from __future__ import annotations

from .ir import ClosedJaxpr

EFFECTFUL: set = set()
NO_FOLD: set = set()


def has_effect(eqn) -> bool:
    """Whether ``eqn`` is effectful, or calls a sub-jaxpr with an effectful equation.

    Arguments:
        eqn: an equation (``core.ir.Eqn``).

    Returns:
        True if the passes must keep ``eqn`` where it is, once per run.
    """
    return effectful(eqn.primitive, eqn.params)


def effectful(prim, params) -> bool:
    """Whether an equation of ``prim`` with ``params`` is effectful (see ``has_effect``)."""
    if prim in EFFECTFUL:
        return True
    for value in params.values():
        subs = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, ClosedJaxpr) and any(map(has_effect, v.jaxpr.eqns)) for v in subs):
            return True
    return False

"""Effects: the primitives that the compiler's passes never remove, merge or fold.

Every invarax primitive is pure (random numbers are functions of their key), but for these:

- ``EFFECTFUL``: primitives with an effect (``debug_callback``), never removed, merged nor
  folded; an equation calling a sub-jaxpr that holds one is effectful too (``has_effect``);
- ``NO_FOLD``: pure primitives that run when the program runs, never folded
  (``pure_callback``: opaque, its function may be slow or have a side channel);
- ``ON_COMPILE``: pure primitives that observe compilation, never folded:
  ``ON_COMPILE[prim](eqn)`` is called for each equation of ``prim`` left in a program once
  the passes have optimised it to be run (``dce_probe``: it survived dead-code elimination).

An op family adds its primitive to a set just under the primitive's other rules.
"""

from __future__ import annotations

from .ir import ClosedJaxpr, Eqn

EFFECTFUL: set = set()
NO_FOLD: set = set()
ON_COMPILE: dict = {}


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
    return _reaches(prim, params, EFFECTFUL)


def runs_python(eqn) -> bool:
    """Whether ``eqn`` hands values to Python code, itself or in a sub-jaxpr: a callback
    (``EFFECTFUL`` or ``NO_FOLD``), which may keep them past the call.

    Arguments:
        eqn: an equation (``core.ir.Eqn``).

    Returns:
        True if a value ``eqn`` reads may outlive the program's run.
    """
    return _reaches(eqn.primitive, eqn.params, EFFECTFUL | NO_FOLD)


def _reaches(prim, params, prims) -> bool:
    """Whether ``prim`` is in ``prims``, or ``params`` hold a sub-jaxpr with such an
    equation (at any depth)."""
    if prim in prims:
        return True
    for value in params.values():
        subs = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, ClosedJaxpr)
               and any(_reaches(e.primitive, e.params, prims) for e in v.jaxpr.eqns)
               for v in subs):
            return True
    return False


def _eqn_effects(eqn) -> frozenset:
    """JAX's ``eqn.effects``: empty for a pure equation; for an effectful one (``has_effect``)
    the effectful primitives it binds, itself or in its sub-jaxprs."""
    if not has_effect(eqn):
        return frozenset()
    found, todo = set(), [eqn]
    while todo:
        e = todo.pop()
        if e.primitive in EFFECTFUL:
            found.add(e.primitive)
        for value in e.params.values():
            subs = value if isinstance(value, tuple) else (value,)
            todo += [s for v in subs if isinstance(v, ClosedJaxpr) for s in v.jaxpr.eqns]
    return frozenset(found)


# Set here, beside the effect tables, as ``ir`` (which they read) cannot import them.
Eqn.effects = property(_eqn_effects)

"""``jax.interpreters.mlir``: how a library's primitive runs under ``jit``.

invarax compiles no MLIR: a primitive runs its impl under ``jit``, as eagerly. So
``register_lowering(prim, lower_fun(f))`` makes ``jit`` compute ``prim`` with ``f`` (on
arrays, as an impl), and a lowering rule that emits MLIR is refused with an error.
"""

from __future__ import annotations

import dataclasses

from ...core.lowering import register_lowering as _register
from ..core import Primitive, _eager_impl


@dataclasses.dataclass(frozen=True)
class _LoweredFun:
    fun: object
    multiple_results: bool


def lower_fun(fun, multiple_results: bool = True):
    """The lowering that computes an equation with ``fun`` (on arrays, as an impl)."""
    return _LoweredFun(fun, multiple_results)


def register_lowering(prim, rule, platform: str | None = None):
    """Make ``jit`` compute ``prim`` with ``rule``, which must come from ``lower_fun``."""
    if not isinstance(rule, _LoweredFun):
        raise NotImplementedError(
            f"register_lowering({prim}, ...): invarax runs no MLIR lowering rule; lower it "
            "with mlir.lower_fun(f) (f computes the primitive on arrays), or rely on the "
            "primitive's impl, which jit runs when no lowering is registered")
    if platform not in (None, "cpu") or not isinstance(prim, Primitive):
        return  # another platform's rule, or one of invarax's primitives (lowered already)
    _register(prim, impl=lambda *values, **params: _eager_impl(prim, rule.fun, values, params))


__all__ = ["lower_fun", "register_lowering"]

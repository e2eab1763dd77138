"""The lowering table: how each primitive runs under ``jit``, per platform, as data.

A primitive's op family registers its rule just under the primitive's other rules
(``register_lowering(prim, ...)``, as JAX's ``mlir.register_lowering``); family helpers
(``defvectorized``, ``defreducer``, ...) register their members'. The compiler
(``invarax/compiler``) reads only this table: it names no primitive.

A rule (``Lowering``) holds, for one platform:

- how an equation is computed: ``impl(*operands, **params)`` (on ``"cpu"``, the impl eager
  evaluation calls, so ``jit`` gives eager's bits), or ``prepare(eqn)``, which returns
  ``run(*operands)`` worked out once for the equation's shapes (the contraction's prepared
  kernel; a ``run.pack(rhs)`` packs an rhs that a loop keeps the same);
- as an elementwise op: ``fusible`` (fusion groups may compute it chunk by chunk: its impl,
  or ``kernel_of(dtype)``, writes ``out=`` if it is a ufunc or has ``writes_out``), ``c``
  (the per-element C form, below) and ``operator`` (the Python operator that computes it on
  0-d operands bit for bit);
- as a reduction: ``row_reduction`` (it reduces its ``axes`` parameter, each row on its
  own, so a fusion group may reduce it chunk by chunk) and ``c_fold`` (a full reduction in
  a native loop: ``(identity, compound assignment)``, as ``("0", "|=")``);
- ``scalar_broadcast``: with a 0-d operand, every element of the output is that operand;
  ``row_broadcast(eqn, p)``: whether the output keeps the operand's first ``p`` axes and only
  adds, removes or broadcasts unit axes after them (every element of an output row is its
  operand row's one element), so a fusion group may read a row value through it;
- rewrites: ``noop(ndim, params)``, whether an equation whose output has its operand's
  aval is the identity; ``permutation(params)``, the axes order of a pure transposition;
  ``absorb_transpose(eqn, permutation)``, ``(primitive, invars, params)`` computing the
  transposition of ``eqn``'s output directly, or None; ``stacked(eqn, side)``, the product
  of a whole scanned operand (on ``side`` 0 or 1) and the other, the scanned axis first,
  or None; ``biased(eqn, bias_shape, bias_first)``, ``run(*operands, bias)`` computing the
  product plus a bias over its trailing axes (``bias + product`` if ``bias_first``) with
  the bits of the two operations, or None; ``tiles(eqn)``, whether the output repeats the
  operand whole over leading axes (a bias broadcast over a batch); ``pad_piece(eqn)``, the
  region of zeros that the equation's operand fills, or None; ``sums_pieces``: an addition
  whose float sum of disjoint zero-padded pieces is each piece copied into zeros, then
  ``+ 0``;
- ``placement(params)``: the sharding that an output computed by the equation is placed
  with when it is an output of ``jit`` (``with_sharding_constraint``), or None.
- ``on_arrays``: the impl takes the device it runs on, then concrete ``Array``s rather
  than buffers, returns ``Array``s, and evaluates them again operation by operation (a call
  or a loop on an accelerator, whose body's operations each run where their operands
  live).

The per-element C forms (``c``), read by the native loop generator
(``compiler/native.py``) and meant for a CUDA generator too: ``("arith", op)`` (``op`` one
of ``+ - * /``: IEEE in the operands' precision, the first NaN operand kept; integers wrap
around; integer ``/`` truncates, by 0 gives 0 and by -1 wraps), ``("compare", op)``,
``("extremum", op)`` (``>``: max, ``<``: min; a NaN operand wins), ``("bitwise", op)``,
``("not",)``, ``("neg",)``, ``("abs",)``,
``("quiet", name)`` (the C math function ``name`` of a float, a NaN quieted),
``("rsqrt",)`` (one over the square root), ``("shift", op)`` (``<<`` or ``>>``, logical,
on the unsigned bits; an amount of the bit width or more gives 0), ``("fma",)`` (``a * b + c``
rounded once), ``("sign",)`` (NumPy's), ``("rem",)`` (of integers, C's ``%``; by 0
or -1 it is 0), ``("round",)`` (by its ``rounding_method`` parameter: half away from
zero, or to even), ``("nextafter",)`` (C99's, of floats), ``("is_finite",)``, ``("select",)``,
``("convert",)``, ``("integer_pow",)`` (by its ``y`` parameter) and ``("identity",)``.

Effects are not per platform: they live in ``core/effects.py``.

A new backend adds its rules with ``register_lowering(prim, platform="cuda", ...)`` (from
its own module, or beside the primitive's other rules) and its compiler reads them with
``lowering(prim, "cuda")``; no compiler file changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

LOWERINGS: dict = {}  # platform -> {primitive: Lowering}


@dataclass(frozen=True)
class Lowering:
    """How a primitive runs under ``jit`` on one platform (see the module docstring)."""

    impl: Callable
    prepare: Callable | None = None
    # elementwise
    fusible: bool = False
    kernel_of: Callable | None = None
    c: tuple | None = None
    operator: str | None = None
    # reductions and broadcasts
    row_reduction: bool = False
    c_fold: tuple | None = None
    scalar_broadcast: bool = False
    row_broadcast: Callable | None = None
    # rewrites
    noop: Callable | None = None
    permutation: Callable | None = None
    absorb_transpose: Callable | None = None
    stacked: Callable | None = None
    biased: Callable | None = None
    tiles: Callable | None = None
    pad_piece: Callable | None = None
    sums_pieces: bool = False
    # where a jit output computed by the equation lives
    placement: Callable | None = None
    # the impl takes concrete Arrays (a backend's call and loop rules)
    on_arrays: bool = False

    def kernel(self, dtype):
        """The function a fused chunk of operands of ``dtype`` calls (``impl``, unless the
        impl dispatches on the dtype: then what it calls for ``dtype``)."""
        return self.impl if self.kernel_of is None else self.kernel_of(dtype)


def register_lowering(prim, *, platform: str = "cpu", impl=None, **fields) -> Lowering:
    """Register how ``prim`` runs under ``jit`` on ``platform``.

    Arguments:
        prim: the primitive.
        platform: ``"cpu"`` (the only one today) or a backend's name.
        impl: the function computing an equation; default: the primitive's impl (on
            ``"cpu"`` it must be that of eager evaluation, or give its bits).
        fields: the other fields of ``Lowering``.

    Returns:
        The rule.
    """
    rule = Lowering(impl=prim.impl if impl is None else impl, **fields)
    LOWERINGS.setdefault(platform, {})[prim] = rule
    return rule


def lowering(prim, platform: str = "cpu") -> Lowering:
    """The rule of ``prim`` on ``platform``.

    On ``"cpu"`` a primitive without a registered rule (one defined outside invarax, or a
    compiler's own call item) runs its impl and is neither fused nor rewritten.

    Arguments:
        prim: a primitive (or any object with an ``impl``).
        platform: the platform's name.

    Returns:
        The ``Lowering``.

    Example:
        >>> from invarax.ops.elementwise import add_p
        >>> rule = lowering(add_p)
        >>> rule.fusible, rule.c, rule.operator
        (True, ('arith', '+'), '+')
    """
    rule = LOWERINGS.get(platform, {}).get(prim)
    if rule is not None:
        return rule
    if platform != "cpu":
        raise NotImplementedError(f"{prim} has no lowering for platform {platform!r}; "
                                  "register one with register_lowering(..., platform=...)")
    return Lowering(impl=prim.impl)

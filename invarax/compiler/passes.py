"""Optimisation passes over jaxprs that never change a bit (N3).

Each pass maps a ``ClosedJaxpr`` to an equivalent one whose every output has, for
every input, the bits of the original:

- **dead-code elimination** (``dce``): drops equations whose outputs are unused and
  constvars nobody reads. The inputs and outputs stay as they are. Every invarax
  primitive is pure (random numbers are functions of their key), so any unused
  equation may go, but those listed in ``core/effects.py`` (``EFFECTFUL``).
- **common-subexpression elimination** (``cse``): an equation with the same
  primitive, the same parameters and the same inputs as an earlier one (equal
  literals: the same dtype, weak type and bits, so ``0.0`` and ``-0.0`` differ) reuses
  that one's outputs. Two uses of one random key give one draw, as they give the same
  numbers anyway. Equations with a ``prevent_cse=True`` parameter (``checkpoint``'s) are
  kept apart.
- **constant folding** (``fold_constants``): an equation whose inputs are all
  literals or concrete consts runs now, with the impl eager evaluation calls, so its
  bits are those of the run it replaces. Outputs larger than ``FOLD_MAX_SIZE``
  elements are left in the program (a folded value is held by the program for good);
  ``NO_FOLD`` primitives (``core/effects.py``) are never folded.
- **no-op removal** (``remove_noops``): exact identities only, as the lowering table's
  ``noop`` rules say (``core/lowering.py``): a conversion to the operand's own dtype and
  weak type, a reshape or broadcast to the operand's own shape, an identity transpose, a
  squeeze of no axes, ``integer_pow`` with exponent 1.
- **transposed products** (``layout``): a transposition (the table's ``permutation``) of
  a product, its only reader, that the product's ``absorb_transpose`` rule can compute
  directly: ``transpose(dot_general(a, b))`` whose permutation only swaps the two
  operands' free axes (batch axes first) becomes ``dot_general(b, a)``: the same values,
  computed straight into the transposed layout instead of returning a strided view that
  every later elementwise operation would walk across (a ``Linear`` layer's weight
  gradient, ``W.T``'s cotangent). The canonical contraction's order is symmetric in its
  operands (``docs/numerics.md``), so the bits are the same; complex products are left
  alone.

What no pass does: reassociate, contract ``a*b+c`` into an FMA, rewrite by algebra
(``x + 0.0 -> x`` is wrong for ``-0.0``, ``x * 2 / 2 -> x`` is wrong on overflow,
``log(sqrt(x)) -> 0.5 * log(x)`` rounds differently), or change the order of a
reduction. Sub-jaxprs held in parameters (nested ``jit``, ``custom_jvp_call``,
``checkpoint``, ...) are optimised by the same passes; the call equations stay.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import narrow
from ..core.array import ArrayImpl
from ..core.aval import ShapedArray
from ..core.effects import EFFECTFUL, NO_FOLD, ON_COMPILE, effectful, has_effect  # noqa: F401 (EFFECTFUL for _errors)
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..core.lowering import lowering

FOLD_MAX_SIZE = 4096  # elements of each output of a folded equation, at most

ALL_PASSES = frozenset({"dce", "cse", "fold", "noops", "layout"})


def optimize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Run every pass: no-op removal, constant folding and CSE in one sweep, then DCE.

    This is the program that runs (``jit``, loop bodies): each equation left in it, at any
    depth, whose primitive observes compilation (``core.effects.ON_COMPILE``) is told so.

    Arguments:
        closed: the program, as ``make_jaxpr`` returns it.

    Returns:
        An equivalent ``ClosedJaxpr`` with the same inputs and outputs: bitwise the
        same results, usually fewer equations.

    Example:
        >>> def f(x):
        ...     return jnp.sin(x) * jnp.sin(x)
        >>> print(optimize(make_jaxpr(f)(1.0)))
        { lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b b in (c,) }
    """
    closed = _run(closed, ALL_PASSES)
    _observe(closed.jaxpr)
    return closed


def _observe(jaxpr: Jaxpr) -> None:
    """Call the ``ON_COMPILE`` hook of each equation of ``jaxpr`` and its sub-jaxprs."""
    for eqn in jaxpr.eqns:
        hook = ON_COMPILE.get(eqn.primitive)
        if hook is not None:
            hook(eqn)
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    _observe(sub.jaxpr)


def dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Dead-code elimination alone (see the module docstring).

    Arguments:
        closed: a program.

    Returns:
        ``closed`` without the equations and constvars its outputs do not need.

    Example:
        >>> def f(x):
        ...     unused = jnp.cos(x)
        ...     return jnp.sin(x)
        >>> print(dce(make_jaxpr(f)(1.0)))
        { lambda ; a:f32[]. let b:f32[] = sin a in (b,) }
    """
    return _run(closed, frozenset({"dce"}))


def cse(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Common-subexpression elimination alone (see the module docstring).

    Arguments:
        closed: a program.

    Returns:
        ``closed`` with each repeated computation done once (the repeats become dead
        code, which ``dce`` removes).

    Example:
        >>> def f(x):
        ...     return jnp.exp(x) - jnp.exp(x)
        >>> print(dce(cse(make_jaxpr(f)(1.0))))
        { lambda ; a:f32[]. let b:f32[] = exp a; c:f32[] = sub b b in (c,) }
    """
    return _run(closed, frozenset({"cse"}))


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Constant folding alone (see the module docstring).

    Arguments:
        closed: a program.

    Returns:
        ``closed`` with the equations of constant inputs evaluated: scalars become
        literals, arrays new consts.

    Example:
        >>> def f(x):
        ...     return x * jnp.exp(2.0)
        >>> print(dce(fold_constants(make_jaxpr(f)(1.0))))
        { lambda ; a:f32[]. let b:f32[] = mul a 7.389056:f32[] in (b,) }
    """
    return _run(closed, frozenset({"fold"}))


def remove_noops(closed: ClosedJaxpr) -> ClosedJaxpr:
    """No-op removal alone (see the module docstring).

    Arguments:
        closed: a program.

    Returns:
        ``closed`` with exact identities (same-dtype conversions, same-shape reshapes,
        ...) bypassed.

    Example:
        >>> def f(x):
        ...     return jnp.sin(x.astype(jnp.float32).reshape(3))
        >>> print(dce(remove_noops(make_jaxpr(f)(jnp.ones(3)))))
        { lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }
    """
    return _run(closed, frozenset({"noops"}))


def _run(closed: ClosedJaxpr, passes: frozenset) -> ClosedJaxpr:
    if passes - {"dce"}:
        closed = _sweep(closed, passes)
    if "dce" in passes:
        closed = _dce(closed)
    return closed


@functools.lru_cache(maxsize=4096)
def _run_sub(closed: ClosedJaxpr, passes: frozenset) -> ClosedJaxpr:
    # Cached on the jaxpr's identity, so a sub-jaxpr shared by several equations (two calls
    # of one jitted function) is optimised once and stays one object, which CSE can merge.
    return _run(closed, passes)


# ---------------------------------------------------------------------------------------
# The forward sweep: no-ops, folding and CSE.


def _sweep(closed: ClosedJaxpr, passes: frozenset) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    subst = {}  # id(var) -> the atom (Var or Literal) that replaces it
    values = {  # id(constvar) -> concrete value
        id(v): c for v, c in zip(jaxpr.constvars, closed.consts, strict=True)
        if isinstance(c, ArrayImpl)
    }
    constvars, consts = list(jaxpr.constvars), list(closed.consts)
    seen = {}  # CSE key -> outvars of the first equation with that key
    eqns = []
    products = {}  # id(outvar) -> a product equation whose only reader may be a transpose
    readers = _readers(jaxpr) if "layout" in passes else {}

    def read(v):
        return subst.get(id(v), v) if isinstance(v, Var) else v

    for eqn in jaxpr.eqns:
        invars = [read(v) for v in eqn.invars]
        params = _optimize_params(eqn.params, passes)
        prim = eqn.primitive
        permutation = lowering(prim).permutation
        if permutation is not None and invars and id(invars[0]) in products:
            product = products[id(invars[0])]
            swapped = lowering(product.primitive).absorb_transpose(product, permutation(params))
            if swapped is not None:
                eqn = Eqn(swapped[0], swapped[1], eqn.outvars, swapped[2])
                prim, invars, params = eqn.primitive, eqn.invars, eqn.params
        if "noops" in passes and _is_noop(prim, invars, eqn.outvars, params):
            subst[id(eqn.outvars[0])] = invars[0]
            continue
        key = None
        if "cse" in passes and _mergeable(prim, params):
            key = _cse_key(prim, params, invars)
            hit = seen.get(key)
            if hit is not None:
                for old, new in zip(eqn.outvars, hit, strict=True):
                    subst[id(old)] = new
                continue
        if "fold" in passes:
            folded = _fold(prim, invars, eqn.outvars, params, values)
            if folded is not None:
                outs = []
                for var, val in zip(eqn.outvars, folded, strict=True):
                    if var.aval.shape == ():
                        atom = Literal(val, var.aval)
                    else:
                        atom = Var(var.aval)
                        values[id(atom)] = val
                        constvars.append(atom)
                        consts.append(val)
                    subst[id(var)] = atom
                    outs.append(atom)
                if key is not None:
                    seen[key] = outs
                continue
        if key is not None:
            seen[key] = eqn.outvars
        unchanged = params is eqn.params and all(
            a is b for a, b in zip(invars, eqn.invars, strict=True))
        eqns.append(eqn if unchanged else Eqn(prim, invars, eqn.outvars, params))
        if (lowering(prim).absorb_transpose is not None
                and readers.get(id(eqn.outvars[0])) == 1):
            products[id(eqn.outvars[0])] = eqns[-1]
    outvars = [read(v) for v in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, outvars, eqns, check=False), consts)


def _readers(jaxpr: Jaxpr) -> dict:
    """id(var) -> how many times the equations and outputs of ``jaxpr`` read it."""
    counts = {}
    for v in (*(v for e in jaxpr.eqns for v in e.invars), *jaxpr.outvars):
        if isinstance(v, Var):
            counts[id(v)] = counts.get(id(v), 0) + 1
    return counts


def _optimize_params(params: dict, passes: frozenset) -> dict:
    """``params`` with each sub-jaxpr optimised (the same dict if there is none)."""
    new = None
    for name, value in params.items():
        if isinstance(value, ClosedJaxpr):
            opt = _run_sub(value, passes)
        elif isinstance(value, tuple) and any(isinstance(v, ClosedJaxpr) for v in value):
            opt = tuple(_run_sub(v, passes) if isinstance(v, ClosedJaxpr) else v for v in value)
        else:
            continue
        if new is None:
            new = dict(params)
        new[name] = opt
    return params if new is None else new


def _is_noop(prim, invars, outvars, params) -> bool:
    """Whether the equation is the identity: its output has its operand's aval (checked
    first) and its lowering's ``noop`` rule says so."""
    rule = lowering(prim).noop
    if rule is None or len(invars) != 1 or invars[0].aval != outvars[0].aval:
        return False
    return rule(len(outvars[0].aval.shape), params)


def _mergeable(prim, params) -> bool:
    return not effectful(prim, params) and not params.get("prevent_cse", False)


def _cse_key(prim, params, invars):
    ins = tuple(_literal_key(v) if isinstance(v, Literal) else id(v) for v in invars)
    return prim, _freeze(params), ins


def _literal_key(lit: Literal):
    return "literal", lit.aval, np.asarray(lit.val).tobytes()


def _freeze(value):
    """A hashable stand-in for a parameter value, equal only for equal parameters.

    Types are part of it (``1`` and ``1.0`` and ``True`` compare equal in Python) and
    floats are taken by their bits (``0.0 == -0.0``); arrays by dtype, shape and bytes;
    jaxprs by structure (two traces of one function are equal). Functions and other
    objects are compared by identity.
    """
    if isinstance(value, ClosedJaxpr):
        return _structure(value)
    if isinstance(value, dict):
        return dict, tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return type(value), tuple(_freeze(v) for v in value)
    if isinstance(value, (float, complex, np.generic, np.ndarray)):
        arr = np.asarray(value)
        return type(value), arr.dtype, arr.shape, arr.tobytes()
    if isinstance(value, (bool, int, str, bytes, type(None), np.dtype, type, ShapedArray)):
        return type(value), value
    return "object", id(value)  # the equation holds the object while the pass runs


@functools.lru_cache(maxsize=4096)
def _structure(closed: ClosedJaxpr):
    """A hashable description of ``closed``, equal for equal programs.

    Variables are numbered in order of definition; consts are taken by identity (the
    cache holds them); parameters as ``_freeze`` takes them.
    """
    jaxpr = closed.jaxpr
    number = {id(v): i for i, v in enumerate((*jaxpr.constvars, *jaxpr.invars))}

    def atom(v):
        return _literal_key(v) if isinstance(v, Literal) else number[id(v)]

    eqns = []
    for eqn in jaxpr.eqns:
        ins = tuple(atom(v) for v in eqn.invars)
        for v in eqn.outvars:
            number[id(v)] = len(number)
        outs = tuple(v.aval for v in eqn.outvars)
        eqns.append((eqn.primitive, _freeze(eqn.params), ins, outs))
    return (tuple(jaxpr.in_avals), tuple(id(c) for c in closed.consts), tuple(eqns),
            tuple(atom(v) for v in jaxpr.outvars))


def _fold(prim, invars, outvars, params, values):
    """The outputs of the equation evaluated now, or None if it is not to be folded."""
    if effectful(prim, params) or prim in NO_FOLD or prim in ON_COMPILE or any(
            v.aval.size > FOLD_MAX_SIZE for v in outvars):
        return None
    if narrow.involves([v.aval for v in (*invars, *outvars)]):  # ml_dtypes' types: eager's path
        return None
    args = []
    for v in invars:
        if isinstance(v, Literal):
            args.append(np.asarray(v.val))
        elif id(v) in values:
            args.append(values[id(v)]._value)
        else:
            return None
    try:
        with np.errstate(all="ignore"):  # as eager evaluation runs it
            outs = prim.impl(*args, **params)
    except Exception:  # left in the program, to raise at run time as eager would
        return None
    outs = outs if prim.multiple_results else [outs]
    folded = []
    for out, var in zip(outs, outvars, strict=True):
        out = np.asarray(out)
        if out.dtype != var.aval.dtype or out.shape != var.aval.shape:
            return None
        folded.append(ArrayImpl(out, var.aval.weak_type))
    return folded


# ---------------------------------------------------------------------------------------
# Dead-code elimination.


def _dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    live = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if has_effect(eqn) or any(id(v) in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    pairs = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts, strict=True)
             if id(v) in live]
    constvars = [v for v, _ in pairs]
    consts = [c for _, c in pairs]
    kept.reverse()
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, jaxpr.outvars, kept, check=False), consts)

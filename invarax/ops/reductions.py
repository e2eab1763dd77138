"""Reduction primitives: reduce_{sum,prod,max,min,and,or}, argmax/argmin and cumulative scans.

Impls call ``invarax.kernels`` only, where the order of floating-point operations
of each output element is a fixed function of the reduction length, so eager
evaluation and ``jit`` (which call the same impls) give the same bits.
"""

from __future__ import annotations

import math

from .. import kernels
from ..core import dtypes, narrow
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import emitted
from ..interpreters.ad import Zero, defjvp, defjvp_zero, deflinear, jvp_flat, jvp_rules
from ..interpreters.batching import batching_rules
from . import elementwise as ew
from ._util import NUMBER, canonicalize_axis, check_kinds

ORDERED = "biuf"  # kinds with a total order (max, min, argmax)


def canonical_axes(name: str, shape: tuple, axes) -> tuple:
    """``axes`` of an array of ``shape`` as a sorted tuple of non-negative ints.

    Arguments:
        name: the operation, for error messages (``"jnp.sum"``).
        shape: the operand's shape.
        axes: ints, negative ones counting from the end.

    Returns:
        The sorted tuple; a ValueError names the shape if an axis is out of range
        or repeated.

    Example:
        >>> canonical_axes("jnp.sum", (2, 3, 4), (-1, 0))
        (0, 2)
    """
    try:
        canonical = [canonicalize_axis(a, len(shape)) for a in axes]
    except ValueError as err:
        raise ValueError(f"{name}: {err} (the operand has shape {shape})") from None
    if len(set(canonical)) != len(canonical):
        raise ValueError(
            f"{name}: repeated axis in {tuple(axes)} for an operand of shape "
            f"{shape}; list each axis once"
        )
    return tuple(sorted(canonical))


def _check_axes(name: str, x: ShapedArray, axes) -> None:
    if tuple(axes) != canonical_axes(f"lax.{name}", x.shape, axes):
        raise TypeError(
            f"{name}: axes {axes} must be a sorted tuple of non-negative ints "
            f"(lax.{name} normalises them)"
        )


def _kept(ndim: int, axes) -> tuple:
    """The axes of an operand of rank ``ndim`` that a reduction over ``axes`` keeps."""
    return tuple(d for d in range(ndim) if d not in axes)


def _reduced_aval(name: str, x: ShapedArray, axes, kinds: str) -> ShapedArray:
    check_kinds(name, x, kinds)
    _check_axes(name, x, axes)
    shape = tuple(x.shape[d] for d in _kept(x.ndim, axes))
    return ShapedArray(shape, x.dtype, x.weak_type)


def defreducer(name: str, kernel, kinds: str, c_fold=None):
    """A reduction primitive ``name[axes]`` and its lax wrapper ``f(operand, axes)``.

    Arguments:
        name: the primitive's name (``"reduce_sum"``).
        kernel: ``kernel(x, axes, dtype)`` from ``invarax.kernels``.
        kinds: the dtype kinds accepted.
        c_fold: ``(identity, C compound assignment)`` where a native loop may compute a
            full reduction (``core.lowering``); the CPU lowering is a row reduction.

    Returns:
        ``(primitive, wrapper)``; the result keeps the operand's dtype and weak type, and a
        reduction over no axes returns the operand.

    Example:
        >>> reduce_sum_p, reduce_sum = REDUCER_DEFS["reduce_sum"]  # made by defreducer
        >>> reduce_sum_p.name, reduce_sum(jnp.ones((2, 3)), (1,)).shape
        ('reduce_sum', (2,))
    """
    prim = Primitive(name)

    def impl(x, axes):
        return kernel(x, axes, x.dtype)

    impl.entry = getattr(kernel, "entry", None)  # its C loop (native fusion groups)
    prim.def_impl(impl)
    prim.def_abstract_eval(lambda x, axes: _reduced_aval(name, x, axes, kinds))
    register_lowering(prim, row_reduction=True, c_fold=c_fold)

    def wrapper(operand, axes):
        x = to_array(operand, f"lax.{name} operand")
        axes = canonical_axes(f"lax.{name}", x.shape, axes)
        if not axes:
            check_kinds(name, x.aval, kinds)
            return x
        return prim.bind(x, axes=axes)

    wrapper.__name__ = name
    example_dtype = "" if "f" in kinds else ", bool"
    wrapper.__doc__ = f"""``{name}`` of ``operand`` over ``axes``, keeping its dtype (no promotion).

    Arguments:
        operand: an array.
        axes: a sequence of ints (negative ones count from the end); none returns operand.

    Returns:
        ``operand``'s dtype and weak type, its shape without ``axes``.

    Example:
        >>> lax.{name}(jnp.ones((2, 3){example_dtype}), (1,)).shape
        (2,)
    """
    return prim, wrapper


reduce_sum_p, reduce_sum = defreducer("reduce_sum", kernels.reduce_sum, NUMBER)
reduce_prod_p, reduce_prod = defreducer("reduce_prod", kernels.reduce_prod, NUMBER)
reduce_max_p, reduce_max = defreducer("reduce_max", kernels.reduce_max, ORDERED)
reduce_min_p, reduce_min = defreducer("reduce_min", kernels.reduce_min, ORDERED)
reduce_and_p, reduce_and = defreducer("reduce_and", kernels.reduce_and, "biu", ("~0", "&="))
reduce_or_p, reduce_or = defreducer("reduce_or", kernels.reduce_or, "biu", ("0", "|="))
REDUCER_DEFS = {prim.name: (prim, wrapper) for prim, wrapper in (
    (reduce_sum_p, reduce_sum), (reduce_prod_p, reduce_prod), (reduce_max_p, reduce_max),
    (reduce_min_p, reduce_min), (reduce_and_p, reduce_and), (reduce_or_p, reduce_or))}


# Differentiation rules. ops.shape imports this module (its transposes sum with
# reduce_sum), so the shape ops that these rules use are imported where they are used.


# reduce_sum is linear: its transpose broadcasts the cotangent back over the reduced axes.
def _reduce_sum_transpose(ct, x, *, axes):
    from .shape import broadcast_in_dim

    if isinstance(ct, Zero):
        return [None]
    return [broadcast_in_dim(ct, x.aval.shape, _kept(x.aval.ndim, axes))]


deflinear(reduce_sum_p, _reduce_sum_transpose)


# reduce_max / reduce_min (JAX's rule): the mean of the tangents at the places of the
# extremum, so ties share it evenly.
def _chooser_jvp(t, out, x, *, axes):
    from .shape import broadcast_in_dim

    location = ew.eq(x, broadcast_in_dim(out, x.shape, _kept(x.ndim, axes)))
    location = ew.convert_element_type(location, t.dtype)
    return ew.div(reduce_sum(ew.mul(t, location), axes), reduce_sum(location, axes))


defjvp(reduce_max_p, _chooser_jvp)
defjvp(reduce_min_p, _chooser_jvp)


# reduce_prod (JAX's rule, with no division, so zeros are allowed): with the reduced
# axes moved last and flattened to n, d prod = sum_i t_i * prod_{j<i} x_j * prod_{j>i} x_j,
# both exclusive products being cumulative products of x shifted by one (padded with 1).
def _reduce_prod_jvp(t, out, x, *, axes):
    from .shape import pad, reshape

    kept = _kept(x.ndim, axes)
    shape = (*(x.shape[d] for d in kept), math.prod(x.shape[d] for d in axes))
    x, t = reshape(x, shape, kept + axes), reshape(t, shape, kept + axes)
    last = len(kept)
    unpadded = [(0, 0, 0)] * last
    left = cumprod(pad(x, 1, [*unpadded, (1, -1, 0)]), last)
    right = cumprod(pad(x, 1, [*unpadded, (-1, 1, 0)]), last, reverse=True)
    return reduce_sum(ew.mul(t, ew.mul(left, right)), (last,))


defjvp(reduce_prod_p, _reduce_prod_jvp)
defjvp_zero(reduce_and_p)
defjvp_zero(reduce_or_p)


# argmax / argmin: the index of the first extremum along one axis (``axes`` holds it).
def _arg_abstract_eval(name, x, axes, index_dtype):
    check_kinds(name, x, ORDERED)
    _check_axes(name, x, axes)
    if len(axes) != 1:
        raise TypeError(f"{name} reduces exactly one axis, got axes {axes}")
    if x.shape[axes[0]] == 0:
        raise ValueError(
            f"{name} of an empty axis: axis {axes[0]} of shape {x.shape} has "
            "size 0, so there is no extremum; reduce a non-empty axis"
        )
    if not dtypes.is_integer(index_dtype):
        raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype}")
    shape = tuple(x.shape[d] for d in _kept(x.ndim, axes))
    return ShapedArray(shape, index_dtype)


def _defargreducer(name, kernel):
    prim = Primitive(name)
    prim.def_impl(lambda x, axes, index_dtype: kernel(x, axes[0], index_dtype))
    prim.def_abstract_eval(
        lambda x, axes, index_dtype: _arg_abstract_eval(name, x, axes, index_dtype)
    )
    register_lowering(prim, row_reduction=True)

    def wrapper(operand, axis, index_dtype):
        x = to_array(operand, f"lax.{name} operand")
        axes = canonical_axes(f"lax.{name}", x.shape, (axis,))
        return prim.bind(x, axes=axes, index_dtype=dtypes.canonicalize(index_dtype))

    wrapper.__name__ = name
    wrapper.__doc__ = f"""Index of the first {name[3:]}imum of ``operand`` along ``axis``.

    A NaN counts as the {name[3:]}imum, so the index of the first NaN is returned.

    Arguments:
        operand: a bool, integer or float array whose ``axis`` is not empty.
        axis: an int (negative counts from the end).
        index_dtype: the integer dtype of the result (canonicalised for the x64 flag).

    Returns:
        An array of ``index_dtype``, of ``operand``'s shape without ``axis``.

    Example:
        >>> lax.{name}(jnp.array([1.0, 3.0]), 0, jnp.int32).dtype
        dtype('int32')
    """
    return prim, wrapper


argmax_p, argmax = _defargreducer("argmax", kernels.argmax)
argmin_p, argmin = _defargreducer("argmin", kernels.argmin)
defjvp_zero(argmax_p)
defjvp_zero(argmin_p)


# Cumulative scans: ``cumsum[axis reverse]`` and its siblings keep shape and dtype.
def defcumulative(kind: str, kinds: str):
    """A scan primitive ``cum{kind}[axis, reverse]`` and its lax wrapper.

    Arguments:
        kind: a key of ``kernels.reductions.SCANS`` (``"sum"``, ``"logsumexp"``, ...).
        kinds: the dtype kinds accepted.

    Returns:
        ``(primitive, wrapper)`` where ``wrapper(operand, axis=0, reverse=False)``.

    Example:
        >>> cumsum_p, cumsum = SCAN_DEFS["sum"]  # made by defcumulative
        >>> cumsum_p.name, cumsum(jnp.ones(3), reverse=True).tolist()
        ('cumsum', [3.0, 2.0, 1.0])
    """
    name = f"cum{kind}"
    prim = Primitive(name)

    def impl(x, axis, reverse):
        if narrow.stepped(name, x.dtype):  # float16 (ml_dtypes' floats come via narrow.run)
            return narrow.stepped_scan(name, x, axis, reverse)
        return kernels.cumulative(kind, x, axis, reverse)

    prim.def_impl(impl)
    register_lowering(prim)

    def abstract_eval(x, axis, reverse):
        check_kinds(name, x, kinds)
        _check_axes(name, x, (axis,))
        return x

    prim.def_abstract_eval(abstract_eval)

    def wrapper(operand, axis: int = 0, reverse: bool = False):
        x = to_array(operand, f"lax.{name} operand")
        (axis,) = canonical_axes(f"lax.{name}", x.shape, (axis,))
        return prim.bind(x, axis=axis, reverse=bool(reverse))

    wrapper.__name__ = name
    wrapper.__doc__ = f"""Inclusive cumulative {kind} of ``operand`` along ``axis``.

    Arguments:
        operand: an array.
        axis: an int (negative counts from the end).
        reverse: scan from the last element to the first.

    Returns:
        An array of ``operand``'s shape, dtype and weak type.

    Example:
        >>> lax.{name}(jnp.ones(3)).shape
        (3,)
    """
    return prim, wrapper


cumsum_p, cumsum = defcumulative("sum", NUMBER)
cumprod_p, cumprod = defcumulative("prod", NUMBER)
cummax_p, cummax = defcumulative("max", ORDERED)
cummin_p, cummin = defcumulative("min", ORDERED)
cumlogsumexp_p, cumlogsumexp = defcumulative("logsumexp", "f")
SCAN_DEFS = {prim.name[3:]: (prim, wrapper) for prim, wrapper in (
    (cumsum_p, cumsum), (cumprod_p, cumprod), (cummax_p, cummax), (cummin_p, cummin),
    (cumlogsumexp_p, cumlogsumexp))}


def logaddexp(x, y):
    """``log(exp(x) + exp(y))`` of two float arrays of one dtype and shape, without overflow.

    The combine function of ``cumlogsumexp``'s JVP (and of ``jnp.logaddexp``). It is
    ``hi + log1p(exp(lo - hi))`` with ``hi``/``lo`` the larger/smaller argument *selected*
    (not ``max``/``min``, nor ``-|x - y|``, whose derivatives are flat at a tie), so every
    derivative is that of a smooth formula, ties included (the second derivative at
    ``x == y`` is 1/4, as JAX's custom JVP gives).

    Example:
        >>> logaddexp(jnp.array(0.0), jnp.array(0.0))
        Array(0.6931472, dtype=float32, weak_type=True)
    """
    delta = ew.sub(x, y)
    x_larger = ew.ge(x, y)
    hi, lo = ew.select(x_larger, x, y), ew.select(x_larger, y, x)
    out = ew.add(hi, ew.log1p(ew.exp(ew.sub(lo, hi))))
    # delta is NaN for NaN inputs and for infinities of the same sign: x + y is right there.
    return ew.select(ew.ne(delta, delta), ew.add(x, y), out)


# cumsum is linear: its transpose is the cumulative sum in the other direction.
def _cumsum_transpose(ct, x, *, axis, reverse):
    if isinstance(ct, Zero):
        return [None]
    return [cumsum(ct, axis, not reverse)]


deflinear(cumsum_p, _cumsum_transpose)


def _scan_jvp(prim, fn):
    """JAX's rule: the tangent is the JVP of ``associative_scan(fn)`` (differentiable to
    any order); the primal output is still the primitive's own."""

    def rule(primals, tangents, *, axis, reverse):
        from .associative_scan import associative_scan

        out = prim.bind(*primals, axis=axis, reverse=reverse)
        scan = lambda xs: [associative_scan(fn, xs[0], reverse, axis)]
        _, (tangent,) = jvp_flat(scan, primals, tangents, f"jvp of {prim}")
        return out, tangent

    jvp_rules[prim] = rule


_scan_jvp(cumprod_p, ew.mul)
_scan_jvp(cummax_p, ew.max)
_scan_jvp(cummin_p, ew.min)
_scan_jvp(cumlogsumexp_p, logaddexp)


# ---------------------------------------------------------------------------------------
# Batching: the batch axis is one more kept axis, so each example's reduction reads the
# same elements in the same order (the kernels' order depends on the reduced length only).


def _batched_axes(axes, bdim):
    """``axes`` of an example, renumbered for an operand with a batch axis at ``bdim``."""
    return tuple(a + (a >= bdim) for a in axes)


def _out_bdim(axes, bdim):
    return bdim - sum(a < bdim for a in axes)


def _reducer_batch_rule(prim):
    def rule(vals, dims, **params):
        (x,), (bdim,) = vals, dims
        axes = _batched_axes(params.pop("axes"), bdim)
        return prim.bind(x, axes=axes, **params), _out_bdim(axes, bdim)

    batching_rules[prim] = rule


def _scan_batch_rule(prim):
    def rule(vals, dims, *, axis, reverse):
        (x,), (bdim,) = vals, dims
        return prim.bind(x, axis=axis + (axis >= bdim), reverse=reverse), bdim

    batching_rules[prim] = rule


for _prim, _ in REDUCER_DEFS.values():
    _reducer_batch_rule(_prim)
_reducer_batch_rule(argmax_p)
_reducer_batch_rule(argmin_p)
for _prim, _ in SCAN_DEFS.values():
    _scan_batch_rule(_prim)

emitted.provide(reduce_sum=reduce_sum)

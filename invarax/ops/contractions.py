"""The contraction primitive ``dot_general`` and its lax wrappers ``dot_general`` and ``dot``.

Every contraction of invarax (``@``, ``jnp.dot``, ``einsum``, ``tensordot``, ...)
is one ``dot_general`` equation per pair of operands, computed by
``invarax.kernels.dot_general``, so that one contraction has one kernel (N4).
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..core import dtypes, narrow
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import defbilinear
from ..interpreters.batching import batching_rules, moveaxis
from ..kernels.contraction import prepared
from ._util import lax_operands
from .elementwise import convert_element_type
from .shape import transpose


def _check_dims(side: str, aval: ShapedArray, contract, batch) -> None:
    """Raise a TypeError unless ``contract`` and ``batch`` are distinct axes of ``aval``."""
    dims = (*contract, *batch)
    if any(not 0 <= d < aval.ndim for d in dims):
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be non-negative and less than "
            f"the rank {aval.ndim} of the {side} (shape {aval.shape}), got {side}_contracting "
            f"{contract} and {side}_batch {batch}"
        )
    if len(set(dims)) != len(dims):
        raise TypeError(
            f"dot_general requires {side} contracting and batch dimensions to be distinct and "
            f"disjoint, got {side}_contracting {contract} and {side}_batch {batch}"
        )


def _free(ndim: int, contract, batch) -> tuple:
    """The free axes of an operand of rank ``ndim``: neither contracted nor batch."""
    return tuple(d for d in range(ndim) if d not in contract and d not in batch)


def _sizes(aval: ShapedArray, dims) -> tuple:
    return tuple(aval.shape[d] for d in dims)


def _out_dtype(lhs: ShapedArray, preferred_element_type):
    """The result dtype: the operands' dtype, or ``preferred_element_type`` if it holds it
    (their compute type: float32 for float8 operands)."""
    if preferred_element_type is None:
        return lhs.dtype
    preferred = dtypes.canonicalize(preferred_element_type)
    if preferred != dtypes.compute_dtype(lhs.dtype) and dtypes.promote_types(
            (lhs.dtype, False), (preferred, False), strict=False)[0] != preferred:
        raise TypeError(
            f"dot_general: preferred_element_type {preferred.name} cannot hold the result of "
            f"{lhs.dtype.name} operands; pass a dtype that {lhs.dtype.name} promotes to "
            f"(e.g. {lhs.dtype.name}), or None"
        )
    return preferred


# dot_general: contracts lhs_contract with rhs_contract, pairing lhs_batch with rhs_batch.
# The output axes are (batch axes, lhs free axes, rhs free axes), as in JAX.
def _dot_general_impl(lhs, rhs, dimension_numbers, precision, preferred_element_type):
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return kernels.dot_general(lhs, rhs, dimension_numbers, out_dtype)


def _dot_general_abstract_eval(lhs, rhs, dimension_numbers, precision, preferred_element_type):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            f"lax.dot_general requires arguments to have the same dtypes, got "
            f"{lhs.dtype.name} and {rhs.dtype.name}. (jnp.matmul, jnp.dot and jnp.einsum "
            "promote dtypes; with lax, convert first with .astype(...).)"
        )
    _check_dims("lhs", lhs, lhs_contract, lhs_batch)
    _check_dims("rhs", rhs, rhs_contract, rhs_batch)
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError(
            f"dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lhs_batch} and rhs_batch {rhs_batch}"
        )
    if _sizes(lhs, lhs_batch) != _sizes(rhs, rhs_batch):
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            f"same shape, got {_sizes(lhs, lhs_batch)} and {_sizes(rhs, rhs_batch)} "
            f"(lhs shape {lhs.shape}, lhs_batch {lhs_batch}; rhs shape {rhs.shape}, "
            f"rhs_batch {rhs_batch})"
        )
    if _sizes(lhs, lhs_contract) != _sizes(rhs, rhs_contract):
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{_sizes(lhs, lhs_contract)} and {_sizes(rhs, rhs_contract)} (lhs shape "
            f"{lhs.shape}, lhs_contracting {lhs_contract}; rhs shape {rhs.shape}, "
            f"rhs_contracting {rhs_contract})"
        )
    lhs_free = _free(lhs.ndim, lhs_contract, lhs_batch)
    rhs_free = _free(rhs.ndim, rhs_contract, rhs_batch)
    shape = (*_sizes(lhs, lhs_batch), *_sizes(lhs, lhs_free), *_sizes(rhs, rhs_free))
    dtype = _out_dtype(lhs, preferred_element_type)
    weak = lhs.weak_type and rhs.weak_type and dtype == lhs.dtype
    return ShapedArray(shape, dtype, weak)


dot_general_p = Primitive("dot_general")
dot_general_p.def_impl(_dot_general_impl)
dot_general_p.def_abstract_eval(_dot_general_abstract_eval)


# ---------------------------------------------------------------------------------------
# lax-level wrappers.


def _axes(dims, what: str) -> tuple:
    try:
        return tuple(int(d.__index__()) for d in dims)
    except (TypeError, AttributeError):
        raise TypeError(f"dot_general: {what} must be a sequence of ints, got {dims!r}") from None


def _dimension_numbers(dimension_numbers) -> tuple:
    """``dimension_numbers`` as nested tuples of ints; a TypeError shows the expected form."""
    try:
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), e.g. (((1,), (0,)), ((), ())), got {dimension_numbers!r}"
        ) from None
    return (
        (_axes(lhs_contract, "lhs_contracting"), _axes(rhs_contract, "rhs_contracting")),
        (_axes(lhs_batch, "lhs_batch"), _axes(rhs_batch, "rhs_batch")),
    )


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general contraction: sum over paired axes, with paired batch axes.

    Arguments:
        lhs, rhs: arrays of the same dtype (a Python scalar takes the other's dtype).
        dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``,
            each a sequence of axes (non-negative ints).
        precision: accepted for JAX compatibility and ignored: invarax computes every
            contraction with one kernel, in the output dtype.
        preferred_element_type: None (the operands' dtype) or a dtype that the operands'
            dtype promotes to; the result has this dtype and is accumulated in it. As in
            JAX, a float that cannot hold the operands' values (bfloat16 for float32
            operands) takes the product computed as without it, converted once.

    Returns:
        An array whose axes are the batch axes, then the free axes of ``lhs``, then
        the free axes of ``rhs``.

    Example:
        >>> x, y = jnp.ones((5, 2, 3)), jnp.ones((5, 3, 4))
        >>> lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))).shape
        (5, 2, 4)
    """
    lhs, rhs = lax_operands("dot_general", (lhs, rhs))
    preferred_element_type, rounded_to = narrow.contraction_types(lhs.dtype,
                                                                  preferred_element_type)
    out = dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=_dimension_numbers(dimension_numbers),
        precision=None,
        preferred_element_type=preferred_element_type,
    )
    return out if rounded_to is None else convert_element_type(out, rounded_to)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector-vector, matrix-vector or matrix-matrix product (``lax.dot``).

    Arguments:
        lhs: a 1-d or 2-d array.
        rhs: a 1-d or 2-d array whose first axis has the size of ``lhs``'s last.
        precision: accepted and ignored, as in ``dot_general``.
        preferred_element_type: as in ``dot_general``.

    Returns:
        ``lhs``'s last axis contracted with ``rhs``'s first.

    Example:
        >>> lax.dot(jnp.ones((2, 3)), jnp.ones(3))
        Array([3., 3.], dtype=float32)
    """
    lhs, rhs = lax_operands("dot", (lhs, rhs))
    if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2 and lhs.shape[-1] == rhs.shape[0]):
        raise TypeError(
            f"lax.dot: incompatible shapes {lhs.shape} and {rhs.shape}; lax.dot takes 1-d or "
            "2-d operands whose inner sizes match (lhs.shape[-1] == rhs.shape[0]). For other "
            "products use lax.dot_general with explicit dimension_numbers, or jnp.matmul/jnp.dot."
        )
    return dot_general(
        lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type
    )


# ---------------------------------------------------------------------------------------
# Differentiation: dot_general is bilinear. The cotangent of one operand is the output
# cotangent contracted with the other operand (JAX's _dot_general_transpose_lhs/_rhs).


def _consecutive(*groups):
    """Consecutive ranges of the groups' lengths: ``((0, 1), (2,), ...)``."""
    start = 0
    for group in groups:
        yield tuple(range(start, start + len(group)))
        start += len(group)


def _dot_general_transpose_lhs(
    ct, x_aval, y, *, dimension_numbers, precision, preferred_element_type, swap_ans=False
):
    """The cotangent of ``x`` in ``dot_general(x, y)`` (of ``y(x)`` with ``swap_ans``).

    ``ct`` has the output's axes: batch, then x's free axes, then y's (swapped with
    ``swap_ans``). Contracting ``ct``'s y-free axes with y's free axes, pairing batch
    with batch, leaves (batch, x free, y contracting in y's order); a transpose then
    puts each axis where x has it: its batch axes, free axes and contracting axes (the
    latter ordered as y's contracting axes that they pair with).
    """
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_free = _free(x_aval.ndim, x_contract, x_batch)
    y_free = _free(y.ndim, y_contract, y_batch)
    if swap_ans:
        ct_batch, ct_y, _ = _consecutive(x_batch, y_free, x_free)
    else:
        ct_batch, _, ct_y = _consecutive(x_batch, x_free, y_free)
    x_contract_by_y = [c for _, c in sorted(zip(y_contract, x_contract, strict=True))]
    unsorted = [*x_batch, *x_free, *x_contract_by_y]
    if y.dtype != ct.dtype:  # preferred_element_type: contract in ct's dtype
        y = convert_element_type(y, ct.dtype)
    identity = list(range(len(unsorted)))
    if unsorted != identity and [*x_batch, *x_contract_by_y, *x_free] == identity:
        x_bar = dot_general_p.bind(
            y,
            ct,
            dimension_numbers=((y_free, ct_y), (tuple(y_batch), ct_batch)),
            precision=precision,
            preferred_element_type=None,
        )
        return convert_element_type(x_bar, x_aval.dtype) if x_bar.dtype != x_aval.dtype else x_bar
    x_bar = dot_general_p.bind(
        ct,
        y,
        dimension_numbers=((ct_y, y_free), (ct_batch, tuple(y_batch))),
        precision=precision,
        preferred_element_type=None,
    )
    x_bar = transpose(x_bar, sorted(range(len(unsorted)), key=unsorted.__getitem__))
    return convert_element_type(x_bar, x_aval.dtype) if x_bar.dtype != x_aval.dtype else x_bar


def _dot_general_transpose_rhs(
    ct, x, y_aval, *, dimension_numbers, precision, preferred_element_type
):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    return _dot_general_transpose_lhs(
        ct,
        y_aval,
        x,
        dimension_numbers=((y_contract, x_contract), (y_batch, x_batch)),
        precision=precision,
        preferred_element_type=preferred_element_type,
        swap_ans=True,
    )


defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


# Batching: a batch axis on both operands becomes a leading dot_general batch dimension;
# on one operand it is one more free dimension. Each output element is still one inner
# product over the same K elements, so it keeps its bits (N1).


def _shift(dims, bdim):
    return tuple(d + (d >= bdim) for d in dims)


def _dot_general_batch(vals, dims, *, dimension_numbers, precision, preferred_element_type):
    (lhs, rhs), (lbd, rbd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = dict(precision=precision, preferred_element_type=preferred_element_type)
    if lbd is not None and rbd is not None:
        lhs, rhs = moveaxis(lhs, lbd, 0), moveaxis(rhs, rbd, 0)
        numbers = ((_shift(lc, 0), _shift(rc, 0)), ((0, *_shift(lb, 0)), (0, *_shift(rb, 0))))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params), 0
    if lbd is not None:
        lc, lb = _shift(lc, lbd), _shift(lb, lbd)
        out_bdim = len(lb) + _free(lhs.ndim, lc, lb).index(lbd)
    else:
        rc, rb = _shift(rc, rbd), _shift(rb, rbd)
        lhs_free = lhs.ndim - len(lc) - len(lb)
        out_bdim = len(rb) + lhs_free + _free(rhs.ndim, rc, rb).index(rbd)
    numbers = ((lc, rc), (lb, rb))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params), out_bdim


batching_rules[dot_general_p] = _dot_general_batch


# Lowering. A compiled program calls each dot_general with the same operand shapes every
# time (a loop body: every iteration), so its layout is worked out once (``prepared``):
# the same operands handed to the same kernel as eagerly, so the same bits.


def _prepare(eqn):
    lhs, rhs = eqn.invars
    return prepared(lhs.aval.shape, rhs.aval.shape, eqn.params["dimension_numbers"],
                    eqn.outvars[0].aval.dtype)


def _absorb_transpose(dot, permutation):
    """``(primitive, invars, params)`` of ``dot_general(b, a)`` equal to
    ``transpose(dot_general(a, b), permutation)`` (``dot``), or None when the permutation
    does more than swap the free axes of the two operands, or the product is complex. The
    canonical order is symmetric in the operands (``docs/numerics.md``): the same bits."""
    lhs, rhs = dot.invars
    if np.dtype(dot.outvars[0].aval.dtype).kind == "c":
        return None
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dot.params["dimension_numbers"]
    batch = len(lhs_batch)
    lhs_free = len(lhs.aval.shape) - len(lhs_contract) - batch
    rhs_free = len(rhs.aval.shape) - len(rhs_contract) - batch
    swap = (*range(batch), *range(batch + lhs_free, batch + lhs_free + rhs_free),
            *range(batch, batch + lhs_free))
    if tuple(permutation) != swap or swap == tuple(range(len(swap))):
        return None
    numbers = ((rhs_contract, lhs_contract), (rhs_batch, lhs_batch))
    return dot.primitive, [rhs, lhs], {**dot.params, "dimension_numbers": numbers}


def _stacked(dot, side: int):
    """The product of every slice ``x[i]`` of a scanned operand (on ``side``) with the other
    operand at once: one product of the whole ``x`` (its leading axis one more free axis),
    the scanned axis first; None for a product with batch axes. The canonical order depends
    on ``K`` alone, not on the number of rows, so each element keeps its bits."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    if lb or rb:
        return None
    if side == 0:
        axis, dims = 0, ((tuple(d + 1 for d in lc), tuple(rc)), ((), ()))
    else:
        axis = dot.invars[0].aval.ndim - len(lc)
        dims = ((tuple(lc), tuple(d + 1 for d in rc)), ((), ()))
    dtype = dot.outvars[0].aval.dtype

    def product(lhs, rhs):
        result = kernels.dot_general(lhs, rhs, dims, dtype)
        return result if axis == 0 else np.moveaxis(result, axis, 0)

    return product


def _biased(dot, bias_shape, bias_first: bool):
    """``run(lhs, rhs, bias)``: ``dot``'s product plus ``bias`` (of ``bias_shape``: the rhs
    free axes, broadcast over the others; ``bias + product`` if ``bias_first``) with the
    addition done by the kernel as each block of the product is finished, or None where the
    kernel cannot (not float32 or float64, or the trailing axes are not the rhs free axes).
    The product is the canonical one, and each element then gets one addition of the same
    two values in the same order: the bits of the product followed by ``add``."""
    dtype = np.dtype(dot.outvars[0].aval.dtype)
    (_, rhs_contract), (lhs_batch, _) = dot.params["dimension_numbers"]
    rhs_free = dot.invars[1].aval.ndim - len(rhs_contract) - len(lhs_batch)
    out_shape = dot.outvars[0].aval.shape
    if (dtype not in (np.float32, np.float64) or rhs_free == 0
            or tuple(bias_shape) != tuple(out_shape[len(out_shape) - rhs_free:])):
        return None
    product = _prepare(dot)

    def run(lhs, rhs, bias):
        return product(lhs, rhs, bias=np.ascontiguousarray(bias).reshape(-1),
                       bias_first=bias_first)

    return run


register_lowering(dot_general_p, prepare=_prepare, absorb_transpose=_absorb_transpose,
                  stacked=_stacked, biased=_biased)

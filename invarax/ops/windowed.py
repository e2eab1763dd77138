"""Window reductions: ``reduce_window_sum``, ``reduce_window_max``, ``reduce_window_min``,
and the two primitives of a max (min) window's derivative, ``select_and_gather_add`` and
``select_and_scatter_add`` (JAX's names); with ``lax.reduce_window``.

Each output element reduces its window of the padded (with the reduction's identity),
base-dilated operand in the canonical order of ``invarax.kernels.windows``: bitwise the
reduction of the explicit patches over their window axes.

Differentiation (JAX's rules): ``reduce_window_sum`` is linear; its transpose pads the
cotangent (strides become interior padding) and sums it over windows again. The tangent of
a max window is the tangent of the element that won (``select_and_gather_add``, linear in
the tangent); its transpose adds each cotangent into the element that won
(``select_and_scatter_add``), whose transpose is the gather again.

Batching: the vmapped axis is one more axis with a window of 1, so each example's windows
are the windows it has alone (N1).
"""

from __future__ import annotations

import operator

import numpy as np

from .. import kernels
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import Zero, deflinear, jvp_rules, transpose_rules
from ..interpreters.batching import batching_rules, move_batch_axis
from ._util import check_kinds, lax_operands
from .convolution import padtype_to_pads, vjp_lhs_padding
from .shape import pad

_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
           "window_dilation")


def _window_shape(name, aval, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation) -> tuple:
    """The output shape of a window reduction of ``aval``, with clear errors."""
    for what, value in zip(_PARAMS, (window_dimensions, window_strides, padding,
                                     base_dilation, window_dilation), strict=True):
        if len(value) != aval.ndim:
            raise TypeError(f"{name}: {what} must have one entry per axis of the operand "
                            f"(shape {aval.shape}), got {value!r}")
    for what, value in (("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if any(v < 1 for v in value):
            raise ValueError(f"{name}: {what} must be positive, got {value}")
    if any(w < 0 for w in window_dimensions):
        raise ValueError(f"{name}: window_dimensions must be non-negative, got "
                         f"{window_dimensions}")
    padded = []
    for axis, (size, (lo, hi), d) in enumerate(zip(aval.shape, padding, base_dilation,
                                                   strict=True)):
        n = lo + ((size - 1) * d + 1 if size else 0) + hi
        if n < 0:
            raise ValueError(f"{name}: negative padding {(lo, hi)} removes more than the "
                             f"elements of axis {axis} of the operand (shape {aval.shape})")
        padded.append(n)
    return kernels.windows.out_shape(padded, window_dimensions, window_strides,
                                     window_dilation)


def _defwindow(name, op):
    def impl(x, **params):
        return kernels.windows.window_reduce(op, x, *(params[p] for p in _PARAMS))

    def abstract_eval(x, **params):
        check_kinds(f"lax.{name}", x, "biufc" if op == "sum" else "biuf")
        shape = _window_shape(name, x, *(params[p] for p in _PARAMS))
        return ShapedArray(shape, x.dtype, x.weak_type)

    prim = Primitive(name)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    register_lowering(prim)
    batching_rules[prim] = _window_batch(prim)
    return prim


def _window_batch(prim):
    """The vmapped axis moved first, with a window of 1 (and no padding or dilation)."""

    def rule(vals, dims, **params):
        size = next(v.shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
        vals = [move_batch_axis(v, d, 0, size) for v, d in zip(vals, dims, strict=True)]
        params = dict(params, window_dimensions=(1, *params["window_dimensions"]),
                      window_strides=(1, *params["window_strides"]),
                      padding=((0, 0), *params["padding"]),
                      base_dilation=(1, *params["base_dilation"]),
                      window_dilation=(1, *params["window_dilation"]))
        return prim.bind(*vals, **params), 0

    return rule


reduce_window_sum_p = _defwindow("reduce_window_sum", "sum")
reduce_window_max_p = _defwindow("reduce_window_max", "max")
reduce_window_min_p = _defwindow("reduce_window_min", "min")


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    if isinstance(ct, Zero):
        return [None]
    shape = x.aval.shape
    pads = vjp_lhs_padding(shape, window_dimensions, window_strides, ct.shape, padding,
                           base_dilation, window_dilation)
    config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides, strict=True)]
    padded = pad(ct, np.zeros((), ct.dtype), config)
    out = reduce_window_sum_p.bind(
        padded, window_dimensions=window_dimensions, window_strides=base_dilation,
        padding=((0, 0),) * len(shape), base_dilation=(1,) * len(shape),
        window_dilation=window_dilation)
    assert out.shape == shape, (out.shape, shape)
    return [out]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


# select_and_gather_add(t, x): for every window of x, t at the position where x's window
# has its first maximum (op="max") or minimum. Linear in t; x only selects.
def _gather_impl(t, x, *, op, **params):
    args = [params[p] for p in _PARAMS]
    idx = kernels.windows.window_argselect(op, x, *args)
    return kernels.windows.window_gather(t, idx, *args)


def _gather_abstract_eval(t, x, *, op, **params):
    if t.shape != x.shape:
        raise TypeError(f"select_and_gather_add: tangent shape {t.shape} differs from the "
                        f"operand shape {x.shape}")
    return ShapedArray(_window_shape("select_and_gather_add", x,
                                     *(params[p] for p in _PARAMS)), t.dtype, t.weak_type)


select_and_gather_add_p = Primitive("select_and_gather_add")
select_and_gather_add_p.def_impl(_gather_impl)
select_and_gather_add_p.def_abstract_eval(_gather_abstract_eval)
register_lowering(select_and_gather_add_p)


# select_and_scatter_add(s, x): the transpose of the gather: s[o] added into the element of
# a zero operand where x's window o has its first maximum (minimum). Linear in s.
def _scatter_impl(s, x, *, op, **params):
    args = [params[p] for p in _PARAMS]
    idx = kernels.windows.window_argselect(op, x, *args)
    return kernels.windows.window_scatter_add(s, idx, x.shape, *args)


def _scatter_abstract_eval(s, x, *, op, **params):
    shape = _window_shape("select_and_scatter_add", x, *(params[p] for p in _PARAMS))
    if s.shape != shape:
        raise TypeError(f"select_and_scatter_add: source shape {s.shape} differs from the "
                        f"window shape {shape} of the operand (shape {x.shape})")
    return ShapedArray(x.shape, s.dtype, s.weak_type)


select_and_scatter_add_p = Primitive("select_and_scatter_add")
select_and_scatter_add_p.def_impl(_scatter_impl)
select_and_scatter_add_p.def_abstract_eval(_scatter_abstract_eval)
register_lowering(select_and_scatter_add_p)


def _linear_in_first(prim):
    """JVP of a primitive linear in its first operand, piecewise constant in its second."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t = tangents[0]
        if isinstance(t, Zero):
            return out, Zero(ShapedArray(out.shape, out.dtype))
        return out, prim.bind(t, primals[1], **params)

    return rule


def _gather_transpose(ct, t, x, **params):
    if isinstance(ct, Zero):
        return [None, None]
    return [select_and_scatter_add_p.bind(ct, x, **params), None]


def _scatter_transpose(ct, s, x, **params):
    if isinstance(ct, Zero):
        return [None, None]
    return [select_and_gather_add_p.bind(ct, x, **params), None]


for _prim, _transpose in ((select_and_gather_add_p, _gather_transpose),
                          (select_and_scatter_add_p, _scatter_transpose)):
    jvp_rules[_prim] = _linear_in_first(_prim)
    transpose_rules[_prim] = _transpose
    batching_rules[_prim] = _window_batch(_prim)


def _chooser_jvp(prim, op):
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        if isinstance(t, Zero):
            return out, Zero(ShapedArray(out.shape, out.dtype))
        return out, select_and_gather_add_p.bind(t, x, op=op, **params)

    return rule


jvp_rules[reduce_window_max_p] = _chooser_jvp(reduce_window_max_p, "max")
jvp_rules[reduce_window_min_p] = _chooser_jvp(reduce_window_min_p, "min")


# ---------------------------------------------------------------------------------------
# lax.reduce_window


def _monoid(computation, init, dtype):
    """The primitive for ``computation`` with identity ``init``, or None."""
    from . import elementwise as ew

    try:
        value = np.asarray(init)
    except (TypeError, ValueError):
        return None
    if value.shape != () or value.dtype.kind not in "biufc":
        return None
    names = {ew.add: "add", ew.max: "max", ew.min: "min"}
    name = names.get(computation)
    if name is None:
        public = {"add": "add", "maximum": "max", "minimum": "min", "max": "max", "min": "min"}
        name = public.get(getattr(computation, "__name__", ""))
    # The identity in the operand's dtype or in init's own, compared without a cast (as
    # JAX: -inf is max's identity for an int or bool operand too)
    def is_identity(op):
        return any(value == kernels.windows.identity(op, np.dtype(d)) for d in (dtype, value.dtype))

    if name == "add" and value == 0:
        return reduce_window_sum_p
    if name == "max" and is_identity("max"):
        return reduce_window_max_p
    if name == "min" and is_identity("min"):
        return reduce_window_min_p
    return None


def _ints(name, value, n, default):
    if value is None:
        return (default,) * n
    try:
        value = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"lax.reduce_window: {name} must be a sequence of ints, got "
                        f"{value!r}") from None
    return value


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduce every window of ``operand``, as ``jax.lax.reduce_window``.

    Arguments:
        operand: an array.
        init_value: the reduction's identity: ``0`` for ``lax.add``, ``-inf`` (or the
            dtype's lowest value) for ``lax.max``, ``inf`` (highest) for ``lax.min``.
        computation: ``lax.add``, ``lax.max`` or ``lax.min`` (``jnp.add``,
            ``jnp.maximum``, ``jnp.minimum`` too).
        window_dimensions, window_strides: one int per axis of ``operand``.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or one ``(low, high)`` pair per
            axis; padded elements hold ``init_value``.
        base_dilation, window_dilation: one int per axis, or None.

    Returns:
        The reduction of each window, in the canonical order (a sum is the pairwise sum of
        the window's elements in row-major order; a max the first maximum).

    Example:
        >>> lax.reduce_window(jnp.arange(6.0).reshape(2, 3), 0.0, lax.add, (1, 2), (1, 1),
        ...                   "VALID")
        Array([[1., 3.],
               [7., 9.]], dtype=float32)
    """
    x = to_array(operand, "lax.reduce_window operand")
    (x,) = lax_operands("reduce_window", (x,))
    n = x.ndim
    window = _ints("window_dimensions", window_dimensions, n, 1)
    strides = _ints("window_strides", window_strides, n, 1)
    base_dilation = _ints("base_dilation", base_dilation, n, 1)
    window_dilation = _ints("window_dilation", window_dilation, n, 1)
    for name, value in (("window_dimensions", window), ("window_strides", strides),
                        ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(value) != n:
            raise TypeError(f"lax.reduce_window: {name} must have one entry per axis of the "
                            f"operand (shape {x.shape}), got {value!r}")
    if isinstance(padding, str):
        dilated = [(w - 1) * d + 1 if w else 0 for w, d in
                   zip(window, window_dilation, strict=True)]
        shape = [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape, base_dilation,
                                                            strict=True)]
        padding = padtype_to_pads(shape, dilated, strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError("lax.reduce_window: padding must be 'SAME', 'SAME_LOWER', 'VALID' or "
                         f"one (low, high) int pair per axis, got {padding!r} (operand shape "
                         f"{x.shape})") from None
    prim = _monoid(computation, init_value, x.dtype)
    if prim is None:
        raise NotImplementedError(
            f"lax.reduce_window supports lax.add with init 0, lax.max with init -inf and "
            f"lax.min with init inf (the identities); got {computation!r} with init "
            f"{init_value!r}. Reduce with the identity, then combine with init_value.")
    return prim.bind(x, window_dimensions=window, window_strides=strides, padding=padding,
                     base_dilation=base_dilation, window_dilation=window_dilation)

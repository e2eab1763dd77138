"""``pad``: constant padding, and the edge, wrap, reflect and symmetric modes as a ``take``."""

from __future__ import annotations

import numpy as np

from ..core.array import Array
from ..core.trace import Tracer
from ..ops import shape as sh
from ._creation import asarray
from ._indexing import take
from ._promote import asarray_arg, convert


def _reflect(i: np.ndarray, n: int) -> np.ndarray:
    if n == 1:
        return np.zeros_like(i)
    j = np.abs(i) % (2 * n - 2)
    return np.where(j < n, j, 2 * n - 2 - j)


def _symmetric(i: np.ndarray, n: int) -> np.ndarray:
    j = i % (2 * n)
    return np.where(j < n, j, 2 * n - 1 - j)


# mode: the source position along an axis of size n of each padded position i (-lo <= i < n+hi).
_PAD_SOURCES = {
    "edge": lambda i, n: np.clip(i, 0, n - 1),
    "wrap": lambda i, n: i % n,
    "reflect": _reflect,
    "symmetric": _symmetric,
}
_PAD_KEYWORDS = {
    "constant": {"constant_values"},
    "empty": set(),
    "edge": set(),
    "wrap": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
}


def _pad_widths(pad_width, ndim: int) -> list:
    if isinstance(pad_width, Tracer):
        raise TypeError("jnp.pad needs a static pad_width (the result's shape depends on it)")
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"jnp.pad: pad_width must be integers, got {pad_width!r:.60}")
    try:
        rows = np.broadcast_to(widths, (ndim, 2)).tolist()
    except ValueError:
        raise ValueError(
            f"jnp.pad: pad_width {pad_width} must be an int, a (before, after) "
            f"pair, or one pair per axis of the {ndim}-d array"
        ) from None
    if any(w < 0 for row in rows for w in row):
        raise ValueError(f"jnp.pad: pad_width {pad_width} must be non-negative")
    return [tuple(row) for row in rows]


def pad(array, pad_width, mode: str = "constant", **kwargs) -> Array:
    """Pad an array, as ``numpy.pad``.

    Arguments:
        array: the array.
        pad_width: an int, a ``(before, after)`` pair, or one pair per axis (static).
        mode: ``"constant"`` (default), ``"empty"`` (zeros), ``"edge"``, ``"wrap"``,
            ``"reflect"`` or ``"symmetric"`` (``reflect_type="even"``).
        **kwargs: ``constant_values`` for ``"constant"``: a scalar (may be traced) or
            static per-axis ``(before, after)`` values, cast to the array's dtype.

    Returns:
        The padded array.

    Example:
        >>> jnp.pad(jnp.array([1, 2]), (1, 2), constant_values=9)
        Array([9, 1, 2, 9, 9], dtype=int32)
    """
    x = asarray_arg(array, "pad")
    if mode not in _PAD_KEYWORDS:
        raise NotImplementedError(
            f"jnp.pad mode {mode!r} is not supported; supported modes: "
            f"{', '.join(map(repr, _PAD_KEYWORDS))}"
        )
    unknown = set(kwargs) - _PAD_KEYWORDS[mode]
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode {mode!r}: {sorted(unknown)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise NotImplementedError("jnp.pad supports only reflect_type='even'")
    widths = _pad_widths(pad_width, x.ndim)
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            n = x.shape[axis]
            if n == 0:
                raise ValueError(
                    f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
                )
            sources = _PAD_SOURCES[mode](np.arange(-lo, n + hi), n)
            x = take(x, sources, axis=axis, mode="clip")
    return x


def _pad_constant(x: Array, widths: list, constant_values) -> Array:
    if np.ndim(constant_values) == 0:
        value = _pad_value(x, constant_values)
        return sh.pad(x, value, [(lo, hi, 0) for lo, hi in widths])
    if isinstance(constant_values, Tracer):
        raise TypeError(
            "jnp.pad: per-axis constant_values must be static; pass one scalar "
            "(which may be traced) or static numbers"
        )
    try:
        values = np.broadcast_to(np.asarray(constant_values), (x.ndim, 2))
    except ValueError:
        raise ValueError(
            f"jnp.pad: constant_values of shape {np.shape(constant_values)} must "
            "be a scalar, a (before, after) pair, or one pair per axis"
        ) from None
    for axis, (lo, hi) in enumerate(widths):
        for side, width in enumerate((lo, hi)):
            config = [(0, 0, 0)] * x.ndim
            config[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
            x = sh.pad(x, _pad_value(x, values[axis, side].item()), config)
    return x


def _pad_value(x: Array, value) -> Array:
    """The padding value, cast to ``x``'s dtype and weak type (as in JAX)."""
    return convert(asarray(value), x.dtype, x.weak_type)

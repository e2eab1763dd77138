"""``jnp.convolve`` and ``jnp.correlate``: 1-d convolutions through ``lax.conv_general_dilated``.

As in JAX, both promote to an inexact dtype (unless ``preferred_element_type`` is given)
and run one convolution primitive, so each output element is the canonical contraction
of its window (``docs/numerics.md``, Convolutions).
"""

from __future__ import annotations

from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops.convolution import conv_general_dilated
from ._promote import asarray_arg, promote_dtypes

_PADDING = {
    "valid": lambda k: (0, 0),
    "same": lambda k: (k // 2, k - k // 2 - 1),
    "full": lambda k: (k - 1, k - 1),
}


def _conv1d(name: str, a, v, mode: str, preferred_element_type):
    arrays = [asarray_arg(x, name) for x in (a, v)]
    x, y = promote_dtypes(*arrays, to_inexact=preferred_element_type is None)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"jnp.{name} takes 1-d arrays, got shapes {x.shape} and {y.shape}; "
                         "for N-d convolutions use lax.conv_general_dilated")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"jnp.{name}: inputs cannot be empty, got shapes {x.shape} and "
                         f"{y.shape}")
    if mode not in _PADDING:
        raise ValueError(f"jnp.{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    reverse = False
    if name == "correlate":
        if y.dtype.kind == "c":
            y = ew.conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = sh.rev(y, (0,))
    out = conv_general_dilated(sh.reshape(x, (1, 1, x.shape[0])),
                               sh.reshape(y, (1, 1, y.shape[0])), (1,),
                               [_PADDING[mode](y.shape[0])],
                               preferred_element_type=preferred_element_type)
    out = sh.reshape(out, (out.shape[2],))
    return sh.rev(out, (0,)) if reverse else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete convolution of two 1-d arrays, as ``jnp.convolve``.

    Arguments:
        a, v: 1-d arrays (the longer one slides over the shorter, flipped).
        mode: ``"full"`` (every overlap, ``len(a) + len(v) - 1`` elements), ``"same"``
            (the length of the longer input, centred) or ``"valid"`` (full overlaps only).
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: None (promote to an inexact dtype) or the result dtype.

    Returns:
        A 1-d array.

    Example:
        >>> jnp.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))
        Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    return _conv1d("convolve", a, v, mode, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-d arrays, as ``jnp.correlate``.

    Arguments:
        a, v: 1-d arrays (``v`` is conjugated when complex).
        mode: ``"valid"`` (default), ``"same"`` or ``"full"``, as for ``convolve``.
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: None (promote to an inexact dtype) or the result dtype.

    Returns:
        A 1-d array: ``out[k] = sum_n a[n + k] * conj(v[n])``.

    Example:
        >>> jnp.correlate(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))
        Array([3.5], dtype=float32)
    """
    return _conv1d("correlate", a, v, mode, preferred_element_type)

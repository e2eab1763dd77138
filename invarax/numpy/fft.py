"""``invarax.numpy.fft``: JAX's ``jnp.fft``: NumPy's names and arguments.

Every transform is one ``fft`` primitive over trailing axes (the axes are moved there and
back), so it is differentiable (the FFT is linear) and batchable; its bits are invarax's
FFT kernel's, the same for a transform alone or in any batch (docs/numerics.md).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..ops.fft import FftType
from ..ops.fft import fft as _lax_fft
from . import _ufuncs as ufuncs
from ._creation import asarray
from ._pad import pad as _pad
from ._promote import asarray_arg
from ._shape import moveaxis
from ._shape import roll as _roll

NORMS = (None, "backward", "ortho", "forward")


def _fft_core(name, fft_type, a, s, axes, norm):
    """JAX's ``_fft_core``: crop/pad to ``s``, move ``axes`` last, transform, scale, move back."""
    full = f"jnp.fft.{name}"
    arr = asarray_arg(a, full)
    if norm not in NORMS:
        raise ValueError(f"{full}: norm must be one of {NORMS}, got {norm!r}")
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n < 0 for n in s):
            raise ValueError(f"{full}: the sizes s={s} must be non-negative")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(f"{full}: s={s} and axes={tuple(axes)} have different lengths")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(operator.index(ax) % max(arr.ndim, 1) if arr.ndim else ax for ax in axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full} does not support repeated axes, got axes {axes}")
    if not 1 <= len(axes) <= 3 or any(not 0 <= ax < arr.ndim for ax in axes):
        raise ValueError(f"{full} transforms 1 to 3 axes of its input, got axes "
                         f"{orig_axes} for an input of shape {arr.shape}")
    last = tuple(range(arr.ndim - len(axes), arr.ndim))
    if orig_axes is not None:
        arr = moveaxis(arr, axes, last)
    if s is not None:
        sizes = list(arr.shape)
        for axis, n in zip(last, s, strict=True):
            sizes[axis] = n
        if fft_type == FftType.IRFFT:
            sizes[-1] = sizes[-1] // 2 + 1
        arr = arr[tuple(slice(0, n) for n in sizes)]
        pad = [(0, n - have) for n, have in zip(sizes, arr.shape, strict=True)]
        if any(hi for _, hi in pad):
            arr = _pad(arr, pad)
    elif fft_type == FftType.IRFFT:
        s = (*(arr.shape[ax] for ax in last[:-1]), max(0, 2 * (arr.shape[-1] - 1)))
    else:
        s = tuple(arr.shape[ax] for ax in last)
    out = _lax_fft(arr, fft_type, s)
    if norm in ("ortho", "forward"):
        total = math.prod(s)
        inverse = name.startswith("i")
        factor = math.sqrt(total) if norm == "ortho" else total
        factor = factor if inverse else 1 / factor
        out = ufuncs.multiply(out, np.asarray(factor, out.dtype))
    if orig_axes is not None:
        out = moveaxis(out, last, axes)
    return out


def _one_axis(name, fft_type):
    def transform(a, n=None, axis=-1, norm=None):
        s = None if n is None else (n,)
        return _fft_core(name, fft_type, a, s, (axis,), norm)

    transform.__name__ = name
    return transform


def _many_axes(name, fft_type, default_axes):
    def transform(a, s=None, axes=default_axes, norm=None):
        return _fft_core(name, fft_type, a, s, axes, norm)

    transform.__name__ = name
    return transform


fft = _one_axis("fft", FftType.FFT)
ifft = _one_axis("ifft", FftType.IFFT)
rfft = _one_axis("rfft", FftType.RFFT)
irfft = _one_axis("irfft", FftType.IRFFT)
fft2 = _many_axes("fft2", FftType.FFT, (-2, -1))
ifft2 = _many_axes("ifft2", FftType.IFFT, (-2, -1))
rfft2 = _many_axes("rfft2", FftType.RFFT, (-2, -1))
irfft2 = _many_axes("irfft2", FftType.IRFFT, (-2, -1))
fftn = _many_axes("fftn", FftType.FFT, None)
ifftn = _many_axes("ifftn", FftType.IFFT, None)
rfftn = _many_axes("rfftn", FftType.RFFT, None)
irfftn = _many_axes("irfftn", FftType.IRFFT, None)

# name: (summary, example input, example output shape)
_DOCS = {
    "fft": ("The 1-d discrete Fourier transform along ``axis`` (input cropped/zero-padded to "
            "``n``).", "jnp.ones(4)", "(4,)"),
    "ifft": ("The inverse of ``fft`` along ``axis``.", "jnp.ones(4)", "(4,)"),
    "rfft": ("The 1-d FFT of real input: its ``n // 2 + 1`` non-negative frequencies.",
             "jnp.ones(4)", "(3,)"),
    "irfft": ("The inverse of ``rfft``: real output of length ``n`` (default "
              "``2 * (m - 1)``).", "jnp.ones(3)", "(4,)"),
    "fft2": ("The 2-d FFT over ``axes`` (the last two by default).", "jnp.ones((2, 4))",
             "(2, 4)"),
    "ifft2": ("The inverse of ``fft2``.", "jnp.ones((2, 4))", "(2, 4)"),
    "rfft2": ("The 2-d FFT of real input over ``axes``.", "jnp.ones((2, 4))", "(2, 3)"),
    "irfft2": ("The inverse of ``rfft2``.", "jnp.ones((2, 3))", "(2, 4)"),
    "fftn": ("The n-d FFT over ``axes`` (all by default; 1 to 3 axes).", "jnp.ones((2, 4))",
             "(2, 4)"),
    "ifftn": ("The inverse of ``fftn``.", "jnp.ones((2, 4))", "(2, 4)"),
    "rfftn": ("The n-d FFT of real input over ``axes``.", "jnp.ones((2, 4))", "(2, 3)"),
    "irfftn": ("The inverse of ``rfftn``.", "jnp.ones((2, 3))", "(2, 4)"),
}
for _f in (fft, ifft, rfft, irfft, fft2, ifft2, rfft2, irfft2, fftn, ifftn, rfftn, irfftn):
    _summary, _input, _shape = _DOCS[_f.__name__]
    _f.__doc__ = f"""{_summary}

    Arguments:
        a: the input array (real or complex; real for the ``rfft`` family).
        n / s: the transform's size(s) along the axes (the input is cropped or zero-padded).
        axis / axes: the transformed axes.
        norm: ``None``/``"backward"`` (``1/n`` on the inverse), ``"ortho"`` or ``"forward"``.

    Returns:
        The transform, complex (real for the ``irfft`` family) of the input's precision.

    Example:
        >>> jnp.fft.{_f.__name__}({_input}).shape
        {_shape}
    """


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``.

    Example:
        >>> jnp.fft.fftfreq(4)
        Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    n = operator.index(n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return ufuncs.divide(asarray(k, dtype=dtype or float), asarray(n * d, dtype=dtype or float))


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of ``rfft`` for ``n`` points with sample spacing ``d``.

    Example:
        >>> jnp.fft.rfftfreq(4)
        Array([0.  , 0.25, 0.5 ], dtype=float32)
    """
    n = operator.index(n)
    k = np.arange(0, n // 2 + 1)
    return ufuncs.divide(asarray(k, dtype=dtype or float), asarray(n * d, dtype=dtype or float))


def _shift(x, axes, sign, name):
    x = asarray_arg(x, f"fft.{name}")
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    shifts = tuple(sign * (x.shape[ax] // 2) for ax in axes)
    return _roll(x, shifts, axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (roll by ``n // 2`` along ``axes``, default all).

    Example:
        >>> jnp.fft.fftshift(jnp.arange(4))
        Array([2, 3, 0, 1], dtype=int32)
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None):
    """The inverse of ``fftshift`` (roll by ``-(n // 2)``).

    Example:
        >>> jnp.fft.ifftshift(jnp.arange(5))
        Array([2, 3, 4, 0, 1], dtype=int32)
    """
    return _shift(x, axes, -1, "ifftshift")


__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "ifft", "ifft2", "ifftn", "ifftshift",
    "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]

"""The ``fft`` primitive (``lax.fft``): FFT, IFFT, RFFT and IRFFT over the trailing axes.

The impl is ``invarax.kernels.fft``, invarax's own compiled FFT: each transform gets a fixed
sequence of IEEE operations per length (docs/numerics.md, "Factorisations and the FFT"),
whatever the batch, the layout, the thread count or the CPU, so N1, N2, N3, N5 and N6 hold.

The FFT is linear: the JVP applies it to the tangent, and the transposes are JAX's (the
DFT matrix is symmetric; RFFT's transpose is the real part of a full FFT of the zero-padded
cotangent; IRFFT's is a masked, scaled RFFT, conjugated by JAX's convention). Batching
moves the batch axis to the front (the transform acts on the trailing axes).
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..core.aval import ShapedArray
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import Zero, deflinear
from ..interpreters.batching import batching_rules, moveaxis
from ..kernels import fft as kfft
from . import elementwise as el
from . import shape as sh


class FftType(enum.IntEnum):
    """The kind of transform, as ``jax.lax.FftType``."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_COMPLEX, _REAL = kfft.COMPLEX, kfft.REAL


def _fft_impl(x, *, fft_type, fft_lengths):
    return kfft.fft(x, fft_type.name, fft_lengths)


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if not 1 <= k <= 3 or x.ndim < k:
        raise ValueError(f"lax.fft transforms 1 to 3 trailing axes, got fft_lengths "
                         f"{fft_lengths} for an operand of shape {x.shape}")
    trailing = x.shape[x.ndim - k:]
    if fft_type == FftType.RFFT:
        if x.dtype not in _COMPLEX:
            raise TypeError(f"lax.fft RFFT takes a float32 or float64 operand, got "
                            f"{x.dtype.name}")
        if trailing != tuple(fft_lengths):
            raise ValueError(f"lax.fft RFFT: the operand's trailing shape {trailing} must be "
                             f"fft_lengths {fft_lengths}")
        return ShapedArray((*x.shape[:-1], fft_lengths[-1] // 2 + 1), _COMPLEX[x.dtype])
    if x.dtype not in _REAL:
        raise TypeError(f"lax.fft {fft_type.name} takes a complex64 or complex128 operand, got "
                        f"{x.dtype.name}")
    if fft_type == FftType.IRFFT:
        expected = (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        if trailing != expected:
            raise ValueError(f"lax.fft IRFFT: the operand's trailing shape {trailing} must be "
                             f"{expected} for fft_lengths {fft_lengths}")
        return ShapedArray((*x.shape[:-1], fft_lengths[-1]), _REAL[x.dtype])
    if trailing != tuple(fft_lengths):
        raise ValueError(f"lax.fft {fft_type.name}: the operand's trailing shape {trailing} "
                         f"must be fft_lengths {fft_lengths}")
    return ShapedArray(x.shape, x.dtype)


fft_p = Primitive("fft")
fft_p.def_impl(_fft_impl)
fft_p.def_abstract_eval(_fft_abstract_eval)
register_lowering(fft_p)


def _const_like(value, x):
    return sh.broadcast_in_dim(ArrayImpl(np.asarray(value, x.dtype)), x.shape, ())


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if isinstance(ct, Zero):
        return [None]
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    if fft_type == FftType.RFFT:
        n = fft_lengths[-1]
        zero = ArrayImpl(np.zeros((), ct.dtype))
        config = [(0, 0, 0)] * (ct.ndim - 1) + [(0, n - ct.shape[-1], 0)]
        full = fft_p.bind(sh.pad(ct, zero, config), fft_type=FftType.FFT,
                          fft_lengths=fft_lengths)
        return [el.real(full)]
    # IRFFT: the RFFT of the cotangent, halved weight on the de-duplicated bins doubled.
    y = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    bins, odd = y.shape[-1], fft_lengths[-1] % 2
    mask = np.concatenate([[1.0], np.full(bins - 2 + odd, 2.0), np.ones(1 - odd)])
    scale = sh.broadcast_in_dim(ArrayImpl((mask / math.prod(fft_lengths)).astype(y.dtype)),
                                y.shape, (y.ndim - 1,))
    return [el.conj(el.mul(scale, y))]


deflinear(fft_p, _fft_transpose)


def _fft_batch(vals, dims, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    return fft_p.bind(moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


batching_rules[fft_p] = _fft_batch


def fft(x, fft_type, fft_lengths):
    """The discrete Fourier transform over ``len(fft_lengths)`` trailing axes of ``x``.

    Arguments:
        x: an array; FFT and IFFT convert it to complex, RFFT to real (a complex ``x`` is an
            error), IRFFT to complex.
        fft_type: a ``FftType`` (or its name, e.g. ``"RFFT"``).
        fft_lengths: the transform's sizes (1 to 3 axes); for IRFFT the real output's.

    Returns:
        The transform (unnormalised forward, ``1/n``-scaled inverse, as ``numpy.fft``).

    Example:
        >>> lax.fft(jnp.array([1.0, 0.0, 0.0, 0.0]), "FFT", (4,))
        Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    typ = FftType[fft_type] if isinstance(fft_type, str) else FftType(fft_type)
    x = to_array(x, "lax.fft operand")
    real = x.dtype if x.dtype in _COMPLEX else np.dtype(dtypes.canonicalize(np.float64))
    if typ == FftType.RFFT:
        if x.dtype.kind == "c":
            raise TypeError(f"lax.fft RFFT takes real input, got {x.dtype.name}")
        target = real
    else:
        target = x.dtype if x.dtype in _REAL else _COMPLEX[real]
    if x.dtype != target:
        x = el.convert_element_type(x, target)
    lengths = tuple(int(n) for n in fft_lengths)
    return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)

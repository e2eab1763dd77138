"""``invarax.scipy.fft``: JAX's ``jax.scipy.fft``, the type-2 discrete cosine transform
(``dct``, ``dctn``) and its inverse (``idct``, ``idctn``), through ``jnp.fft`` as JAX
computes them (Makhoul's reordering and a quarter-wave twiddle); ``norm`` is ``None``
(``"backward"``) or ``"ortho"``. The n-dimensional forms apply the 1-D one along each axis.

Example:
    >>> import invarax.numpy as jnp
    >>> jnp.round(dct(jnp.array([1.0, 2.0, 3.0])), 4)
    Array([12.    , -3.4641,  0.    ], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from .. import numpy as jnp
from ..numpy import fft as _fft


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError(f"jax.scipy.fft.{name}: only DCT type 2 is implemented")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _prepare(x, n, axis):
    x = jnp.asarray(x)
    axis = axis % x.ndim
    if n is not None and n < x.shape[axis]:  # cut, as JAX
        x = jnp.take(x, np.arange(n), axis=axis)
    elif n is not None:
        x = jnp.pad(x, [(0, n - x.shape[axis] if a == axis else 0) for a in range(x.ndim)])
    return x, axis


def _along(values, axis, ndim):
    return jnp.expand_dims(values, [a for a in range(ndim) if a != axis])


def _quarter_twiddle(n, k):
    return jnp.exp(-0.5j * np.pi * k / n)


def _ortho_scale(out, axis):
    n = out.shape[axis]
    factor = np.full(n, 2.0)
    factor[0] = 4.0
    return out / jnp.sqrt(_along(jnp.asarray(factor * n, out.dtype), axis, out.ndim))


def _real_transform(name, transform, x, type, n, axis, norm):
    """``transform(x, axis, norm)`` of real ``x`` (as float) after the checks and the
    padding to ``n``; a complex ``x`` is transformed part by part."""
    _check(name, type, norm)
    x, axis = _prepare(x, n, axis)
    if jnp.iscomplexobj(x):
        real, imag = (_real_transform(name, transform, part, type, None, axis, norm)
                      for part in (x.real, x.imag))
        return real + 1j * imag
    return transform(x.astype(jnp.result_type(x, 0.0)), axis, norm)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-2 DCT of ``x`` along ``axis`` (zero-padded or cut to ``n``), as JAX's."""
    return _real_transform("dct", _dct, x, type, n, axis, norm)


def _dct(x, axis, norm):
    size = x.shape[axis]
    evens = jnp.take(x, np.arange(0, size, 2), axis=axis)
    odds = jnp.flip(jnp.take(x, np.arange(1, size, 2), axis=axis), axis)
    spectrum = _fft.fft(jnp.concatenate([evens, odds], axis), axis=axis)
    k = _along(jnp.arange(size, dtype=x.dtype), axis, x.ndim)
    out = 2 * (spectrum * _quarter_twiddle(size, k)).real
    return _ortho_scale(out, axis) if norm == "ortho" else out


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of ``dct`` along ``axis``, as JAX's."""
    return _real_transform("idct", _idct, x, type, n, axis, norm)


def _idct(x, axis, norm):
    size = x.shape[axis]
    if norm in (None, "backward"):  # the backward scale is the ortho one applied twice
        x = _ortho_scale(x, axis)
    x = _ortho_scale(x, axis)
    k = _along(jnp.arange(size, dtype=x.dtype), axis, x.ndim)
    v = _fft.ifft(x / _quarter_twiddle(size, k) * (2 * size), axis=axis).real
    half = (size + 1) // 2  # v holds the evens, then the odds reversed: put them back
    order = np.empty(size, dtype=int)
    order[0::2] = np.arange(half)
    order[1::2] = np.arange(size - 1, half - 1, -1)
    return jnp.take(v, order, axis=axis)


def _axes_and_sizes(x, s, axes):
    x = jnp.asarray(x)
    s = None if s is None else ([int(s)] if np.ndim(s) == 0 else list(s))
    if axes is None:
        axes = range(x.ndim - len(s), x.ndim) if s is not None else range(x.ndim)
    axes = [a % x.ndim for a in axes]
    return x, axes, ([None] * len(axes) if s is None else s)


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-2 DCT along ``axes`` (all by default), each padded or cut to ``s``."""
    _check("dctn", type, norm)
    x, axes, sizes = _axes_and_sizes(x, s, axes)
    for axis, n in zip(axes, sizes, strict=True):
        x = dct(x, n=n, axis=axis, norm=norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of ``dctn``."""
    _check("idctn", type, norm)
    x, axes, sizes = _axes_and_sizes(x, s, axes)
    for axis, n in zip(axes, sizes, strict=True):
        x = idct(x, n=n, axis=axis, norm=norm)
    return x


__all__ = ["dct", "dctn", "idct", "idctn"]

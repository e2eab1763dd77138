"""Pooling layers, as Equinox's: ``Pool``, ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, and
the adaptive ``AdaptivePool``, ``AdaptiveAvgPool1d/2d/3d``, ``AdaptiveMaxPool1d/2d/3d``.

A pool is one ``lax.reduce_window``: each window is reduced in the canonical order of the
window kernels (a sum pairwise over the window in row-major order, a max the first
maximum), so an example has the same bits alone, in a batch or under ``vmap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .. import lax
from .. import numpy as jnp
from ..module import Module, field
from ..transforms._vmap import vmap


def _per_axis(layer, name, value, n):
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    if isinstance(value, Sequence) and len(value) == n:
        return tuple(value)
    raise ValueError(f"{layer}: {name} must be an int or a sequence of {n} ints, got "
                     f"{value!r}")


class Pool(Module):
    """N-dimensional pooling over sliding windows, as ``equinox.nn.Pool``.

    Arguments:
        init: the reduction's initial value (its identity: ``0`` for ``lax.add``,
            ``-inf`` for ``lax.max``).
        operation: ``lax.add``, ``lax.max`` or ``lax.min``.
        num_spatial_dims: the number of spatial axes ``N``.
        kernel_size, stride: an int or ``N`` ints.
        padding: an int, ``N`` ints or ``N`` ``(low, high)`` pairs (padded elements hold
            ``init``; each pad at most the kernel size).
        use_ceil: round the output size up instead of down (extra padding at the end).

    Returns:
        The layer; call it on ``(..., channels, *spatial)``.

    Example:
        >>> pool = Pool(-jnp.inf, lax.max, 1, kernel_size=2, stride=2)
        >>> pool(jnp.array([[1.0, 3.0, 2.0, 0.0]]))
        Array([[3., 2.]], dtype=float32)
    """

    init: object
    operation: Callable
    num_spatial_dims: int = field(static=True)
    kernel_size: tuple = field(static=True)
    stride: tuple = field(static=True)
    padding: tuple = field(static=True)
    use_ceil: bool = field(static=True)

    def __init__(self, init, operation, num_spatial_dims, kernel_size, stride=1, padding=0,
                 use_ceil=False):
        name = type(self).__name__
        n = num_spatial_dims
        self.init = init
        self.operation = operation
        self.num_spatial_dims = n
        self.use_ceil = use_ceil
        self.kernel_size = _per_axis(name, "kernel_size", kernel_size, n)
        self.stride = _per_axis(name, "stride", stride, n)
        if isinstance(padding, Sequence) and len(padding) == n and all(
                isinstance(p, Sequence) for p in padding):
            self.padding = tuple(tuple(p) for p in padding)
        else:
            self.padding = tuple((p, p) for p in _per_axis(name, "padding", padding, n))

    def _pads(self, spatial):
        pads = self.padding
        if self.use_ceil:
            pads = tuple((lo, hi) if (size + lo + hi - k) % s == 0 else (lo, hi + s)
                         for size, (lo, hi), k, s in zip(spatial, pads, self.kernel_size,
                                                         self.stride, strict=True))
        for (lo, hi), k in zip(pads, self.kernel_size, strict=True):
            if max(lo, hi) > k:
                raise RuntimeError(f"{type(self).__name__}: paddings should be at most the "
                                   f"kernel size; padding {(lo, hi)} for kernel size {k}")
        return pads

    def __call__(self, x, *, key=None):
        """Pool ``x`` over its spatial axes.

        Arguments:
            x: an array of shape ``(..., channels, *spatial)``.
            key: ignored (for the common layer signature).

        Returns:
            An array of shape ``(..., channels, *pooled)``.

        Example:
            >>> MaxPool2d(2, 2)(jnp.arange(16.0).reshape(1, 4, 4))
            Array([[[ 5.,  7.],
                    [13., 15.]]], dtype=float32)
        """
        del key
        x = jnp.asarray(x)
        n = self.num_spatial_dims
        if x.ndim < n + 1:
            raise ValueError(f"{type(self).__name__} expects an input of shape (channels, "
                             f"{', '.join('spatial' for _ in range(n))}), optionally with "
                             f"leading batch dimensions; got shape {tuple(x.shape)}")
        lead = x.ndim - n
        pads = self._pads(x.shape[lead:])
        return lax.reduce_window(x, self.init, self.operation,
                                 (1,) * lead + self.kernel_size, (1,) * lead + self.stride,
                                 ((0, 0),) * lead + pads)


class _FixedPool(Pool):
    """A ``Pool`` whose reduction and rank the subclass fixes (``_max``, ``_rank``)."""

    def __init__(self, kernel_size, stride=1, padding=0, use_ceil=False):
        if self._max:
            super().__init__(-jnp.inf, lax.max, self._rank, kernel_size, stride, padding,
                             use_ceil)
        else:
            super().__init__(0, lax.add, self._rank, kernel_size, stride, padding, use_ceil)

    def __call__(self, x, *, key=None):
        """Pool ``x``: the window maximum, or the window sum divided by the kernel size.

        Arguments:
            x: an array of shape ``(..., channels, *spatial)``.
            key: ignored.

        Returns:
            The pooled array.

        Example:
            >>> AvgPool1d(2, 2)(jnp.array([[1.0, 3.0, 2.0, 0.0]]))
            Array([[2., 1.]], dtype=float32)
        """
        y = super().__call__(x)
        return y if self._max else y / math.prod(self.kernel_size)


def _pool_class(name, rank, is_max):
    what = "maximum" if is_max else "average"
    doc = f"""{rank}-d pooling by the window {what}, as ``equinox.nn.{name}``.

    Arguments:
        kernel_size, stride: an int or {rank} ints.
        padding: an int, {rank} ints or {rank} ``(low, high)`` pairs.
        use_ceil: round the output size up instead of down.

    Returns:
        The layer; call it on ``(..., channels, *spatial)`` ({rank} spatial axes).

    Example:
        >>> {name}(2, 2)(jnp.ones((3,{' 4,' * rank}))).shape
        (3,{' 2,' * rank})
    """
    cls = type(name, (_FixedPool,), {"__doc__": doc.replace(",)", ")"), "_rank": rank,
                                     "_max": is_max, "__module__": __name__})
    return cls


MaxPool1d = _pool_class("MaxPool1d", 1, True)
MaxPool2d = _pool_class("MaxPool2d", 2, True)
MaxPool3d = _pool_class("MaxPool3d", 3, True)
AvgPool1d = _pool_class("AvgPool1d", 1, False)
AvgPool2d = _pool_class("AvgPool2d", 2, False)
AvgPool3d = _pool_class("AvgPool3d", 3, False)


class AdaptivePool(Module):
    """Pooling to a target shape, as ``equinox.nn.AdaptivePool``.

    Each spatial axis of size ``d`` is cut, in order, into ``d % t`` windows of
    ``d // t + 1`` elements then windows of ``d // t`` elements (``t`` its target size),
    and ``operation`` reduces each window, one axis after the other.

    Arguments:
        target_shape: an int or ``num_spatial_dims`` ints.
        num_spatial_dims: the number of spatial axes.
        operation: a reduction of a 1-d array to a scalar, e.g. ``jnp.mean``.

    Returns:
        The layer; call it on ``(..., channels, *spatial)``.

    Example:
        >>> AdaptivePool(2, 1, jnp.max)(jnp.array([[1.0, 5.0, 2.0, 4.0, 3.0]]))
        Array([[5., 4.]], dtype=float32)
    """

    target_shape: tuple = field(static=True)
    operation: Callable

    def __init__(self, target_shape, num_spatial_dims, operation):
        self.operation = operation
        self.target_shape = _per_axis(type(self).__name__, "target_shape", target_shape,
                                      num_spatial_dims)

    def __call__(self, x, *, key=None):
        """Pool ``x`` to ``(..., channels, *target_shape)``.

        Arguments:
            x: an array of shape ``(..., channels, *spatial)``.
            key: ignored.

        Returns:
            The pooled array.

        Example:
            >>> AdaptiveAvgPool2d((1, 2))(jnp.arange(8.0).reshape(1, 2, 4))
            Array([[[2.5, 4.5]]], dtype=float32)
        """
        del key
        x = jnp.asarray(x)
        n = len(self.target_shape)
        if x.ndim < n + 1:
            raise ValueError(f"{type(self).__name__} expects {n} spatial axes after the "
                             f"channels; got shape {tuple(x.shape)}")
        reduce = vmap(self.operation)
        for i, t in enumerate(self.target_shape):
            axis = x.ndim - n + i
            size = x.shape[axis]
            if not 1 <= t <= size:
                raise ValueError(f"{type(self).__name__}: target size {t} of spatial axis "
                                 f"{i} must be between 1 and its size {size} (input shape "
                                 f"{tuple(x.shape)})")
            moved = jnp.moveaxis(x, axis, -1)
            head = size % t * (size // t + 1)
            parts = []
            for start, stop, width in ((0, head, size // t + 1), (head, size, size // t)):
                if stop > start:
                    block = moved[..., start:stop]
                    rows = block.reshape(-1, width)
                    parts.append(reduce(rows).reshape(*block.shape[:-1], -1))
            x = jnp.moveaxis(jnp.concatenate(parts, axis=-1), -1, axis)
        return x


def _adaptive_class(name, rank, operation, what):
    doc = f"""Adaptive {rank}-d pooling by the window {what}, as ``equinox.nn.{name}``.

    Arguments:
        target_shape: an int or {rank} ints.

    Returns:
        The layer; call it on ``(..., channels, *spatial)`` ({rank} spatial axes).

    Example:
        >>> {name}(2)(jnp.ones((3,{' 5,' * rank}))).shape
        (3,{' 2,' * rank})
    """

    def __init__(self, target_shape):
        AdaptivePool.__init__(self, target_shape, rank, operation)

    return type(name, (AdaptivePool,), {"__doc__": doc.replace(",)", ")"),
                                        "__init__": __init__, "__module__": __name__})


AdaptiveAvgPool1d = _adaptive_class("AdaptiveAvgPool1d", 1, jnp.mean, "average")
AdaptiveAvgPool2d = _adaptive_class("AdaptiveAvgPool2d", 2, jnp.mean, "average")
AdaptiveAvgPool3d = _adaptive_class("AdaptiveAvgPool3d", 3, jnp.mean, "average")
AdaptiveMaxPool1d = _adaptive_class("AdaptiveMaxPool1d", 1, jnp.max, "maximum")
AdaptiveMaxPool2d = _adaptive_class("AdaptiveMaxPool2d", 2, jnp.max, "maximum")
AdaptiveMaxPool3d = _adaptive_class("AdaptiveMaxPool3d", 3, jnp.max, "maximum")

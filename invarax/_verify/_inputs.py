"""The battery's inputs: made by invarax's own random streams (integer threefry bits, then
exact IEEE arithmetic) or from exact integer patterns, never by a NumPy float function whose
bits could depend on the CPU; and the digest of a workload's results."""

from __future__ import annotations

import functools
import hashlib
import math

import numpy as np

from .. import random
from ..core.pytree import tree_leaves

#: The canonical NaN bits a digest gives every NaN (a NaN's sign and payload are outside
#: the contract; docs/numerics.md, "NaN bits").
_NAN_BITS = {4: np.uint32(0x7FC00000), 8: np.uint64(0x7FF8000000000000)}


#: The length of the stream of uniform values that ``uniform`` draws its inputs from.
STREAM = 1 << 18


@functools.cache
def _stream(dtype) -> np.ndarray:
    """``invarax.random.uniform`` values in [0, 1) of ``dtype``, made once (every new shape
    would trace the sampler again)."""
    values = np.asarray(random.uniform(random.PRNGKey(1234), (STREAM,), dtype))
    values.flags.writeable = False
    return values


def uniform(seed: int, shape, dtype, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """An array of ``shape`` of uniform values in ``[low, high)``: a window of invarax's
    uniform stream starting where ``seed`` says, scaled (one IEEE multiply and add)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    stream = _stream(np.dtype(dtype))
    where = (seed * 7919 + np.arange(math.prod(shape))) % STREAM
    return (stream[where] * (high - low) + low).reshape(shape)


def bit_patterns(seed: int, size: int, dtype) -> np.ndarray:
    """``size`` floats of ``dtype`` whose bits are random (every exponent, sign, NaN and
    infinity equally likely), from invarax's 32-bit threefry stream."""
    words = np.asarray(random.bits(random.PRNGKey(seed), (2, size), np.uint32))
    if np.dtype(dtype).itemsize == 4:
        return words[0].view(np.float32)
    high, low = words.astype(np.uint64)
    return ((high << np.uint64(32)) | low).view(np.float64)


def specials(dtype) -> np.ndarray:
    """Zeros of both signs, the subnormal and normal limits, infinities, NaN, one and its
    neighbours, and values near the functions' thresholds (each an exact conversion)."""
    info = np.finfo(dtype)
    tiny, big = info.smallest_subnormal, info.max
    values = [0.0, -0.0, tiny, -tiny, info.smallest_normal - tiny, info.smallest_normal,
              -info.smallest_normal, big, -big, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5,
              2.0, 1.0 - info.epsneg, 1.0 + info.eps, -1.0 + info.epsneg, 0.75, 3.0, 10.0,
              88.72, -87.33, -103.97, 709.78, -745.13, 1e-8, 1e-30, 1e30, 1e6, 16777217.0,
              3.141592653589793, 1.5707963267948966, 1e300, 1e-300]
    with np.errstate(over="ignore", under="ignore"):
        values = np.array(values, dtype)
        return np.concatenate([values, np.nextafter(values, np.array(np.inf, dtype))])


def spread(dtype, seed: int = 0) -> np.ndarray:
    """The elementary functions' inputs: the specials, random bit patterns, uniform values
    in [-1, 1), [-10, 10) and [-100, 100), and the grid ``k / 16``, ``|k| <= 1024``."""
    grid = (np.arange(-1024, 1025) / 16).astype(dtype)  # integers over a power of 2: exact
    return np.concatenate([
        specials(dtype), bit_patterns(seed, 4096, dtype), uniform(seed + 1, 2048, dtype),
        uniform(seed + 2, 2048, dtype, -10, 10), uniform(seed + 3, 2048, dtype, -100, 100),
        grid])


def _canonical(leaf) -> np.ndarray:
    """The leaf as a little-endian C-contiguous array whose NaNs all have one bit pattern."""
    if isinstance(leaf, (bool, int, float, complex)):  # a Python scalar: a fixed dtype
        leaf = np.asarray(leaf, {bool: np.bool_, int: np.int64, float: np.float64,
                                 complex: np.complex128}[type(leaf)])
    array = np.asarray(leaf)
    array = np.array(array, array.dtype.newbyteorder("<"), order="C")
    if array.dtype.kind in "fc" and array.dtype.itemsize // (2 if array.dtype.kind == "c"
                                                             else 1) in _NAN_BITS:
        parts = array.view(array.real.dtype) if array.dtype.kind == "c" else array
        parts.view(f"<u{parts.dtype.itemsize}")[np.isnan(parts)] = _NAN_BITS[parts.itemsize]
    return array


def digest(results) -> str:
    """A 16-hex-digit digest of a pytree of arrays: each leaf's dtype, shape and bits (every
    NaN counted as one canonical NaN), in the tree's leaf order.

    Example:
        >>> digest([np.float32(1.0)]) == digest([np.array(1.0, np.float32)])
        True
        >>> digest([np.float32("nan")]) == digest([-np.float32("nan")])
        True
        >>> digest([np.float32(0.0)]) == digest([np.float32(-0.0)])
        False
    """
    hasher = hashlib.sha256()
    for leaf in tree_leaves(results):
        array = _canonical(leaf)
        hasher.update(f"{array.dtype.str}{array.shape};".encode())
        hasher.update(array.tobytes())
    return hasher.hexdigest()[:16]


def overall(digests: dict[str, str]) -> str:
    """The digest of every workload's digest, in name order."""
    text = "".join(f"{name} {value}\n" for name, value in sorted(digests.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]

"""PRNG keys and random bits: JAX's threefry2x32 implementation, written with lax ops.

A key is a ``uint32[2]`` array, as JAX's legacy (raw) keys. Its bits, ``split``,
``fold_in`` and ``bits`` follow JAX's, in both of its stream layouts, chosen by the flag
``jax_threefry_partitionable`` (``invarax.config``), read when a draw is traced:

- on (the default, as JAX since 0.5): the counter of element ``i`` of a draw of shape
  ``s`` is the pair ``(0, i)`` (the high and low words of a 64-bit flat index), hashed
  with the key; ``bits`` xors the two hashed words, ``split`` stacks them;
- off (JAX before 0.5): a draw of ``n`` 32-bit words hashes the counters ``0..n-1`` as
  JAX's ``threefry_2x32`` lays them out: the first half (padded with a 0 to even length)
  are the first words of the pairs, the second half the second words, and the two hashed
  halves are concatenated. ``split`` takes ``2 * num`` such words; 8- and 16-bit draws
  cut each word into little-endian pieces, 64-bit draws pair word ``i`` (high) with word
  ``size + i`` (low).

``fold_in`` hashes the pair ``(0, data)`` in both. Every step is a lax op (uint32 add,
xor and shifts), so keys work under ``jit`` and ``vmap`` like any other array.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl, is_python_scalar, to_array
from ..core.config import config
from ..core.trace import Tracer
from ..ops import elementwise as lax
from ..ops import shape as sh
from ._eager import compiled

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA


def _u32(value):
    return ArrayImpl(np.asarray(value, np.uint32))


def _rotate_left(x, d):
    return lax.bitwise_or(lax.shift_left(x, _u32(d)), lax.shift_right_logical(x, _u32(32 - d)))


def threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 block cipher (20 rounds) of the counters ``(x1, x2)`` under a key.

    Arguments:
        k1, k2: the two uint32 words of the key (0-d arrays).
        x1, x2: uint32 counter arrays of equal shape (or 0-d).

    Returns:
        The pair of hashed uint32 arrays, of the counters' shape.

    Example:
        >>> zero = jnp.zeros((), jnp.uint32)
        >>> threefry2x32(zero, zero, zero, zero)
        (Array(1797259609, dtype=uint32), Array(2579123966, dtype=uint32))
    """
    ks = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _u32(_KEY_PARITY)))
    x1, x2 = lax.add(x1, ks[0]), lax.add(x2, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(_rotate_left(x2, r), x1)
        x1 = lax.add(x1, ks[(i + 1) % 3])
        x2 = lax.add(lax.add(x2, ks[(i + 2) % 3]), _u32(i + 1))
    return x1, x2


def concrete_value(x):
    """The NumPy value of ``x`` if it is known now (not traced by jit or vmap), else None."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x._value if isinstance(x, ArrayImpl) else np.asarray(x)


def check_shape(name: str, shape) -> tuple:
    """``shape`` as a tuple of non-negative ints, or a TypeError/ValueError that says why."""
    if not isinstance(shape, Sequence):
        raise TypeError(f"random.{name}: shape must be a tuple of ints, got "
                        f"{type(shape).__name__} {shape!r}; write ({shape!r},) for one axis")
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"random.{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"random.{name}: shape {dims} has a negative dimension")
    return dims


def check_key(name: str, key, allow_batched: bool = False):
    """``key`` as a ``uint32[2]`` array (``uint32[..., 2]`` if ``allow_batched``), or an error."""
    try:
        key = to_array(key, f"random.{name} key")
    except TypeError:
        raise TypeError(f"random.{name}: a key must be a uint32[2] array from "
                        f"random.PRNGKey(seed), got {type(key).__name__}") from None
    if key.dtype != np.uint32 or key.shape[-1:] != (2,):
        raise TypeError(f"random.{name}: a key is a uint32[2] array from random.PRNGKey(seed); "
                        f"got {key.dtype.name}{list(key.shape)}")
    if key.ndim > 1 and not allow_batched:
        raise ValueError(f"random.{name} takes a single key, got a batch of keys of shape "
                         f"{key.shape}; map over it with invarax.vmap")
    return key


def _words(key):
    """The two uint32 words of a ``uint32[2]`` key, as 0-d arrays."""
    return tuple(sh.reshape(sh.slice_in_dim(key, i, i + 1), ()) for i in (0, 1))


def _stack(w1, w2):
    shape = (*w1.shape, 1)
    return sh.concatenate([sh.reshape(w1, shape), sh.reshape(w2, shape)], len(w1.shape))


def _partitionable() -> bool:
    return config.read("jax_threefry_partitionable")


def _check_counters(count: int, what: str) -> None:
    if count >= 2**32 - 1:
        raise ValueError(f"random: {what} needs {count} counters, beyond the 2**32 - 1 that "
                         "invarax supports; draw in several parts")


def _hash_counters(key, shape):
    """threefry2x32 of the counters ``(0, i)``, ``i`` the flat index of each element."""
    size = math.prod(shape)
    _check_counters(size, f"a draw of {size} elements")
    k1, k2 = _words(key)
    lo = sh.reshape(sh.iota(np.uint32, size), shape)
    hi = sh.broadcast_in_dim(_u32(0), shape, ())
    return threefry2x32(k1, k2, hi, lo)


def _hash_words(key, n: int):
    """JAX's ``threefry_2x32(key, iota(n))``: ``n`` hashed uint32 words of the counters
    ``0..n-1`` (the non-partitionable streams)."""
    _check_counters(n, f"a draw of {n} 32-bit words")
    half = (n + 1) // 2
    first = sh.iota(np.uint32, half)
    second = lax.add(sh.iota(np.uint32, n - half), _u32(half))
    if n % 2:  # JAX pads the counters with a 0 to an even count
        second = sh.concatenate([second, sh.broadcast_in_dim(_u32(0), (1,), ())], 0)
    k1, k2 = _words(key)
    words = sh.concatenate(list(threefry2x32(k1, k2, first, second)), 0)
    return sh.slice_in_dim(words, 0, n) if n % 2 else words


def _int_seed(seed: int):
    """A Python int seed as JAX takes it: int64, kept to its low 32 bits with x64 off."""
    if not -(2**63) <= seed < 2**63:
        raise OverflowError(f"random.PRNGKey: seed {seed} does not fit in int64")
    value = np.asarray(seed, np.int64)  # as JAX: with x64 off, the low 32 bits
    return ArrayImpl(value if dtypes.x64_enabled() else value.astype(np.int32))


def _int_data(data: int):
    """A Python int for ``fold_in`` as uint32, if it lies in ``[0, 2**32)``."""
    if not 0 <= data < 2**32:
        raise OverflowError(f"random.fold_in: data {data} is out of bounds for uint32")
    return _u32(data)


def _python_int(convert):
    """``convert`` for a Python int (bools included, as ``isinstance(x, int)``); other
    scalars pass unchanged."""
    return lambda x: convert(x) if isinstance(x, int) else x


def _not_int_seed(values) -> bool:
    """The seed error prints the seed's value: a non-integer seed runs inline."""
    return values["seed"].dtype.kind not in "iu"


@compiled(convert={"seed": _python_int(_int_seed)}, inline_if=_not_int_seed)
def PRNGKey(seed):  # noqa: N802  (JAX's name)
    """A PRNG key from an integer seed: the ``uint32[2]`` array JAX's ``PRNGKey`` gives.

    With x64 off, a Python int seed keeps its low 32 bits (as JAX); with x64 on, a 64-bit
    seed's high and low words become the key's two words. The seed may be traced (jit,
    vmap over seeds).

    Arguments:
        seed: an integer scalar (Python int, NumPy integer or integer array).

    Returns:
        The key, a ``uint32[2]`` array.

    Example:
        >>> random.PRNGKey(42)
        Array([ 0, 42], dtype=uint32)
    """
    if is_python_scalar(seed) and isinstance(seed, int):
        seed = _int_seed(seed)
    else:
        seed = to_array(seed, "random.PRNGKey seed")
    if seed.ndim:
        raise TypeError(f"random.PRNGKey takes a scalar seed, got an array of shape "
                        f"{seed.shape}; map over seeds with invarax.vmap")
    if seed.dtype.kind not in "iu":
        raise TypeError(f"random.PRNGKey: the seed must be an integer, got {seed.dtype.name} "
                        f"{seed}; convert it with int(...)")
    high = lax.shift_right_logical(seed, ArrayImpl(np.asarray(32, seed.dtype)))
    words = [lax.convert_element_type(w, np.uint32) for w in (high, seed)]
    return _stack(*words)


def key(seed):
    """A PRNG key from an integer seed. invarax has no key dtype: this is ``PRNGKey(seed)``.

    Arguments:
        seed: an integer scalar.

    Returns:
        The raw key, a ``uint32[2]`` array (JAX's ``key`` returns a typed key scalar whose
        ``key_data`` is this array).

    Example:
        >>> random.key(3)
        Array([0, 3], dtype=uint32)
    """
    return PRNGKey(seed)


def key_data(keys):
    """The ``uint32`` data of a key or a batch of keys (here keys are their data).

    Arguments:
        keys: a ``uint32[..., 2]`` key array.

    Returns:
        The same array.

    Example:
        >>> random.key_data(random.PRNGKey(7))
        Array([0, 7], dtype=uint32)
    """
    return check_key("key_data", keys, allow_batched=True)


@compiled(static=("num",))
def split(key, num=2):
    """Split a key into ``num`` new keys, as ``jax.random.split``.

    Arguments:
        key: a ``uint32[2]`` key.
        num: the number of keys (an int) or their shape (a tuple of ints).

    Returns:
        A ``uint32[*shape, 2]`` array of keys.

    Example:
        >>> random.split(random.PRNGKey(0))
        Array([[1797259609, 2579123966],
               [ 928981903, 3453687069]], dtype=uint32)
    """
    key = check_key("split", key)
    shape = check_shape("split", tuple(num) if isinstance(num, Sequence) else (num,))
    if _partitionable():
        return _stack(*_hash_counters(key, shape))
    return sh.reshape(_hash_words(key, 2 * math.prod(shape)), (*shape, 2))


@compiled(convert={"data": _python_int(_int_data)})
def fold_in(key, data):
    """A new key from ``key`` and an integer, as ``jax.random.fold_in``.

    Arguments:
        key: a ``uint32[2]`` key.
        data: an integer scalar, taken as uint32 (a Python int must lie in ``[0, 2**32)``).

    Returns:
        The new ``uint32[2]`` key.

    Example:
        >>> random.fold_in(random.PRNGKey(0), 1)
        Array([ 928981903, 3453687069], dtype=uint32)
    """
    key = check_key("fold_in", key)
    if is_python_scalar(data) and isinstance(data, int):
        data = _int_data(data)
    data = to_array(data, "random.fold_in data")
    if data.ndim:
        raise TypeError(f"random.fold_in takes scalar data, got shape {data.shape}; "
                        "map over it with invarax.vmap")
    if data.dtype.kind not in "iu":
        raise TypeError(f"random.fold_in: data must be an integer, got {data.dtype.name}")
    k1, k2 = _words(key)
    return _stack(*threefry2x32(k1, k2, _u32(0), lax.convert_element_type(data, np.uint32)))


def random_bits(key, bit_width: int, shape: tuple):
    """Uniform random unsigned integers of ``bit_width`` bits (JAX's ``_random_bits``)."""
    dtype = np.dtype(f"uint{bit_width}")
    if not _partitionable():
        return _original_bits(key, bit_width, shape, dtype)
    bits1, bits2 = _hash_counters(key, shape)
    if bit_width == 64:
        high = lax.convert_element_type(bits1, dtype)
        low = lax.convert_element_type(bits2, dtype)
        return lax.bitwise_or(lax.shift_left(high, ArrayImpl(np.asarray(32, dtype))), low)
    return lax.convert_element_type(lax.bitwise_xor(bits1, bits2), dtype)


def _original_bits(key, bit_width: int, shape: tuple, dtype):
    """The non-partitionable ``random_bits``: ``ceil(bit_width * size / 32)`` hashed words."""
    size = math.prod(shape)
    words = _hash_words(key, -(-bit_width * size // 32))
    if bit_width == 64:
        high, low = (lax.convert_element_type(sh.slice_in_dim(words, i * size, (i + 1) * size),
                                              dtype) for i in (0, 1))
        out = lax.bitwise_or(lax.shift_left(high, ArrayImpl(np.asarray(32, dtype))), low)
    elif bit_width == 32:
        out = words
    else:  # each word's little-endian pieces, in order
        grid = (words.shape[0], 32 // bit_width)
        amounts = ArrayImpl(np.arange(0, 32, bit_width, dtype=np.uint32))
        pieces = lax.shift_right_logical(sh.broadcast_in_dim(words, grid, (0,)),
                                         sh.broadcast_in_dim(amounts, grid, (1,)))
        pieces = lax.bitwise_and(pieces, _u32(2**bit_width - 1))
        flat = sh.reshape(lax.convert_element_type(pieces, dtype), (math.prod(grid),))
        out = sh.slice_in_dim(flat, 0, size)
    return sh.reshape(out, shape)


@compiled(static=("shape", "dtype"))
def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers, as ``jax.random.bits``.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape (a tuple of ints).
        dtype: an unsigned integer dtype (default uint32, or uint64 with x64 on).

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.bits(random.PRNGKey(0), (3,))
        Array([4070199207, 4202968722, 1427181096], dtype=uint32)
    """
    key = check_key("bits", key)
    dtype = dtypes.canonicalize(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise ValueError(f"random.bits: dtype must be an unsigned integer dtype, got {dtype.name}")
    return random_bits(key, 8 * dtype.itemsize, check_shape("bits", shape))

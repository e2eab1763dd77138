"""``jnp.save``, ``jnp.load``, ``jnp.savez``: NumPy's ``.npy``/``.npz`` files, as JAX's.

Writes to a path are atomic (temporary file, fsync, rename); loading never unpickles.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..serialise._files import CorruptFileError, atomic_write, is_path, read_npy, write_npy
from ._creation import asarray

_ZIP_MAGIC = b"PK\x03\x04"


@contextlib.contextmanager
def _writing(file, suffix):
    if is_path(file):
        file = os.fspath(file)
        with atomic_write(file if file.endswith(suffix) else file + suffix) as f:
            yield f
    else:
        yield file


def _numeric(x, what: str) -> np.ndarray:
    value = np.asarray(x)
    if value.dtype.hasobject:
        raise TypeError(f"{what} has dtype object; invarax saves numbers only (no pickles)")
    return value


def save(file, arr, allow_pickle: bool = True) -> None:
    """Save an array to a ``.npy`` file, as ``jnp.save`` (NumPy's format).

    A path gets ``.npy`` appended if it lacks it and is written atomically (a temporary file
    in the same directory, fsynced, then renamed), so a crash leaves the old file intact.

    Arguments:
        file: a path or a binary file object.
        arr: an array or anything ``jnp.asarray`` takes.
        allow_pickle: accepted for NumPy's signature; object arrays are never saved.

    Returns:
        None.

    Example:
        >>> import io
        >>> f = io.BytesIO(); jnp.save(f, jnp.arange(3)); _ = f.seek(0)
        >>> jnp.load(f)
        Array([0, 1, 2], dtype=int32)
    """
    del allow_pickle
    value = _numeric(arr, "the array")
    with _writing(file, ".npy") as f:
        write_npy(f, value)


def savez(file, *args, **kwds) -> None:
    """Save several arrays to one uncompressed ``.npz`` file, as ``jnp.savez``.

    Arguments:
        file: a path (``.npz`` appended if missing; written atomically) or a file object.
        *args: arrays saved as ``arr_0``, ``arr_1``, ...
        **kwds: arrays saved under their keyword's name.

    Returns:
        None.

    Example:
        >>> import io
        >>> f = io.BytesIO(); jnp.savez(f, w=jnp.ones(2)); _ = f.seek(0)
        >>> jnp.load(f)["w"]
        array([1., 1.], dtype=float32)
    """
    arrays = {f"arr_{i}": _numeric(a, f"positional array {i}") for i, a in enumerate(args)}
    for key, value in kwds.items():
        if key in arrays:
            raise ValueError(f"cannot use un-named variables and keyword {key}")
        arrays[key] = _numeric(value, f"array {key!r}")
    with _writing(file, ".npz") as f:
        np.savez(f, allow_pickle=False, **arrays)


def load(file, allow_pickle: bool = False):
    """Load a ``.npy`` file as an array, or a ``.npz`` file as NumPy's lazy mapping, as
    ``jnp.load``.

    Nothing is ever unpickled (a pickle can run arbitrary code): a file holding Python
    objects is an error. A truncated or corrupted ``.npy`` file is an error, never a wrong
    array. The ``.npy`` result is converted by ``jnp.asarray`` (so float64 becomes float32
    unless x64 is enabled), as in JAX.

    Arguments:
        file: a path or a binary file object.
        allow_pickle: must be False.

    Returns:
        An ``Array`` for ``.npy``; a ``numpy.lib.npyio.NpzFile`` of NumPy arrays for ``.npz``.

    Example:
        >>> import io
        >>> f = io.BytesIO(); np.save(f, np.float32([1.5])); _ = f.seek(0)
        >>> jnp.load(f)
        Array([1.5], dtype=float32)
    """
    if allow_pickle:
        raise ValueError("invarax.numpy.load never unpickles (a pickle can run arbitrary "
                         "code); save the data as numeric arrays instead")
    name = os.fspath(file) if is_path(file) else "the file"
    if is_path(file):
        with open(file, "rb") as f:
            if f.read(4) == _ZIP_MAGIC:
                return np.load(file, allow_pickle=False)
            f.seek(0)
            return _load_npy(f, name, own_file=True)
    start = file.tell()
    head = file.read(4)
    file.seek(start)
    if head == _ZIP_MAGIC:
        return np.load(file, allow_pickle=False)
    return _load_npy(file, name, own_file=False)


def _load_npy(f, name: str, own_file: bool):
    try:
        value = read_npy(f, name)
    except EOFError as e:
        raise CorruptFileError(f"{name} is empty: no .npy record to load") from e
    if own_file and f.read(1):
        raise CorruptFileError(f"{name} has unexpected bytes after its array (corrupted)")
    return asarray(value)

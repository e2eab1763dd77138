"""Files: atomic writes, a checksumming file wrapper, and a ``.npy`` record reader that never
unpickles.

A ``.npy`` record is NumPy's format (``numpy.lib.format``): the magic ``\\x93NUMPY``, a
version, a header length, a header (a Python dict literal: ``descr``, ``fortran_order``,
``shape``) and the raw bytes. The header is read with ``ast.literal_eval`` (no code runs)
and object dtypes (pickles) are refused before any byte of data is read.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import math
import os
import pathlib
import struct
import tempfile
import warnings

import numpy as np

from ..core import dtypes

NPY_MAGIC = b"\x93NUMPY"
TRAILER_MAGIC = b"\x00INVARAX-SHA256\x00"  # after tree_serialise_leaves' last record


class CorruptFileError(ValueError, RuntimeError):
    """A file is truncated, corrupted, or not in the format expected (a ``RuntimeError``
    too, as Equinox raises when a leaf cannot be loaded)."""


def is_path(path_or_file) -> bool:
    """Whether ``path_or_file`` names a file (``str`` or ``os.PathLike``) rather than is one."""
    return isinstance(path_or_file, (str, os.PathLike))


@contextlib.contextmanager
def atomic_write(path):
    """Open ``path`` for writing (binary) so that it is replaced atomically on success.

    The data goes to a temporary file in the same directory, which is flushed, fsynced and
    renamed over ``path`` (``os.replace``) only when the ``with`` block ends without an
    exception; the directory is then fsynced. A crash at any point leaves either the old
    file or the new one, never a mix; on an exception the temporary file is removed.

    Arguments:
        path: the file to write (``str`` or ``os.PathLike``).

    Returns:
        A context manager giving a binary file object.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
        >>> with atomic_write(path) as f:
        ...     _ = f.write(b"data")
        >>> with open(path, "rb") as f:
        ...     f.read()
        b'data'
    """
    path = pathlib.Path(path)
    directory = path.parent if str(path.parent) else pathlib.Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # not every platform or file system allows it
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class HashingFile:
    """A file wrapper that feeds every byte written or read through SHA-256.

    A ``seek`` away from the current position makes the digest meaningless, so it is
    recorded (``seeked``) and the caller skips the check.
    """

    def __init__(self, f):
        self.f, self.hash, self.seeked = f, hashlib.sha256(), False

    def write(self, data):
        self.hash.update(data)
        return self.f.write(data)

    def read(self, size=-1):
        data = self.f.read(size)
        self.hash.update(data)
        return data

    def readinto(self, buffer):
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset, whence=0):
        if not (whence == 1 and offset == 0):
            self.seeked = True
        return self.f.seek(offset, whence)

    def tell(self):
        return self.f.tell()

    def flush(self):
        return getattr(self.f, "flush", lambda: None)()


def write_npy(f, array: np.ndarray) -> None:
    """Write ``array`` to the binary file ``f`` as one ``.npy`` record (``np.save``'s bytes).

    Arguments:
        f: a binary file object.
        array: a NumPy array of a numeric or bool dtype.

    Returns:
        None.

    Example:
        >>> import io
        >>> f = io.BytesIO(); write_npy(f, np.arange(3)); _ = f.seek(0)
        >>> read_npy(f, "x")
        array([0, 1, 2])
    """
    if array.dtype.hasobject:
        raise TypeError(
            f"cannot save an array of dtype {array.dtype}: invarax files hold numbers only "
            "(no pickled Python objects); convert it to a numeric dtype first"
        )
    np.lib.format.write_array(f, array, allow_pickle=False)


def _read_exactly(f, n: int, what: str) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise CorruptFileError(
            f"the file is truncated: {what} needs {n} bytes but only {len(data)} remain"
        )
    return data


def read_npy_header(f, what: str):
    """Read a ``.npy`` record's magic and header; return ``(dtype, shape, fortran_order)``.

    Raises ``EOFError`` when the file ends exactly before the record, ``CorruptFileError``
    when the bytes are not a valid header.
    """
    magic = f.read(len(NPY_MAGIC))
    if not magic or magic == TRAILER_MAGIC[: len(magic)]:
        raise EOFError(what)
    if magic != NPY_MAGIC:
        raise CorruptFileError(
            f"{what}: expected a .npy record (magic {NPY_MAGIC!r}), found {magic!r}; the "
            "file is corrupted or was not written by tree_serialise_leaves / np.save"
        )
    major, _minor = _read_exactly(f, 2, f"{what}'s version")
    if major not in (1, 2, 3):
        raise CorruptFileError(f"{what}: unknown .npy format version {major}")
    size_format = "<H" if major == 1 else "<I"
    (length,) = struct.unpack(size_format, _read_exactly(f, struct.calcsize(size_format),
                                                         f"{what}'s header length"))
    raw = _read_exactly(f, length, f"{what}'s header")
    if not raw.endswith(b"\n"):  # NumPy always ends the header with a newline
        raise CorruptFileError(f"{what}: the .npy header {raw[:80]!r} is corrupted (its "
                               "length field or its last byte is wrong)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. a deprecated dtype alias from a bit flip
            header = ast.literal_eval(raw.decode("utf8" if major == 3 else "latin1"))
            descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
            dtype = np.lib.format.descr_to_dtype(descr)
    except (ValueError, SyntaxError, KeyError, TypeError, UnicodeDecodeError, Warning) as e:
        raise CorruptFileError(f"{what}: the .npy header {raw[:80]!r} is corrupted ({e})") from e
    if not (isinstance(shape, tuple) and all(isinstance(d, int) and d >= 0 for d in shape)
            and isinstance(fortran, bool)):
        raise CorruptFileError(f"{what}: the .npy header {header} is corrupted")
    if dtype.hasobject:
        raise CorruptFileError(
            f"{what} holds Python objects (dtype {dtype}, a pickle); invarax never unpickles "
            "(loading a pickle can run arbitrary code)"
        )
    if dtype.kind == "V" and dtype.names is None and dtype.itemsize == 2:
        # NumPy writes ml_dtypes' bfloat16 as an opaque 2-byte void; JAX reads it back as
        # bfloat16 (the other narrow types stay opaque, as there)
        dtype = np.dtype(dtypes.ml_dtypes().bfloat16)
    if dtype.newbyteorder("=") not in dtypes.SUPPORTED:
        raise CorruptFileError(f"{what} has dtype {dtype}, which is not a number type that "
                               "invarax reads (bool, integer, float or complex)")
    return dtype, shape, fortran


def read_npy(f, what: str) -> np.ndarray:
    """Read one ``.npy`` record from the binary file ``f`` as a new C-ordered NumPy array.

    Arguments:
        f: a binary file object positioned at the record.
        what: how to name the record in errors (e.g. the leaf's path).

    Returns:
        The array, writable and C-contiguous.

    Raises ``EOFError`` when ``f`` ends exactly before the record and ``CorruptFileError``
    for a truncated or corrupted record or one holding Python objects.

    Example:
        >>> import io
        >>> f = io.BytesIO(); np.save(f, np.eye(2)); _ = f.seek(0)
        >>> read_npy(f, "x")
        array([[1., 0.],
               [0., 1.]])
    """
    dtype, shape, fortran = read_npy_header(f, what)
    data = _read_exactly(f, math.prod(shape) * dtype.itemsize, f"the data of {what}")
    array = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(array, dtype=dtype.newbyteorder("="), order="C")

"""Equinox's ``tree_serialise_leaves`` / ``tree_deserialise_leaves``, in Equinox's file format.

The format is Equinox's: the saved leaves, depth-first left to right, each as one ``.npy``
record (``np.save``'s bytes); leaves that are not arrays or Python numbers are not saved.
So a file written by Equinox loads here and the other way round. invarax appends one
trailer after the last record, ``TRAILER_MAGIC`` and the SHA-256 of every byte before it
(Equinox stops reading after its last leaf, so it never sees the trailer), and checks it
when loading: a corrupted file is an error, never a wrong array. A file without a
trailer (Equinox's) loads without the check.
"""

from __future__ import annotations

import contextlib
import pathlib

import numpy as np

from ..core.array import Array, ArrayImpl
from ..core.aval import ShapeDtypeStruct
from ..core.pytree import tree_flatten, tree_flatten_with_path, tree_unflatten
from ..core.pytree_registry import keystr
from ._files import (
    TRAILER_MAGIC,
    CorruptFileError,
    HashingFile,
    atomic_write,
    is_path,
    read_npy,
    write_npy,
)

_PYTHON_SCALARS = (bool, int, float, complex)


def default_serialise_filter_spec(f, x) -> None:
    """Save the leaf ``x`` to the file ``f`` if it is an array or a Python number.

    Arrays (invarax and NumPy) and NumPy scalars are saved with their dtype; Python
    ``bool``/``int``/``float``/``complex`` as ``np.asarray(x)`` (64-bit, as ``np.save``).
    Other leaves (strings, functions, ...) are not saved. As ``equinox``'s.

    Arguments:
        f: a binary file object.
        x: the leaf.

    Returns:
        None.

    Example:
        >>> import io
        >>> f = io.BytesIO()
        >>> default_serialise_filter_spec(f, jnp.ones(2)); f.tell()
        136
    """
    if isinstance(x, Array):
        if not isinstance(x, ArrayImpl):
            raise TypeError(
                f"cannot serialise a traced array ({x.aval}): tree_serialise_leaves needs "
                "concrete values; call it outside jit/grad/vmap"
            )
        write_npy(f, np.asarray(x))
    elif isinstance(x, (np.ndarray, np.generic, *_PYTHON_SCALARS)):
        write_npy(f, np.asarray(x))


def default_deserialise_filter_spec(f, x):
    """Load the leaf that replaces ``x`` from the file ``f``, as ``equinox``'s.

    Arrays and numbers are read from ``f`` (an invarax array for an invarax array or a
    ``ShapeDtypeStruct``, as ``filter_eval_shape`` gives them; a NumPy array for a NumPy
    array; a value of ``type(x)`` for a scalar); other leaves are returned unchanged and
    read nothing. The shape and dtype read must be ``x``'s.

    Arguments:
        f: a binary file object positioned at the leaf's record.
        x: the leaf of ``like``.

    Returns:
        The loaded leaf.

    Example:
        >>> import io
        >>> f = io.BytesIO(); np.save(f, np.float32([1, 2])); _ = f.seek(0)
        >>> default_deserialise_filter_spec(f, jnp.zeros(2))
        Array([1., 2.], dtype=float32)
    """
    if isinstance(x, (Array, ShapeDtypeStruct, np.ndarray, np.generic, *_PYTHON_SCALARS)):
        value = read_npy(f, "its record")
        expect = np.asarray(x) if isinstance(x, (np.generic, *_PYTHON_SCALARS)) else x
        _check_like(value, expect.shape, np.dtype(expect.dtype))
        if isinstance(x, (Array, ShapeDtypeStruct)):
            return ArrayImpl(value, weak_type=x.weak_type)
        if isinstance(x, np.ndarray):
            return value
        return type(x)(value.item())
    return x


class LeafMismatchError(ValueError, RuntimeError):
    """A saved leaf's shape or dtype is not that of ``like``'s leaf (a ``RuntimeError``
    too, as Equinox raises)."""


def _check_like(value: np.ndarray, shape: tuple, dtype: np.dtype) -> None:
    if value.shape != tuple(shape):
        raise LeafMismatchError(f"has changed shape from {tuple(shape)} in `like` to "
                                f"{value.shape} on disk")
    if value.dtype != dtype:
        raise LeafMismatchError(f"has changed dtype from {dtype} in `like` to {value.dtype} "
                                "on disk")


def _with_suffix(path) -> pathlib.Path:
    path = pathlib.Path(path)
    return path.with_suffix(".eqx") if path.suffix == "" else path


def _spec_leaves(filter_spec, tree, is_leaf):
    """``(path, spec, leaf)`` for each leaf of ``tree``: ``filter_spec`` is one callable or
    a pytree of callables that is a prefix of ``tree`` (as Equinox)."""
    specs, spec_tree = tree_flatten(filter_spec)
    out = []
    for spec, sub in zip(specs, spec_tree.flatten_up_to(tree), strict=True):
        out.append((spec, tree_flatten_with_path(sub, is_leaf)))
    spec_paths = [p for p, _ in tree_flatten_with_path(filter_spec)[0]]
    return [
        ((*prefix, *path), spec, leaf)
        for prefix, (spec, (pairs, _)) in zip(spec_paths, out, strict=True)
        for path, leaf in pairs
    ]


@contextlib.contextmanager
def _opened(path_or_file, mode):
    if is_path(path_or_file):
        if mode == "wb":
            with atomic_write(_with_suffix(path_or_file)) as f:
                yield f
        else:
            with open(_with_suffix(path_or_file), "rb") as f:
                yield f
    else:
        yield path_or_file


def tree_serialise_leaves(path_or_file, pytree, filter_spec=default_serialise_filter_spec,
                          is_leaf=None) -> None:
    """Save the leaves of a pytree to a file, in Equinox's format.

    A path is written atomically: into a temporary file in the same directory, fsynced,
    then renamed over the old file, so a crash mid-write leaves the previous file intact.
    A path without a suffix gets ``.eqx``, as in Equinox.

    Arguments:
        path_or_file: a path, or a binary file object to write to (at its position).
        pytree: the pytree whose leaves are saved.
        filter_spec: how to save each leaf, ``(file, leaf) -> None``; by default arrays and
            Python numbers are saved and other leaves skipped
            (``default_serialise_filter_spec``). A pytree of such functions that is a
            prefix of ``pytree`` applies each to its subtree.
        is_leaf: an optional predicate marking subtrees to treat as leaves.

    Returns:
        None.

    Example:
        >>> import io
        >>> f = io.BytesIO()
        >>> tree_serialise_leaves(f, {"w": jnp.ones(2), "n": 3, "act": "relu"})
        >>> _ = f.seek(0)
        >>> tree_deserialise_leaves(f, {"w": jnp.zeros(2), "n": 0, "act": "relu"})
        {'act': 'relu', 'n': 3, 'w': Array([1., 1.], dtype=float32)}
    """
    with _opened(path_or_file, "wb") as raw:
        f = HashingFile(raw)
        for path, spec, leaf in _spec_leaves(filter_spec, pytree, is_leaf):
            try:
                spec(f, leaf)
            except Exception as e:
                raise _at_leaf(e, f"tree_serialise_leaves: leaf {keystr(path) or '(root)'}") from e
        raw.write(TRAILER_MAGIC + f.hash.digest())


def tree_deserialise_leaves(path_or_file, like, filter_spec=default_deserialise_filter_spec,
                            is_leaf=None):
    """Load the leaves of a pytree from a file written by ``tree_serialise_leaves`` (or
    Equinox's).

    Loading never unpickles. A leaf whose shape or dtype on disk differs from ``like``'s,
    a file with fewer or more leaves than ``like`` has, and a truncated or corrupted file
    are errors naming the leaf's path and both values.

    Arguments:
        path_or_file: a path, or a binary file object to read from (at its position).
        like: a pytree with the structure, shapes and dtypes of the saved one; its leaves
            that are not saved (strings, functions) are kept.
        filter_spec: how to load each leaf, ``(file, leaf of like) -> leaf``
            (``default_deserialise_filter_spec`` by default), or a pytree of such functions
            that is a prefix of ``like``.
        is_leaf: an optional predicate marking subtrees of ``like`` to treat as leaves.

    Returns:
        A pytree with ``like``'s structure holding the loaded leaves.

    Example:
        >>> import io
        >>> f = io.BytesIO(); tree_serialise_leaves(f, [jnp.arange(3.0)]); _ = f.seek(0)
        >>> tree_deserialise_leaves(f, [jnp.zeros(3)])
        [Array([0., 1., 2.], dtype=float32)]
    """
    name = str(_with_suffix(path_or_file)) if is_path(path_or_file) else "the file"
    with _opened(path_or_file, "rb") as raw:
        f = HashingFile(raw)
        triples = _spec_leaves(filter_spec, like, is_leaf)
        leaves = []
        for i, (path, spec, leaf) in enumerate(triples):
            where = keystr(path) or "(root)"
            try:
                leaves.append(spec(f, leaf))
            except EOFError as e:
                raise CorruptFileError(
                    f"Error at leaf with path {tuple(path)}: {name} ends before leaf {where} "
                    f"(leaf {i + 1} of the {len(triples)} in `like`): it was saved from a "
                    "pytree with fewer leaves (a different structure), or it is truncated"
                ) from e
            except LeafMismatchError as e:
                raise LeafMismatchError(f"Deserialised leaf at path {tuple(path)} ({where} "
                                        f"of {name}) {e}") from None
            except Exception as e:
                raise _at_leaf(e, f"{name}: leaf {where}") from e
        _check_trailer(raw, f, name, is_path(path_or_file))
    return tree_unflatten(tree_flatten(like, is_leaf)[1], leaves)


def _check_trailer(raw, f, name: str, own_file: bool) -> None:
    """Check the SHA-256 trailer if there is one; a file we opened must end there."""
    digest = f.hash.digest()
    head = raw.read(len(TRAILER_MAGIC))
    if head == TRAILER_MAGIC:
        stored = raw.read(len(digest))
        if len(stored) != len(digest):
            raise CorruptFileError(f"{name} is truncated (its checksum is cut short)")
        if not f.seeked and stored != digest:
            raise CorruptFileError(
                f"{name} is corrupted: the SHA-256 of its bytes does not match the one "
                "stored when it was written"
            )
        if own_file and raw.read(1):
            raise CorruptFileError(f"{name} has unexpected bytes after its checksum")
    elif head and TRAILER_MAGIC.startswith(head):
        raise CorruptFileError(f"{name} is truncated (inside its checksum)")
    elif len(head) == len(TRAILER_MAGIC) and \
            sum(a != b for a, b in zip(head, TRAILER_MAGIC, strict=True)) <= 4:
        raise CorruptFileError(f"{name} is corrupted (inside its checksum's marker)")
    elif own_file and head.startswith(b"\x93NUMPY"):
        raise CorruptFileError(
            f"{name} holds more leaves than `like` has: it was saved from a pytree with a "
            "different structure"
        )
    elif own_file and head:
        raise CorruptFileError(f"{name} has unexpected bytes after its last leaf (corrupted)")
    elif head:
        raw.seek(-len(head), 1)  # not ours: leave the position after the last leaf


def _at_leaf(e: Exception, message: str) -> Exception:
    """``e``'s message prefixed by where it happened, keeping its type where that is safe."""
    kind = type(e) if type(e) in (TypeError, ValueError, CorruptFileError) else RuntimeError
    return kind(f"{message}: {e}")

"""safetensors files, written and read directly (no dependency): the format of Hugging Face
and PyTorch tooling.

A file is an 8-byte little-endian header length ``N``, ``N`` bytes of JSON (padded with
spaces to a multiple of 8) mapping each tensor's name to ``{"dtype", "shape",
"data_offsets": [begin, end]}`` (plus an optional ``"__metadata__"`` of strings), then the
tensors' little-endian C-order bytes, back to back. Tensors of a pytree are named by their
path, ``"layers.0.weight"`` (``keystr(path, simple=True, separator=".")``).
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayImpl
from ..core.pytree import tree_flatten_with_path, tree_unflatten
from ..core.pytree_registry import keystr
from ._files import CorruptFileError, atomic_write, is_path

_CODES = {
    "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "U16": np.uint16, "I16": np.int16,
    "U32": np.uint32, "I32": np.int32, "U64": np.uint64, "I64": np.int64,
    "F16": np.float16, "F32": np.float32, "F64": np.float64,
    "C64": np.complex64, "C128": np.complex128,
}
_NAMES = {np.dtype(v): k for k, v in _CODES.items()}
# ml_dtypes' types safetensors names (resolved when met: ml_dtypes is optional)
_ML_CODES = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


def _dtype_of(code):
    """The dtype of a safetensors dtype code, or None for a code invarax does not read."""
    if code in _CODES:
        return np.dtype(_CODES[code])
    if code in _ML_CODES:
        return np.dtype(getattr(dtypes.ml_dtypes(), _ML_CODES[code]))
    return None


def _code_of(dtype):
    """The safetensors dtype code of ``dtype``, or None if safetensors has none."""
    if dtype in _NAMES:
        return _NAMES[dtype]
    return next((code for code, name in _ML_CODES.items() if dtype.name == name
                 and dtypes.is_ml_dtype(dtype)), None)
_MAX_HEADER = 100_000_000  # the reference implementation's limit


def _named_leaves(tree) -> list[tuple[str, object]]:
    pairs, _ = tree_flatten_with_path(tree)
    return [(keystr(path, simple=True, separator="."), leaf) for path, leaf in pairs]


def save_safetensors(path_or_file, tree, metadata: dict | None = None) -> None:
    """Save the arrays of a pytree (often a flat ``dict`` of names to arrays) as safetensors.

    A path is written atomically (temporary file, fsync, rename). Arrays are named by their
    path in ``tree``: ``{"w": x}`` gives ``"w"``, a model's ``layers[0].weight`` gives
    ``"layers.0.weight"``, the names PyTorch's ``state_dict`` uses.

    Arguments:
        path_or_file: a path or a binary file object.
        tree: a pytree whose leaves are arrays (invarax or NumPy; no Python scalars).
        metadata: an optional ``dict`` of ``str`` to ``str`` stored in the header.

    Returns:
        None.

    Example:
        >>> import io
        >>> f = io.BytesIO()
        >>> save_safetensors(f, {"w": jnp.ones((2, 3)), "b": jnp.arange(2)})
        >>> _ = f.seek(0)
        >>> load_safetensors(f)["w"].shape
        (2, 3)
    """
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safetensors metadata must be a dict of str to str")
        header["__metadata__"] = dict(metadata)
    for name, leaf in _named_leaves(tree):
        if not isinstance(leaf, (ArrayImpl, np.ndarray)):
            raise TypeError(
                f"save_safetensors: leaf {name!r} is a {type(leaf).__name__}; safetensors "
                "holds arrays only (filter the pytree first, e.g. with invarax.filter)"
            )
        value = np.asarray(leaf)
        code = _code_of(value.dtype)
        if code is None:
            raise TypeError(f"save_safetensors: leaf {name!r} has dtype {value.dtype}, "
                            "which safetensors cannot hold")
        if name in header:
            raise ValueError(f"save_safetensors: two leaves are named {name!r}")
        data = value.astype(value.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
        header[name] = {"dtype": code, "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    if is_path(path_or_file):
        with atomic_write(path_or_file) as f:
            _write(f, text, chunks)
    else:
        _write(path_or_file, text, chunks)


def _write(f, text: bytes, chunks: list) -> None:
    f.write(struct.pack("<Q", len(text)) + text)
    for data in chunks:
        f.write(data)


def _read_header(f, name: str):
    raw = f.read(8)
    if len(raw) != 8:
        raise CorruptFileError(f"{name} is truncated: no safetensors header length")
    (length,) = struct.unpack("<Q", raw)
    if length > _MAX_HEADER:
        raise CorruptFileError(f"{name}: a header length of {length} bytes is not a "
                               "safetensors file (or the file is corrupted)")
    text = f.read(length)
    if len(text) != length:
        raise CorruptFileError(f"{name} is truncated inside its safetensors header")
    try:
        header = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise CorruptFileError(f"{name}: the safetensors header is not valid JSON ({e})") from e
    if not isinstance(header, dict):
        raise CorruptFileError(f"{name}: the safetensors header is not a JSON object")
    return header


def _tensor_entries(header: dict, name: str):
    """``(tensor name, dtype, shape, begin, end)`` sorted by offset, validated to tile the
    data buffer exactly (no gap, no overlap)."""
    entries = []
    for key, info in header.items():
        if key == "__metadata__":
            continue
        if isinstance(info, dict) and info.get("dtype") not in (*_CODES, *_ML_CODES):
            raise TypeError(f"{name}: tensor {key!r} has dtype {info.get('dtype')}, which "
                            f"invarax does not support (it reads "
                            f"{sorted([*_CODES, *_ML_CODES])})")
        try:
            dtype = _dtype_of(info["dtype"])
            shape = tuple(info["shape"])
            begin, end = info["data_offsets"]
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptFileError(f"{name}: tensor {key!r} has a malformed entry {info}") \
                from e
        if not all(isinstance(d, int) and d >= 0 for d in shape) or \
                end - begin != math.prod(shape) * dtype.itemsize:
            raise CorruptFileError(
                f"{name}: tensor {key!r} has shape {list(shape)} and dtype {info['dtype']} "
                f"but {end - begin} bytes; the file is corrupted"
            )
        entries.append((key, dtype, shape, begin, end))
    entries.sort(key=lambda e: (e[3], e[4]))
    position = 0
    for key, _, _, begin, end in entries:
        if begin != position:
            raise CorruptFileError(f"{name}: tensor {key!r} starts at byte {begin}, expected "
                                   f"{position} (the offsets overlap or leave a gap)")
        position = end
    return entries, position


def load_safetensors(path_or_file, like=None):
    """Load a safetensors file (from PyTorch, Hugging Face or ``save_safetensors``).

    The header is validated (offsets tiling the data exactly, sizes matching shapes) and
    the data read in full, so a truncated or corrupted file is an error, never a wrong
    array.

    Arguments:
        path_or_file: a path or a binary file object.
        like: optional pytree of arrays; when given the result has its structure, each
            leaf read from the tensor named by its path, with its shape and dtype checked.

    Returns:
        A ``dict`` of names to invarax arrays, or a pytree like ``like``.

    Example:
        >>> import io
        >>> f = io.BytesIO(); save_safetensors(f, {"a": {"b": jnp.ones(2)}}); _ = f.seek(0)
        >>> load_safetensors(f)
        {'a.b': Array([1., 1.], dtype=float32)}
    """
    name = str(path_or_file) if is_path(path_or_file) else "the file"
    if is_path(path_or_file):
        with open(path_or_file, "rb") as f:
            entries, buffer = _read_all(f, name)
    else:
        entries, buffer = _read_all(path_or_file, name)
    arrays = {
        key: np.frombuffer(buffer, dtype.newbyteorder("<"), math.prod(shape), begin)
        .reshape(shape).astype(dtype)
        for key, dtype, shape, begin, _ in entries
    }
    if like is None:  # as jnp.asarray: 64-bit types narrow unless x64 is enabled
        return {key: ArrayImpl(value.astype(dtypes.canonicalize(value.dtype), copy=False))
                for key, value in arrays.items()}
    named = _named_leaves(like)
    leaves = []
    for key, leaf in named:
        if key not in arrays:
            raise KeyError(f"{name} has no tensor {key!r} for that leaf of `like`; it holds "
                           f"{sorted(arrays)}")
        value = arrays[key]
        if value.shape != tuple(leaf.shape) or value.dtype != leaf.dtype:
            raise ValueError(f"{name}: tensor {key!r} has shape {value.shape} and dtype "
                             f"{value.dtype} on disk but {tuple(leaf.shape)} and "
                             f"{leaf.dtype} in `like`")
        leaves.append(ArrayImpl(value) if isinstance(leaf, Array) else value)
    extra = sorted(set(arrays) - {key for key, _ in named})
    if extra:
        raise ValueError(f"{name} holds tensors that `like` has no leaf for: {extra}")
    return tree_unflatten(tree_flatten_with_path(like)[1], leaves)


def _read_all(f, name: str):
    header = _read_header(f, name)
    entries, size = _tensor_entries(header, name)
    buffer = f.read(size)
    if len(buffer) != size:
        raise CorruptFileError(f"{name} is truncated: its header promises {size} bytes of "
                               f"tensor data, {len(buffer)} remain")
    return entries, buffer

"""Parsing NumPy indices, and the index vectors of gather and scatter.

``parse_index`` turns anything ``x[idx]`` accepts into a list of entries (``...``
expanded, boolean masks split into integer arrays, NumPy's rule that ints are
advanced indices next to index arrays applied); ``getitem`` and ``x.at[idx]`` both
start from it. ``index_column`` and ``stack_columns`` build gather/scatter
``indices`` (invarax's form: ``batch + (k,)``), folded to constants when concrete.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayImpl, to_array
from ..core.errors import NonConcreteBooleanIndexError
from ..core.trace import Tracer
from ..ops import indexing as ix
from ..ops import shape as sh
from ._promote import broadcast_shapes, convert

_INTS = (int, np.integer)
_BOOLS = (bool, np.bool_)


def _index_error_for_list():
    return TypeError(
        "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
        "x[jnp.array(seq)] for an index array, or x[tuple(seq)] to index several axes"
    )


def _dtype_error(dtype):
    return TypeError(
        f"Indexer must have integer or boolean type, got indexer with type {dtype}; "
        "convert it with .astype(int) (or int(...) for a Python number)"
    )


def _classify(item):
    """``(kind, value)`` for one element of an index; kinds that consume no axis are
    ``new``, ``ellipsis`` and ``bool0``; a ``mask`` consumes ``mask.ndim`` axes."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, _BOOLS):
        return "bool0", bool(item)
    if isinstance(item, _INTS):
        return "int", int(item)
    if isinstance(item, (list, tuple)):
        item = np.asarray(item)
        if item.dtype.kind == "f" and item.size == 0:
            item = item.astype(np.int32)  # [] is an empty index, as in NumPy
    if isinstance(item, (np.ndarray, np.generic, Array)):
        return _classify_array(item)
    if isinstance(item, (float, complex)):
        raise _dtype_error(type(item).__name__)
    raise TypeError(
        f"Index {item!r:.40} of type {type(item).__name__} is not supported; use "
        "ints, slices, None, ..., or integer or boolean arrays"
    )


def _classify_array(item):
    if item.dtype.kind == "b":
        if isinstance(item, Tracer):
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {item.aval.str_short()} inside "
                f"{item._trace.describe()}. The number of True values (and so the shape of "
                "the result) is unknown while tracing: use jnp.where(mask, x, fill) to keep "
                "the shape static, or pass the mask as a static NumPy array."
            )
        value = np.asarray(item)
        return ("bool0", bool(value)) if value.ndim == 0 else ("mask", value)
    if item.dtype.kind not in "iu":
        raise _dtype_error(item.dtype)
    if isinstance(item, Array):
        return ("dyn" if item.ndim == 0 else "adv"), item
    value = np.asarray(item)
    return ("int", int(value)) if value.ndim == 0 else ("adv", to_array(value))


def _consumed(kind, value) -> int:
    if kind in ("new", "ellipsis", "bool0"):
        return 0
    return value.ndim if kind == "mask" else 1


def _static_slice(s: slice, size: int) -> tuple:
    """``(start, stop, step)`` of a slice with static bounds, normalised for ``size``."""
    for bound in (s.start, s.stop, s.step):
        if isinstance(bound, Tracer):
            raise IndexError(
                f"Slice entries must be static integers, got slice({s.start}, {s.stop}, "
                f"{s.step}). To slice at a traced position use "
                "lax.dynamic_slice(x, start_indices, slice_sizes)."
            )
    try:
        return s.indices(size)
    except TypeError:
        raise TypeError(f"slice indices must be integers or None, got {s}") from None


def parse_index(shape: tuple, idx, static_ints: bool = True):
    """Parse a NumPy index for an array of ``shape``.

    Arguments:
        shape: the shape of the indexed array.
        idx: the index (anything ``x[idx]`` accepts).
        static_ints: whether in-bounds Python ints stay static indices (sliced) and traced
            scalars dynamic slices; if False both become 0-d index arrays (``adv``), as when
            a ``mode`` is given. An out-of-bounds int is always an ``adv`` (JAX's
            semantics: clamped by gathers, dropped by scatters).

    Returns:
        ``(entries, bool_axes)``. ``entries`` holds one ``(kind, value)`` per index element,
        ``...`` expanded and masks split into index arrays: ``("new", None)``,
        ``("slice", (start, stop, step))``, ``("int", i)`` (``0 <= i < size``),
        ``("dyn", scalar)`` or ``("adv", int_array)``; every entry but ``new`` consumes
        one axis, in order. When any ``adv`` is present, ints and ``dyn`` are ``adv``
        too (NumPy's rule). ``bool_axes`` are the positions of the size-1 axes that
        scalar boolean indices insert into the array before the entries apply.

    Example:
        >>> parse_index((3, 4), (0, slice(None)))
        ([('int', 0), ('slice', (0, 4, 1))], [])
    """
    if isinstance(idx, list):
        raise _index_error_for_list()
    items = [_classify(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    kinds = [k for k, _ in items]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(k, v) for k, v in items)
    if used > len(shape):
        raise IndexError(
            f"Too many indices for an array of shape {shape}: {used} axes were "
            f"indexed, but the array has {len(shape)}"
        )
    fill = [("slice", slice(None))] * (len(shape) - used)
    if "ellipsis" in kinds:
        at = kinds.index("ellipsis")
        items[at : at + 1] = fill
    else:
        items += fill
    return _resolve(items, shape, static_ints)


def _resolve(items, shape, static_ints):
    entries, bool_axes, axis = [], [], 0
    for kind, value in items:
        if kind == "new":
            entries.append((kind, value))
            continue
        if kind == "bool0":
            bool_axes.append(axis + len(bool_axes))
            entries.append(("adv", static_index(np.arange(int(value)))))
            continue
        if kind == "mask":
            entries += [("adv", static_index(i)) for i in _mask_indices(value, shape, axis)]
            axis += value.ndim
            continue
        if kind == "slice":
            value = _static_slice(value, shape[axis])
        elif kind == "int":
            kind, value = _static_int(value, axis, shape[axis], static_ints)
        entries.append((kind, value))
        axis += 1
    if not static_ints or any(k == "adv" for k, _ in entries):
        entries = [
            ("adv", as_index_array(v)) if k in ("int", "dyn") else (k, v) for k, v in entries
        ]
    return entries, bool_axes


def static_index(value) -> ArrayImpl:
    """A static index (int, range or NumPy array) as a concrete default-int array."""
    return ArrayImpl(np.asarray(value, dtypes.default_int()))


def as_index_array(value) -> Array:
    """An index given as an Array, a static int or a NumPy array, as an Array."""
    return value if isinstance(value, Array) else static_index(value)


def _static_int(i: int, axis: int, size: int, static: bool):
    """``("int", i % size)`` for a static in-bounds int, else ``("adv", 0-d index array)``.

    An out-of-bounds int is an index array like any other, so that it is clamped (reads)
    or dropped (updates) by the mode, as in JAX, and as ``jit`` does for a traced int."""
    if static and -size <= i < size:
        return "int", i % size
    if size == 0:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size 0")
    return "adv", static_index(i)


def _mask_indices(mask: np.ndarray, shape: tuple, axis: int):
    covered = shape[axis : axis + mask.ndim]
    if mask.shape != covered:
        raise IndexError(
            f"boolean index of shape {mask.shape} does not match the indexed "
            f"axes {covered} of the array of shape {shape}"
        )
    return np.nonzero(mask)


# ---------------------------------------------------------------------------------------
# Index arrays: broadcast, normalised, stacked into gather/scatter's index vectors.


def index_batch_shape(arrays) -> tuple:
    """The broadcast shape of advanced index arrays (an IndexError if they do not broadcast)."""
    try:
        return broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = " ".join(str(a.shape) for a in arrays)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}"
        ) from None


def index_column(index: Array, size: int, before: int = 0, after: int = 0, wrap: bool = True):
    """``index`` as a column of index vectors for an axis of ``size``.

    Arguments:
        index: an integer index array.
        size: the size of the axis it indexes.
        before, after: how many size-1 dims to put before and after its own.
        wrap: whether negative entries count from the end of the axis.

    Returns:
        ``index`` in the default int dtype, reshaped to ``(1,) * before + index.shape +
        (1,) * after`` (folded at once if concrete).

    Example:
        >>> index_column(jnp.array([-1, 0]), 3, before=1)
        Array([[2, 0]], dtype=int32)
    """
    index = ix.wrap_negative(index, size) if wrap else index
    index = convert_index(index)
    return _reshape_index(index, (1,) * before + index.shape + (1,) * after)


def convert_index(index: Array) -> Array:
    """An integer index array in the default int dtype (folded if concrete)."""
    dtype = dtypes.default_int()
    if index.dtype == dtype:
        return index
    if isinstance(index, ArrayImpl):
        return ArrayImpl(index._value.astype(dtype))
    return convert(index, dtype)


def _reshape_index(index: Array, shape: tuple) -> Array:
    if isinstance(index, ArrayImpl):
        return ArrayImpl(index._value.reshape(shape))
    return sh.reshape(index, shape)


def stack_columns(columns, batch: tuple) -> Array:
    """Index columns (each of ``len(batch)`` dims, broadcastable to ``batch``) stacked on a
    new last axis: the ``indices`` of gather and scatter, of shape ``batch + (k,)``."""
    if all(isinstance(c, ArrayImpl) for c in columns):
        values = [np.broadcast_to(c._value, batch) for c in columns]
        return ArrayImpl(
            np.stack(values, -1) if values else np.zeros(batch + (0,), dtypes.default_int())
        )
    dims = tuple(range(len(batch)))
    return sh.concatenate([sh.broadcast_in_dim(c, batch + (1,), dims) for c in columns], -1)

"""``visualize_array_sharding``: which device holds which block of a 1-D or 2-D array, drawn
as a table of boxes in plain text, laid out as JAX draws it without colour.

Each block is a cell labelled with the devices holding it (``CPU 0,4``); cells are about as
tall and wide as their block's share of the array (2.5 columns per line, a 1-D array one
line high), at least ``min_width`` and at most ``max_width`` wide; a table wider than
``max_width`` has its columns narrowed evenly to fit (JAX's table then loses its labels;
here they stay, cut to the column's width).
"""

from __future__ import annotations

import sys

from ..core.array import ArrayImpl
from ..core.pytree import tree_leaves
from .shardings import as_sharding

_HEIGHT_TO_WIDTH = 2.5


def _chunk(n: int, index) -> tuple:
    """(block number, block length) of a slice of a dimension of length ``n``."""
    if isinstance(index, int):
        return index, 1
    if index.start is None and index.stop is None:
        return 0, n
    width = index.stop - index.start
    return index.start // width, width


def sharding_table(shape, sharding, *, scale: float = 1.0, min_width: int = 9,
                   max_width: int = 80) -> str:
    """The table of ``visualize_sharding`` as a string (its lines, each ending in ``\\n``)."""
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    kind = next(iter(sharding.device_set)).platform.upper()
    cells = {}  # (row, column) -> [device ids, width, height]
    for device, index in sharding.devices_indices_map(shape).items():
        if len(shape) == 2:
            (row, rows), (col, cols) = _chunk(shape[0], index[0]), _chunk(shape[1], index[1])
            width, height = cols / shape[1], int(rows / shape[0] * base_height)
        else:
            row, (col, cols) = 0, _chunk(shape[0], index[0])
            width, height = cols / shape[0], 1
        width = min(max(int(width * base_width * _HEIGHT_TO_WIDTH), min_width), max_width)
        cells.setdefault((row, col), [[], width, height])[0].append(device.id)
    n_rows = 1 + max(r for r, _ in cells)
    n_cols = 1 + max(c for _, c in cells)
    padded = {}  # (row, column) -> (label, top, right, bottom, left)
    for key, (ids, width, height) in cells.items():
        label = f"{kind} " + ",".join(map(str, sorted(ids)))
        left, extra = divmod(width - len(label) - 2, 2)
        top, extra_v = divmod(height - 2, 2)
        padded[key] = (label, max(top, 0), max(left + extra, 0), max(top + extra_v, 0),
                       max(left, 0))
    widths = _fitted([max(p[4] + len(p[0]) + p[2] for (r, c), p in padded.items() if c == j)
                      for j in range(n_cols)], max_width - n_cols - 1)
    lines = [_rule("┌", "┬", "┐", widths)]
    for i in range(n_rows):
        row = [_cell_lines(padded[i, j], widths[j]) for j in range(n_cols)]
        height = max(len(c) for c in row)
        for k in range(height):
            lines.append("│" + "│".join(c[k] if k < len(c) else " " * w
                                        for c, w in zip(row, widths, strict=True)) + "│")
        lines.append(_rule("├", "┼", "┤", widths) if i < n_rows - 1 else
                     _rule("└", "┴", "┘", widths))
    return "\n".join(lines) + "\n"


def _fitted(widths: list, room: int) -> list:
    """``widths`` narrowed evenly to sum to at most ``room`` (each cut rounded as it comes)."""
    left, count, out = sum(widths) - room, len(widths), []
    for w in widths:
        cut = max(0, min(w, round(left / count)))
        left, count = left - cut, count - 1
        out.append(w - cut)
    return out


def _rule(left: str, middle: str, right: str, widths) -> str:
    return left + middle.join("─" * w for w in widths) + right


def _cell_lines(cell, width: int) -> list:
    label, top, right, bottom, left = cell
    if left + len(label) + right > width:  # a narrowed column: the label alone, centred
        label, left, right = label[:width], 0, 0
    inner = width - left - right
    before = (inner - len(label)) // 2
    text = " " * (left + before) + label
    return [" " * width] * top + [text + " " * (width - len(text))] + [" " * width] * bottom


def visualize_sharding(shape, sharding, *, use_color: bool = False, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None) -> None:
    """Print which device holds which block of an array of ``shape`` placed with
    ``sharding`` (a 1-D or 2-D shape).

    ``use_color`` and ``color_map`` are accepted as JAX's; the table is plain text.
    """
    del use_color, color_map
    sharding = as_sharding(sharding, "visualize_sharding's sharding")
    sys.stdout.write(sharding_table(shape, sharding, scale=scale, min_width=min_width,
                                    max_width=max_width))


def visualize_array_sharding(arr, **kwargs) -> None:
    """Print which device holds which block of the 1-D or 2-D array ``arr`` (JAX's
    ``jax.debug.visualize_array_sharding``, drawn in plain text).

    Arguments:
        arr: a concrete array (call it on a ``jit``'s output, not inside the function).
        **kwargs: ``scale``, ``min_width``, ``max_width`` (and ``use_color``,
            ``color_map``, accepted and ignored), as JAX's.

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> mesh = invarax.make_mesh((2,), ("x",))
        >>> x = invarax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
        >>> invarax.debug.visualize_array_sharding(x)
        ┌───────┬───────┐
        │ CPU 0 │ CPU 1 │
        └───────┴───────┘
    """
    if not isinstance(arr, ArrayImpl):
        raise TypeError(
            f"visualize_array_sharding needs a concrete array, got {type(arr).__name__}: "
            "inside jit the placement is decided at the outputs; call it on the jitted "
            "function's result")
    visualize_sharding(arr.shape, arr.sharding, **kwargs)


def inspect_array_sharding(value, *, callback) -> None:
    """Call ``callback`` with the sharding of each array of the pytree ``value`` (JAX's
    ``jax.debug.inspect_array_sharding``), for concrete arrays.

    Example:
        >>> invarax.debug.inspect_array_sharding(jnp.ones(2), callback=print)
        SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """
    for leaf in tree_leaves(value):
        if not isinstance(leaf, ArrayImpl):
            raise TypeError(
                f"inspect_array_sharding needs concrete arrays, got {type(leaf).__name__}: "
                "inside jit the placement is decided at the outputs; inspect the jitted "
                "function's result")
        callback(leaf.sharding)

"""The scatter kernel: combining updates into rows of an array, duplicates included.

Order of operations (the contract that ``docs/numerics.md`` records): the updates
are applied one at a time in increasing update order. A destination row that
receives updates ``u0, u1, ..., uk`` (in that order) ends as
``((row op u0) op u1) ... op uk`` for ``add``, ``mul``, ``min`` and ``max``; for
``set`` the last update wins. The order depends only on the order of the updates,
never on their number, layout or the thread count.
"""

from __future__ import annotations

import numpy as np

_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}

COMBINERS = ("set", *_UFUNCS)


def scatter_rows(target: np.ndarray, rows: np.ndarray, updates: np.ndarray, combine: str) -> None:
    """Combine ``updates[i]`` into ``target[rows[i]]`` in place, for i in increasing order.

    Arguments:
        target: a writeable array of shape ``(n, *rest)``.
        rows: an int array of shape ``(m,)`` with values in ``[0, n)``; duplicates allowed.
        updates: an array of shape ``(m, *rest)`` and ``target``'s dtype.
        combine: ``"set"`` (the last update of a row wins), ``"add"``, ``"mul"``, ``"min"``
            or ``"max"`` (each update is combined into the running row value in turn).

    Returns:
        None; ``target`` holds the result.

    Example:
        >>> t = np.zeros((3,), np.float32)
        >>> scatter_rows(t, np.array([0, 2, 0]), np.float32([1, 2, 3]), "add")
        >>> t
        array([4., 0., 2.], dtype=float32)
    """
    if combine == "set":
        # The last occurrence of each row: the first one in the reversed list.
        _, first_reversed = np.unique(rows[::-1], return_index=True)
        last = len(rows) - 1 - first_reversed
        target[rows[last]] = updates[last]
    else:
        # ufunc.at is unbuffered: it applies the updates one by one, in order.
        _UFUNCS[combine].at(target, rows, updates)

"""``a * b + c`` rounded once, elementwise: the compiled kernel behind ``lax``'s ``fma``.

C99's ``fma`` is correctly rounded by the standard (in hardware, or in the C library on
a CPU without an FMA unit), so every machine gives the same bits.
"""

from __future__ import annotations

import numpy as np

from . import _native


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` with one rounding, for broadcastable float32 or float64 arrays of one dtype.

    Example:
        >>> x = np.float32(1 + 2**-12)
        >>> float(fma(x, x, np.float32(-1))) == 2**-11 + 2**-24  # x * x - 1 rounds to 2**-11
        True
    """
    a, b, c = np.broadcast_arrays(a, b, c)
    out = np.empty(a.shape, a.dtype)
    _native.fma(*(np.ascontiguousarray(x).reshape(-1) for x in (a, b, c)), out.reshape(-1))
    return out

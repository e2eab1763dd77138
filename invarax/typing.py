"""``invarax.typing``: the annotations of ``jax.typing``, ``ArrayLike`` and ``DTypeLike``."""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from .core.array import Array


class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007
"""What an array argument may be: an ``Array``, a NumPy array or scalar, a Python scalar."""

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007
"""What a dtype argument may be: a name, a scalar type, a NumPy dtype, or has ``.dtype``."""

__all__ = ["ArrayLike", "DTypeLike"]

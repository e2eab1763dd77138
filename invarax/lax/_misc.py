"""JAX's ``lax.Precision`` and ``lax.broadcast_shapes``."""

from __future__ import annotations

import enum

import numpy as np


class Precision(enum.Enum):
    """The precision of a contraction on an accelerator, as JAX's ``lax.Precision``.

    Accepted wherever JAX takes ``precision=`` (also as ``"default"``, ``"high"``,
    ``"highest"``, ``"fastest"``); it changes nothing: invarax computes every contraction in
    the operands' precision, in its canonical order, on every device.

    Example:
        >>> Precision("highest")
        Precision.HIGHEST
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "high": cls.HIGH,
                "highest": cls.HIGHEST}.get(value)

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


def broadcast_shapes(*shapes) -> tuple:
    """The shape NumPy-style broadcasting of ``shapes`` gives, as JAX's ``lax.broadcast_shapes``.

    Raises:
        ValueError: if the shapes do not broadcast together.

    Example:
        >>> broadcast_shapes((3, 1), (4,))
        (3, 4)
    """
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None

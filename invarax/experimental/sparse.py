"""``invarax.experimental.sparse``: invarax has no sparse arrays.

``BCOO`` and ``BCSR`` exist so that ``isinstance(x, sparse.BCOO)`` works (no invarax array
is one); making one raises ``NotImplementedError``. ``todense`` of a dense array returns it.
"""

from __future__ import annotations

_NOT_PROVIDED = ("invarax does not provide jax.experimental.sparse.{} (sparse arrays) yet: "
                 "use dense arrays")


class JAXSparse:
    """Base class of JAX's sparse arrays; invarax makes none."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_NOT_PROVIDED.format(type(self).__name__))

    @classmethod
    def fromdense(cls, *args, **kwargs):
        raise NotImplementedError(_NOT_PROVIDED.format(f"{cls.__name__}.fromdense"))


class BCOO(JAXSparse):
    """JAX's batched-coordinate sparse array: not provided (see the module docstring)."""


class BCSR(JAXSparse):
    """JAX's batched compressed-sparse-row array: not provided."""


def todense(arr):
    """``arr`` itself (a dense array; invarax has no sparse ones)."""
    return arr


def sparsify(f, use_tracer: bool = False):
    """Not provided: raises ``NotImplementedError``."""
    raise NotImplementedError(_NOT_PROVIDED.format("sparsify"))


__all__ = ["BCOO", "BCSR", "JAXSparse", "sparsify", "todense"]

"""``nondifferentiable``: an identity that raises if it is differentiated, as Equinox's
(``equinox.internal.nondifferentiable``; ``filter_custom_vjp`` guards its other arguments
with it)."""

from __future__ import annotations

from ..transforms._custom_jvp import custom_jvp
from ._filters import combine, is_array, partition


def _make_nondifferentiable():
    identity = custom_jvp(lambda msg, x: x, nondiff_argnums=(0,))

    @identity.defjvp
    def _jvp(msg, primals, tangents):
        raise RuntimeError(msg)

    return identity


_nondifferentiable = _make_nondifferentiable()


def nondifferentiable(x, *, name: str | None = None, msg: str | None = None):
    """``x``, unchanged; ``RuntimeError`` if it is differentiated (forward or reverse).

    Example:
        >>> grad(lambda x: nondifferentiable(x, name="options").sum())(jnp.ones(2))
        Traceback (most recent call last):
        ...
        RuntimeError: Unexpected tangent. options cannot be autodifferentiated.
    """
    if msg is None:
        name = "This operation" if name is None else name
        msg = f"Unexpected tangent. {name} cannot be autodifferentiated."
    dynamic, static = partition(x, is_array)
    return combine(_nondifferentiable(msg, dynamic), static)

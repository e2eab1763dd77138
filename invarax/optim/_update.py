"""``apply_updates``: add updates to parameters, keeping each parameter's dtype."""

from __future__ import annotations

from .. import numpy as jnp
from ._base import map_with_params


def apply_updates(params, updates):
    """``params + updates`` leaf by leaf; where an update is None the parameter is kept.

    Works on plain pytrees of arrays and on Equinox-style models: the updates of a model
    (from a filtered optimizer) hold None at its non-array leaves (activation functions,
    integer buffers, ...), which are returned unchanged.

    Arguments:
        params: a pytree of parameters (a Module, say).
        updates: a pytree with the structure of ``params``, None where nothing changes.

    Returns:
        A pytree with the structure of ``params``; each updated leaf keeps its parameter's
        dtype (a float32 parameter stays float32 even given float64 updates; an integer
        parameter gets ``p + u`` cast back to its dtype, as in optax).

    Example:
        >>> apply_updates({"w": jnp.ones(2), "act": "relu"}, {"w": jnp.ones(2), "act": None})
        {'act': 'relu', 'w': Array([2., 2.], dtype=float32)}
    """
    return map_with_params("apply_updates",
                           lambda u, p: jnp.asarray(p + u).astype(jnp.asarray(p).dtype),
                           updates, params, keep_params=True, integers=True)

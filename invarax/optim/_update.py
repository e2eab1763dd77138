"""``apply_updates`` (add updates to parameters, keeping each parameter's dtype),
``incremental_update`` and ``periodic_update``."""

from __future__ import annotations

from .. import numpy as jnp
from ..core.pytree import tree_map
from ._base import map_with_params
from ._linesearch import cond


def apply_updates(params, updates):
    """``params + updates`` leaf by leaf; where an update is None the parameter is kept.

    Works on plain pytrees of arrays and on Equinox-style models: the updates of a model
    (from a filtered optimizer) hold None at its non-array leaves (activation functions,
    integer buffers, ...), which are returned unchanged.

    Arguments:
        params: a pytree of parameters (a Module, say).
        updates: a pytree with the structure of ``params``, None where nothing changes;
            each update broadcasts with its parameter (a Python scalar adds to every element).

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
                           updates, params, keep_params=True, integers=True, broadcast=True)


def incremental_update(new_tensors, old_tensors, step_size):
    """``step_size * new + (1 - step_size) * old`` leaf by leaf (a moving average of params,
    e.g. a target network); a None leaf of ``new_tensors`` stays None.

    Example:
        >>> incremental_update([jnp.array([1.0])], [jnp.array([0.0])], 0.25)
        [Array([0.25], dtype=float32)]
    """
    return tree_map(lambda new, old: None if new is None else
                    step_size * new + (1.0 - step_size) * old,
                    new_tensors, old_tensors, is_leaf=lambda x: x is None)


def periodic_update(new_tensors, old_tensors, steps, update_period):
    """``new_tensors`` at the steps that are multiples of ``update_period``, else
    ``old_tensors`` (leaf by leaf; ``steps`` may be traced).

    Example:
        >>> periodic_update([jnp.ones(1)], [jnp.zeros(1)], jnp.asarray(4), 2)
        [Array([1.], dtype=float32)]
    """
    return cond(jnp.mod(steps, update_period) == 0, lambda: new_tensors, lambda: old_tensors)

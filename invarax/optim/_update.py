"""``apply_updates``: add updates to parameters, keeping each parameter's dtype."""

from __future__ import annotations

import numpy as np

from .. import numpy as jnp
from ..core.pytree import keystr, tree_flatten_with_path, tree_structure
from ._base import check_param


def _is_none(x) -> bool:
    return x is None


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
        dtype (a float32 parameter stays float32 even given float64 updates).

    Example:
        >>> apply_updates({"w": jnp.ones(2), "act": "relu"}, {"w": jnp.ones(2), "act": None})
        {'act': 'relu', 'w': Array([2., 2.], dtype=float32)}
    """
    with_paths, _ = tree_flatten_with_path(updates, is_leaf=_is_none)
    treedef = tree_structure(updates, is_leaf=_is_none)
    try:
        param_leaves = treedef.flatten_up_to(params)
    except ValueError as e:
        raise ValueError(
            f"apply_updates: the updates do not have the structure of the params: {e}"
        ) from None
    out = []
    for (path, u), p in zip(with_paths, param_leaves, strict=True):
        if u is None:
            out.append(p)
            continue
        where = keystr(path)
        check_param("apply_updates", where, p)
        if np.shape(p) != np.shape(u):
            raise ValueError(
                f"apply_updates: the update at {where or 'the root'} has shape "
                f"{np.shape(u)}, its parameter {np.shape(p)}")
        out.append(jnp.asarray(p + u).astype(jnp.asarray(p).dtype))
    return treedef.unflatten(out)

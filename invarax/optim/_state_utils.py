"""``tree_map_params``: map a function over the parameter-shaped parts of an optimizer state."""

from __future__ import annotations

from ..core.pytree import register_pytree_node, tree_map


class ParamsPlaceholder:
    """Stands for the params in ``init``: a pytree node without leaves, so that the
    parameter-shaped parts of the state built from it are placeholders too."""


register_pytree_node(ParamsPlaceholder, lambda _: ((), None), lambda _, __: ParamsPlaceholder())


def tree_map_params(initable, f, state, /, *rest, transform_non_params=None, is_leaf=None):
    """Apply ``f`` to the leaves of the parts of ``state`` that have the params' structure
    (moments, traces, ...), leaving the rest (counts, ...) alone or to
    ``transform_non_params``.

    Arguments:
        initable: the optimizer (or its ``init`` function) that made ``state``.
        f: the function of each parameter-shaped leaf (and of the matching leaves of
            ``rest``).
        state: the optimizer state.
        *rest: more trees with the params' structure, passed to ``f`` alongside.
        transform_non_params: a function of each other leaf (None: keep them).
        is_leaf: passed to the map over the parameter-shaped parts.

    Returns:
        A state of ``state``'s structure.

    Example:
        >>> opt = adam(0.1)
        >>> state = opt.init({"w": jnp.ones(2)})
        >>> doubled = tree_map_params(opt, lambda p: p + 1.0, state)
        >>> doubled[0].mu, doubled[0].count
        ({'w': Array([1., 1.], dtype=float32)}, Array(0, dtype=int32))
    """
    init = initable.init if hasattr(initable, "init") else initable
    with_placeholders = init(ParamsPlaceholder())

    def map_part(maybe_placeholder, value):
        if isinstance(maybe_placeholder, ParamsPlaceholder):
            return tree_map(f, value, *rest, is_leaf=is_leaf)
        return value if transform_non_params is None else transform_non_params(value)

    return tree_map(map_part, with_placeholders, state,
                    is_leaf=lambda v: isinstance(v, ParamsPlaceholder))

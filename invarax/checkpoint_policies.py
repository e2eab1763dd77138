"""``invarax.checkpoint_policies``: JAX's policies for ``checkpoint(fun, policy=...)``.

A policy is a function ``(primitive, *avals, **params) -> bool``, asked of each equation
of the checkpointed function: True saves its outputs for the backward pass (they become
residuals), False recomputes them from the saved inputs. The gradient's bits are the
same whatever the policy; only memory and recomputation change.

Example:
    >>> import invarax
    >>> f = invarax.checkpoint(lambda w, x: jnp.sum(jnp.tanh(w @ x)), policy=dots_saveable)
    >>> _, f_jvp = invarax.linearize(lambda x: f(jnp.ones((2, 3)), x), jnp.ones(3))
    >>> sorted(c.shape for c in f_jvp.jaxpr.consts)  # w, x and the product w @ x
    [(2,), (2, 3), (3,)]
"""

from __future__ import annotations


def everything_saveable(*_, **__) -> bool:
    """Save every intermediate value (no recomputation)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save nothing but the inputs (recompute everything): ``checkpoint``'s default."""
    return False


def dots_saveable(prim, *_, **__) -> bool:
    """Save the results of contractions (``dot_general``: matmuls, einsums)."""
    return prim.name == "dot_general"


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *_, **params) -> bool:
    """Save the results of contractions without batch dimensions."""
    if prim.name != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names):
    """A policy saving only the values named by ``checkpoint_name`` with one of ``names``."""
    names = frozenset(names)

    def policy(prim, *_, **params):
        return prim.name == "name" and params["name"] in names

    return policy


def save_any_names_but_these(*names):
    """A policy saving the values named by ``checkpoint_name``, except those ``names``."""
    names = frozenset(names)

    def policy(prim, *_, **params):
        return prim.name == "name" and params["name"] not in names

    return policy


def save_anything_except_these_names(*names):
    """A policy saving every value except those named with one of ``names``."""
    names = frozenset(names)

    def policy(prim, *_, **params):
        return prim.name != "name" or params["name"] not in names

    return policy


def save_from_both_policies(policy_1, policy_2):
    """A policy saving what either policy saves."""

    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)

    return policy


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """``dots_with_no_batch_dims_saveable``, saving to host memory in JAX (``offload_src``
    to ``offload_dst``, e.g. ``"device"`` to ``"pinned_host"``). On the CPU backend the
    residuals already live in host memory, so offloading is saving: the same policy.

    Example:
        >>> policy = offload_dot_with_no_batch_dims("device", "pinned_host")
        >>> f = invarax.checkpoint(lambda w, x: jnp.sum(jnp.tanh(w @ x)), policy=policy)
        >>> invarax.grad(f, argnums=1)(jnp.ones((2, 3)), jnp.ones(3)).shape
        (3,)
    """
    del offload_src, offload_dst
    return dots_with_no_batch_dims_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
    """``save_only_these_names`` of both lists: in JAX the second list is offloaded to host
    memory; on the CPU backend that is where residuals live, so both are saved.

    Example:
        >>> policy = save_and_offload_only_these_names(
        ...     names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
        ...     offload_src="device", offload_dst="pinned_host")
        >>> policy is not None
        True
    """
    del offload_src, offload_dst
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} and "
            f"the intersection={saved & offloaded}")
    return save_only_these_names(*saved, *offloaded)


__all__ = [
    "checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
    "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable",
    "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names",
    "save_any_names_but_these", "save_anything_except_these_names", "save_from_both_policies",
    "save_only_these_names",
]

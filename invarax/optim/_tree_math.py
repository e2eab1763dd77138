"""optax's tree utilities (``optax.tree``, ``optax.tree_utils``): arithmetic over pytrees.

Each function is optax's formula leaf by leaf; sums over leaves are added in leaf order,
starting from 0, as optax's ``jax.tree.reduce(operator.add, ..., initializer=0)``.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from .. import numpy as jnp
from ..core.pytree import tree_leaves, tree_map, tree_reduce


def _is_none(x) -> bool:
    return x is None


def tree_add(tree_x, tree_y, *other_trees):
    """The leafwise sum of two or more pytrees of one structure.

    Arguments:
        tree_x: a pytree.
        tree_y: a pytree of ``tree_x``'s structure.
        *other_trees: more pytrees of that structure.

    Returns:
        A pytree of the same structure: ``x + y + ...`` at each leaf.

    Example:
        >>> tree_add({"a": jnp.ones(2)}, {"a": jnp.ones(2)})
        {'a': Array([2., 2.], dtype=float32)}
    """
    return tree_map(lambda *leaves: sum(leaves[1:], leaves[0]), tree_x, tree_y, *other_trees)


def tree_sub(tree_x, tree_y):
    """The leafwise difference ``x - y`` of two pytrees of one structure.

    Example:
        >>> tree_sub([jnp.ones(2)], [jnp.ones(2)])
        [Array([0., 0.], dtype=float32)]
    """
    return tree_map(operator.sub, tree_x, tree_y)


def tree_mul(tree_x, tree_y):
    """The leafwise product ``x * y`` of two pytrees of one structure.

    Example:
        >>> tree_mul([jnp.array([2.0])], [jnp.array([3.0])])
        [Array([6.], dtype=float32)]
    """
    return tree_map(operator.mul, tree_x, tree_y)


def tree_div(tree_x, tree_y):
    """The leafwise quotient ``x / y`` of two pytrees of one structure.

    Example:
        >>> tree_div([jnp.array([3.0])], [jnp.array([2.0])])
        [Array([1.5], dtype=float32)]
    """
    return tree_map(operator.truediv, tree_x, tree_y)


def tree_scale(scalar, tree):
    """Multiply every leaf of ``tree`` by ``scalar`` (``scalar * x``).

    Example:
        >>> tree_scale(2.0, (jnp.ones(2),))
        (Array([2., 2.], dtype=float32),)
    """
    return tree_map(lambda x: scalar * x, tree)


def tree_add_scale(tree_x, scalar, tree_y):
    """``x + scalar * y`` leaf by leaf; a None leaf of ``tree_x`` stays None.

    Example:
        >>> tree_add_scale([jnp.ones(2)], 0.5, [jnp.ones(2)])
        [Array([1.5, 1.5], dtype=float32)]
    """
    scalar = jnp.asarray(scalar)
    return tree_map(lambda x, y: None if x is None else x + scalar * y, tree_x, tree_y,
                    is_leaf=_is_none)


def tree_vdot(tree_x, tree_y):
    """The inner product of two pytrees: the sum of each pair of leaves' ``vdot``.

    Arguments:
        tree_x: a pytree of arrays.
        tree_y: a pytree of ``tree_x``'s structure and shapes.

    Returns:
        A scalar: ``0 + vdot(x0, y0) + vdot(x1, y1) + ...`` in leaf order.

    Example:
        >>> tree_vdot({"a": jnp.array([1.0, 2.0])}, {"a": jnp.array([3.0, 4.0])})
        Array(11., dtype=float32)
    """
    vdots = tree_map(lambda a, b: jnp.vdot(jnp.asarray(a), jnp.asarray(b)), tree_x, tree_y)
    return tree_reduce(operator.add, vdots, initializer=0)


def tree_sum(tree, associative_reduction: bool = False):
    """The sum of all the elements of all the leaves (each leaf summed, then in leaf order;
    with ``associative_reduction``, the leaves' sums are added pairwise, as a tree).

    Example:
        >>> tree_sum([jnp.ones(2), jnp.ones(3)])
        Array(5., dtype=float32)
    """
    sums = tree_map(jnp.sum, tree)
    if not associative_reduction:
        return tree_reduce(operator.add, sums, initializer=0)
    sums = tree_leaves(sums)
    while len(sums) > 1:
        sums = [sums[i] + sums[i + 1] if i + 1 < len(sums) else sums[i]
                for i in range(0, len(sums), 2)]
    return sums[0] if sums else 0


def tree_max(tree):
    """The largest element of all the leaves (``-inf`` for a tree without elements).

    Example:
        >>> tree_max([jnp.array([1.0, 5.0]), jnp.array([3.0])])
        Array(5., dtype=float32)
    """
    maxes = [jnp.max(leaf) for leaf in tree_leaves(tree) if np.size(leaf)]
    return tree_reduce(jnp.maximum, maxes, initializer=-float("inf"))


def tree_min(tree):
    """The smallest element of all the leaves (``inf`` for a tree without elements).

    Example:
        >>> tree_min([jnp.array([1.0, 5.0]), jnp.array([-3.0])])
        Array(-3., dtype=float32)
    """
    mins = [jnp.min(leaf) for leaf in tree_leaves(tree) if np.size(leaf)]
    return tree_reduce(jnp.minimum, mins, initializer=float("inf"))


def tree_size(tree) -> int:
    """The number of elements of all the leaves together (a Python int).

    Example:
        >>> tree_size({"a": jnp.ones((2, 3)), "b": jnp.ones(4)})
        10
    """
    return sum(int(np.size(leaf)) for leaf in tree_leaves(tree))


def tree_conj(tree):
    """The complex conjugate of every leaf."""
    return tree_map(jnp.conj, tree)


def tree_real(tree):
    """The real part of every leaf."""
    return tree_map(jnp.real, tree)


def _abs_sq(x):
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return jnp.square(jnp.real(x)) + jnp.square(jnp.imag(x))
    return jnp.square(x)


def tree_norm(tree, ord=None, squared: bool = False):  # noqa: A002 (optax's name)
    """The norm of a pytree seen as one flat vector: l2 (default), l1 or infinity.

    Arguments:
        tree: a pytree of arrays.
        ord: None or 2 (the l2 norm), 1, or ``inf`` (``"inf"``/``"infinity"``).
        squared: return the norm squared.

    Returns:
        A scalar array. The l2 norm is ``sqrt(tree_sum(x**2))``.

    Example:
        >>> tree_norm({"a": jnp.array([3.0]), "b": jnp.array([4.0])})
        Array(5., dtype=float32)
    """
    if ord is None or ord == 2:
        sqnorm = tree_sum(tree_map(_abs_sq, tree))
        return jnp.asarray(sqnorm if squared else jnp.sqrt(sqnorm))
    if ord == 1:
        out = tree_sum(tree_map(jnp.abs, tree))
    elif ord == float("inf") or ord in ("inf", "infinity"):
        out = tree_max(tree_map(jnp.abs, tree))
    else:
        raise ValueError(f"tree_norm: unsupported ord {ord!r}; use None, 1, 2 or 'inf'")
    return jnp.asarray(_abs_sq(out) if squared else out)


tree_l1_norm = functools.partial(tree_norm, ord=1)
tree_l2_norm = functools.partial(tree_norm, ord=2)
tree_linf_norm = functools.partial(tree_norm, ord="inf")


def tree_zeros_like(tree, dtype=None):
    """Zeros with the structure and shapes of ``tree`` (its dtypes, or ``dtype``).

    Example:
        >>> tree_zeros_like({"a": jnp.ones(2)})
        {'a': Array([0., 0.], dtype=float32)}
    """
    return tree_map(lambda x: jnp.zeros_like(x, dtype=dtype), tree)


def tree_ones_like(tree, dtype=None):
    """Ones with the structure and shapes of ``tree`` (its dtypes, or ``dtype``)."""
    return tree_map(lambda x: jnp.ones_like(x, dtype=dtype), tree)


def tree_full_like(tree, fill_value, dtype=None):
    """``fill_value`` with the structure and shapes of ``tree`` (its dtypes, or ``dtype``).

    Example:
        >>> tree_full_like([jnp.ones(2)], 0.5)
        [Array([0.5, 0.5], dtype=float32)]
    """
    return tree_map(lambda x: jnp.full_like(x, fill_value, dtype=dtype), tree)


def tree_clip(tree, min_value=None, max_value=None):
    """Clip every leaf to ``[min_value, max_value]``."""
    return tree_map(lambda g: jnp.clip(g, min_value, max_value), tree)


def tree_where(condition, tree_x, tree_y):
    """``where(condition, x, y)`` leaf by leaf (one condition for all the leaves)."""
    return tree_map(lambda x, y: jnp.where(condition, x, y), tree_x, tree_y)


def tree_cast(tree, dtype):
    """Cast every floating-point leaf to ``dtype`` (None: no change); other leaves are kept."""
    if dtype is None:
        return tree

    def cast(x):
        if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "dtype"):
            if jnp.issubdtype(x.dtype, jnp.floating):
                return jnp.asarray(x).astype(dtype)
        return x

    return tree_map(cast, tree)


def tree_cast_like(tree, other_tree):
    """Cast every leaf of ``tree`` to the dtype of the matching leaf of ``other_tree``."""
    return tree_map(lambda x, o: jnp.asarray(x).astype(jnp.asarray(o).dtype), tree, other_tree)


def tree_dtype(tree, mixed_dtype_handler: str | None = None):
    """The common dtype of the leaves; mixed dtypes raise unless a handler says otherwise.

    Arguments:
        tree: a pytree of arrays.
        mixed_dtype_handler: None (raise on mixed dtypes), ``"promote"`` (their promoted
            dtype), ``"highest"`` or ``"lowest"`` (the widest or narrowest of them).
    """
    dtypes = {np.dtype(jnp.asarray(x).dtype) for x in tree_leaves(tree)}
    if not dtypes:
        return np.dtype(jnp.zeros(()).dtype)
    if len(dtypes) == 1:
        return dtypes.pop()
    if mixed_dtype_handler == "promote":
        return np.dtype(jnp.result_type(*dtypes))
    if mixed_dtype_handler in ("highest", "lowest"):
        pick = max if mixed_dtype_handler == "highest" else min
        return pick(dtypes, key=lambda d: d.itemsize)
    raise ValueError(
        f"tree_dtype: the leaves have several dtypes {sorted(d.name for d in dtypes)}; pass "
        "mixed_dtype_handler='promote', 'highest' or 'lowest'")


def tree_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """Whether every pair of leaves is close (``|a - b| <= atol + rtol * |b|``), a bool array."""
    out = True
    for x, y in zip(tree_leaves(a), tree_leaves(b), strict=True):
        x, y = jnp.asarray(x), jnp.asarray(y)
        close = jnp.abs(x - y) <= atol + rtol * jnp.abs(y)
        close = jnp.logical_or(close, x == y)
        if equal_nan:
            close = jnp.logical_or(close, jnp.logical_and(jnp.isnan(x), jnp.isnan(y)))
        out = jnp.logical_and(out, jnp.all(close))
    return jnp.asarray(out)


def tree_batch_shape(tree, shape: tuple[int, ...] = ()):
    """Broadcast every leaf to ``(*shape, *leaf.shape)``."""
    return tree_map(lambda x: jnp.broadcast_to(x, (*shape, *np.shape(x))), tree)


def tree_update_moment(updates, moments, decay, order):
    """The exponential moving average of the ``order``-th power: ``(1-d) g**o + d t``.

    A None update (a leaf that is not optimised) gives None.

    Example:
        >>> tree_update_moment([jnp.array([2.0])], [jnp.array([1.0])], 0.5, 1)
        [Array([1.5], dtype=float32)]
    """
    return tree_map(
        lambda g, t: None if g is None else (1 - decay) * (g ** order) + decay * t,
        updates, moments, is_leaf=_is_none)


def tree_update_moment_per_elem_norm(updates, moments, decay, order):
    """``tree_update_moment`` of ``|g|``'s ``order``-th power (for real ``g``: ``g**order``)."""
    def norm(g):
        if not jnp.issubdtype(jnp.asarray(g).dtype, jnp.complexfloating):
            return g ** order
        half = order / 2
        return _abs_sq(g) ** (int(half) if float(half).is_integer() else half)

    return tree_map(lambda g, t: None if g is None else (1 - decay) * norm(g) + decay * t,
                    updates, moments, is_leaf=_is_none)


def tree_update_infinity_moment(updates, moments, decay, eps):
    """The infinity-norm moment of Adamax: ``max(|g| + eps, decay * t)``."""
    return tree_map(
        lambda g, t: None if g is None else jnp.maximum(jnp.abs(g) + eps, decay * t),
        updates, moments, is_leaf=_is_none)


def tree_bias_correction(moment, decay, count):
    """Divide a moment by ``1 - decay**count`` (computed, then cast to each leaf's dtype).

    Example:
        >>> tree_bias_correction([jnp.array([0.1])], 0.9, jnp.asarray(1))
        [Array([0.99999976], dtype=float32)]
    """
    correction = 1 - decay ** jnp.asarray(count)
    return tree_map(lambda t: t / correction.astype(t.dtype), moment)


__all__ = [name for name in dir()
           if name.startswith("tree_") and name not in ("tree_leaves", "tree_map", "tree_reduce")]

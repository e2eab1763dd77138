"""Filters: pick out the leaves of a pytree by a predicate, split a pytree in two, join it back."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.pytree import tree_map

_ARRAY_TYPES = (Array, np.ndarray, np.generic)


def is_array(element) -> bool:
    """Whether ``element`` is an array: an invarax ``Array`` (tracers included) or a NumPy array.

    Arguments:
        element: any Python value.

    Returns:
        True for arrays, False otherwise (Python scalars are not arrays).

    Example:
        >>> is_array(jnp.ones(3)), is_array(1.0)
        (True, False)
    """
    return isinstance(element, _ARRAY_TYPES)


def is_inexact_array(element) -> bool:
    """Whether ``element`` is an array of floating or complex dtype.

    Arguments:
        element: any Python value.

    Returns:
        True for float (``bfloat16`` and the float8 types included) and complex arrays;
        False for integer and bool arrays and non-arrays.

    Example:
        >>> is_inexact_array(jnp.ones(3)), is_inexact_array(jnp.arange(3))
        (True, False)
    """
    return is_array(element) and dtypes.is_inexact(element.dtype)  # bfloat16 included


def is_array_like(element) -> bool:
    """Whether ``element`` is an array or a Python scalar (bool, int, float, complex).

    Arguments:
        element: any Python value.

    Returns:
        True if ``element`` could be converted to an array.

    Example:
        >>> is_array_like(1.0), is_array_like("a")
        (True, False)
    """
    return is_array(element) or isinstance(element, (bool, int, float, complex))


def is_inexact_array_like(element) -> bool:
    """Whether ``element`` is a float or complex array, or a Python float or complex.

    Arguments:
        element: any Python value.

    Returns:
        True for inexact arrays and Python floats/complexes; False for ints, bools and
        everything else.

    Example:
        >>> is_inexact_array_like(1.0), is_inexact_array_like(1), is_inexact_array_like(jnp.ones(2))
        (True, False, True)
    """
    if hasattr(element, "__jax_array__"):
        element = element.__jax_array__()
    return is_inexact_array(element) or isinstance(element, (float, complex))


class if_array:  # noqa: N801  (Equinox's name)
    """An ``in_axes``/``out_axes`` entry for ``filter_vmap``: ``axis`` for arrays, None otherwise.

    Arguments:
        axis: the axis to map over for array leaves.

    Returns:
        A callable of one leaf returning ``axis`` or None.

    Example:
        >>> if_array(0)(jnp.ones(3)), if_array(0)("relu")
        (0, None)
    """

    __slots__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = axis

    def __call__(self, x):
        return self.axis if is_array(x) else None

    def __eq__(self, other):
        return type(other) is if_array and other.axis == self.axis

    def __hash__(self):
        return hash((if_array, self.axis))

    def __repr__(self):
        return f"if_array({self.axis})"


def _mask_subtree(spec, subtree, is_leaf):
    if isinstance(spec, bool):
        return tree_map(lambda _: spec, subtree, is_leaf=is_leaf)
    if callable(spec):
        return tree_map(spec, subtree, is_leaf=is_leaf)
    raise ValueError(
        f"a filter_spec leaf must be a bool or a callable of one leaf, got {spec!r}"
    )


def _mask(tree, filter_spec, is_leaf):
    """A pytree of bools with the structure of ``tree`` (``filter_spec`` is a prefix of it)."""
    # As Equinox: the spec's own leaves are its bools and callables. A Module spec (built
    # by tree_map(lambda _: False, model)) is a node even though it is callable.
    return tree_map(lambda s, sub: _mask_subtree(s, sub, is_leaf), filter_spec, tree)


def filter(pytree, filter_spec, inverse: bool = False, replace=None, is_leaf=None):  # noqa: A001
    """Keep the leaves of ``pytree`` selected by ``filter_spec``; replace the others.

    Arguments:
        pytree: any pytree.
        filter_spec: a bool, a callable of one leaf returning a bool (such as ``is_array``),
            or a pytree prefix of ``pytree`` with those as leaves.
        inverse: keep the leaves that are not selected instead.
        replace: what dropped leaves become (None: they vanish from the leaves).
        is_leaf: as in ``tree_flatten``, to treat subtrees as leaves.

    Returns:
        A pytree with the structure of ``pytree`` (dropped leaves replaced).

    Example:
        >>> filter([jnp.ones(2), "relu", 3], is_array)
        [Array([1., 1.], dtype=float32), None, None]
    """
    mask = _mask(pytree, filter_spec, is_leaf)
    return tree_map(lambda keep, x: x if keep != inverse else replace, mask, pytree)


def partition(pytree, filter_spec, replace=None, is_leaf=None):
    """Split ``pytree`` in two: the leaves ``filter_spec`` selects, and the others.

    Arguments:
        pytree: any pytree.
        filter_spec: as for ``filter``.
        replace: what the missing leaves of each part become (default None).
        is_leaf: as in ``tree_flatten``.

    Returns:
        ``(selected, rest)``, two pytrees with the structure of ``pytree``; ``combine``
        joins them back.

    Example:
        >>> partition((jnp.ones(2), "relu"), is_array)
        ((Array([1., 1.], dtype=float32), None), (None, 'relu'))
    """
    return (filter(pytree, filter_spec, False, replace, is_leaf),
            filter(pytree, filter_spec, True, replace, is_leaf))


def _first_not_none(*xs):
    return next((x for x in xs if x is not None), None)


def combine(*pytrees, is_leaf=None):
    """Join pytrees of the same structure: each leaf is the first one that is not None.

    Arguments:
        *pytrees: pytrees whose structures agree once None is treated as a leaf (such as
            the two parts from ``partition``).
        is_leaf: as in ``tree_flatten``.

    Returns:
        One pytree with each position's first non-None value.

    Example:
        >>> combine((1, None), (None, "relu"))
        (1, 'relu')
    """
    def leaf(x):
        return x is None or (is_leaf is not None and is_leaf(x))

    return tree_map(_first_not_none, *pytrees, is_leaf=leaf)


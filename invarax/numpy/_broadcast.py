"""Broadcasting: broadcast_shapes, broadcast_to, broadcast_arrays (NumPy's rules).

They move values and never compute with them, so results are bitwise copies.
"""

from __future__ import annotations

from ..core.array import Array
from ._promote import asarray_arg, broadcast_to_shape, shape_arg
from ._promote import broadcast_shapes as _broadcast_shapes


def broadcast_shapes(*shapes) -> tuple:
    """The shape that arrays of ``shapes`` broadcast to (NumPy's rules).

    Arguments:
        *shapes: ints or tuples of ints.

    Returns:
        The broadcast shape; a ValueError lists the shapes if they do not fit.

    Example:
        >>> jnp.broadcast_shapes((3, 1), (4,))
        (3, 4)
    """
    return _broadcast_shapes(*(shape_arg(s, "broadcast_shapes") for s in shapes))


def broadcast_to(array, shape) -> Array:
    """Broadcast an array to a shape, as ``numpy.broadcast_to``.

    Arguments:
        array: the array.
        shape: the target shape; ``array``'s dims, aligned from the right, must each be 1
            or equal to the target's.

    Returns:
        An array of ``shape``.

    Example:
        >>> jnp.broadcast_to(jnp.arange(3), (2, 3))
        Array([[0, 1, 2],
               [0, 1, 2]], dtype=int32)
    """
    x = asarray_arg(array, "broadcast_to")
    shape = shape_arg(shape, "broadcast_to")
    lead = len(shape) - x.ndim
    if lead < 0 or any(d not in (1, t) for d, t in zip(x.shape, shape[lead:], strict=True)):
        raise ValueError(
            f"cannot broadcast an array of shape {x.shape} to shape {shape}: "
            "aligned from the right, each dimension must be 1 or equal"
        )
    return broadcast_to_shape(x, shape)


def broadcast_arrays(*args) -> list:
    """Broadcast arrays against each other.

    Arguments:
        *args: arrays or scalars.

    Returns:
        A list of arrays, all of the broadcast shape.

    Example:
        >>> [x.shape for x in jnp.broadcast_arrays(jnp.ones((2, 1)), jnp.ones(3))]
        [(2, 3), (2, 3)]
    """
    arrays = [asarray_arg(a, "broadcast_arrays") for a in args]
    shape = _broadcast_shapes(*(x.shape for x in arrays))
    return [broadcast_to_shape(x, shape) for x in arrays]

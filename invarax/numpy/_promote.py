"""NumPy-level argument handling: JAX's dtype promotion (with weak types) and broadcasting."""

from __future__ import annotations

import functools
import warnings

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayImpl, to_array
from ..core.config import config
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops._util import weak_to


def asarray_arg(x, name: str) -> Array:
    """An operand of ``jnp.<name>``: an Array, scalar or NumPy array (not a list)."""
    return to_array(x, f"jnp.{name} argument")


def shape_arg(shape, name: str) -> tuple:
    """A static shape: an int or a sequence of ints (a traced size is an error)."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d.__index__()) for d in shape)
    except (TypeError, AttributeError):
        raise TypeError(
            f"jnp.{name}: the shape must be an int or a tuple of ints, got "
            f"{shape!r:.60}; shapes are static, so a traced value cannot be a "
            "size (mark it static with static_argnums)"
        ) from None


def result_dtype(*arrays):
    """``(dtype, weak_type)`` that ``arrays`` promote to."""
    return dtypes.promote_types(*((a.dtype, a.weak_type) for a in arrays))


def convert(x: Array, dtype, weak: bool = False) -> Array:
    """``x`` as ``dtype``; a concrete weak scalar is converted at trace time, as a literal."""
    if x.dtype == dtype and x.weak_type == weak:
        return x
    if isinstance(x, ArrayImpl) and x.weak_type and x.ndim == 0:
        return weak_to(x, dtype) if x.weak_type == weak else ArrayImpl(
            x._value.astype(dtype), weak
        )
    return ew.convert_element_type(x, dtype, weak)


def promote_dtypes(*arrays, to_inexact: bool = False):
    """Convert ``arrays`` to their common dtype (floats if ``to_inexact``)."""
    dtype, weak = result_dtype(*arrays)
    if to_inexact and not dtypes.is_inexact(dtype):
        dtype, weak = dtypes.default_float(), weak and dtype.kind != "b"
    return [convert(a, dtype, weak) for a in arrays]


def broadcast_shapes(*shapes) -> tuple:
    """NumPy's broadcast of ``shapes``; a ValueError shows every shape if they do not fit."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = ", ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"Incompatible shapes for broadcasting: {listed}. Each dimension must be equal or 1 "
            "(aligned from the right); reshape one operand, e.g. x[:, None], to fit."
        ) from None


def ranks_broadcast(fun):
    """``fun`` run with ``jax_numpy_rank_promotion`` "allow": for functions whose own
    arithmetic broadcasts ranks, which the user's flag must not reach (as in JAX)."""

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        with config.flag("jax_numpy_rank_promotion", "allow"):
            return fun(*args, **kwargs)

    return wrapper


def check_rank_promotion(name: str, shapes) -> None:
    """The ``jax_numpy_rank_promotion`` flag on operands of ``shapes`` (0-d ones aside)."""
    mode = config.jax_numpy_rank_promotion
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes {listed}. "
                      "Set the jax_numpy_rank_promotion config option to 'allow' to disable "
                      "this warning.", stacklevel=3)
        return
    raise ValueError(
        f"Operands could not be broadcast together for {name} on shapes {listed} and with the "
        "config option jax_numpy_rank_promotion='raise'; add the missing leading axes "
        "explicitly (x[None] or jnp.expand_dims) or set it to 'allow'.")


def broadcast_to_shape(x: Array, shape: tuple) -> Array:
    """Broadcast ``x`` to ``shape`` (NumPy rules; 0-d scalars stay 0-d for lax ops)."""
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    return sh.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote_args(name: str, *args, to_inexact: bool = False):
    """Convert, promote and broadcast the operands of an elementwise ``jnp.<name>``."""
    arrays = promote_dtypes(*(asarray_arg(a, name) for a in args), to_inexact=to_inexact)
    if len({a.shape for a in arrays}) > 1:
        check_rank_promotion(name, [a.shape for a in arrays])
        shape = broadcast_shapes(*(a.shape for a in arrays))
        arrays = [a if a.ndim == 0 else broadcast_to_shape(a, shape) for a in arrays]
    return arrays

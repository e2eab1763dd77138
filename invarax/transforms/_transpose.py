"""``linear_transpose``: the transpose of a linear function, as a function of cotangents."""

from __future__ import annotations

from ..core import dtypes
from ..core.api_util import fun_name
from ..core.array import to_array
from ..core.aval import ShapedArray, ShapeDtypeStruct
from ..core.pytree import tree_flatten, tree_unflatten
from ..interpreters.ad import zeros_like_aval
from ._autodiff import _vjp


def _zeros_like(x):
    if isinstance(x, (ShapeDtypeStruct, ShapedArray)):  # JAX takes either (any shape+dtype)
        return zeros_like_aval(ShapedArray(x.shape, dtypes.canonicalize(x.dtype),
                                           getattr(x, "weak_type", False)))
    return zeros_like_aval(to_array(x, "a linear_transpose primal").aval)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``, as ``jax.linear_transpose``.

    Arguments:
        fun: a function linear in its arguments (pytrees allowed), e.g. a matrix product
            or the tangent map of ``linearize``.
        primals: example arguments (arrays, ``ShapeDtypeStruct`` or ``ShapedArray``); only
            their structure, shapes and dtypes are used.
        reduce_axes: JAX's deprecated argument; must be empty.

    Returns:
        ``transpose_fun(ct)``: for a cotangent ``ct`` of ``fun``'s output, the tuple of
        cotangents of its arguments, ``fun``'s transpose applied to ``ct``. ``fun`` is
        differentiated at zero, so for a function that is not linear this is the
        transpose of its derivative there (JAX raises instead).

    Example:
        >>> m = jnp.array([[1.0, 2.0], [3.0, 4.0]])
        >>> linear_transpose(lambda x: m @ x, jnp.zeros(2))(jnp.array([1.0, 0.0]))
        (Array([1., 2.], dtype=float32),)
    """
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported (JAX "
                                  "deprecated it); pass reduce_axes=()")
    leaves, tree = tree_flatten(primals)
    at_zero = tree_unflatten(tree, [_zeros_like(x) for x in leaves])
    _, pullback = _vjp(fun, at_zero, False, "linear_transpose", fun_name(fun))
    return pullback


__all__ = ["linear_transpose"]

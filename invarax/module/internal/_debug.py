"""``debug_backward_nan``: show a value and its cotangent in the backward pass, and stop
on a NaN cotangent (Equinox's ``equinox.debug.backward_nan``)."""

from __future__ import annotations

import sys

from ...core.pytree import tree_flatten, tree_leaves, tree_unflatten
from ...ops.callbacks import debug_callback
from .._custom import filter_custom_vjp
from .._errors import error_if
from .._filters import combine, is_array, is_array_like, partition
from .._tree import tree_pformat


def debug_backward_nan(x, name=None, terminate: bool = True):
    """``x``, unchanged; in the backward pass, print its primal and cotangent, and (with
    ``terminate``) raise ``EquinoxRuntimeError`` if the cotangent holds a NaN.

    Example:
        >>> f = lambda x: jnp.sqrt(debug_backward_nan(x, name="x", terminate=False)).sum()
        >>> grad(f)(jnp.array([1.0, 4.0]))
        x:
           primals=Array([1., 4.], dtype=float32)
        cotangents=Array([0.5 , 0.25], dtype=float32)
        Array([0.5 , 0.25], dtype=float32)
    """
    return _backward_nan(x, name, terminate)


@filter_custom_vjp
def _backward_nan(x, name, terminate):
    return x


@_backward_nan.def_fwd
def _backward_nan_fwd(perturbed, x, name, terminate):
    return x, None


def _show(name, x, grad_x):
    """Print ``x`` and ``grad_x`` (their arrays as the program computes them)."""
    (x_arrays, x_rest), (g_arrays, g_rest) = partition(x, is_array), partition(grad_x, is_array)
    leaves, treedef = tree_flatten((x_arrays, g_arrays))

    def write(*values):
        xa, ga = tree_unflatten(treedef, values)
        text = (f"   primals={tree_pformat(combine(xa, x_rest), short_arrays=False)}\n"
                f"cotangents={tree_pformat(combine(ga, g_rest), short_arrays=False)}")
        sys.stdout.write(("" if name is None else f"{name}:\n") + text + "\n")

    debug_callback(write, *leaves, ordered=True)


@_backward_nan.def_bwd
def _backward_nan_bwd(residuals, grad_x, perturbed, x, name, terminate):
    from ... import numpy as jnp

    _show(name, x, grad_x)
    if terminate:
        nans = [jnp.isnan(a).any() for a in tree_leaves(grad_x) if is_array_like(a)]
        if nans:
            grad_x = error_if(grad_x, jnp.any(jnp.stack(nans)), "Encountered NaN")
    return grad_x

"""``filter_custom_jvp`` and ``filter_custom_vjp``: custom derivative rules for functions of
any pytrees, with Equinox's interface.

Both are thin layers over ``custom_jvp``/``custom_vjp``: the non-array part of the
arguments travels as one non-differentiable ``Static`` argument, the arrays as the
differentiable ones. Both have Equinox's symbolic zeros, through the ``symbolic_zeros=True``
of ``custom_jvp``/``custom_vjp``: ``filter_custom_jvp``'s rule gets None as the tangent of a
float array that is not differentiated; ``filter_custom_vjp``'s rules get ``perturbed``
(True where ``vjp_arg`` is differentiated in this call) and None as the cotangent of an
output that is not used. None stands for everything that is not a float array, as in
Equinox.
"""

from __future__ import annotations

import functools
import warnings

from ..core.pytree import tree_map, tree_structure
from ..transforms._custom_derivatives import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp
from ._filters import combine, filter, is_array, is_inexact_array, is_inexact_array_like, partition
from ._nondiff import nondifferentiable
from ._static import Static


def _is_none(x) -> bool:
    return x is None


def _is_primal(x) -> bool:
    return isinstance(x, CustomVJPPrimal)


def _zeros_for_none(grads, like):
    """``grads`` with each None at a leaf of ``like`` replaced by zeros of that leaf."""
    from .. import numpy as jnp

    return tree_map(lambda g, x: jnp.zeros_like(x) if g is None and x is not None else g,
                    grads, like, is_leaf=_is_none)


class filter_custom_jvp:  # noqa: N801  (Equinox's name)
    """A function of any pytrees with a custom JVP rule, as Equinox's ``filter_custom_jvp``.

    Positional arguments are split automatically: float arrays are differentiable, all
    other leaves are not (their tangents are None). Keyword arguments are never
    differentiated. Outputs must be pytrees of arrays.

    Arguments:
        fn: the function.

    Returns:
        The decorated function; define its rule with ``def_jvp``:
        ``rule(primals, tangents, **kwargs) -> (out, tangent_out)``, ``primals`` the tuple
        of positional arguments, ``tangents`` alike with None at the leaves that are not
        float arrays and at the float arrays that are not differentiated (symbolic zeros,
        as Equinox). A None in ``tangent_out`` is a zero tangent.

    Example:
        >>> @filter_custom_jvp
        ... def call(x, y, *, fn):
        ...     return fn(x, y)
        >>> @call.def_jvp
        ... def call_jvp(primals, tangents, *, fn):
        ...     (x, y), (tx, ty) = primals, tangents
        ...     print("ty:", ty)
        ...     return call(x, y, fn=fn), 2 * tx
        >>> filter_grad(lambda x: call(x, 3, fn=lambda a, b: a * b))(jnp.array(2.0))
        ty: None
        Array(2., dtype=float32, weak_type=True)
        >>> filter_grad(lambda x: call(x, jnp.array(3.0), fn=lambda a, b: a * b))(jnp.array(2.0))
        ty: None
        Array(2., dtype=float32, weak_type=True)
    """

    def __init__(self, fn):
        functools.update_wrapper(self, fn)

        def fn_wrapper(static, dynamic):
            args, kwargs = combine(dynamic, static.value)
            return fn(*args, **kwargs)

        self.fn = custom_jvp(fn_wrapper, nondiff_argnums=(0,))

    def def_jvp(self, fn_jvp):
        """Define the JVP rule (see the class); returns ``fn_jvp``, for use as a decorator."""
        def rule(static, primals, tangents):
            (dynamic,), (t_dynamic,) = primals, tangents
            t_args, _ = tree_map(
                lambda t, x: None if isinstance(t, SymbolicZero) or not is_inexact_array_like(x)
                else t, t_dynamic, dynamic)
            args, kwargs = combine(dynamic, static.value)
            out, t_out = fn_jvp(args, t_args, **kwargs)
            return out, _zeros_for_none(t_out, out)

        self.fn.defjvp(rule, symbolic_zeros=True)
        return fn_jvp

    def defjvp(self, fn_jvp):
        """Equinox's deprecated form of ``def_jvp`` (it warns, as Equinox): the rule gets
        zeros, not None, as the tangent of a float array that is not differentiated."""
        warnings.warn(
            "filter_custom_jvp.defjvp is deprecated (as in Equinox): use .def_jvp, whose "
            "rule gets None as the (symbolic zero) tangent of an undifferentiated float "
            "array", stacklevel=2)

        def materialised(args, t_args, **kwargs):
            return fn_jvp(args, _zeros_for_none(t_args, filter(args, is_inexact_array)),
                          **kwargs)

        self.def_jvp(materialised)

    def __call__(self, *args, **kwargs):
        dynamic, static = partition((args, kwargs), is_array)
        return self.fn(Static(static), dynamic)


class filter_custom_vjp:  # noqa: N801  (Equinox's name)
    """A function with a custom VJP w.r.t. its first argument, as Equinox's ``filter_custom_vjp``.

    ``fn(vjp_arg, *args, **kwargs)``: only the float arrays of ``vjp_arg`` are
    differentiated (differentiating an array of ``args``/``kwargs`` raises RuntimeError);
    every other input gets a zero cotangent. Define the rules with ``def_fwd`` and
    ``def_bwd``:

    - ``fwd(perturbed, vjp_arg, *args, **kwargs) -> (out, residuals)``, ``perturbed`` a
      pytree of bools with ``vjp_arg``'s structure (True at its float arrays that this
      call differentiates);
    - ``bwd(residuals, grad_obj, perturbed, vjp_arg, *args, **kwargs) -> grad_vjp_arg``,
      ``grad_obj`` the cotangent of ``out`` (None at an output whose cotangent is zero),
      ``grad_vjp_arg`` ``vjp_arg``'s structure with None at leaves that are not float
      arrays (None at a float array: zero).

    Arguments:
        fn: the function.

    Returns:
        The decorated function.

    Example:
        >>> @filter_custom_vjp
        ... def clip_grad(x, bound):
        ...     return x
        >>> @clip_grad.def_fwd
        ... def clip_fwd(perturbed, x, bound):
        ...     return x, None
        >>> @clip_grad.def_bwd
        ... def clip_bwd(residuals, g, perturbed, x, bound):
        ...     return jnp.clip(g, -bound, bound)
        >>> filter_grad(lambda x: (3.0 * clip_grad(x, 1.0)).sum())(jnp.ones(2))
        Array([1., 1.], dtype=float32)
    """

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.fn_fwd = self.fn_bwd = None
        self.fn_wrapped = None

    def def_fwd(self, fn_fwd):
        """Define the forward rule (see the class); returns ``fn_fwd``."""
        self.fn_fwd = fn_fwd
        self._define()
        return fn_fwd

    def def_bwd(self, fn_bwd):
        """Define the backward rule (see the class); returns ``fn_bwd``."""
        self.fn_bwd = fn_bwd
        self._define()
        return fn_bwd

    def defvjp(self, fn_fwd, fn_bwd):
        """Equinox's deprecated form of ``def_fwd`` and ``def_bwd`` (it warns, as Equinox):
        ``fn_fwd(vjp_arg, *args, **kwargs) -> (out, residuals)`` and
        ``fn_bwd(residuals, grad_obj, vjp_arg, *args, **kwargs)``, without ``perturbed``
        and with zeros, not None, as the cotangent of a float output."""
        warnings.warn(
            "filter_custom_vjp.defvjp is deprecated (as in Equinox): use .def_fwd and "
            ".def_bwd, whose rules take a `perturbed` argument", stacklevel=2)

        def fwd(perturbed, vjp_arg, *args, **kwargs):
            out, residuals = fn_fwd(vjp_arg, *args, **kwargs)
            return out, (out, residuals)

        def bwd(residuals, grad_obj, perturbed, vjp_arg, *args, **kwargs):
            out, residuals = residuals
            grad_obj = _zeros_for_none(grad_obj, filter(out, is_inexact_array))
            return fn_bwd(residuals, grad_obj, vjp_arg, *args, **kwargs)

        self.def_fwd(fwd)
        self.def_bwd(bwd)

    def _define(self):
        if self.fn_fwd is None or self.fn_bwd is None:
            return

        def inputs(static, diff, nondiff, arrays):
            nonarray_vjp, nonarray_rest = static.value
            args, kwargs = combine(arrays, nonarray_rest)
            return combine(diff, nondiff, nonarray_vjp), args, kwargs

        def split_out(out):
            array_out, rest = partition(out, is_array)
            return array_out, Static(rest)

        def wrapped(static, diff, nondiff, arrays):
            vjp_arg, args, kwargs = inputs(static, diff, nondiff, arrays)
            return split_out(self.fn(vjp_arg, *args, **kwargs))

        def fwd(static, diff, nondiff, arrays):
            # symbolic zeros: each array leaf comes as a CustomVJPPrimal, whose `perturbed`
            # says whether this call differentiates it (Equinox's `perturbed`)
            moving = tree_map(lambda p: p.perturbed, diff, is_leaf=_is_primal)
            diff, nondiff, arrays = (tree_map(lambda p: p.value, t, is_leaf=_is_primal)
                                     for t in (diff, nondiff, arrays))
            vjp_arg, args, kwargs = inputs(static, diff, nondiff, arrays)
            still = tree_map(lambda _: False, (nondiff, static.value[0]))
            perturbed = combine(moving, *still)
            out, residuals = self.fn_fwd(perturbed, vjp_arg, *args, **kwargs)
            res_arrays, res_rest = partition(residuals, is_array)
            return split_out(out), (res_arrays, Static((res_rest, perturbed)), diff, nondiff,
                                    arrays)

        def bwd(static, residuals, ct):
            res_arrays, res_static, diff, nondiff, arrays = residuals
            res_rest, perturbed = res_static.value
            vjp_arg, args, kwargs = inputs(static, diff, nondiff, arrays)
            grad_obj = tree_map(lambda c: None if isinstance(c, SymbolicZero) else c, ct[0],
                                is_leaf=lambda c: isinstance(c, SymbolicZero))
            grads = self.fn_bwd(combine(res_arrays, res_rest), grad_obj, perturbed,
                                vjp_arg, *args, **kwargs)
            if grads is None:
                grads = tree_map(lambda _: None, diff, is_leaf=_is_none)
            if tree_structure(grads, is_leaf=_is_none) != tree_structure(diff,
                                                                         is_leaf=_is_none):
                raise ValueError(
                    f"filter_custom_vjp: the bwd rule of {self.__name__} must return the "
                    "structure of filter(vjp_arg, is_inexact_array) (None at the leaves "
                    f"that are not float arrays): expected {tree_structure(diff)}, got "
                    f"{tree_structure(grads, is_leaf=_is_none)}")
            return grads, None, None  # a None is a zero cotangent

        self.fn_wrapped = custom_vjp(wrapped, nondiff_argnums=(0,))
        self.fn_wrapped.defvjp(fwd, bwd, symbolic_zeros=True)

    def __call__(self, vjp_arg, /, *args, **kwargs):
        if self.fn_wrapped is None:
            raise RuntimeError(
                f"filter_custom_vjp {self.__name__}: define both rules, with @fn.def_fwd "
                "and @fn.def_bwd, before calling it")
        arrays_vjp, nonarray_vjp = partition(vjp_arg, is_array)
        diff, nondiff = partition(arrays_vjp, is_inexact_array)
        arrays, nonarray_rest = partition((args, kwargs), is_array)
        arrays = nondifferentiable(arrays, name="*args and **kwargs of filter_custom_vjp "
                                   "(only its first argument is differentiated)")
        out_arrays, out_rest = self.fn_wrapped(Static((nonarray_vjp, nonarray_rest)), diff,
                                               nondiff, arrays)
        return combine(out_arrays, out_rest.value)

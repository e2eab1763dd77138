"""``filter_make_jaxpr``, ``filter_eval_shape`` and ``filter_closure_convert``: programs and
shapes of functions of any pytrees, their array leaves traced and the others static."""

from __future__ import annotations

import functools
import types

from ..core.array import to_array
from ..core.aval import ShapedArray, ShapeDtypeStruct
from ..core.eval import eval_jaxpr
from ..core.pytree import tree_flatten, tree_unflatten
from ..interpreters.staging import trace_to_jaxpr
from ._filters import combine, is_array, partition
from ._module import Module, field
from ._static import Static


def _is_struct(x) -> bool:
    """An array, or a stand-in for one (anything with ``shape`` and ``dtype``)."""
    return is_array(x) or (hasattr(x, "shape") and hasattr(x, "dtype"))


def _aval(x) -> ShapedArray:
    if is_array(x):
        return to_array(x).aval
    return ShapedArray(tuple(x.shape), x.dtype)


def _struct(aval, weak: bool = True) -> ShapeDtypeStruct:
    """The shape-and-dtype stand-in returned for an array, as Equinox's (through
    ``jax.eval_shape``): a ``ShapeDtypeStruct``, keeping the weak type if ``weak``."""
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=weak and aval.weak_type)


def filter_make_jaxpr(fun):
    """Like ``make_jaxpr``, for functions of any pytrees, as Equinox's.

    The array leaves of the arguments (and leaves with ``shape`` and ``dtype``, standing
    for arrays) become the program's inputs, in ``tree_flatten`` order; every other leaf
    is static. Outputs may hold non-array leaves.

    Arguments:
        fun: any function.

    Returns:
        A function of ``fun``'s arguments returning ``(jaxpr, out_struct, out_static)``:
        the ``ClosedJaxpr``, the output's array part with a ``ShapeDtypeStruct`` per
        array, and its non-array part.

    Example:
        >>> jaxpr, struct, static = filter_make_jaxpr(lambda x, n: (x * n, "s"))(jnp.ones(2), 3)
        >>> print(jaxpr)
        { lambda ; a:f32[2]. let b:f32[2] = mul a 3.0:f32[] in (b,) }
        >>> struct, static
        ((ShapeDtypeStruct(shape=(2,), dtype=float32), None), (None, 's'))
    """
    name = getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        dynamic, static = partition((args, kwargs), _is_struct)
        leaves, treedef = tree_flatten(dynamic)
        out_info = []

        def flat_fun(flat):
            a, k = combine(tree_unflatten(treedef, flat), static)
            out_dynamic, out_static = partition(fun(*a, **k), is_array)
            out_leaves, out_tree = tree_flatten(out_dynamic)
            out_info.append((out_tree, out_static))
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, [_aval(x) for x in leaves],
                                f"filter_make_jaxpr of {name}")
        out_tree, out_static = out_info[0]
        return closed, tree_unflatten(out_tree, map(_struct, closed.out_avals)), out_static

    return make


def filter_eval_shape(fun, *args, **kwargs):
    """The output of ``fun(*args, **kwargs)`` with a shape-and-dtype per array, as Equinox's.

    Nothing is computed: ``fun`` is traced. Arguments, and ``fun`` itself (a Module, say),
    may be any pytrees, with arrays or stand-ins for them (anything with ``shape`` and
    ``dtype``).

    Arguments:
        fun: any function.
        *args, **kwargs: its arguments.

    Returns:
        ``fun``'s output with each array replaced by a ``ShapeDtypeStruct`` (its shape and
        dtype) and every other leaf as ``fun`` returned it.

    Example:
        >>> filter_eval_shape(lambda x, name: (x.sum(axis=0), name), jnp.ones((4, 3)), "s")
        (ShapeDtypeStruct(shape=(3,), dtype=float32), 's')
    """
    # As Equinox's, ``fun``'s own arrays (a Module's fields, which may be ShapeDtypeStructs
    # themselves) are traced too, not captured as constants.
    _, struct, static = filter_make_jaxpr(functools.wraps(fun)(_apply))(fun, args, kwargs)
    return combine(struct, static)


def _apply(fun, args, kwargs):
    return fun(*args, **kwargs)


def _in_struct(converted):
    """The example arguments: a ``ShapeDtypeStruct`` per array, the other leaves."""
    return combine(tree_unflatten(*converted.in_dynamic), converted.in_static.value)


class _ClosureConvert(Module):
    """A traced function whose closed-over arrays are its fields (``consts``).

    ``in_struct`` and ``out_struct`` are Equinox's: the arguments and the output, with a
    ``ShapeDtypeStruct`` per array (weak types dropped on the way in) and the other leaves.
    """

    consts: list
    # a (non-array) leaf, as Equinox's: two conversions of one function, traced apart, have
    # the same structure (a custom JVP rule's output must match the function's)
    jaxpr: object
    in_dynamic: tuple = field(static=True)  # (treedef, ShapeDtypeStructs) of the arguments
    out_dynamic: tuple = field(static=True)  # (treedef, ShapeDtypeStructs) of the output
    in_static: Static = field(static=True)
    out_static: Static = field(static=True)

    in_struct = property(lambda self: _in_struct(self))

    @property
    def out_struct(self):
        return combine(tree_unflatten(*self.out_dynamic), self.out_static.value)

    def __call__(self, *args, **kwargs):
        leaves = _check_input(self, args, kwargs)
        outs = eval_jaxpr(self.jaxpr, self.consts, *leaves)
        return combine(tree_unflatten(self.out_dynamic[0], outs), self.out_static.value)


class _TrivialClosureConvert(Module):
    """``fn`` unchanged, for a plain function that closes over nothing (so over no
    tracer): nothing is traced, as Equinox's. ``in_struct``/``out_struct`` as above."""

    fn: object
    in_dynamic: tuple = field(static=True)
    in_static: Static = field(static=True)

    in_struct = property(lambda self: _in_struct(self))

    @property
    def out_struct(self):
        args, kwargs = self.in_struct
        return filter_eval_shape(self.fn, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        _check_input(self, args, kwargs)
        return self.fn(*args, **kwargs)


def _check_input(converted, args, kwargs) -> list:
    """The array leaves of ``(args, kwargs)``, checked against the example arguments'."""
    dynamic, static = partition((args, kwargs), is_array)
    leaves, treedef = tree_flatten(dynamic)
    got = (treedef, tuple(_struct(_aval(x), weak=False) for x in leaves))
    if got != converted.in_dynamic:
        raise ValueError(
            "filter_closure_convert: the converted function was called with arrays of "
            f"other structure, shapes or dtypes than its example arguments: expected "
            f"{converted.in_dynamic}, got {got}")
    if Static(static) != converted.in_static:
        raise ValueError(
            "filter_closure_convert: the converted function was called with other "
            "non-array arguments than its example arguments")
    return leaves


def filter_closure_convert(fn, *args, **kwargs):
    """``fn`` traced at example arguments, its closed-over arrays made explicit, as Equinox's.

    The result is a Module whose leaves are the arrays ``fn`` closes over (tracers of an
    enclosing transformation included; a plain function closing over nothing is kept
    as it is, untraced, as Equinox), so it can be passed to ``filter_custom_vjp`` or
    ``filter_jit`` and those arrays are seen. Call it with arguments of the example's
    structure, shapes and dtypes (and the same non-array leaves).

    Arguments:
        fn: the function.
        *args, **kwargs: example arguments.

    Returns:
        The converted function, computing what ``fn`` computes.

    Example:
        >>> def scaled(w):
        ...     return filter_closure_convert(lambda x: x * w, jnp.ones(2))
        >>> f = scaled(jnp.array([1.0, 2.0]))
        >>> f.consts, f(jnp.ones(2))
        ([Array([1., 2.], dtype=float32)], Array([1., 2.], dtype=float32))
    """
    dynamic, static = partition((args, kwargs), _is_struct)
    leaves, treedef = tree_flatten(dynamic)
    in_dynamic = (treedef, tuple(_struct(_aval(x), weak=False) for x in leaves))
    if isinstance(fn, types.FunctionType) and fn.__closure__ is None:
        return _TrivialClosureConvert(fn, in_dynamic, Static(static))
    closed, struct, out_static = filter_make_jaxpr(fn)(*args, **kwargs)
    out_leaves, out_tree = tree_flatten(struct)
    return _ClosureConvert(list(closed.consts), closed.jaxpr, in_dynamic,
                           (out_tree, tuple(out_leaves)), Static(static), Static(out_static))

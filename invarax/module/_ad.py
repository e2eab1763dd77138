"""Filtered autodiff: ``filter_jvp``, ``filter_vjp``, ``filter_jacfwd``, ``filter_jacrev``,
``filter_hessian`` and ``filter_checkpoint``.

Each differentiates the inexact (float/complex) array leaves of its inputs; every other
leaf (ints, strings, functions, integer arrays) passes through as static. Non-array
outputs are carried in a ``Static``, which has no leaves, so the underlying transform
never sees them.
"""

from __future__ import annotations

import functools

from ..core.api_util import fun_name
from ..core.array import is_python_scalar, to_array
from ..core.pytree import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from ..interpreters import ad
from ..transforms._autodiff import _check_tangents, jacfwd, jacrev, vjp
from ..transforms._checkpoint import checkpoint
from ._filters import combine, is_array, is_inexact_array, partition
from ._static import Static


def _split_out(out):
    """``(arrays, Static(rest))`` of an output pytree."""
    arrays, rest = partition(out, is_array)
    return arrays, Static(rest)


def _join_out(arrays, static: Static):
    return combine(arrays, static.value)


def _is_none(x) -> bool:
    return x is None


def _dynamic_leaves(primals, tangents):
    """``(static, dyn_tree, primal_leaves, tangent_leaves, raws)``: the primals with a
    tangent (any leaf whose tangent is not None: float arrays and Python floats) as arrays,
    checked against their tangents, and the Python scalars among them as given (``raws``);
    the others (``static``) are closed over, as Equinox."""
    if tree_structure(primals, is_leaf=_is_none) != tree_structure(tangents, is_leaf=_is_none):
        raise ValueError(
            "filter_jvp: primals and tangents must have the same pytree structure, with "
            "None at the leaves that are not differentiated: got "
            f"{tree_structure(primals, is_leaf=_is_none)} and "
            f"{tree_structure(tangents, is_leaf=_is_none)}")
    given = tree_map(lambda t: t is not None, tangents, is_leaf=_is_none)
    dynamic, static = partition(primals, given)
    pairs, dyn_tree = tree_flatten_with_path(dynamic)
    p_leaves, t_leaves, raws = [], [], []
    for (path, p), t in zip(pairs, tree_leaves(tangents), strict=True):
        where = f"filter_jvp: the primal at {keystr(path) or 'the root'}"
        array = to_array(p, where)
        if not is_inexact_array(array):
            raise TypeError(
                f"{where} is {p!r:.40} (not a float), so its tangent must be None, got "
                f"{type(t).__name__}. Pass None there.")
        p_leaves.append(array)
        t_leaves.append(to_array(t, f"filter_jvp: the tangent at {keystr(path)}"))
        raws.append((p, t) if is_python_scalar(p) else None)
    _check_tangents(p_leaves, t_leaves, dyn_tree, dyn_tree)
    return static, dyn_tree, p_leaves, t_leaves, raws


def filter_jvp(fn, primals, tangents, **kwargs):
    """Like ``jvp``, for primals that are any pytrees: only leaves given a tangent vary.

    Arguments:
        fn: a function of the positional arguments ``primals`` (and ``**kwargs``).
        primals: a tuple or list of the positional arguments: any pytrees.
        tangents: the same structure as ``primals``: a tangent (of the primal's shape and
            dtype) at each float leaf (array or Python float) to differentiate, None
            elsewhere (None means a symbolic zero: the leaf is held constant, as Equinox).
        **kwargs: keyword arguments of ``fn``; not differentiated.

    Returns:
        ``(out, tangents_out)``: ``fn``'s output, and its tangent with None at the
        output's leaves that do not depend on a differentiated input (not arrays, or
        constant), as Equinox.

    Example:
        >>> out, t = filter_jvp(lambda x, n: (x * n, "s"), (jnp.ones(2), 3), (jnp.ones(2), None))
        >>> out, t
        ((Array([3., 3.], dtype=float32), 's'), (Array([3., 3.], dtype=float32), None))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("filter_jvp takes primals and tangents as tuples: "
                        "filter_jvp(f, (x, n), (t, None))")
    static, dyn_tree, p_leaves, t_leaves, raws = _dynamic_leaves(tuple(primals),
                                                                 tuple(tangents))
    record = []

    def flat_fn(leaves):
        out = fn(*combine(tree_unflatten(dyn_tree, leaves), static), **kwargs)
        arrays, rest = partition(out, is_array)
        out_leaves, out_tree = tree_flatten(arrays)
        record[:] = [out_tree, rest]
        return out_leaves

    # a Python float returned as it is comes back so (with its tangent), as Equinox's
    outs, touts = ad.jvp_flat(flat_fn, p_leaves, t_leaves, f"filter_jvp of {fun_name(fn)}",
                              raws)
    out_tree, rest = record
    touts = [None if isinstance(t, ad.Zero) else t for t in touts]
    return combine(tree_unflatten(out_tree, outs), rest), tree_unflatten(out_tree, touts)


def filter_vjp(fun, *primals, has_aux: bool = False):
    """Like ``vjp``, for primals that are any pytrees: only float arrays are differentiated.

    Arguments:
        fun: a function of ``*primals``; its output may hold non-array leaves.
        *primals: the positional arguments: any pytrees.
        has_aux: whether ``fun`` returns ``(out, aux)``; aux is returned, not
            differentiated.

    Returns:
        ``(out, vjp_fn)``, or ``(out, vjp_fn, aux)``. ``vjp_fn(ct)`` takes a cotangent
        with ``out``'s structure (None at its leaves that are not float arrays) and returns
        a tuple with one cotangent per primal, None at its leaves that are not float arrays.

    Example:
        >>> out, vjp_fn = filter_vjp(lambda x, p: x * p["w"], jnp.ones(2),
        ...                          {"w": jnp.arange(2.0), "n": 3})
        >>> vjp_fn(jnp.ones(2))
        (Array([0., 1.], dtype=float32), {'n': None, 'w': Array([1., 1.], dtype=float32)})
    """
    diff, nondiff = partition(primals, is_inexact_array)

    def diff_fun(*d):
        out = fun(*combine(d, nondiff))
        out, aux = out if has_aux else (out, None)
        out_diff, out_rest = partition(out, is_inexact_array)
        return out_diff, (_split_out(out_rest), _split_out(aux))

    out_diff, vjp_fn, (out_rest, aux) = vjp(diff_fun, *diff, has_aux=True)
    out = combine(out_diff, _join_out(*out_rest))

    def filtered_vjp_fn(ct):
        try:
            ct_diff = tree_map(lambda x, c: c if is_inexact_array(x) else None, out, ct)
        except ValueError as e:
            raise ValueError(f"filter_vjp: the cotangent must have the output's structure, "
                             f"with None at its non-float leaves: {e}") from None
        return vjp_fn(ct_diff)

    return (out, filtered_vjp_fn, _join_out(*aux)) if has_aux else (out, filtered_vjp_fn)


def _filter_jac(jac, kind: str):
    def transform(fun, has_aux: bool = False):
        @functools.wraps(fun)
        def jac_fun(x, *args, **kwargs):
            diff, nondiff = partition(x, is_inexact_array)

            def diff_fun(d):
                out = fun(combine(d, nondiff), *args, **kwargs)
                if not has_aux:
                    return out
                out, aux = out
                return out, _split_out(aux)

            res = jac(diff_fun, has_aux=has_aux)(diff)
            return (res[0], _join_out(*res[1])) if has_aux else res

        return jac_fun

    transform.__name__ = transform.__qualname__ = f"filter_{kind}"
    transform.__doc__ = f"""Like ``{kind}``, w.r.t. the float-array leaves of the first argument.

    Arguments:
        fun: a function whose first argument is any pytree (a Module, say) and whose
            output is a pytree of arrays (or ``(output, aux)`` with ``has_aux``, aux any
            pytree).
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(jacobian, aux)``.

    Returns:
        A function with ``fun``'s signature returning the Jacobian: for each output leaf,
        the first argument's structure with None at its leaves that are not float arrays.

    Example:
        >>> filter_{kind}(lambda p, c: p["w"] * c)({{"w": jnp.ones(2), "s": "x"}}, 3.0)["w"]
        Array([[3., 0.],
               [0., 3.]], dtype=float32)
    """
    return transform


filter_jacfwd = _filter_jac(jacfwd, "jacfwd")
filter_jacrev = _filter_jac(jacrev, "jacrev")


def filter_hessian(fun, has_aux: bool = False):
    """The Hessian w.r.t. the float-array leaves of the first argument, as Equinox's.

    ``filter_jacfwd(filter_jacrev(fun))``.

    Arguments:
        fun: a function whose first argument is any pytree and which returns a scalar (or
            ``(scalar, aux)`` with ``has_aux``).
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(hessian, aux)``.

    Returns:
        A function returning the Hessian: the first argument's structure nested in itself,
        None at the leaves that are not float arrays.

    Example:
        >>> filter_hessian(lambda p: (p["w"] ** 3).sum())({"w": jnp.ones(2), "s": "x"})["w"]["w"]
        Array([[6., 0.],
               [0., 6.]], dtype=float32)
    """
    return filter_jacfwd(filter_jacrev(fun, has_aux=has_aux), has_aux=has_aux)


def filter_checkpoint(fun=None, *, prevent_cse: bool = True, policy=None):
    """Like ``checkpoint``, for functions of any pytrees: non-array leaves are static.

    Arguments:
        fun: any function (its arguments and outputs may hold non-array leaves). Without
            it (``@filter_checkpoint(policy=...)``), a decorator.
        prevent_cse: as ``checkpoint``'s.
        policy: as ``checkpoint``'s.

    Returns:
        A function with ``fun``'s signature and bitwise its results; under
        differentiation its intermediates are recomputed, not saved.

    Example:
        >>> f = filter_checkpoint(lambda x, name: (jnp.sin(jnp.sin(x)), name))
        >>> f(jnp.zeros(2), "a")
        (Array([0., 0.], dtype=float32), 'a')
    """
    if fun is None:
        return functools.partial(filter_checkpoint, prevent_cse=prevent_cse, policy=policy)

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        dynamic, static = partition((fun, args, kwargs), is_array)

        def dynamic_fun(dyn):
            f, a, k = combine(dyn, static)
            return _split_out(f(*a, **k))

        run = checkpoint(dynamic_fun, prevent_cse=prevent_cse, policy=policy)
        return _join_out(*run(dynamic))

    return checkpointed

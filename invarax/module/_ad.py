"""Filtered autodiff: ``filter_jvp``, ``filter_vjp``, ``filter_jacfwd``, ``filter_jacrev``,
``filter_hessian`` and ``filter_checkpoint``.

Each differentiates the inexact (float/complex) array leaves of its inputs; every other
leaf (ints, strings, functions, integer arrays) passes through as static. Non-array
outputs are carried in a ``Static``, which has no leaves, so the underlying transform
never sees them.
"""

from __future__ import annotations

import functools

from ..core.pytree import keystr, tree_flatten_with_path, tree_map, tree_structure
from ..transforms._autodiff import jacfwd, jacrev, jvp, vjp
from ..transforms._checkpoint import checkpoint
from ._filters import combine, is_array, is_inexact_array, partition
from ._static import Static


def _split_out(out):
    """``(arrays, Static(rest))`` of an output pytree."""
    arrays, rest = partition(out, is_array)
    return arrays, Static(rest)


def _join_out(arrays, static: Static):
    return combine(arrays, static.value)


def _tangent_leaves(primals, tangents):
    """``(mask, tangents)``: a pytree of bools over ``primals``, True at the inexact-array
    leaves given a tangent (a None tangent is a symbolic zero: that leaf is held constant,
    as Equinox), and those tangents."""
    pairs, treedef = tree_flatten_with_path(primals)
    try:
        given = treedef.flatten_up_to(tangents)
    except ValueError as e:
        raise ValueError(
            "filter_jvp: tangents must have the structure of primals, with None at the "
            f"leaves that are not float arrays: {e}") from None
    out, mask = [], []
    for (path, p), t in zip(pairs, given, strict=True):
        mask.append(is_inexact_array(p) and t is not None)
        if mask[-1]:
            out.append(t)
        elif t is not None:
            raise ValueError(
                f"filter_jvp: the primal at {keystr(path) or 'the root'} is {p!r:.40} (not a "
                "float array), so its tangent must be None, got "
                f"{type(t).__name__}. Pass None there.")
    return treedef.unflatten(mask), out


def filter_jvp(fn, primals, tangents, **kwargs):
    """Like ``jvp``, for primals that are any pytrees: only float arrays have tangents.

    Arguments:
        fn: a function of the positional arguments ``primals`` (and ``**kwargs``).
        primals: a tuple or list of the positional arguments: any pytrees.
        tangents: the same structure as ``primals``, with a tangent at each float-array
            leaf (None means a symbolic zero: the leaf is held constant, as Equinox) and
            None at every other leaf.
        **kwargs: keyword arguments of ``fn``; not differentiated.

    Returns:
        ``(out, tangents_out)``: ``fn``'s output, and its tangent with None at the
        output's leaves that are not float arrays.

    Example:
        >>> out, t = filter_jvp(lambda x, n: (x * n, "s"), (jnp.ones(2), 3), (jnp.ones(2), None))
        >>> out, t
        ((Array([3., 3.], dtype=float32), 's'), (Array([3., 3.], dtype=float32), None))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("filter_jvp takes primals and tangents as tuples: "
                        "filter_jvp(f, (x, n), (t, None))")
    mask, flat_t = _tangent_leaves(tuple(primals), tuple(tangents))
    diff, nondiff = partition(tuple(primals), mask)

    def diff_fn(*d):
        return _split_out(fn(*combine(d, nondiff), **kwargs))

    diff_t = tree_structure(diff).unflatten(flat_t)
    (arrays, static), (t_arrays, _) = jvp(diff_fn, diff, diff_t)
    t_out = tree_map(lambda x, t: t if is_inexact_array(x) else None, arrays, t_arrays)
    return _join_out(arrays, static), t_out


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

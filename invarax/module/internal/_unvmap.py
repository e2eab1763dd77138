"""``unvmap_any``, ``unvmap_all``, ``unvmap_max``: reductions that see through ``vmap``.

Each reduces its operand to a scalar, as ``jnp.any``/``jnp.all``/``jnp.max``; under
``vmap`` the reduction also runs over the batch, so the result is one unbatched scalar (a
loop whose predicate is ``unvmap_any(pred)`` runs while any example still runs).
"""

from __future__ import annotations

import numpy as np

from ...core.aval import ShapedArray
from ...core.lowering import register_lowering
from ...core.trace import Primitive
from ...interpreters import ad, batching
from ...ops import reductions as red


def _all_axes(x):
    return tuple(range(x.ndim))


def _unvmap(name: str, numpy_fn, reducer, out_dtype):
    """The primitive ``name``: ``numpy_fn`` of the whole operand, batch axis included."""
    prim = Primitive(name)

    def impl(x):
        return np.asarray(numpy_fn(x), dtype=out_dtype(x.dtype))

    def abstract_eval(x):
        return ShapedArray((), out_dtype(x.dtype))

    def batch(vals, dims):
        (x,) = vals
        return prim.bind(reducer(x, _all_axes(x)) if x.ndim else x), batching.not_mapped

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    register_lowering(prim)
    batching.batching_rules[prim] = batch
    return prim


def _bool(_):
    return np.dtype(np.bool_)


def _same(dtype):
    return dtype


unvmap_any_p = _unvmap("unvmap_any", np.any, red.reduce_or, _bool)
unvmap_all_p = _unvmap("unvmap_all", np.all, red.reduce_and, _bool)
unvmap_max_p = _unvmap("unvmap_max", np.max, red.reduce_max, _same)


def _bool_jvp(prim):
    def rule(primals, tangents):
        out = prim.bind(*primals)
        return out, ad.Zero(ad.tangent_aval(out.aval))

    return rule


def _max_jvp(primals, tangents):
    raise NotImplementedError(
        "Differentiation rule for 'unvmap_max' is not implemented (as in Equinox): it is meant "
        "for integers, e.g. step counts; take jnp.max of a float array to differentiate it")


ad.jvp_rules[unvmap_any_p] = _bool_jvp(unvmap_any_p)
ad.jvp_rules[unvmap_all_p] = _bool_jvp(unvmap_all_p)
ad.jvp_rules[unvmap_max_p] = _max_jvp


def _operand(x):
    from ... import numpy as jnp

    return jnp.asarray(x)


def unvmap_any(x):
    """``jnp.any(x)``, also over the batch under ``vmap`` (one bool for the whole batch).

    Example:
        >>> vmap(lambda x: unvmap_any(x > 2))(jnp.array([1, 2, 3]))
        Array([ True,  True,  True], dtype=bool)
    """
    return unvmap_any_p.bind(_operand(x))


def unvmap_all(x):
    """``jnp.all(x)``, also over the batch under ``vmap`` (one bool for the whole batch).

    Example:
        >>> vmap(lambda x: unvmap_all(x > 2))(jnp.array([1, 2, 3]))
        Array([False, False, False], dtype=bool)
    """
    return unvmap_all_p.bind(_operand(x))


def unvmap_max(x):
    """``jnp.max(x)``, also over the batch under ``vmap`` (one value for the whole batch).

    Example:
        >>> vmap(unvmap_max)(jnp.array([[1, 5], [7, 2]]))
        Array([7, 7], dtype=int32)
    """
    return unvmap_max_p.bind(_operand(x))

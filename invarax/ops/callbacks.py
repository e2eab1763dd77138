"""Callbacks into Python: the ``debug_callback``, ``pure_callback`` and ``io_callback``
primitives.

``debug_callback`` has an effect (it calls ``callback`` for what it does, not for a
value): it has no outputs, and the compiler never removes, merges or folds it
(``core.effects.EFFECTFUL``), so under ``jit`` it runs each call, in program order. Its rules
follow JAX's: eagerly it calls the callback at once; under ``jvp``/``grad`` it sees the
primal values only (a ``grad`` prints during the forward pass); under ``vmap`` it is
unrolled, one call per batch element, in order.

``pure_callback`` is a pure function computed by Python on NumPy arrays: it returns
arrays of the declared shapes and dtypes, may be removed when unused and merged with an
identical call, but is never evaluated at compile time. It has no derivative (as in
JAX: wrap it in ``custom_jvp``); under ``vmap`` its ``vmap_method`` says how it batches.

``io_callback`` returns arrays as ``pure_callback`` does, but has an effect: as
``debug_callback`` it is never removed, merged or folded, and runs in program order; it has
no derivative, and ``vmap`` calls it once per example (an ``ordered`` one cannot be vmapped).
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayImpl
from ..core.effects import EFFECTFUL, NO_FOLD
from ..core.errors import callback_error
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters import ad
from ..interpreters.batching import batching_rules, moveaxis, not_mapped
from . import shape as sh

# ---------------------------------------------------------------------------------------
# debug_callback: an effect, no outputs.

debug_callback_p = Primitive("debug_callback", multiple_results=True)
EFFECTFUL.add(debug_callback_p)


def _debug_callback_impl(*values, callback, ordered):
    callback(*(ArrayImpl(np.asarray(v)) for v in values))
    return []


debug_callback_p.def_impl(_debug_callback_impl)
debug_callback_p.def_abstract_eval(lambda *avals, callback, ordered: [])
register_lowering(debug_callback_p)


def _debug_callback_jvp(primals, tangents, *, callback, ordered):
    return debug_callback_p.bind(*primals, callback=callback, ordered=ordered), []


ad.jvp_rules[debug_callback_p] = _debug_callback_jvp


def _index(x, dim, i):
    """Element ``i`` of ``x`` along batch dimension ``dim`` (``x`` itself if unbatched)."""
    if dim is not_mapped:
        return x
    return sh.squeeze(sh.slice_in_dim(x, i, i + 1, 1, dim), (dim,))


def _batch_size(vals, dims):
    return next(x.shape[d] for x, d in zip(vals, dims, strict=True) if d is not not_mapped)


def _debug_callback_batch(vals, dims, *, callback, ordered):
    for i in range(_batch_size(vals, dims)):  # one call per example, in order, as JAX
        debug_callback_p.bind(*(_index(x, d, i) for x, d in zip(vals, dims, strict=True)),
                              callback=callback, ordered=ordered)
    return [], []


batching_rules[debug_callback_p] = _debug_callback_batch


def debug_callback(callback, *args, ordered=False):
    """Bind ``debug_callback``: call ``callback(*args)`` (arrays) when the program runs."""
    return debug_callback_p.bind(*args, callback=callback, ordered=ordered)


# ---------------------------------------------------------------------------------------
# pure_callback: a pure function evaluated by Python.

pure_callback_p = Primitive("pure_callback", multiple_results=True)
NO_FOLD.add(pure_callback_p)  # pure, but opaque: it runs when the program runs


def _pure_callback_impl(*values, callback, result_avals, vmap_method):
    return _run_callback(values, callback, result_avals)


def _run_callback(values, callback, result_avals):
    """``callback`` on NumPy ``values``, its results checked against ``result_avals``."""
    try:
        outs = callback(*(np.asarray(v) for v in values))
    except Exception as err:
        raise callback_error(err) from err  # JAX's JaxRuntimeError (and still err's class)
    if len(outs) != len(result_avals):
        raise ValueError(f"pure_callback: the callback returned {len(outs)} arrays, "
                         f"result_shape_dtypes declares {len(result_avals)}")
    checked = []
    for i, (out, aval) in enumerate(zip(outs, result_avals, strict=True)):
        out = np.asarray(out)
        if out.shape != aval.shape:
            raise ValueError(
                f"pure_callback: result {i} of the callback has shape {out.shape}, but "
                f"result_shape_dtypes declares {aval.str_short()}; make them agree")
        if out.dtype != aval.dtype and not np.can_cast(out.dtype, aval.dtype, "same_kind"):
            raise TypeError(
                f"pure_callback: result {i} of the callback has dtype {out.dtype}, but "
                f"result_shape_dtypes declares {aval.dtype}; make them agree")
        checked.append(out.astype(aval.dtype, copy=False))
    return checked


pure_callback_p.def_impl(_pure_callback_impl)
pure_callback_p.def_abstract_eval(lambda *avals, callback, result_avals, vmap_method:
                                  list(result_avals))
register_lowering(pure_callback_p)


def _pure_callback_jvp(primals, tangents, **params):
    outs = pure_callback_p.bind(*primals, **params)
    if any(not isinstance(t, ad.Zero) for t in tangents):
        raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` "
                         "(invarax.custom_jvp) to use callbacks while taking gradients.")
    return outs, [ad.Zero(ad.tangent_aval(o.aval)) for o in outs]


ad.jvp_rules[pure_callback_p] = _pure_callback_jvp


def _pure_callback_batch(vals, dims, *, callback, result_avals, vmap_method):
    size = _batch_size(vals, dims)
    params = dict(callback=callback, vmap_method=vmap_method)
    if vmap_method in (None, "sequential", "sequential_unrolled"):
        rows = [pure_callback_p.bind(*(_index(x, d, i) for x, d in zip(vals, dims,
                                                                       strict=True)),
                                     result_avals=result_avals, **params)
                for i in range(size)]
        outs = [sh.concatenate([sh.expand_dims(r[j], (0,)) for r in rows], 0)
                for j in range(len(result_avals))]
        return outs, [0] * len(outs)
    args = []
    for x, d in zip(vals, dims, strict=True):
        if d is not_mapped:
            x = sh.expand_dims(x, (0,))
            if vmap_method == "broadcast_all":
                x = sh.broadcast_in_dim(x, (size, *x.shape[1:]), tuple(range(x.ndim)))
        else:
            x = moveaxis(x, d, 0)
        args.append(x)
    batched = tuple(type(a)((size, *a.shape), a.dtype, a.weak_type) for a in result_avals)
    outs = pure_callback_p.bind(*args, result_avals=batched, **params)
    return outs, [0] * len(outs)


batching_rules[pure_callback_p] = _pure_callback_batch

# ---------------------------------------------------------------------------------------
# io_callback: a Python function with effects (never removed, merged or folded; in
# program order), returning arrays.

io_callback_p = Primitive("io_callback", multiple_results=True)
EFFECTFUL.add(io_callback_p)
io_callback_p.def_impl(lambda *values, callback, result_avals, ordered:
                       _run_callback(values, callback, result_avals))
io_callback_p.def_abstract_eval(lambda *avals, callback, result_avals, ordered:
                                list(result_avals))
register_lowering(io_callback_p)


def _io_callback_jvp(primals, tangents, **params):
    if any(not isinstance(t, ad.Zero) for t in tangents):
        raise ValueError("io_callback does not support JVP (it is not differentiable): "
                         "differentiate around it, or wrap it in custom_jvp")
    outs = io_callback_p.bind(*primals, **params)
    return outs, [ad.Zero(ad.tangent_aval(o.aval)) for o in outs]


ad.jvp_rules[io_callback_p] = _io_callback_jvp


def _io_callback_batch(vals, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot vmap an ordered io_callback (its calls' order would be "
                         "the examples'): pass ordered=False, or loop with lax.map")
    rows = [io_callback_p.bind(*(_index(x, d, i) for x, d in zip(vals, dims, strict=True)),
                               callback=callback, result_avals=result_avals, ordered=False)
            for i in range(_batch_size(vals, dims))]  # one call per example, in order
    outs = [sh.concatenate([sh.expand_dims(r[j], (0,)) for r in rows], 0)
            for j in range(len(result_avals))]
    return outs, [0] * len(outs)


batching_rules[io_callback_p] = _io_callback_batch

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)

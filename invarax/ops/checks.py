"""Runtime checks: ``error_if``, the primitive behind Equinox's ``error_if`` and
``branched_error_if``.

``error_if(pred, index, *xs, msgs, on_error)`` returns ``xs`` unchanged; when the scalar
``pred`` is True it raises ``EquinoxRuntimeError(msgs[index])`` (``on_error="raise"``) or
returns ``xs`` filled with NaN (``on_error="nan"``: integers with their largest value,
bools with True). It runs when the program runs (eagerly, or inside a compiled ``jit``), so
a traced predicate is checked on its value. Its output is ``xs``: a check whose result is
unused is removed as dead code.

``dce_probe(x, record, index)`` computes ``record.run(x)`` (the identity for Equinox's
``debug.store_dce``; ``internal.assert_dce``'s raises), eagerly and under every
transformation (``vmap`` probes the batched value, ``jvp`` the primal, its tangent passes
through); when a program holding it is compiled, the passes that leave it in (it survived
dead-code elimination) call ``record.alive(index, aval)`` (``core.effects.ON_COMPILE``). It
is never folded, so a probe of a constant stays in the program.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.effects import ON_COMPILE
from ..core.lowering import register_lowering
from ..core.trace import Primitive
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batching_rules, moveaxis, not_mapped
from . import reductions as red


class EquinoxRuntimeError(RuntimeError):
    """Raised by ``error_if``/``branched_error_if`` when the predicate holds at run time."""


class EquinoxTracetimeError(RuntimeError):
    """Raised by ``error_if``/``branched_error_if`` when the predicate is a Python True."""


error_if_p = Primitive("error_if", multiple_results=True)


def nan_like(x):
    """``x`` filled as Equinox's ``on_error="nan"`` fills it: NaN for inexact dtypes, the
    largest value for integers, True for bools (other dtypes unchanged)."""
    kind = dtypes.kind(x.dtype)
    if kind in "fc":
        return np.full_like(x, np.nan)
    if kind in "iu":
        info = dtypes.ml_dtypes().iinfo if dtypes.is_ml_dtype(x.dtype) else np.iinfo
        return np.full_like(x, info(x.dtype).max)
    return np.full_like(x, True) if kind == "b" else x


@error_if_p.def_impl
def _error_if_impl(pred, index, *xs, msgs, on_error):
    if not bool(pred):
        return list(xs)
    if on_error == "nan":
        return [nan_like(x) for x in xs]
    raise EquinoxRuntimeError(msgs[int(index)])


@error_if_p.def_abstract_eval
def _error_if_abstract_eval(pred, index, *xs, msgs, on_error):
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError(f"error_if: the predicate must be a bool scalar, got {pred.str_short()}")
    if index.shape != () or not np.issubdtype(index.dtype, np.integer):
        raise TypeError(f"error_if: the index must be an int scalar, got {index.str_short()}")
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in xs]


register_lowering(error_if_p)

def _error_if_jvp(primals, tangents, *, msgs, on_error):
    """The check runs on the primals; the tangents pass through (the identity's)."""
    return error_if_p.bind(*primals, msgs=msgs, on_error=on_error), list(tangents[2:])


jvp_rules[error_if_p] = _error_if_jvp


def _error_if_batch(vals, dims, *, msgs, on_error):
    """One check for the whole batch: any example's predicate, the largest index."""
    (pred, index, *xs), (pred_dim, index_dim, *x_dims) = vals, dims
    if pred_dim is not not_mapped:
        pred = red.reduce_or(moveaxis(pred, pred_dim, 0), (0,))
    if index_dim is not not_mapped:
        index = red.reduce_max(moveaxis(index, index_dim, 0), (0,))
    return error_if_p.bind(pred, index, *xs, msgs=msgs, on_error=on_error), list(x_dims)


batching_rules[error_if_p] = _error_if_batch


# ---------------------------------------------------------------------------------------
# dce_probe: told whether dead-code elimination kept it.

dce_probe_p = Primitive("dce_probe")
dce_probe_p.def_impl(lambda x, *, record, index: record.run(x))
dce_probe_p.def_abstract_eval(lambda x, *, record, index: x)
register_lowering(dce_probe_p)
ON_COMPILE[dce_probe_p] = lambda eqn: eqn.params["record"].alive(eqn.params["index"],
                                                                  eqn.invars[0].aval)


def _dce_probe_jvp(primals, tangents, *, record, index):
    """The primal is probed; its tangent passes through (the identity's)."""
    return dce_probe_p.bind(primals[0], record=record, index=index), tangents[0]


jvp_rules[dce_probe_p] = _dce_probe_jvp
batching_rules[dce_probe_p] = lambda vals, dims, *, record, index: (
    dce_probe_p.bind(vals[0], record=record, index=index), dims[0])

"""The values of ``ml_dtypes``' types (bfloat16, the float8 types, int4, ...) are computed
in a wider type and rounded once.

A primitive never sees them: its operands of those types are converted to their compute
type (``dtypes.compute_dtype``: float32 for the floats, whose conversion to it is exact;
int32 for the integers), its impl runs there, and each result whose dtype is one of those
types is converted back once (round to nearest even, as ``ml_dtypes`` and JAX). float16
follows the same rule inside the kernels that need it; NumPy's float16 ufuncs round once
too. Eager evaluation and ``jit`` both run a primitive of such values here, so they agree
bitwise. Primitives that reinterpret bits (``bitcast_convert_type``) or step by one ulp
of the type (``nextafter``, ``ml_dtypes``' own loop) and those that run
jaxprs (control flow, calls: their inner primitives come back here) see the values as
they are.
"""

from __future__ import annotations

import numpy as np

from . import dtypes

# Primitives that take the values of these types as they are: reinterpreting their bits,
# or stepping by their own ulp (NumPy's nextafter loop of ml_dtypes' types).
_AS_IS = frozenset({"bitcast_convert_type", "nextafter"})


def involves(avals) -> bool:
    """Whether one of ``avals`` has one of ``ml_dtypes``' types (False until one is used)."""
    types = dtypes._ML_SET
    for a in avals:  # a loop, not any(...): this runs at every eager operation
        if a.dtype in types:
            return True
    return False


def _runs_jaxprs(params) -> bool:
    def program(p):
        if isinstance(p, (tuple, list)):
            return any(map(program, p))
        return hasattr(p, "eqns") or hasattr(p, "jaxpr") or callable(p)

    return any(map(program, params.values()))


def run(primitive, values, out_avals, params):
    """``primitive``'s impl on ``values`` computed in their compute types, its results of
    ``ml_dtypes``' types rounded once to ``out_avals``' dtypes."""
    if primitive.name in _AS_IS or _runs_jaxprs(params):
        return primitive.impl(*values, **params)
    wide = [v.astype(dtypes.compute_dtype(v.dtype)) if v.dtype in dtypes._ML_SET else v
            for v in map(np.asarray, values)]
    outs = primitive.impl(*wide, **params)
    if not primitive.multiple_results:
        return _round(outs, out_avals.dtype)
    return [_round(o, a.dtype) for o, a in zip(outs, out_avals, strict=True)]


def _round(value, dtype):
    value = np.asarray(value)
    return value.astype(dtype) if value.dtype != dtype and dtype in dtypes._ML_SET else value

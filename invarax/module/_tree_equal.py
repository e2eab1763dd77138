"""``tree_equal``: whether pytrees are equal, as ``equinox.tree_equal`` (and ``Module.__eq__``)."""

from __future__ import annotations

import numpy as np

from ..core.pytree import tree_flatten
from ._filters import is_array

_NUMPY = (np.ndarray, np.generic)


def _all_close(x, y, rtol, atol):
    """``all(x == y)``, or ``allclose`` for inexact arrays when a tolerance is given."""
    from .. import numpy as jnp

    numpy_only = isinstance(x, _NUMPY) and isinstance(y, _NUMPY)
    npi = np if numpy_only else jnp
    exact = (isinstance(rtol, (int, float)) and isinstance(atol, (int, float))
             and rtol == 0 and atol == 0)
    if exact or not np.issubdtype(x.dtype, np.inexact):
        return npi.all(x == y)
    if numpy_only:
        return np.allclose(x, y, rtol=rtol, atol=atol)
    # isclose: within atol + rtol * |y|, or equal (infinities of one sign); NaN never
    finite = npi.isfinite(x) & npi.isfinite(y)
    return npi.all((x == y) | (finite & (npi.abs(x - y) <= atol + rtol * npi.abs(y))))


def tree_equal(*pytrees, typematch: bool = False, rtol=0.0, atol=0.0):
    """Whether all ``pytrees`` are equal: the same structure and equal leaves.

    Arrays (invarax or NumPy) must have the same shape and dtype and equal values (with
    ``rtol``/``atol``: ``allclose`` for inexact arrays); other leaves are compared with
    ``==``. Under ``jit`` a traced array comparison gives a traced bool, as in Equinox:
    write ``tree_equal(...) is True`` to ask for a statically known True.

    Arguments:
        *pytrees: any number of pytrees.
        typematch: also require corresponding leaves to have the same ``type`` (then an
            invarax array and a NumPy array are not equal).
        rtol: relative tolerance for inexact arrays (default 0: exact equality).
        atol: absolute tolerance for inexact arrays (default 0).

    Returns:
        ``True`` or ``False``, or a bool array when arrays had to be compared by value
        (``bool()`` of it is the answer).

    Example:
        >>> tree_equal({"a": jnp.ones(2), "n": 1}, {"a": jnp.ones(2), "n": 1})
        Array(True, dtype=bool)
        >>> tree_equal([1, "relu"], [1, "gelu"]), tree_equal((1,), [1])
        (False, False)
    """
    flat, treedef = tree_flatten(pytrees[0])
    out = True
    for pytree in pytrees[1:]:
        flat_, treedef_ = tree_flatten(pytree)
        if treedef_ != treedef:
            return False
        for x, y in zip(flat, flat_, strict=True):
            if typematch and type(x) is not type(y):
                return False
            if is_array(x) != is_array(y):
                return False
            if not is_array(x):
                if x != y:
                    return False
                continue
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            equal = _all_close(x, y, rtol, atol)
            if isinstance(x, _NUMPY) and isinstance(y, _NUMPY):
                if not equal:
                    return False
            else:
                out = out & equal
    return out

"""invarax's own elementary functions: the compiled kernels behind ``exp``, ``log``, ``expm1``,
``log1p``, ``tanh``, ``logistic``, ``sin``, ``cos``, ``exp2``, ``sinh``, ``cosh``, ``log2``,
``log10``, ``asinh``, ``acosh``, ``atanh``, ``atan``, ``asin``, ``acos``, ``tan``, ``cbrt``,
``erf``, ``erfc`` and ``erf_inv`` (lax's names; the last thirteen in
``csrc/elementary_more.c``), ``lgamma`` and ``digamma`` (``csrc/elementary_gamma.c``), and
``atan2`` and ``pow`` of two operands (``elementary2``).

float32 results are correctly rounded (the float nearest the exact value, ties to even), so
their bits are defined by mathematics alone; float64 results are within 1 ulp, from a fixed
sequence of IEEE operations and ``fma``. Every dispatch level (``INVARAX_MAX_ISA``) gives the
same bits. The algorithms are written down in ``docs/numerics.md`` ("Elementary functions").
"""

from __future__ import annotations

import math

import numpy as np

from ..core.config import config
from . import _native
from ._support import in_parallel_task, num_threads

#: The functions of the compiled kernel, in the kernel's numbering (native.h, ``ELEM_*``).
NAMES = ("exp", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "exp2", "sinh",
         "cosh", "log2", "log10", "asinh", "acosh", "atanh", "atan", "asin", "acos", "tan", "cbrt",
         "erf", "erfc", "erf_inv", "lgamma", "digamma")
_CODE = {name: code for code, name in enumerate(NAMES)}
#: Constants of the ops, written as the float64 nearest the exact value (checked with mpmath
#: in tests/test_no_numpy_transcendentals.py), so that no libm or NumPy ufunc computes them:
#: log(2), log(10), and log of 2 * pi rounded to float64 (the value of ``np.log(2 * np.pi)``).
LOG2, LOG10, LOG_2PI = 0.6931471805599453, 2.302585092994046, 1.8378770664093453
_NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: Elements per thread below which a function runs on the calling thread alone; above, its
#: ranges are taken by the kernels' own thread pool (a worker joins in microseconds). Zen 4,
#: float32, 1 thread against 2: tanh of 2^15 elements 24 against 13 us, 2^17 98 against
#: 53 us; exp of 2^15 16 against 10 us.
POOL_PER_THREAD = 1 << 14


def _run(kernel, code: int, *arrays) -> None:
    """``kernel(code, *arrays)`` (``_native.elementary`` or ``elementary2``) on flat arrays of
    one length (the inputs, then the output), its ranges taken by the kernels' own thread
    pool when large (each element's bits are the same whatever the split, N5)."""
    threads = 1 if in_parallel_task() else min(num_threads(), arrays[-1].size // POOL_PER_THREAD)
    kernel(code, *arrays, max(1, threads))


def _same_start(a: np.ndarray, b: np.ndarray) -> bool:
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


def _numpy_logistic(x, out=None):
    """``1 / (1 + exp(-x))`` by NumPy's ufuncs (invarax's order before its own kernels)."""
    one = np.ones((), x.dtype)
    if out is None:
        return one / (one + np.exp(-x))
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(one, out, out=out)
    return np.divide(one, out, out=out)


def _numpy(name: str):
    """NumPy's version of function ``name``: what complex operands use, and every operand
    while ``config.invarax_exact_elementary`` is off."""
    if name == "logistic":
        return _numpy_logistic
    if name in ("log2", "log10"):
        return _numpy_log_base(2 if name == "log2" else 10)
    if name in ("erf", "erfc"):
        return _libm(getattr(math, name))
    if name == "lgamma":
        return _libm(_lgamma_libm)
    if name in ("erf_inv", "digamma"):  # their primitives are bound only with the flag on
        return lambda x, out=None: elementary(name, x, out)  # (ops/special.py, ops/gamma.py)
    return getattr(np, _NUMPY_NAMES.get(name, name))


def _libm(fn):
    """libm's double-precision ``fn`` (``math.erf``, ...) of each element, rounded once."""

    def apply(x, out=None):
        result = np.vectorize(fn, otypes=[np.float64])(x).astype(x.dtype)
        if out is None:
            return result
        out[...] = result
        return out

    return apply


def _lgamma_libm(v):
    """libm's lgamma, with ``+inf`` (not an error) at the poles 0, -1, -2, ... and -inf."""
    return math.inf if (v <= 0 and v.is_integer()) or v == -math.inf else math.lgamma(v)


def _numpy_log_base(base):
    """``log(x) / log(base)`` by NumPy's ufuncs, as ``jax.numpy.log2`` and ``log10``."""

    def log_base(x, out=None):
        return np.divide(np.log(x, out=out), np.log(np.asarray(base, x.dtype)), out=out)

    return log_base


#: NumPy's names of the functions whose names differ (lax's are invarax's).
_NUMPY_NAMES = {"asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "atan": "arctan",
                "asin": "arcsin", "acos": "arccos"}


def _complex(name: str, x: np.ndarray) -> np.ndarray:
    # Complex operands stay on NumPy (docs/numerics.md lists what is not yet invarax's own).
    return _numpy(name)(x)


def elementary(name: str, x, out: np.ndarray | None = None) -> np.ndarray:
    """``name(x)`` elementwise with invarax's kernels: correctly rounded for float32.

    Arguments:
        name: one of ``NAMES`` (``"logistic"`` is ``1 / (1 + exp(-x))``).
        x: a float array (float16 and bfloat16 are computed in float32 and rounded to their
            type; complex arrays use NumPy).
        out: optionally, an array of ``x``'s shape to write the results into (directly if it
            is C-contiguous of ``x``'s dtype, which may be ``x`` itself).

    Returns:
        The results, an array of ``x``'s shape and dtype (``out`` if given).

    Example:
        >>> y = elementary("exp", np.array([0.0, 1.0], np.float32))
        >>> y.tolist(), y.dtype.name
        ([1.0, 2.7182817459106445], 'float32')
    """
    code = _CODE.get(name)
    if code is None:
        raise ValueError(f"elementary: unknown function {name!r}; the functions are {NAMES}")
    x = np.asarray(x)
    if x.dtype.kind == "c":
        result = _complex(name, x)
    elif x.dtype in _NATIVE_DTYPES:
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        # the kernel reads each block of x before writing it: out may be x itself, but not a
        # shifted overlap of it (that would overwrite inputs unread)
        direct = (out is not None and out.dtype == x.dtype and out.shape == x.shape
                  and out.flags.c_contiguous
                  and (out is x or not np.may_share_memory(x, out) or _same_start(x, out)))
        result = out if direct else np.empty(x.shape, x.dtype)
        if x.size < 2 * POOL_PER_THREAD:  # the common case, kept cheap
            _native.elementary(code, x, result)
        else:
            _run(_native.elementary, code, x.reshape(-1), result.reshape(-1))
        if direct or out is None:
            return result
    elif x.dtype.kind == "f":  # float16, bfloat16: one more rounding, the same on every CPU
        result = elementary(name, x.astype(np.float32)).astype(x.dtype)
    else:
        raise TypeError(f"elementary: {name} takes a float array, got {x.dtype.name}; "
                        "convert it first, e.g. x.astype(np.float32)")
    if out is None:
        return result
    out[...] = result
    return out


#: The functions of two operands (``_native.elementary2``'s numbering).
NAMES2 = ("atan2", "pow")


def elementary2(name: str, x, y, out: np.ndarray | None = None) -> np.ndarray:
    """``name(x, y)`` elementwise with invarax's kernels: ``atan2(x, y)`` is the angle of the
    point ``(y, x)``, as ``numpy.arctan2(x, y)``, and ``pow(x, y)`` is ``x ** y`` with C99's
    special values, as ``numpy.power``; float32 results are rounded once from a double-double
    (correctly, on every pair tested; 2^64 pairs are too many to test them all).

    Arguments:
        name: one of ``NAMES2``.
        x, y: float arrays of one dtype, broadcast against each other (complex operands are
            an error; float16 and bfloat16 are computed in float32 and rounded).
        out: optionally, an array of the broadcast shape to write the results into.

    Returns:
        The results, an array of the broadcast shape and the operands' dtype.

    Example:
        >>> elementary2("atan2", np.float32(1.0), np.float32(-1.0)).tolist()
        2.356194496154785
    """
    if name not in NAMES2:
        raise ValueError(f"elementary2: unknown function {name!r}; the functions are {NAMES2}")
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.dtype.kind != "f":
        raise TypeError(f"elementary2: {name} takes two float arrays of one dtype, got "
                        f"{x.dtype.name} and {y.dtype.name}; convert them first")
    if x.dtype not in _NATIVE_DTYPES:  # float16, bfloat16: one more rounding
        result = elementary2(name, x.astype(np.float32), y.astype(np.float32)).astype(x.dtype)
    else:
        # copies only where needed (broadcast or strided operands); keeps 0-d
        x, y = (a if a.flags.c_contiguous else np.array(a, order="C")
                for a in np.broadcast_arrays(x, y))
        # the kernel reads each block of x and y before writing it: out may be one of them,
        # but not a shifted overlap
        direct = (out is not None and out.dtype == x.dtype and out.shape == x.shape
                  and out.flags.c_contiguous and out.flags.writeable
                  and all(not np.may_share_memory(a, out) or _same_start(a, out)
                          for a in (x, y)))
        result = out if direct else np.empty(x.shape, x.dtype)
        _run(_native.elementary2, NAMES2.index(name), x.reshape(-1), y.reshape(-1),
             result.reshape(-1))
        if direct:
            return out
    if out is None:
        return result
    out[...] = result
    return out


_exact = [config.invarax_exact_elementary]


def _on_config(name, value):
    if name == "invarax_exact_elementary":
        _exact[0] = value


config.on_update(_on_config)


def kernel(name: str):
    """The impl of primitive ``name``: ``elementary(name, x)`` as a function of ``x`` when
    ``config.invarax_exact_elementary`` is on, else NumPy's ufunc (the flag is part of
    jit's cache key, so eager and jit always agree).

    Example:
        >>> kernel("sin")(np.zeros(2)).tolist()
        [0.0, 0.0]
    """
    code = _CODE[name]  # a KeyError here is a typo in invarax, not a user error
    fallback = _numpy(name)

    def impl(x, out=None):
        if not _exact[0]:
            return fallback(x, out=out)
        result = elementary(NAMES[code], x, out)
        # a NumPy scalar for a 0-d operand, as NumPy's ufuncs (and so the fallback) return
        return result[()] if out is None and result.ndim == 0 else result

    impl.__name__ = impl.__qualname__ = f"elementary_{name}"
    impl.writes_out = True  # fusion calls it as a ufunc: impl(x, out=buffer)
    impl.entry = ("elementary", code)  # native fusion calls this C loop
    return impl


def kernel2(name: str, fallback):
    """The impl of the two-operand primitive ``name`` (``atan2``, ``pow``): ``elementary2``
    when ``config.invarax_exact_elementary`` is on, else ``fallback(x, y)`` (NumPy's).

    Example:
        >>> kernel2("atan2", np.arctan2)(np.zeros(2), np.ones(2)).tolist()
        [0.0, 0.0]
    """
    if name not in NAMES2:
        raise KeyError(name)  # a typo in invarax, not a user error

    def impl(x, y, out=None):
        if _exact[0] and np.asarray(x).dtype.kind == "f":  # complex: NumPy's
            return elementary2(name, x, y, out)
        if out is None:
            return fallback(x, y)
        out[...] = fallback(x, y)
        return out

    impl.__name__ = impl.__qualname__ = f"elementary_{name}"
    impl.writes_out = True  # fusion calls it as a ufunc: impl(x, y, out=buffer)
    impl.entry = ("elementary2", NAMES2.index(name))
    return impl


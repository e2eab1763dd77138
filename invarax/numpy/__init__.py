"""``invarax.numpy``: the NumPy API with JAX's semantics (``import invarax.numpy as jnp``)."""

import sys as _sys

import numpy as _np

from ..core.array import Array as ndarray
from ._creation import (
    arange, array, asarray, empty, eye, full, full_like, identity, linspace, ones, ones_like,
    zeros, zeros_like,
)
from ._ufuncs import (
    abs, absolute, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, around,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj, conjugate, cos,
    cosh, divide, equal, exp, exp2, expm1, floor, floor_divide, fmod, greater, greater_equal,
    imag, invert, isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply,
    negative, nextafter, not_equal, positive, pow, power, real, reciprocal, remainder, rint,
    round, sign, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc, where,
)
from ._reductions import (
    all, amax, amin, any, argmax, argmin, cumprod, cumsum, max, mean, min, prod, std, sum, var,
)
from ._shape import (
    argsort, broadcast_arrays, broadcast_shapes, broadcast_to, concatenate, expand_dims, flip,
    hstack, moveaxis, pad, ravel, repeat, reshape, roll, sort, split, squeeze, stack, swapaxes,
    take, take_along_axis, tile, transpose, vstack,
)
from ._shape import array_split, atleast_1d, atleast_2d, atleast_3d, column_stack, dstack
from ._ufuncs import divmod
from ._contractions import (
    dot, einsum, inner, matmul, outer, tensordot, trace, vdot,
)
from ._convolve import convolve, correlate
from . import linalg
from . import fft  # noqa: E402
from ..core import dtypes as _dtypes_core
from ._scalar_types import ml_scalar_type as _ml_scalar_type
from ._scalar_types import (
    _ScalarMeta, bool_, complex64, complex128, float16, float32, float64, int8, int16, int32,
    int64, uint8, uint16, uint32, uint64,
)
from ._array_methods import install as _install
from ._io import load, save, savez
from ._dtypes import (
    ComplexWarning, bool, cdouble, character, complex_, complexfloating, csingle, double, dtype,
    e, euler_gamma, finfo, flexible, float_, floating, generic, iinfo, inexact, inf, int_,
    integer, issubdtype, nan, newaxis, number, object_, pi, result_type, signedinteger, single,
    uint, unsignedinteger,
)

# The rest of jax.numpy (docs/numpy_coverage.md lists what is missing).
from ._logic import (  # noqa: E402
    allclose, array_equal, array_equiv, copy, iscomplex, iscomplexobj, isclose, isin, isneginf,
    isposinf, isreal, isrealobj, isscalar, iterable, nan_to_num, ndim, shape, size,
)
from ._math import (  # noqa: E402
    acos, acosh, angle, asin, asinh, atan, atan2, atanh, bitwise_invert, bitwise_left_shift,
    bitwise_right_shift, copysign, deg2rad, degrees, fabs, float_power, fmax, fmin,
    frexp, gcd, heaviside, hypot, lcm, ldexp, left_shift, logaddexp2, modf, rad2deg, radians,
    right_shift, signbit, sinc, spacing,
)
from ._matrix import (  # noqa: E402
    c_, diag, diag_indices, diag_indices_from, diagflat, diagonal, empty_like, fill_diagonal,
    from_dlpack, frombuffer, fromfile, fromfunction, fromiter, fromstring, geomspace,
    index_exp, indices, ix_, logspace, mask_indices, meshgrid, mgrid, ogrid, r_, s_, tri, tril,
    tril_indices, tril_indices_from, triu, triu_indices, triu_indices_from, vander,
)
from ._stats import (  # noqa: E402
    average, corrcoef, count_nonzero, cov, cumulative_prod, cumulative_sum, ptp,
)
from ._nanfuncs import (  # noqa: E402
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd,
    nansum, nanvar,
)
from ._quantiles import (  # noqa: E402
    median, nanmedian, nanpercentile, nanquantile, percentile, quantile,
)
from ._differences import diff, ediff1d, gradient, trapezoid, unwrap  # noqa: E402
from ._binning import (  # noqa: E402
    bincount, digitize, histogram, histogram2d, histogram_bin_edges, histogramdd, interp,
    searchsorted,
)
from ._manip import (  # noqa: E402
    append, apply_along_axis, apply_over_axes, astype, block, concat, cross, delete, dsplit,
    fliplr, flipud, hsplit, insert, kron, matrix_transpose, matvec, permute_dims,
    ravel_multi_index, resize, rollaxis, rot90, unravel_index, unstack, vecdot, vecmat,
    vectorize, vsplit,
)
from ._selection import (  # noqa: E402
    choose, compress, extract, piecewise, place, put, put_along_axis, select,
)
from ._setops import (  # noqa: E402
    argpartition, argwhere, flatnonzero, intersect1d, lexsort, nonzero, partition, setdiff1d,
    setxor1d, sort_complex, trim_zeros, union1d, unique, unique_all, unique_counts,
    unique_inverse, unique_values,
)
from ._polyfit import polyfit, roots  # noqa: E402
from ._misc import (  # noqa: E402
    array_repr, array_str, bartlett, bitwise_count, blackman, can_cast, einsum_path,
    get_printoptions,
    hamming, hanning, i0, isdtype, kaiser, packbits, poly, polyadd, polyder, polydiv, polyint,
    polymul, polysub, polyval, printoptions, promote_types, set_printoptions, unpackbits,
)
from ._ufunc import frompyfunc, install_methods as _ufunc_methods, ufunc  # noqa: E402

# JAX's out_sharding= keyword: the result placed with that sharding.
from ..distributed.constraint import takes_out_sharding as _takes_out_sharding  # noqa: E402

for _name in ("arange", "array", "asarray", "bincount", "broadcast_to", "dot", "einsum",
              "empty", "full", "full_like", "matmul", "ones", "ones_like", "ravel", "repeat",
              "reshape", "tensordot", "zeros", "zeros_like"):
    globals()[_name] = _takes_out_sharding(globals()[_name])
    globals()[_name].__module__ = __name__  # (pickled by reference as this namespace's)
del _name

# Array's methods and the ufuncs' methods are this namespace's own functions: bound once
# the namespace is complete.
_install(_sys.modules[__name__])
_ufunc_methods(_sys.modules[__name__])


def __getattr__(name):
    # ml_dtypes' types (jnp.bfloat16, jnp.float8_e4m3fn, jnp.int4, ...), imported on first use
    return _ml_scalar_type(name)


def __dir__():
    return sorted([*globals(), *_dtypes_core.ML_FLOATS, *_dtypes_core.ML_INTS])

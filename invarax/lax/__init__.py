"""``invarax.lax``: the primitive-level operations that ``invarax.numpy`` lowers to.

lax ops do not promote dtypes or broadcast (0-d scalars excepted); weakly typed
Python scalars take the dtype of the other operand.
"""

from ..ops.elementwise import (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, cbrt, ceil, conj, convert_element_type, cos, cosh, div, eq, exp,
    exp2, expm1, floor, ge, gt, imag, integer_pow, is_finite, le, log, log1p, logistic, lt, max,
    min, mul, ne, neg, nextafter, pow, real, rem, round, rsqrt, select, select_n, shift_left,
    shift_right_logical, sign, sin, sinh, sqrt, square, sub, tan, tanh,
)
from ..ops.shape import (
    broadcast, broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, iota, pad, reshape,
    rev, slice, slice_in_dim, squeeze, transpose,
)
from ..ops.indexing import (
    GatherScatterMode, dynamic_slice, dynamic_update_slice, gather, scatter, scatter_add,
    scatter_max, scatter_min, scatter_mul,
)
from ..ops.reductions import (
    argmax, argmin, cumlogsumexp, cummax, cummin, cumprod, cumsum, reduce_and, reduce_max,
    reduce_min, reduce_or, reduce_prod, reduce_sum,
)
from ..ops.contractions import dot, dot_general
from ..ops.sorting import sort, top_k
from ..ops.associative_scan import associative_scan
from ..ops.elementwise import stop_gradient
from ..ops.collectives import all_gather, axis_index, pmax, pmean, pmin, psum
from ._pvary import pcast, pvary
from ..ops.collectives import size_of_axis as axis_size
from ..ops.redistribution import all_to_all, ppermute, psum_scatter, pswapaxes
from ..distributed.constraint import with_sharding_constraint
from ..ops.special import erf, erf_inv, erfc
from ..ops.gamma import digamma, igamma, igammac, lgamma, random_gamma_grad
from ._control_flow import cond, fori_loop, map, scan, switch, while_loop
from ._checkpointed import checkpointed_while_loop
from . import linalg  # noqa: E402
from ..ops.fft import FftType, fft  # noqa: E402
from ..ops.convolution import (
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, conv_transpose,
    conv_with_general_padding, padtype_to_pads,
)
from ..ops.windowed import reduce_window
from ._slicing import (  # noqa: E402
    dynamic_index_in_dim, dynamic_slice_in_dim, dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim, index_in_dim, index_take, split,
)
from . import _primitives  # noqa: E402
from ._misc import Precision, broadcast_shapes  # noqa: E402
from ._more import (  # noqa: E402
    batch_matmul, broadcast_to_rank, clamp, clz, collapse, full, full_like,
    optimization_barrier, population_count, reciprocal, shift_right_arithmetic, sort_key_val,
)
from ..ops.bitcast import bitcast_convert_type  # noqa: E402
from ..ops.bessel import i0e as bessel_i0e, i1e as bessel_i1e  # noqa: E402
from ..ops.gamma import betainc  # noqa: E402


def __getattr__(name):  # the primitive objects: lax.add_p, lax.dot_general_p, ...
    return _primitives.primitive_named(__name__, name)

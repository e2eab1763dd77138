"""optax's ``optax.tree``: the tree utilities under their short names (``add``, ``vdot``, ...)."""

from ._tree_math import (
    tree_add as add,
)
from ._tree_math import (
    tree_add_scale as add_scale,
)
from ._tree_math import (
    tree_allclose as allclose,
)
from ._tree_math import (
    tree_batch_shape as batch_shape,
)
from ._tree_math import (
    tree_bias_correction as bias_correction,
)
from ._tree_math import (
    tree_cast as cast,
)
from ._tree_math import (
    tree_cast_like as cast_like,
)
from ._tree_math import (
    tree_clip as clip,
)
from ._tree_math import (
    tree_conj as conj,
)
from ._tree_math import (
    tree_div as div,
)
from ._tree_math import (
    tree_dtype as dtype,
)
from ._tree_math import (
    tree_full_like as full_like,
)
from ._tree_math import (
    tree_max as max,  # noqa: A004 (optax's name)
)
from ._tree_math import (
    tree_min as min,  # noqa: A004
)
from ._tree_math import (
    tree_mul as mul,
)
from ._tree_math import (
    tree_norm as norm,
)
from ._tree_math import (
    tree_ones_like as ones_like,
)
from ._tree_math import (
    tree_real as real,
)
from ._tree_math import (
    tree_scale as scale,
)
from ._tree_math import (
    tree_size as size,
)
from ._tree_math import (
    tree_sub as sub,
)
from ._tree_math import (
    tree_sum as sum,  # noqa: A004
)
from ._tree_math import (
    tree_update_infinity_moment as update_infinity_moment,
)
from ._tree_math import (
    tree_update_moment as update_moment,
)
from ._tree_math import (
    tree_update_moment_per_elem_norm as update_moment_per_elem_norm,
)
from ._tree_math import (
    tree_vdot as vdot,
)
from ._tree_math import (
    tree_where as where,
)
from ._tree_math import (
    tree_zeros_like as zeros_like,
)

__all__ = [
    "add", "add_scale", "allclose", "batch_shape", "bias_correction", "cast", "cast_like",
    "clip", "conj", "div", "dtype", "full_like", "max", "min", "mul", "norm", "ones_like",
    "real", "scale", "size", "sub", "sum", "update_infinity_moment", "update_moment",
    "update_moment_per_elem_norm", "vdot", "where", "zeros_like",
]

"""optax's ``optax.tree_utils``: the tree utilities under their ``tree_`` names."""

from ._noise import tree_random_like, tree_split_key_like
from ._state_utils import tree_map_params
from ._tree_get import (
    NamedTupleKey,
    tree_get,
    tree_get_all_with_path,
    tree_set,
    tree_unwrap_random_key_data,
)
from ._tree_math import (
    tree_add,
    tree_add_scale,
    tree_allclose,
    tree_batch_shape,
    tree_bias_correction,
    tree_cast,
    tree_cast_like,
    tree_clip,
    tree_conj,
    tree_div,
    tree_dtype,
    tree_full_like,
    tree_l1_norm,
    tree_l2_norm,
    tree_linf_norm,
    tree_max,
    tree_min,
    tree_mul,
    tree_norm,
    tree_ones_like,
    tree_real,
    tree_scale,
    tree_size,
    tree_sub,
    tree_sum,
    tree_update_infinity_moment,
    tree_update_moment,
    tree_update_moment_per_elem_norm,
    tree_vdot,
    tree_where,
    tree_zeros_like,
)

tree_scalar_mul = tree_scale
tree_add_scalar_mul = tree_add_scale

__all__ = [
    "NamedTupleKey", "tree_get", "tree_get_all_with_path", "tree_set",
    "tree_unwrap_random_key_data",
    "tree_add", "tree_add_scalar_mul", "tree_add_scale", "tree_allclose", "tree_batch_shape",
    "tree_bias_correction", "tree_cast", "tree_cast_like", "tree_clip", "tree_conj", "tree_div",
    "tree_dtype", "tree_full_like", "tree_l1_norm", "tree_l2_norm", "tree_linf_norm",
    "tree_map_params", "tree_max", "tree_min", "tree_mul", "tree_norm", "tree_ones_like",
    "tree_random_like", "tree_real", "tree_scalar_mul", "tree_scale", "tree_size",
    "tree_split_key_like", "tree_sub", "tree_sum", "tree_update_infinity_moment",
    "tree_update_moment", "tree_update_moment_per_elem_norm", "tree_vdot", "tree_where",
    "tree_zeros_like",
]

"""optax's ``optax.tree``: the tree utilities under their short names (``add``, ``vdot``, ...)."""

from . import _noise, _state_utils, _tree_get, _tree_math

add = _tree_math.tree_add
add_scale = _tree_math.tree_add_scale
allclose = _tree_math.tree_allclose
batch_shape = _tree_math.tree_batch_shape
bias_correction = _tree_math.tree_bias_correction
cast = _tree_math.tree_cast
cast_like = _tree_math.tree_cast_like
clip = _tree_math.tree_clip
conj = _tree_math.tree_conj
div = _tree_math.tree_div
dtype = _tree_math.tree_dtype
full_like = _tree_math.tree_full_like
max = _tree_math.tree_max
min = _tree_math.tree_min
mul = _tree_math.tree_mul
norm = _tree_math.tree_norm
ones_like = _tree_math.tree_ones_like
real = _tree_math.tree_real
scale = _tree_math.tree_scale
size = _tree_math.tree_size
sub = _tree_math.tree_sub
sum = _tree_math.tree_sum
update_infinity_moment = _tree_math.tree_update_infinity_moment
update_moment = _tree_math.tree_update_moment
update_moment_per_elem_norm = _tree_math.tree_update_moment_per_elem_norm
vdot = _tree_math.tree_vdot
where = _tree_math.tree_where
zeros_like = _tree_math.tree_zeros_like
map_params = _state_utils.tree_map_params
random_like = _noise.tree_random_like
split_key_like = _noise.tree_split_key_like
get = _tree_get.tree_get
get_all_with_path = _tree_get.tree_get_all_with_path
set = _tree_get.tree_set  # noqa: A001  (optax's name)
unwrap_random_key_data = _tree_get.tree_unwrap_random_key_data

__all__ = [
    "add", "add_scale", "allclose", "batch_shape", "bias_correction", "cast", "cast_like", "clip",
    "conj", "div", "dtype", "full_like", "get", "get_all_with_path", "map_params", "max",
    "min", "mul", "norm", "ones_like",
    "random_like", "real", "scale", "set", "size", "split_key_like", "sub", "sum",
    "unwrap_random_key_data", "update_infinity_moment", "update_moment",
    "update_moment_per_elem_norm", "vdot", "where", "zeros_like",
]

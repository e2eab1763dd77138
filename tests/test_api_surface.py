"""The public names the foundation promises exist, and port from JAX."""

import pytest

import invarax
import invarax.numpy as jnp
from invarax import lax, tree_util
from invarax.scipy.special import logsumexp  # noqa: F401

JNP = """
array asarray zeros ones full empty zeros_like ones_like full_like arange linspace eye identity
add subtract multiply divide true_divide floor_divide mod power negative abs sign exp exp2 expm1
log log1p log2 log10 sqrt square reciprocal sin cos tan arcsin arccos arctan arctan2 sinh cosh
tanh arcsinh arccosh arctanh floor ceil round clip maximum minimum where logaddexp isnan isinf
isfinite equal not_equal less less_equal greater greater_equal logical_and logical_or
logical_not logical_xor
sum mean prod max min argmax argmin var std all any cumsum cumprod
reshape ravel transpose swapaxes moveaxis expand_dims squeeze broadcast_to broadcast_arrays
concatenate stack hstack vstack split tile repeat flip roll pad take take_along_axis sort argsort
dot matmul vdot inner outer tensordot einsum trace
float32 float64 int32 int64 bool_ uint8 float16
""".split()

LAX = """
add sub mul div neg exp log sin cos tanh max min pow dot_general reduce_sum reduce_max
reduce_min broadcast_in_dim reshape transpose slice dynamic_slice dynamic_update_slice gather
scatter convert_element_type select stop_gradient
""".split()

TREE = """
tree_map tree_leaves tree_structure tree_flatten tree_unflatten register_pytree_node
register_pytree_node_class register_dataclass
""".split()

TOP = "jit make_jaxpr config tree_util lax numpy block_until_ready Array".split()


@pytest.mark.parametrize(
    "module, names",
    [(jnp, JNP), (lax, LAX), (tree_util, TREE), (invarax, TOP), (jnp.linalg, ["norm"])],
    ids=["numpy", "lax", "tree_util", "invarax", "linalg"],
)
def test_names_exist(module, names):
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, missing


def test_jnp_names_exist_in_jax_too():
    jax = pytest.importorskip("jax")
    missing = [n for n in JNP if not hasattr(jax.numpy, n)]
    assert not missing


def test_array_methods_exist():
    methods = """reshape transpose astype sum mean max min argmax argmin prod squeeze ravel
    flatten item tolist T at block_until_ready shape dtype ndim size""".split()
    x = jnp.ones(3)
    assert [m for m in methods if not hasattr(x, m)] == []

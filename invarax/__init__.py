"""invarax: composable function transformations whose results never change your numbers.

``import invarax as jax`` and ``import invarax.numpy as jnp`` port JAX code;
``import invarax as eqx`` ports Equinox code. This file only re-exports.
"""

from . import numpy, lax, tree_util, scipy, random  # noqa: F401  (numpy installs Array's methods)
from . import distributed, nn, optim, serialise, sharding, tree, typing, debug
from . import ad_checkpoint, checkpoint_policies, custom_derivatives
from . import dtypes, errors, experimental, extend, flatten_util
from .dtypes import float0
from .compiler.jit import RetraceWarning
from .core.array import Array
from .core.aval import ShapeDtypeStruct
from .core.config import config, disable_jit, numpy_dtype_promotion, numpy_rank_promotion
from .core.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from .core.eval import eval_jaxpr
from .core.refs import Ref, empty_ref, free_ref, freeze, new_ref
from .core.pytree import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten
from . import backends as _backends  # noqa: F401  (registers the CUDA backend's rules)
from .backends import cuda as _cuda  # noqa: F401
from .distributed.devices import Device  # noqa: E402
from .distributed.devices import (
    block_until_ready,
    default_device,
    device_count,
    device_get,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from .distributed.mesh import make_mesh, set_mesh
from .distributed.shardings import NamedSharding
from .distributed.shardings import PartitionSpec as P
from .distributed.placement import (
    device_put,
    device_put_replicated,
    device_put_sharded,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from .module import (
    AbstractClassVar,
    AbstractVar,
    BoundMethod,
    Enumeration,
    EquinoxRuntimeError,
    EquinoxTracetimeError,
    Module,
    Partial,
    branched_error_if,
    combine,
    error_if,
    field,
    filter,
    filter_checkpoint,
    filter_closure_convert,
    filter_custom_jvp,
    filter_custom_vjp,
    filter_eval_shape,
    filter_grad,
    filter_hessian,
    filter_jacfwd,
    filter_jacrev,
    filter_jit,
    filter_jvp,
    filter_make_jaxpr,
    filter_pmap,
    filter_pure_callback,
    filter_shard,
    filter_value_and_grad,
    filter_vjp,
    filter_vmap,
    if_array,
    is_array,
    is_array_like,
    is_inexact_array,
    is_inexact_array_like,
    module_update_wrapper,
    partition,
    static_field,
    tree_at,
    tree_check,
    tree_equal,
    tree_flatten_one_level,
    tree_inference,
    tree_pformat,
    tree_pprint,
)
from .optim import apply_updates
from .serialise import (
    default_deserialise_filter_spec,
    default_serialise_filter_spec,
    tree_deserialise_leaves,
    tree_serialise_leaves,
)
from .transforms import (
    checkpoint,
    clear_caches,
    custom_jvp,
    custom_vjp,
    default_backend,
    effects_barrier,
    ensure_compile_time_eval,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    linear_transpose,
    linearize,
    log_compiles,
    make_jaxpr,
    named_call,
    named_scope,
    pmap,
    pure_callback,
    remat,
    shard_map,
    typeof,
    value_and_grad,
    vjp,
    vmap,
)
from .transforms import jacrev as jacobian  # JAX's alias of jacrev
from ._verify import verify

__version__ = "0.1.0"

__all__ = [
    # JAX
    "Array", "ConcretizationTypeError", "Device", "Ref", "RetraceWarning", "ShapeDtypeStruct",
    "NamedSharding", "P", "TracerArrayConversionError", "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError", "ad_checkpoint", "block_until_ready", "checkpoint",
    "checkpoint_policies", "clear_caches", "config", "custom_derivatives", "custom_jvp",
    "custom_vjp", "debug", "default_backend", "default_device", "device_count", "device_get",
    "device_put", "device_put_replicated", "device_put_sharded", "devices", "disable_jit",
    "distributed",
    "dtypes", "effects_barrier", "empty_ref", "ensure_compile_time_eval", "errors",
    "experimental", "free_ref", "freeze", "new_ref",
    "extend", "flatten_util",
    "float0",
    "eval_jaxpr", "eval_shape", "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jit", "jvp",
    "lax", "linear_transpose", "linearize", "local_device_count", "local_devices",
    "log_compiles", "make_array_from_callback", "make_array_from_process_local_data",
    "make_array_from_single_device_arrays", "make_jaxpr", "make_mesh", "named_call",
    "named_scope", "numpy", "numpy_dtype_promotion", "numpy_rank_promotion", "pmap",
    "process_count", "process_index", "pure_callback",
    "random", "remat", "scipy", "set_mesh", "shard_map", "sharding", "tree",
    "tree_flatten", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten", "tree_util",
    "typeof", "typing", "value_and_grad", "verify", "vjp", "vmap",
    # Equinox and optax
    "AbstractClassVar", "AbstractVar", "BoundMethod", "Enumeration", "EquinoxRuntimeError",
    "EquinoxTracetimeError", "Module", "Partial", "apply_updates", "branched_error_if",
    "combine", "default_deserialise_filter_spec", "default_serialise_filter_spec", "error_if",
    "field", "filter", "filter_checkpoint", "filter_closure_convert", "filter_custom_jvp",
    "filter_custom_vjp", "filter_eval_shape", "filter_grad", "filter_hessian", "filter_jacfwd",
    "filter_jacrev", "filter_jit", "filter_jvp", "filter_make_jaxpr", "filter_pmap",
    "filter_pure_callback", "filter_shard", "filter_value_and_grad", "filter_vjp",
    "filter_vmap", "if_array", "is_array", "is_array_like", "is_inexact_array",
    "is_inexact_array_like", "module_update_wrapper", "nn", "optim", "partition", "serialise",
    "static_field", "tree_at", "tree_check", "tree_deserialise_leaves", "tree_equal",
    "tree_flatten_one_level", "tree_inference", "tree_pformat", "tree_pprint",
    "tree_serialise_leaves",
]

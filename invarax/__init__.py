"""invarax: composable function transformations whose results never change your numbers.

``import invarax as jax`` and ``import invarax.numpy as jnp`` port JAX code.
"""

from . import numpy, lax, tree_util, scipy  # noqa: F401  (numpy installs Array's methods)
from . import random  # noqa: F401
from ._autodiff import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from ._checkpoint import checkpoint, remat
from ._custom_derivatives import custom_jvp, custom_vjp
from ._vmap import vmap
from ._devices import (
    default_device,
    device_count,
    device_put,
    device_put_replicated,
    device_put_sharded,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from ._pmap import pmap
from . import distributed  # noqa: F401
from .compiler.jit import RetraceWarning, jit
from .core.array import Array
from .core.config import config
from .core.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from .core.eval import eval_jaxpr
from .core.pytree import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten
from .interpreters.staging import make_jaxpr
from .module import (
    BoundMethod,
    Module,
    combine,
    field,
    filter,
    filter_grad,
    filter_jit,
    filter_pmap,
    filter_shard,
    filter_value_and_grad,
    filter_vmap,
    if_array,
    is_array,
    is_array_like,
    is_inexact_array,
    partition,
    tree_at,
)
from .module import is_inexact_array_like, tree_check, tree_flatten_one_level, tree_pformat
from .module import (filter_checkpoint, filter_custom_jvp, filter_custom_vjp, filter_hessian,
                     filter_jacfwd, filter_jacrev, filter_jvp, filter_vjp)
from .module import (Enumeration, EquinoxRuntimeError, EquinoxTracetimeError, branched_error_if,
                     error_if)
from .module import filter_closure_convert, filter_eval_shape, filter_make_jaxpr
from .module import Partial, tree_inference, tree_pprint
from . import nn, optim  # noqa: E402  (they build on the module layer above)
from . import serialise
from .serialise import (
    default_deserialise_filter_spec,
    default_serialise_filter_spec,
    tree_deserialise_leaves,
    tree_serialise_leaves,
)
from .optim import apply_updates
from . import tree, typing  # noqa: E402
from ._shapes import ShapeDtypeStruct, default_backend, eval_shape, typeof  # noqa: E402
from . import debug  # noqa: E402
from ._callback import pure_callback  # noqa: E402
from . import ad_checkpoint, checkpoint_policies  # noqa: E402

__version__ = "0.1.0"


def block_until_ready(x):
    """Wait for every array in the pytree ``x`` and return ``x`` (CPU results are always ready)."""
    return tree_map(lambda leaf: leaf.block_until_ready() if isinstance(leaf, Array) else leaf, x)


def device_get(x):
    """The pytree ``x`` with arrays converted to NumPy arrays."""
    import numpy as _np

    return tree_map(lambda leaf: _np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


__all__ = [
    "Array", "ConcretizationTypeError", "TracerArrayConversionError",
    "TracerBoolConversionError", "TracerIntegerConversionError", "UnexpectedTracerError",
    "block_until_ready", "checkpoint", "custom_jvp", "custom_vjp", "remat",
    "grad", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "value_and_grad", "vjp",
    "config", "device_get", "eval_jaxpr",
    "jit", "lax", "make_jaxpr", "vmap",
    "numpy", "scipy", "tree_flatten", "tree_leaves", "tree_map", "tree_structure",
    "tree_unflatten", "tree_util",
    "BoundMethod", "Module", "combine", "field", "filter", "filter_grad", "filter_jit",
    "filter_value_and_grad", "filter_vmap", "if_array", "is_array",
    "is_array_like", "is_inexact_array", "partition", "tree_at",
    "apply_updates", "nn", "optim", "RetraceWarning",
    "serialise", "default_deserialise_filter_spec", "default_serialise_filter_spec",
    "tree_deserialise_leaves", "tree_serialise_leaves",
    "tree", "typing", "ShapeDtypeStruct", "default_backend", "eval_shape", "typeof",
    "debug", "pure_callback", "ad_checkpoint", "checkpoint_policies",
    "is_inexact_array_like", "tree_check", "tree_flatten_one_level", "tree_pformat",
    "filter_checkpoint", "filter_custom_jvp", "filter_custom_vjp", "filter_hessian",
    "filter_jacfwd", "filter_jacrev", "filter_jvp", "filter_vjp",
    "Enumeration", "EquinoxRuntimeError", "EquinoxTracetimeError", "branched_error_if",
    "error_if", "filter_closure_convert", "filter_eval_shape", "filter_make_jaxpr",
    "default_device", "device_count", "device_put", "device_put_replicated",
    "device_put_sharded", "devices", "distributed", "local_device_count", "local_devices",
    "pmap", "process_count", "process_index", "filter_pmap", "filter_shard",
    "tree_inference", "tree_pprint", "Partial",
]

from ._autodiff import jacrev as jacobian  # noqa: E402  (JAX's alias of jacrev)

__all__ += ["jacobian"]

from .module import AbstractClassVar, AbstractVar, static_field, tree_equal  # noqa: E402

__all__ += ["AbstractClassVar", "AbstractVar", "static_field", "tree_equal"]

from .module import filter_pure_callback  # noqa: E402

__all__ += ["filter_pure_callback"]

from .module import module_update_wrapper  # noqa: E402
from ._caches import clear_caches  # noqa: E402

__all__ += ["clear_caches", "module_update_wrapper"]

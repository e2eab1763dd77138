"""invarax: composable function transformations whose results never change your numbers.

``import invarax as jax`` and ``import invarax.numpy as jnp`` port JAX code.
"""

from . import numpy, lax, tree_util, scipy  # noqa: F401  (numpy installs Array's methods)
from . import random  # noqa: F401
from ._autodiff import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from ._checkpoint import checkpoint, remat
from ._custom_derivatives import custom_jvp, custom_vjp
from ._vmap import vmap
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
    filter_value_and_grad,
    filter_vmap,
    if_array,
    is_array,
    is_array_like,
    is_inexact_array,
    partition,
    tree_at,
)
from . import nn, optim  # noqa: E402  (they build on the module layer above)
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
    "tree", "typing", "ShapeDtypeStruct", "default_backend", "eval_shape", "typeof",
    "debug", "pure_callback", "ad_checkpoint", "checkpoint_policies",
]

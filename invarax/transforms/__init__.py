"""The user-facing transformations: differentiation, batching, devices, checkpointing,
custom derivatives, callbacks, and staging without running (``make_jaxpr``,
``eval_shape``). Each lives in its own module; this package only re-exports them."""

from ..distributed.devices import default_backend
from ._autodiff import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from ._caches import clear_caches
from ._callbacks import effects_barrier, pure_callback
from ._checkpoint import checkpoint, remat
from ._custom_derivatives import custom_jvp, custom_vjp
from ._eval_context import ensure_compile_time_eval
from ._jit import jit
from ._make_jaxpr import make_jaxpr
from ._names import log_compiles, named_call, named_scope
from ._pmap import pmap
from ._shapes import eval_shape, typeof
from ._shard_map import shard_map
from ._transpose import linear_transpose
from ._vmap import vmap

__all__ = [
    "checkpoint", "clear_caches", "custom_jvp", "custom_vjp", "default_backend",
    "effects_barrier", "ensure_compile_time_eval", "eval_shape", "grad", "hessian", "jacfwd",
    "jacrev", "jit", "jvp", "linear_transpose", "linearize", "log_compiles", "make_jaxpr",
    "named_call",
    "named_scope", "pmap", "pure_callback", "remat", "shard_map", "typeof", "value_and_grad",
    "vjp", "vmap",
]

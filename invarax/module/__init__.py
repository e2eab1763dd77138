"""Equinox's module layer: ``Module``, ``field``, filters, ``tree_at`` and filtered transforms."""

from ._abstract import AbstractClassVar, AbstractVar
from ._ad import (
    filter_checkpoint,
    filter_hessian,
    filter_jacfwd,
    filter_jacrev,
    filter_jvp,
    filter_vjp,
)
from ._callback import filter_pure_callback
from ._custom import filter_custom_jvp, filter_custom_vjp
from ._enum import Enumeration, EnumerationItem
from ._errors import EquinoxRuntimeError, EquinoxTracetimeError, branched_error_if, error_if
from ._filters import (
    combine,
    filter,
    if_array,
    is_array,
    is_array_like,
    is_inexact_array,
    is_inexact_array_like,
    partition,
)
from ._make_jaxpr import filter_closure_convert, filter_eval_shape, filter_make_jaxpr
from ._module import BoundMethod, Module, field, static_field
from ._options import filter_grad, filter_jit, filter_value_and_grad
from ._partial import Partial
from ._pmap import filter_pmap, filter_shard
from ._tree import tree_check, tree_flatten_one_level, tree_inference, tree_pformat, tree_pprint
from ._tree_at import tree_at
from ._tree_equal import tree_equal
from ._vmap import filter_vmap
from ._wrappers import module_update_wrapper

__all__ = [
    "BoundMethod", "Module", "combine", "field", "filter", "filter_grad", "filter_jit",
    "filter_pmap", "filter_shard", "filter_value_and_grad", "filter_vmap", "if_array",
    "is_array", "is_array_like",
    "is_inexact_array", "partition", "tree_at",
    "is_inexact_array_like", "tree_check", "tree_flatten_one_level", "tree_pformat",
    "filter_checkpoint", "filter_custom_jvp", "filter_custom_vjp", "filter_hessian",
    "filter_jacfwd", "filter_jacrev", "filter_jvp", "filter_vjp",
    "Enumeration", "EnumerationItem", "EquinoxRuntimeError", "EquinoxTracetimeError",
    "branched_error_if", "error_if",
    "filter_closure_convert", "filter_eval_shape", "filter_make_jaxpr",
    "tree_inference", "tree_pprint", "Partial",
]
__all__ += ["AbstractClassVar", "AbstractVar", "static_field", "tree_equal"]
__all__ += ["filter_pure_callback"]
__all__ += ["module_update_wrapper"]

"""``invarax.extend.core``: JAX's ``jax.extend.core`` (and ``jax.core``), the IR and the
primitive machinery that libraries use in public code.

The IR classes are invarax's own (``Jaxpr``, ``ClosedJaxpr``, ``JaxprEqn``, ``Var``,
``Literal``, ``ShapedArray``, ``Tracer``, ``Trace``), so ``isinstance`` checks on what
``make_jaxpr`` returns work. ``Primitive`` is JAX's contract for a library's own primitive:
its impl gets arrays and may call ``jnp`` (it runs eagerly whatever the caller's trace), its
abstract eval gets ``ShapedArray`` s and may return ``ShapeDtypeStruct`` s, and its rules go
in ``invarax.extend.interpreters.ad.primitive_jvps`` / ``primitive_transposes`` and
``batching.primitive_batchers``, the tables invarax's transformations read.

Example:
    >>> import invarax, invarax.numpy as jnp
    >>> from invarax.extend import core
    >>> from invarax.extend.interpreters import ad, batching
    >>> cube_p = core.Primitive("cube")
    >>> _ = cube_p.def_impl(lambda x: x * x * x)
    >>> _ = cube_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
    >>> ad.defjvp(cube_p, lambda g, x: 3 * x * x * g)
    >>> batching.primitive_batchers[cube_p] = lambda xs, dims: (cube_p.bind(*xs), dims[0])
    >>> invarax.jit(invarax.grad(cube_p.bind))(2.0)
    Array(12., dtype=float32)
"""

from __future__ import annotations

import abc

import numpy as np

from ...core import trace as _trace
from ...core.array import ArrayImpl, to_array
from ...core.aval import ShapedArray, ShapeDtypeStruct
from ...core.effects import EFFECTFUL
from ...core.errors import ConcretizationTypeError, InconclusiveDimensionOperation, JaxprTypeError
from ...core.eval import eval_jaxpr as _eval_jaxpr
from ...core.ir import ClosedJaxpr, Jaxpr, Literal, Var, typecheck
from ...core.ir import Eqn as JaxprEqn
from ...core.trace import EVAL_TRACE, Trace, Tracer, set_current_trace
from ...transforms import ensure_compile_time_eval
from . import primitives  # noqa: F401  (jax.extend.core.primitives)

eval_context = ensure_compile_time_eval
ParamDict = dict
no_effects = frozenset()


class AbstractValue(abc.ABC):  # noqa: B024 (an abstract base for isinstance, as JAX's)
    """Base class of abstract values (``ShapedArray`` is one)."""


AbstractValue.register(ShapedArray)


class Effect:
    """Base class of JAX's effect types (a primitive's effectful abstract eval returns them)."""


Effects = frozenset


class Primitive(_trace.Primitive):
    """A library's own primitive, with JAX's contract (see the module docstring).

    Arguments:
        name: its name in printed jaxprs. Unlike invarax's own primitives, names may repeat.
    """

    call_primitive = False
    map_primitive = False

    def __init__(self, name: str):
        self.name = name
        self.multiple_results = False
        self.impl = None
        self.abstract_eval = None

    def bind(self, *args, **params):
        """Apply the primitive to ``args`` (arrays, tracers, NumPy arrays or scalars)."""
        return super().bind(*(to_array(a, f"an argument of {self.name}") for a in args),
                            **params)

    def def_impl(self, impl):
        """Compute the primitive: ``impl(*arrays, **params)`` returns an array (a list if
        ``multiple_results``)."""
        self.impl = lambda *values, **params: _eager_impl(self, impl, values, params)
        return impl

    def def_abstract_eval(self, rule):
        """The output's ``ShapedArray`` (or ``ShapeDtypeStruct``; a list if
        ``multiple_results``) from the inputs' ``ShapedArray`` s."""
        self.abstract_eval = lambda *avals, **params: _avals(self, rule(*avals, **params))
        return rule

    def def_effectful_abstract_eval(self, rule):
        """As ``def_abstract_eval`` for a rule returning ``(avals, effects)``; the primitive is
        effectful (never removed, merged or folded by ``jit``)."""
        EFFECTFUL.add(self)
        self.abstract_eval = lambda *avals, **params: _avals(self, rule(*avals, **params)[0])
        return rule


def _eager_impl(prim, impl, values, params):
    with set_current_trace(EVAL_TRACE):
        out = impl(*(ArrayImpl(np.asarray(v)) for v in values), **params)
    return [np.asarray(o) for o in out] if prim.multiple_results else np.asarray(out)


def _aval(x) -> ShapedArray:
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    raise TypeError(f"an abstract eval rule returned {x!r}; return a ShapedArray "
                    "(jax.core.ShapedArray(shape, dtype)) or a jax.ShapeDtypeStruct")


def _avals(prim, out):
    return [_aval(o) for o in out] if prim.multiple_results else _aval(out)


def get_aval(x) -> ShapedArray:
    """The abstract value of ``x`` (an array, a tracer, a NumPy array or a Python scalar)."""
    return to_array(x, "get_aval's argument").aval


def valid_jaxtype(x) -> bool:
    """Whether ``x`` can be an argument of a transformed function (an array or scalar)."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def concrete_or_error(force, val, context: str = ""):
    """``force(val)`` (``val`` if ``force`` is None) if ``val`` is concrete; else a
    ``ConcretizationTypeError`` that says ``context``."""
    if isinstance(val, Tracer):
        value = val.to_concrete_value()
        if value is None:
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where concrete value is expected: "
                f"{val!r}. {context}")
        val = value
    return val if force is None else force(val)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None,
                  ctx=None) -> JaxprEqn:
    """An equation ``outvars = primitive[params] invars`` (effects and source info unused)."""
    return JaxprEqn(primitive, invars, outvars, params)


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, propagate_source_info: bool = True) -> list:
    """Run ``jaxpr`` on ``consts`` and ``args`` (binding each equation, so it can be traced)."""
    return _eval_jaxpr(jaxpr, consts, *args)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr):
    """A function running ``closed_jaxpr``: it returns the list of outputs."""
    return lambda *args: eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Check that ``jaxpr`` is well formed and well typed (raises ``JaxprTypeError``)."""
    typecheck(jaxpr)


def jaxprs_in_params(params) -> list:
    """The jaxprs among the values of ``params`` (a closed jaxpr's inner one), tuples included."""
    found = []
    for value in params.values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, ClosedJaxpr):
                found.append(v.jaxpr)
            elif isinstance(v, Jaxpr):
                found.append(v)
    return found


def subjaxprs(jaxpr: Jaxpr):
    """The jaxprs in the parameters of ``jaxpr``'s equations (one level down)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def max_dim(d1, d2):
    """The larger of two dimensions."""
    return max(d1, d2)


def min_dim(d1, d2):
    """The smaller of two dimensions."""
    return min(d1, d2)


__all__ = [
    "AbstractValue", "ClosedJaxpr", "Effect", "Effects", "InconclusiveDimensionOperation",
    "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal", "ParamDict", "Primitive", "ShapedArray",
    "Trace", "Tracer", "Var", "check_jaxpr", "concrete_or_error", "ensure_compile_time_eval",
    "eval_context", "eval_jaxpr", "get_aval", "jaxpr_as_fun", "jaxprs_in_params", "max_dim",
    "min_dim", "new_jaxpr_eqn", "no_effects", "subjaxprs", "valid_jaxtype",
]

"""Elementwise transcendental functions: exp, log, the trigonometric and hyperbolic
functions and their inverses, roots, ``pow`` and ``atan2``.

Impls are invarax's own kernels (``invarax.kernels.elementary``), whose bits are the same
on every CPU (N6), or NumPy ufuncs (``sqrt``); a value's bits depend only on its inputs.
Each primitive's derivative (a function ``(t, out, x)`` of lax ops; ``out`` is reused where
it saves work) sits just under it.
"""

from __future__ import annotations

import numpy as np

from ..core.aval import ShapedArray
from ..interpreters.ad import defjvp
from ..kernels.elementary import LOG2, LOG10
from ..kernels.elementary import kernel as _elementary
from ..kernels.elementary import kernel2 as _elementary2
from ._util import FLOAT, check_kinds
from ._vectorized import (
    _binary,
    _broadcast_like,
    _const,
    _unary,
    _vectorized_batch_rule,
    defvectorized,
)
from .arithmetic import add, div, integer_pow, mul, neg, sub
from .logical import eq, select


def _defunary(name, derivative, impl=None, kinds=FLOAT, **lowering):
    """A one-operand function of ``kernels.elementary`` (or ``impl``) and its derivative."""
    prim = defvectorized(name, _elementary(name) if impl is None else impl, kinds, **lowering)
    defjvp(prim, derivative)
    _vectorized_batch_rule(prim)
    return prim


exp_p = _defunary("exp", lambda t, y, x: mul(t, y))
exp2_p = _defunary("exp2", lambda t, y, x: mul(t, mul(y, _const(y, LOG2))))
log_p = _defunary("log", lambda t, y, x: div(t, x))
expm1_p = _defunary("expm1", lambda t, y, x: mul(t, add(y, _const(y, 1))))
log1p_p = _defunary("log1p", lambda t, y, x: div(t, add(x, _const(x, 1))))
tanh_p = _defunary("tanh", lambda t, y, x: mul(t, sub(_const(y, 1), mul(y, y))))
logistic_p = _defunary("logistic", lambda t, y, x: mul(t, mul(y, sub(_const(y, 1), y))))
sin_p = _defunary("sin", lambda t, y, x: mul(t, cos(x)))
cos_p = _defunary("cos", lambda t, y, x: neg(mul(t, sin(x))))
tan_p = _defunary("tan", lambda t, y, x: mul(t, add(_const(y, 1), mul(y, y))))
asin_p = _defunary("asin", lambda t, y, x: mul(t, rsqrt(sub(_const(x, 1), mul(x, x)))))
acos_p = _defunary("acos", lambda t, y, x: neg(mul(t, rsqrt(sub(_const(x, 1), mul(x, x))))))
atan_p = _defunary("atan", lambda t, y, x: div(t, add(_const(x, 1), mul(x, x))))
sinh_p = _defunary("sinh", lambda t, y, x: mul(t, cosh(x)))
cosh_p = _defunary("cosh", lambda t, y, x: mul(t, sinh(x)))
asinh_p = _defunary("asinh", lambda t, y, x: mul(t, rsqrt(add(mul(x, x), _const(x, 1)))))
acosh_p = _defunary(
    "acosh", lambda t, y, x: mul(t, rsqrt(mul(sub(x, _const(x, 1)), add(x, _const(x, 1))))))
atanh_p = _defunary("atanh", lambda t, y, x: div(t, sub(_const(x, 1), mul(x, x))))
sqrt_p = _defunary("sqrt", lambda t, y, x: div(t, mul(_const(y, 2), y)), np.sqrt,
                   c=("quiet", "sqrt"))


def _rsqrt_impl(x):
    return np.ones((), x.dtype) / np.sqrt(x)


rsqrt_p = _defunary("rsqrt", lambda t, y, x: mul(t, mul(_const(y, -0.5), div(y, x))),
                    _rsqrt_impl, c=("rsqrt",))
cbrt_p = _defunary("cbrt", lambda t, y, x: mul(t, mul(_const(y, 1 / 3), integer_pow(y, -2))),
                   kinds="f")


# jnp.log2 and jnp.log10: JAX's log(x) / log(base), which their flag-off impl keeps, so
# never weakly typed (JAX divides by a strong ``log(base)``); JAX's derivative
# (t / x) / log(base).
def _strong_abstract_eval(name):
    def abstract_eval(x):
        check_kinds(name, x, FLOAT)
        return ShapedArray(x.shape, x.dtype, False)

    return abstract_eval


log2_p = _defunary("log2", lambda t, y, x: div(div(t, x), _const(x, LOG2)))
log2_p.def_abstract_eval(_strong_abstract_eval("log2"))
log10_p = _defunary("log10", lambda t, y, x: div(div(t, x), _const(x, LOG10)))
log10_p.def_abstract_eval(_strong_abstract_eval("log10"))

(exp, exp2, log, expm1, log1p, tanh, logistic, sin, cos, tan, asin, acos, atan, sinh, cosh,
 asinh, acosh, atanh, sqrt, rsqrt, cbrt, log2, log10) = (_unary(p) for p in (
    exp_p, exp2_p, log_p, expm1_p, log1p_p, tanh_p, logistic_p, sin_p, cos_p, tan_p, asin_p,
    acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, sqrt_p, rsqrt_p, cbrt_p,
    log2_p, log10_p))


# pow: x ** y of two arrays.
def _pow_impl(x, y):
    # Both operands materialised at the full shape: NumPy's power takes shortcuts (sqrt,
    # reciprocal, square) for a broadcast exponent of 0.5, -1 or 2, which round differently
    # from its general loop; the general loop alone keeps each element's bits.
    shape = np.broadcast_shapes(x.shape, y.shape)
    full = shape or (1,)
    x = np.array(np.broadcast_to(x, full))  # copies: real strides, never 0
    y = np.array(np.broadcast_to(y, full))
    return np.power(x, y).reshape(shape)


def _pow_jvp_x(t, out, x, y):
    # d/dx x**y = y * x**(y-1), written as y * x**y / x where x != 0.
    safe = pow(x, sub(y, _const(y, 1)))
    return mul(t, mul(y, safe))


def _pow_jvp_y(t, out, x, y):
    zero = _const(x, 0)
    log_x = select(eq(x, zero), _broadcast_like(zero, out), log(_broadcast_like(x, out)))
    return mul(t, mul(out, log_x))


pow_p = defvectorized("pow", _elementary2("pow", _pow_impl), FLOAT)
defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)
_vectorized_batch_rule(pow_p)


# atan2: NumPy's arctan2, by invarax's kernel.
def _atan2_jvp(t, out, x, y, wrt):
    denom = add(mul(x, x), mul(y, y))
    return mul(t, div(y, denom)) if wrt == 0 else neg(mul(t, div(x, denom)))


atan2_p = defvectorized("atan2", _elementary2("atan2", np.arctan2), "f")
defjvp(atan2_p, lambda t, out, x, y: _atan2_jvp(t, out, x, y, 0),
       lambda t, out, x, y: _atan2_jvp(t, out, x, y, 1))
_vectorized_batch_rule(atan2_p)
pow, atan2 = _binary(pow_p), _binary(atan2_p)

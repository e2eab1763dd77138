"""The battery's elementwise workloads: every elementary function (one workload each), the
IEEE arithmetic of NumPy's ufuncs, activations and special functions, and a fused
expression under ``jit`` (chunked between threads) beside its eager value."""

from __future__ import annotations

import numpy as np

from .. import lax, nn
from .. import numpy as jnp
from ..scipy import special
from ..transforms import jit
from ._inputs import spread, uniform

#: invarax's own elementary functions of one operand (lax's names), through the public API.
UNARY = {
    "exp": lax.exp, "log": lax.log, "expm1": lax.expm1, "log1p": lax.log1p, "tanh": lax.tanh,
    "logistic": lax.logistic, "sin": lax.sin, "cos": lax.cos, "exp2": lax.exp2,
    "sinh": lax.sinh, "cosh": lax.cosh, "log2": jnp.log2, "log10": jnp.log10,
    "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh, "atan": lax.atan,
    "asin": lax.asin, "acos": lax.acos, "tan": lax.tan, "cbrt": lax.cbrt, "erf": lax.erf,
    "erfc": lax.erfc, "erf_inv": lax.erf_inv, "lgamma": lax.lgamma, "digamma": lax.digamma,
}


def _atan2(x):
    return lax.atan2(x, x[::-1])


def _pow(x):
    integers = (np.arange(x.size) % 41 - 20).astype(x.dtype)  # exact small integers
    return lax.pow(x, x[::-1]), lax.pow(x, integers), lax.pow(jnp.abs(x), x[::-1] / 16)


BINARY = {"atan2": _atan2, "pow": _pow}


def _arithmetic(x):
    """NumPy's correctly rounded ufuncs, and the exact ones, on the specials and the rest."""
    y = x[::-1]
    return [x + y, x - y, x * y, x / y, jnp.sqrt(x), lax.rsqrt(x), 1 / x, x * x,
            lax.integer_pow(x, 3), jnp.floor(x), jnp.round(x), jnp.remainder(x, y),
            jnp.fmod(x, y), jnp.minimum(x, y), jnp.maximum(x, y), jnp.abs(x), jnp.sign(x),
            jnp.nextafter(x, y), jnp.copysign(x, y), jnp.hypot(x, y), x.astype(np.float16)]


def _activations(x):
    a = jnp.asarray(x[:4096]).reshape(64, 64) / 16
    return [nn.sigmoid(a), nn.silu(a), nn.softplus(a), nn.relu(a), nn.gelu(a),
            nn.gelu(a, approximate=False), nn.tanh(a), nn.softmax(a), nn.log_softmax(a),
            nn.logsumexp(a, axis=-1), jnp.logaddexp(a, a.T), jnp.logaddexp2(a, a.T),
            jnp.sinc(a), jnp.logspace(-3, 3, 101, dtype=a.dtype),
            lax.cumlogsumexp(a, axis=1)]


def _special(x):
    unit = jnp.abs(x[:2048]) / (1 + jnp.abs(x[:2048]))  # in [0, 1]
    positive = jnp.abs(x[2048:4096]) % 30 + 0.25
    return [special.ndtr(x), special.log_ndtr(x), special.ndtri(unit), special.logit(unit),
            special.xlogy(x, jnp.abs(x)), special.xlog1py(x, jnp.abs(x)), special.entr(unit),
            special.gammaln(x), special.gammainc(positive[:512], positive[512:1024]),
            special.gammaincc(positive[:512], positive[1024:1536]),
            special.betainc(positive[:256] % 9 + 0.5, positive[256:512] % 7 + 0.5, unit[:256]),
            special.i0e(x / 8), special.i0(x / 8)]


def _fused(dtype):
    v = jnp.asarray(uniform(11, 1 << 19, dtype, -8, 8))  # chunked between threads under jit
    expression = lambda v: jnp.exp(-v * v) * jnp.sin(v) + jnp.tanh(v) * jnp.log1p(v * v)  # noqa: E731
    return [jit(expression)(v), expression(v)]


def workloads() -> list[tuple[str, bool, object]]:
    """``(name, needs float64, function)`` for each elementwise workload."""
    out = []
    for dtype in (np.float32, np.float64):
        name = np.dtype(dtype).name
        x64 = dtype == np.float64

        def on_spread(fn, dtype=dtype):
            return lambda: fn(jnp.asarray(spread(dtype)))

        for function, fn in {**UNARY, **BINARY}.items():
            out.append((f"elementary/{function}/{name}", x64, on_spread(fn)))
        out.append((f"arithmetic/{name}", x64, on_spread(_arithmetic)))
        out.append((f"activations/{name}", x64, lambda dtype=dtype: _activations(spread(dtype))))
        out.append((f"special/{name}", x64, on_spread(_special)))
        out.append((f"fused/{name}", x64, lambda dtype=dtype: _fused(dtype)))
    return out

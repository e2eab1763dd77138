"""Continuous samplers and integer/boolean draws, following ``jax.random``'s algorithms.

``uniform`` fills the mantissa with random bits (``bits >> (nbits - nmant)``, scaled by
``2**-nmant``: exactly JAX's ``bitcast(bits | one) - 1``) and scales it to the bounds with
one fused multiply-add, as XLA compiles JAX's formula; the others transform it as JAX
does, with ``log``, ``log1p``, ``erf`` and ``erf_inv`` computed as XLA computes them on CPU
(``_xla_math``). Bounds and probabilities that are known now (not traced) are checked.

The floats narrower than float32 (float16, and ``ml_dtypes``' bfloat16 and 8-bit floats
for the samplers that take ``narrow=True`` in ``float_dtype``) are JAX's too: a type with
fewer than 8 mantissa bits draws 8 random bits, and XLA rounds each operation to the type
(the scaling is a product then a sum, not a fused multiply-add; ``log``, ``erf_inv``, ...
are computed in float32 and rounded once).
"""

from __future__ import annotations

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import ArrayImpl, to_array
from ..ops import elementwise as lax
from ..ops.fused import fma
from . import _xla_math as xla
from ._eager import compiled, outside_unit, unordered
from ._keys import check_key, check_shape, concrete_value, random_bits, split


def _const(value, dtype):
    return ArrayImpl(np.asarray(value, dtype))


def float_dtype(name: str, dtype, narrow: bool = False):
    """``dtype`` canonicalised (default float32, float64 with x64), or a ValueError; with
    ``narrow``, ``ml_dtypes``' 16- and 8-bit floats are drawn too (as JAX draws them)."""
    dtype = dtypes.canonicalize(dtypes.default_float() if dtype is None else dtype)
    check_not_ml(name, dtype, narrow)
    if dtypes.kind(dtype) != "f":
        raise ValueError(f"random.{name}: dtype must be a float dtype, got {dtype.name}")
    return dtype


def check_not_ml(name: str, dtype, narrow: bool = False) -> None:
    """A ValueError for ``ml_dtypes``' types that this sampler does not draw: all of them,
    or with ``narrow`` those of other than 8 or 16 bits (JAX's ``uniform`` refuses them)."""
    if not dtypes.is_ml_dtype(dtype) or (
            narrow and dtypes.kind(dtype) == "f" and jnp.finfo(dtype).bits in (8, 16)):
        return
    which = ("of ml_dtypes' types only the 16- and 8-bit floats, as JAX's" if narrow else
             "NumPy's float types only")
    raise ValueError(f"random.{name}: {np.dtype(dtype).name} samples are not drawn (this "
                     f"sampler draws {which}); draw float32 and convert, e.g. "
                     f"random.{name}(key, shape).astype(jnp.{np.dtype(dtype).name})")


def param(name: str, what: str, x, dtype, shape):
    """The parameter ``x`` converted to ``dtype`` and broadcast to ``shape`` (JAX's rule: the
    broadcast of ``shape`` and ``x``'s shape must be ``shape``)."""
    x = lax.convert_element_type(to_array(x, f"random.{name} {what}"), dtype)
    check_broadcast(name, what, x.shape, shape)
    return jnp.broadcast_to(x, shape)


def check_broadcast(name: str, what: str, param_shape, shape) -> None:
    """A ValueError unless ``param_shape`` broadcasts to ``shape`` (and no further)."""
    try:
        ok = np.broadcast_shapes(shape, param_shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"random.{name}: {what} of shape {param_shape} does not broadcast to "
                         f"the shape argument {shape}")


def broadcast_shape(name: str, shape, **params) -> tuple:
    """JAX's shape of a sampler with parameters: ``None`` is the broadcast of the
    parameters' shapes; a given shape must be one that each of them broadcasts to."""
    shapes = {what: np.shape(x) for what, x in params.items()}
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*shapes.values()))
        except ValueError:
            listed = ", ".join(f"{what} {s}" for what, s in shapes.items())
            raise ValueError(f"random.{name}: the parameters' shapes do not broadcast: "
                             f"{listed}") from None
    shape = check_shape(name, shape)
    for what, s in shapes.items():
        check_broadcast(name, what, s, shape)
    return shape


def check_ordered(name: str, low, high, names=("minval", "maxval")):
    """A ValueError if concrete bounds have ``low > high`` somewhere (traced bounds pass)."""
    lo, hi = concrete_value(low), concrete_value(high)
    if lo is not None and hi is not None and np.any(lo > hi):
        raise ValueError(f"random.{name}: {names[0]} must be <= {names[1]}, got "
                         f"{names[0]}={lo} and {names[1]}={hi}")


def uniform_floats(key, shape, dtype, minval, maxval):
    """JAX's ``_uniform`` for bounds already of ``dtype`` and ``shape``."""
    info = jnp.finfo(dtype)
    drawn = 8 if info.nmant < 8 else info.bits  # JAX's: at least 8 random bits
    raw = random_bits(key, drawn, shape)
    mantissa = lax.shift_right_logical(raw, _const(drawn - info.nmant, raw.dtype))
    floats = lax.mul(lax.convert_element_type(mantissa, dtype), _const(2.0**-info.nmant, dtype))
    span = lax.sub(maxval, minval)
    if info.bits < 32:  # XLA rounds the product and the sum of a narrow float each
        return lax.max(minval, lax.add(lax.mul(floats, span), minval))
    # One rounding, as XLA computes it (it contracts the product and sum into an FMA).
    return lax.max(minval, fma(floats, span, minval))


def _unit_uniform(key, shape, dtype, minval=0.0, maxval=1.0):
    return uniform_floats(key, shape, dtype, jnp.full(shape, minval, dtype),
                          jnp.full(shape, maxval, dtype))


def _above_tiny(key, shape, dtype):
    """JAX's ``uniform(minval=tiny, maxval=1)`` as XLA compiles it with constant bounds:
    it folds ``(bits - 1) * 1 + tiny`` into ``bits + (tiny - 1)``, ``tiny - 1`` rounding to
    -1, so the draw is ``max(tiny, u)`` (the same bits as the formula in float32 and
    float64; in float16 the formula would add ``tiny`` to draws below about 0.06)."""
    return lax.max(_const(jnp.finfo(dtype).tiny, dtype), _unit_uniform(key, shape, dtype))


@compiled(static=("shape", "dtype"), inline_if=unordered("minval", "maxval"))
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)``, bitwise equal to ``jax.random.uniform``.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape (a tuple of ints).
        dtype: a float dtype (default float32, float64 with x64 on).
        minval, maxval: bounds broadcast to ``shape``; ``minval <= maxval``.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.uniform(random.PRNGKey(0), (2,))
        Array([0.947667 , 0.9785799], dtype=float32)
    """
    key = check_key("uniform", key)
    shape = check_shape("uniform", shape)
    dtype = float_dtype("uniform", dtype, narrow=True)
    minval = param("uniform", "minval", minval, dtype, shape)
    maxval = param("uniform", "maxval", maxval, dtype, shape)
    check_ordered("uniform", minval, maxval)
    return uniform_floats(key, shape, dtype, minval, maxval)


@compiled(static=("shape", "dtype"))
def normal(key, shape=(), dtype=None):
    """Standard normal floats: ``sqrt(2) * erf_inv(u)``, ``u`` uniform in ``(-1, 1)``, as JAX.

    Bitwise ``jax.random.normal`` in float32 (XLA's ``log1p`` is reproduced); float64 within
    3 ulp (see docs/random.md). A complex dtype gives JAX's complex normal: real and
    imaginary parts drawn from the two keys of ``split(key)``, each times ``1 / sqrt(2)``.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape.
        dtype: float32, float64, complex64 or complex128 (default float32, float64 with x64
            on); complex: real and imaginary parts independent, each of variance 1/2.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.normal(random.PRNGKey(0), (2,))
        Array([1.6226422, 2.0252647], dtype=float32)
    """
    key = check_key("normal", key)
    shape = check_shape("normal", shape)
    dtype = dtypes.canonicalize(dtypes.default_float() if dtype is None else dtype)
    check_not_ml("normal", dtype, narrow=True)
    if dtypes.kind(dtype) not in "fc":
        raise ValueError(f"random.normal: dtype must be a float or complex dtype, got "
                         f"{dtype.name}")
    if dtype.kind == "c":  # JAX's (re + 1j * im) / sqrt(2), which XLA makes a product
        real = np.dtype(f"f{dtype.itemsize // 2}")
        scale = _const(1 / np.sqrt(2), real)
        re, im = (lax.convert_element_type(lax.mul(normal(k, shape, real), scale), dtype)
                  for k in split(key))
        return lax.add(re, lax.mul(im, _const(1j, dtype)))
    low = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _unit_uniform(key, shape, dtype, low, 1.0)
    return lax.mul(_const(np.sqrt(2), dtype), xla.erf_inv(u))


@compiled(static=("shape", "dtype"), inline_if=unordered("lower", "upper"))
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats conditioned on ``lower < x < upper``, as JAX's algorithm.

    Arguments:
        key: a ``uint32[2]`` key.
        lower, upper: the bounds, broadcast to ``shape``; ``lower <= upper``.
        shape: the result's shape (default: the bounds' broadcast shape).
        dtype: float32 or float64.

    Returns:
        An array of ``shape`` and ``dtype``, inside the open interval.

    Example:
        >>> random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (2,))
        Array([0.8618594, 0.9412883], dtype=float32)
    """
    key = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype, narrow=True)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    shape = check_shape("truncated_normal", shape)
    lower = param("truncated_normal", "lower", lower, dtype, shape)
    upper = param("truncated_normal", "upper", upper, dtype, shape)
    check_ordered("truncated_normal", lower, upper, ("lower", "upper"))
    sqrt2 = _const(np.sqrt(2), dtype)
    # JAX divides by sqrt(2); XLA compiles that to a product with the rounded reciprocal.
    inv_sqrt2 = _const(1 / np.asarray(np.sqrt(2), dtype), dtype)
    a, b = xla.erf(lax.mul(lower, inv_sqrt2)), xla.erf(lax.mul(upper, inv_sqrt2))
    out = lax.mul(sqrt2, xla.erf_inv(uniform_floats(key, shape, dtype, a, b)))
    inf = _const(np.inf, dtype)
    low = lax.nextafter(lax.stop_gradient(lower), jnp.full(shape, inf))
    high = lax.nextafter(lax.stop_gradient(upper), jnp.full(shape, -inf))
    return lax.min(lax.max(out, low), high)


@compiled(static=("shape", "mode"), inline_if=outside_unit("p"))
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p``: ``uniform < p``, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        p: probabilities in ``[0, 1]``, a float array broadcast to ``shape``.
        shape: the result's shape (default ``p``'s shape).
        mode: ``"low"`` (one uniform per value) or ``"high"`` (two, for tiny ``p``).

    Returns:
        A bool array of ``shape``.

    Example:
        >>> random.bernoulli(random.PRNGKey(0), 0.5, (3,))
        Array([False, False,  True], dtype=bool)
    """
    key = check_key("bernoulli", key)
    if mode not in ("low", "high"):
        raise ValueError(f"random.bernoulli: mode must be 'low' or 'high', got {mode!r}")
    p = to_array(p, "random.bernoulli p")
    if dtypes.kind(p.dtype) != "f":
        raise TypeError(f"random.bernoulli: p must have a float dtype, got {p.dtype.name}; "
                        "write 1.0 rather than 1")
    value = concrete_value(p)
    if value is not None and not np.all((value >= 0) & (value <= 1)):
        raise ValueError(f"random.bernoulli: probabilities must lie in [0, 1], got p={value}")
    shape = check_shape("bernoulli", p.shape if shape is None else shape)
    p = param("bernoulli", "p", p, p.dtype, shape)
    if mode == "high":
        u1, u2 = _unit_uniform(key, (2, *shape), p.dtype)
        u2 = lax.mul(u2, _const(2.0 ** -jnp.finfo(p.dtype).nmant, p.dtype))
        return lax.lt(u2, lax.sub(p, u1))
    return lax.lt(_unit_uniform(key, shape, p.dtype), p)


def _convert_and_clip(x, dtype):
    """``x`` (integer) converted to ``dtype``, clipped to its range rather than wrapped."""
    src, dst = np.iinfo(x.dtype), np.iinfo(dtype)
    low, high = max(src.min, dst.min), min(src.max, dst.max)
    return lax.convert_element_type(jnp.clip(x, _const(low, x.dtype), _const(high, x.dtype)),
                                    dtype)


def _rem(x, span):
    """``x % span`` for unsigned ints, with XLA's ``x % 0 == x``."""
    zero = lax.eq(span, _const(0, span.dtype))
    safe = lax.select(zero, jnp.ones_like(span), span)
    return lax.select(zero, x, lax.rem(x, safe))


def _randint(key, shape, minval, maxval, dtype):
    if minval.dtype.kind not in "iu":
        minval = minval.astype(dtypes.default_int())
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(dtypes.default_int())
    top = _convert_and_clip(_const(np.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = jnp.greater(maxval, top)
    minval = jnp.broadcast_to(_convert_and_clip(minval, dtype), shape)
    maxval = jnp.broadcast_to(_convert_and_clip(maxval, dtype), shape)
    maxval_out_of_range = jnp.broadcast_to(maxval_out_of_range, shape)
    nbits = np.iinfo(dtype).bits
    k1, k2 = split(key)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    unsigned = higher.dtype
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned)
    span = lax.select(lax.le(maxval, minval), jnp.ones_like(span), span)
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, _const(1, unsigned)), span)
    multiplier = _rem(jnp.full(shape, 2 ** (nbits // 2), unsigned), span)
    multiplier = _rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(_rem(higher, span), multiplier), _rem(lower, span))
    return lax.add(minval, lax.convert_element_type(_rem(offset, span), dtype))


@compiled(static=("shape", "dtype"), inline_if=unordered("minval", "maxval"))
def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)``, equal to ``jax.random.randint``.

    JAX's method: two draws of random bits, combined modulo the span (slightly biased when
    the span is not a power of two); 8- and 16-bit dtypes are sampled in 32 bits.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape.
        minval, maxval: integer bounds broadcast to ``shape``; ``minval <= maxval``
            (``minval == maxval`` gives ``minval``).
        dtype: an integer dtype (default int32, int64 with x64 on).

    Returns:
        An integer array of ``shape`` and ``dtype``.

    Example:
        >>> random.randint(random.PRNGKey(0), (4,), 0, 10)
        Array([9, 0, 2, 3], dtype=int32)
    """
    key = check_key("randint", key)
    shape = check_shape("randint", shape)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"random.randint: dtype must be an integer dtype, got {dtype.name}")
    minval = jnp.asarray(to_array(minval, "random.randint minval"))
    maxval = jnp.asarray(to_array(maxval, "random.randint maxval"))
    check_broadcast("randint", "minval", minval.shape, shape)
    check_broadcast("randint", "maxval", maxval.shape, shape)
    check_ordered("randint", minval, maxval)
    info = np.iinfo(dtype)
    if info.bits < 32:  # sampled in 32 bits, as JAX, to limit the modulo bias
        minval = jnp.clip(minval.astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(maxval.astype(np.int32), int(info.min), int(info.max) + 1)
        return _randint(key, shape, minval, maxval, np.dtype(np.int32)).astype(dtype)
    return _randint(key, shape, minval, maxval, dtype)


@compiled(static=("shape", "dtype"))
def exponential(key, shape=(), dtype=None):
    """Exponential floats (rate 1): ``-log1p(-u)``, ``u`` uniform in ``[0, 1)``, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape.
        dtype: a float dtype.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.exponential(random.PRNGKey(0), (2,))
        Array([2.950128 , 3.8434246], dtype=float32)
    """
    key = check_key("exponential", key)
    dtype = float_dtype("exponential", dtype, narrow=True)
    u = _unit_uniform(key, check_shape("exponential", shape), dtype)
    return lax.neg(xla.log1p(lax.neg(u)))


@compiled(static=("shape", "dtype", "mode"))
def gumbel(key, shape=(), dtype=None, mode="low"):
    """Standard Gumbel floats: ``-log(-log(u))``, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape.
        dtype: a float dtype.
        mode: ``"low"`` (one uniform per value) or ``"high"`` (two, for a larger range).

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.gumbel(random.PRNGKey(0), (2,))
        Array([2.9233725, 3.8326178], dtype=float32)
    """
    key = check_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype, narrow=True)
    shape = check_shape("gumbel", shape)
    if mode not in ("low", "high"):
        raise ValueError(f"random.gumbel: mode must be 'low' or 'high', got {mode!r}")
    info = jnp.finfo(dtype)
    if mode == "high":
        high, low = _unit_uniform(key, (2, *shape), dtype)
        tail = lax.add(lax.add(high, lax.mul(_const(2.0**-info.nmant, dtype), low)),
                       _const(info.tiny, dtype))
        x = lax.select(lax.ge(high, _const(0.5, dtype)), high, tail)
        return lax.neg(xla.log(lax.neg(xla.log1p(lax.neg(x)))))
    u = _above_tiny(key, shape, dtype)
    return lax.neg(xla.log(lax.neg(xla.log(u))))


@compiled(static=("shape", "dtype"))
def logistic(key, shape=(), dtype=None):
    """Standard logistic floats: ``log(u) - log1p(-u)``, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape.
        dtype: a float dtype.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.logistic(random.PRNGKey(0), (2,))
        Array([2.896376 , 3.8217716], dtype=float32)
    """
    key = check_key("logistic", key)
    dtype = float_dtype("logistic", dtype, narrow=True)
    u = _above_tiny(key, check_shape("logistic", shape), dtype)
    return lax.sub(xla.log(u), xla.log1p(lax.neg(u)))


@compiled(static=("shape", "dtype"))
def laplace(key, shape=(), dtype=None):
    """Standard Laplace floats: ``sign(u) * log1p(-|u|)``, ``u`` uniform in ``(-1, 1)``, as JAX.

    Arguments:
        key: a ``uint32[2]`` key.
        shape: the result's shape.
        dtype: a float dtype.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> random.laplace(random.PRNGKey(0), (2,))
        Array([-2.2569816, -3.1502788], dtype=float32)
    """
    key = check_key("laplace", key)
    dtype = float_dtype("laplace", dtype, narrow=True)
    low = -1.0 + float(jnp.finfo(dtype).epsneg)
    u = _unit_uniform(key, check_shape("laplace", shape), dtype, low, 1.0)
    return lax.mul(lax.sign(u), xla.log1p(lax.neg(lax.abs(u))))

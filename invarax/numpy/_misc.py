"""The rest of ``invarax.numpy``: polynomials (``polyval``, ``polyadd``, ``polysub``,
``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``poly`` of a 1-d root list),
window functions (``bartlett``, ``blackman``, ``hamming``, ``hanning``, ``kaiser``), ``i0``,
``bitwise_count``, ``promote_types``/``can_cast``/``isdtype``, print options."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayImpl
from ..lax._more import population_count
from ..ops import elementwise as lax
from ..ops import shape as sh
from ..ops.bessel import i0 as _i0
from . import _ufuncs as uf
from ._creation import asarray, zeros
from ._joining import concatenate
from ._promote import broadcast_shapes, broadcast_to_shape, convert, promote_dtypes
from ._reductions import sum as _sum


def _vector(name, p):
    p = asarray(p)
    if p.ndim != 1:
        raise ValueError(f"jnp.{name} takes 1-d coefficient arrays (highest power first), "
                         f"got shape {p.shape}")
    return p


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner.

    ``p`` may have trailing axes (as JAX's): ``p[i]`` broadcasts against ``x``, so a
    (N, ...) ``p`` holds one polynomial per trailing position.

    Example:
        >>> jnp.polyval(jnp.array([1.0, 0.0, -1.0]), jnp.array([2.0, 3.0]))
        Array([3., 8.], dtype=float32)
        >>> jnp.polyval(jnp.array([[1.0, 2.0], [0.0, 1.0]]), 3.0)
        Array([3., 7.], dtype=float32)
    """
    p = asarray(p)
    if p.ndim == 0:
        raise ValueError("jnp.polyval takes coefficients of shape (N,) or (N, ...), highest "
                         "power first; got a scalar")
    p, x = promote_dtypes(p, asarray(x))
    out = zeros(broadcast_shapes(p.shape[1:], x.shape), x.dtype)
    for i in range(p.shape[0]):
        out = uf.add(uf.multiply(out, x), p[i])
    return out


def _padded(a, n):
    return concatenate([zeros((n - a.shape[0],), a.dtype), a]) if a.shape[0] < n else a


def polyadd(a1, a2):
    """The sum of two polynomials (coefficient arrays, highest power first).

    Example:
        >>> jnp.polyadd(jnp.array([1, 2]), jnp.array([1, 0, 0]))
        Array([1, 1, 2], dtype=int32)
    """
    a, b = promote_dtypes(_vector("polyadd", a1), _vector("polyadd", a2))
    n = max(a.shape[0], b.shape[0])
    return uf.add(_padded(a, n), _padded(b, n))


def polysub(a1, a2):
    """The difference of two polynomials.

    Example:
        >>> jnp.polysub(jnp.array([1, 2]), jnp.array([1, 0, 0]))
        Array([-1,  1,  2], dtype=int32)
    """
    a, b = promote_dtypes(_vector("polysub", a1), _vector("polysub", a2))
    n = max(a.shape[0], b.shape[0])
    return uf.subtract(_padded(a, n), _padded(b, n))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (their coefficients' full convolution).

    Each coefficient is a sum of products added in order of the first operand's index.

    Example:
        >>> jnp.polymul(jnp.array([1, 1]), jnp.array([1, -1]))
        Array([ 1,  0, -1], dtype=int32)
    """
    a, b = promote_dtypes(_vector("polymul", a1), _vector("polymul", a2))
    n, m = a.shape[0], b.shape[0]
    if n == 0 or m == 0:
        return zeros((0,), a.dtype)
    out = zeros((n + m - 1,), a.dtype)
    for i in range(n):
        row = uf.multiply(a[i], b)
        out = uf.add(out, concatenate([zeros((i,), a.dtype), row, zeros((n - 1 - i,), a.dtype)]))
    return out


def polydiv(u, v, *, trim_leading_zeros=False):
    """The quotient and remainder of polynomial division ``u / v``.

    Example:
        >>> jnp.polydiv(jnp.array([1.0, 0.0, -1.0]), jnp.array([1.0, 1.0]))
        (Array([ 1., -1.], dtype=float32), Array([0., 0., 0.], dtype=float32))
    """
    u, v = promote_dtypes(_vector("polydiv", u), _vector("polydiv", v), to_inexact=True)
    n, m = u.shape[0], v.shape[0]
    scale = uf.divide(1.0, v[0])
    q = zeros((max(n - m + 1, 1),), u.dtype)
    for k in range(0, n - m + 1):
        d = uf.multiply(scale, u[k])
        q = q.at[k].set(d)
        u = u.at[k:k + m].add(uf.negative(uf.multiply(d, v)))
    return q, u


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial.

    Example:
        >>> jnp.polyder(jnp.array([1.0, 1.0, 1.0]))
        Array([2., 1.], dtype=float32)
    """
    p = _vector("polyder", p)
    if m < 0:
        raise ValueError(f"jnp.polyder: the order m must be non-negative, got {m}")
    for _ in range(int(m)):
        n = p.shape[0]
        if n <= 1:
            return zeros((0,), p.dtype)
        powers = convert(ArrayImpl(np.arange(n - 1, 0, -1)), p.dtype)
        p = uf.multiply(p[:-1], powers)
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, integration constants ``k``.

    Example:
        >>> jnp.polyint(jnp.array([3.0, 2.0]))
        Array([1.5, 2. , 0. ], dtype=float32)
    """
    (p,) = promote_dtypes(_vector("polyint", p), to_inexact=True)
    ks = np.zeros(int(m)) if k is None else np.atleast_1d(np.asarray(k, np.float64))
    if ks.shape[0] == 1 and m > 1:
        ks = np.repeat(ks, int(m))
    for j in range(int(m)):
        n = p.shape[0]
        powers = convert(ArrayImpl(np.arange(n, 0, -1)), p.dtype)
        p = concatenate([uf.divide(p, powers), convert(asarray(ks[j]), p.dtype)[None]])
    return p


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given 1-d roots.

    Example:
        >>> jnp.poly(jnp.array([1.0, 2.0]))
        Array([ 1., -3.,  2.], dtype=float32)
    """
    (r,) = promote_dtypes(asarray(seq_of_zeros), to_inexact=True)
    if r.ndim != 1:
        raise NotImplementedError("jnp.poly of a matrix (its characteristic polynomial) needs "
                                  "eigenvalues (jnp.linalg); pass 1-d roots")
    out = convert(asarray(1.0), r.dtype)[None]
    for i in range(r.shape[0]):
        out = polymul(out, concatenate([convert(asarray(1.0), r.dtype)[None],
                                        uf.negative(r[i])[None]]))
    return out


def _window(name, formula):
    def f(M):
        M = int(M)
        dtype = dtypes.default_float()
        if M < 1:
            return zeros((0,), dtype)
        if M == 1:
            return ArrayImpl(np.ones(1, dtype))
        n = convert(ArrayImpl(np.arange(M)), dtype)
        return formula(n, M)

    f.__name__ = name
    f.__doc__ = f"""The {name} window of ``M`` points, as ``numpy.{name}``.

    Example:
        >>> jnp.{name}(3).shape
        (3,)
    """
    return f


def _cos_term(n, M, k):
    return uf.cos(uf.multiply(n, 2.0 * math.pi * k / (M - 1)))


bartlett = _window("bartlett", lambda n, M: uf.subtract(
    1.0, uf.abs(uf.subtract(uf.multiply(n, 2.0 / (M - 1)), 1.0))))
hamming = _window("hamming", lambda n, M: uf.subtract(0.54, uf.multiply(0.46, _cos_term(n, M, 1))))
hanning = _window("hanning", lambda n, M: uf.subtract(0.5, uf.multiply(0.5, _cos_term(n, M, 1))))
blackman = _window("blackman", lambda n, M: uf.add(
    uf.subtract(0.42, uf.multiply(0.5, _cos_term(n, M, 1))), uf.multiply(0.08, _cos_term(n, M, 2))))


def bitwise_count(x, /):
    """The number of 1 bits in ``|x|`` of integers, as ``numpy.bitwise_count`` (uint8).

    Example:
        >>> jnp.bitwise_count(jnp.array([0, 7, -3]))
        Array([0, 3, 2], dtype=uint8)
    """
    x = asarray(x)
    if x.dtype == dtypes.bool_:
        return convert(x, np.uint8)
    if not dtypes.is_integer(x.dtype):
        raise TypeError(f"jnp.bitwise_count takes integers, got {x.dtype}")
    unsigned = np.dtype(f"uint{8 * x.dtype.itemsize}")
    u = convert(uf.absolute(x) if x.dtype.kind == "i" else x, unsigned)
    return convert(population_count(u), np.uint8)


def promote_types(a, b):
    """The dtype two dtypes promote to under JAX's rules (not NumPy's).

    Example:
        >>> jnp.promote_types(jnp.int8, jnp.float16)
        dtype('float16')
    """
    return dtypes.promote_types((np.dtype(a), False), (np.dtype(b), False))[0]


def can_cast(from_, to, casting="safe"):
    """``numpy.can_cast`` (dtypes or arrays' dtypes).

    Example:
        >>> jnp.can_cast(jnp.int8, jnp.float32)
        True
    """
    return np.can_cast(getattr(from_, "dtype", from_), to, casting)


_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name (``"real floating"``,
    ``"integral"``, ...) or a tuple of them (the array API's ``isdtype``).

    Example:
        >>> jnp.isdtype(jnp.float32, "real floating"), jnp.isdtype(jnp.int32, "bool")
        (True, False)
    """
    dtype = _as_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"jnp.isdtype: unknown kind {k!r}; one of {sorted(_KINDS)}")
            if dtype.kind in _KINDS[k]:
                return True
        elif dtype == _as_dtype(k):
            return True
    return False


def _as_dtype(x):
    """A dtype from a dtype, a scalar type (NumPy's or invarax's) or an array."""
    dtype = getattr(x, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.dtype(x)


get_printoptions, set_printoptions = np.get_printoptions, np.set_printoptions


@contextlib.contextmanager
def printoptions(*args, **kwargs):
    """A context in which arrays print with NumPy's options ``kwargs``.

    Example:
        >>> with jnp.printoptions(precision=2):
        ...     print(jnp.array([1 / 3]))
        [0.33]
    """
    with np.printoptions(*args, **kwargs):
        yield


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's ``array_repr`` of the values of ``arr``.

    Example:
        >>> jnp.array_repr(jnp.array([1, 2]))
        'array([1, 2], dtype=int32)'
    """
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's ``array_str`` of the values of ``a``.

    Example:
        >>> jnp.array_str(jnp.array([1, 2]))
        '[1 2]'
    """
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)




def _bit_axis(name, a, axis):
    a = asarray(a)
    if axis is None:
        return sh.reshape(a, (a.size,)), 0
    return a, axis % a.ndim


def packbits(a, axis=None, bitorder="big"):
    """The truth values of ``a`` packed 8 to a ``uint8`` along ``axis`` (flattened if None;
    the axis padded with zeros to a multiple of 8).

    Example:
        >>> jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
        Array([176, 128], dtype=uint8)
    """
    if bitorder not in ("big", "little"):
        raise ValueError(f"jnp.packbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    a, axis = _bit_axis("packbits", a, axis)
    if not (dtypes.is_integer(a.dtype) or a.dtype == dtypes.bool_):
        raise TypeError(f"jnp.packbits takes integer or bool arrays, got {a.dtype}")
    bits = convert(uf.not_equal(a, 0), np.uint8)
    n = a.shape[axis]
    pad = -n % 8
    if pad:
        shape = list(a.shape)
        shape[axis] = pad
        bits = concatenate([bits, zeros(tuple(shape), np.uint8)], axis=axis)
    shape = list(bits.shape)
    shape[axis: axis + 1] = [(n + pad) // 8, 8]
    grouped = sh.reshape(bits, tuple(shape))
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1], np.uint8)
    weights = weights if bitorder == "big" else weights[::-1]
    w_shape = [1] * grouped.ndim
    w_shape[axis + 1] = 8
    return _sum(uf.multiply(grouped, ArrayImpl(weights.reshape(w_shape))), axis=axis + 1,
                dtype=np.uint8)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of ``uint8`` array ``a`` along ``axis`` (flattened if None), as 0/1
    ``uint8``; ``count`` keeps the first bits (drops from the end if negative).

    Example:
        >>> jnp.unpackbits(jnp.array([176], dtype=jnp.uint8))
        Array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    """
    if bitorder not in ("big", "little"):
        raise ValueError(f"jnp.unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    a, axis = _bit_axis("unpackbits", a, axis)
    if a.dtype != np.uint8:
        raise TypeError(f"jnp.unpackbits takes a uint8 array, got {a.dtype}")
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if bitorder == "big" else \
        np.arange(8, dtype=np.uint8)
    s_shape = [1] * (a.ndim + 1)
    s_shape[axis + 1] = 8
    expanded = sh.reshape(a, a.shape[: axis + 1] + (1,) + a.shape[axis + 1:])
    bits = lax.bitwise_and(
        lax.shift_right_logical(*_broadcast(expanded, ArrayImpl(shifts.reshape(s_shape)))),
        convert(asarray(1), np.uint8))
    shape = list(a.shape)
    shape[axis] = a.shape[axis] * 8
    out = sh.reshape(bits, tuple(shape))
    if count is not None:
        stop = int(count) if count >= 0 else shape[axis] + int(count)
        out = out[(slice(None),) * axis + (slice(0, stop),)]
    return out


def _broadcast(x, y):
    shape = broadcast_shapes(x.shape, y.shape)
    return broadcast_to_shape(x, shape), broadcast_to_shape(y, shape)


def i0(x):
    """The modified Bessel function of the first kind of order 0, elementwise.

    Example:
        >>> jnp.i0(jnp.array([0.0, 1.0]))
        Array([1.       , 1.2660658], dtype=float32)
    """
    (x,) = promote_dtypes(asarray(x), to_inexact=True)
    return _i0(x)


def kaiser(M, beta):
    """The Kaiser window of ``M`` points and shape ``beta``, as ``numpy.kaiser``.

    Example:
        >>> jnp.kaiser(4, 2.0)
        Array([0.43867627, 0.92431384, 0.92431384, 0.43867627], dtype=float32)
    """
    def formula(n, M):
        alpha = 0.5 * (M - 1)
        ratio = uf.divide(uf.subtract(n, alpha), alpha)
        b = convert(asarray(beta), n.dtype)
        return uf.divide(i0(uf.multiply(b, uf.sqrt(uf.subtract(1.0, uf.square(ratio))))),
                         i0(b))

    return _window("kaiser", formula)(M)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction path ``einsum`` takes: invarax contracts left to right always.

    Arguments:
        subscripts, operands: as ``einsum`` (operands may be arrays or shapes' stand-ins
            with ``.shape``).
        optimize: accepted as JAX's; invarax does no path search (so a result never
            depends on one), and ``einsum`` accepts the returned path and ignores it.

    Returns:
        ``(path, description)``: ``["einsum_path", (0, 1), (0, 1), ...]`` (each step
        contracts the running result with the next operand), and a text naming them.

    Example:
        >>> path, _ = jnp.einsum_path("ij,jk,kl->il", jnp.ones((2, 3)), jnp.ones((3, 4)),
        ...                           jnp.ones((4, 5)))
        >>> path
        ['einsum_path', (0, 1), (0, 1)]
    """
    n = len(operands) if isinstance(subscripts, str) else (len(operands) + 1) // 2
    path = ["einsum_path", *[(0, 1)] * max(n - 1, 0)]
    shapes = ", ".join(str(tuple(getattr(x, "shape", np.shape(x)))) for x in operands
                       if isinstance(subscripts, str))
    description = (f"  Complete contraction: {subscripts if isinstance(subscripts, str) else ''}"
                   f"\n  Operand shapes: {shapes}\n  Path: {n - 1} pairwise contractions, "
                   "left to right (invarax's fixed order)")
    return path, description

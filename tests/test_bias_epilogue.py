"""A product plus a bias (``x @ W + b``) under ``jit``: the bias added by the contraction
kernel as each block of the product is finished (``compiler/dots.biased_products``), with
the bits of the product followed by ``add`` (N3), for every thread count and dispatch
level, and only where that holds."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.compiler.dots import biased_products
from invarax.kernels import _native

DTYPES = [np.float32, np.float64]


def data(shape, dtype, seed):
    """Normal values with an infinity, a NaN and a -0 among them (when there is room)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    if x.size >= 8:
        x.flat[[1, 4, 6]] = [np.inf, np.nan, -0.0]
    return x


def fused(f, *args) -> list:
    """The names of the equations of the program jit runs for ``f``."""
    jaxpr = invarax.make_jaxpr(f, optimize=True)(*args).jaxpr
    return [str(e.primitive) for e in biased_products(jaxpr).eqns]


def check(f, *args):
    """``jit(f)`` is bitwise ``f`` eagerly, on one and two threads and at every level."""
    eager = np.asarray(f(*args))
    for level in _native.isas():
        previous = _native.set_isa(level)
        try:
            for threads in ("1", "2"):
                with pytest.MonkeyPatch.context() as mp:
                    mp.setenv("INVARAX_NUM_THREADS", threads)
                    assert_bitwise(np.asarray(invarax.jit(f)(*args)), eager)
        finally:
            _native.set_isa(previous)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mkn", [(256, 300, 200), (64, 30, 1), (1, 5, 7), (5, 0, 4),
                                 (37, 257, 65), (3000, 20, 10)])
def test_product_plus_bias(mkn, dtype):
    """``x @ w + b`` and ``b + x @ w``: one call, the bits of the two operations, including
    matrix-vector products (N = 1), one row, no terms (K = 0) and narrow products."""
    m, k, n = mkn
    x, w, b = data((m, k), dtype, 1), data((k, n), dtype, 2), data((n,), dtype, 3)
    x, w, b = jnp.asarray(x), jnp.asarray(w), jnp.asarray(b)
    for f in (lambda x, w, b: x @ w + b, lambda x, w, b: b + x @ w):
        assert fused(f, x, w, b) == ["dot_general+bias"]
        check(f, x, w, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layers_batches_and_several_free_axes(dtype):
    """A ``Linear`` layer's ``x @ W.T + b`` then its activation, a batched product with one
    bias for every matrix, and an einsum whose bias spans two rhs free axes."""
    x, w, b = (jnp.asarray(data(s, dtype, i)) for i, s in enumerate([(8, 16, 40), (24, 40),
                                                                     (24,)]))
    linear = lambda x, w, b: jnp.tanh(x @ w.T + b)  # noqa: E731
    assert "dot_general+bias" in fused(linear, x, w, b)
    check(linear, x, w, b)
    y = jnp.asarray(data((8, 40, 24), dtype, 5))
    batched = lambda x, y, b: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))) + b  # noqa: E731
    assert fused(batched, x, y, b) == ["dot_general+bias"]
    check(batched, x, y, b)
    v, c = jnp.asarray(data((40, 3, 5), dtype, 6)), jnp.asarray(data((3, 5), dtype, 7))
    einsum = lambda x, v, c: jnp.einsum("bsk,kij->bsij", x, v) + c  # noqa: E731
    assert "dot_general+bias" in fused(einsum, x, v, c)
    check(einsum, x, v, c)


def test_left_alone_where_the_bits_or_the_program_would_change():
    """The product is also an output; the vector is broadcast along a leading axis; an
    integer product; a complex one: no rewrite, and jit still gives eager's bits."""
    x, w = jnp.asarray(data((6, 5), np.float32, 1)), jnp.asarray(data((5, 4), np.float32, 2))
    b4, b6 = jnp.asarray(data((4,), np.float32, 3)), jnp.asarray(data((6,), np.float32, 4))
    both = lambda x, w, b: (x @ w, x @ w + b)  # noqa: E731
    rows = lambda x, w, b: x @ w + b[:, None]  # noqa: E731
    assert "dot_general+bias" not in fused(both, x, w, b4)
    assert "dot_general+bias" not in fused(rows, x, w, b6)
    for a, b in zip(invarax.jit(both)(x, w, b4), both(x, w, b4), strict=True):
        assert_bitwise(np.asarray(a), np.asarray(b))
    check(rows, x, w, b6)
    xi, wi, bi = (jnp.asarray(np.arange(n, dtype=np.int32).reshape(s)) for n, s in
                  [(30, (6, 5)), (20, (5, 4)), (4, (4,))])
    plain = lambda x, w, b: x @ w + b  # noqa: E731
    assert "dot_general+bias" not in fused(plain, xi, wi, bi)
    check(plain, xi, wi, bi)
    xc = (x + 1j * x).astype(np.complex64)
    assert "dot_general+bias" not in fused(plain, xc, w.astype(np.complex64),
                                           b4.astype(np.complex64))


def test_the_kernel_epilogue_is_one_addition_after_the_product():
    """``_native.gemm`` with a bias: the product, then ``c + bias`` (``bias + c`` first),
    for row and column splits over several threads, batches and the bias checks."""
    for dtype in DTYPES:
        a, b = data((3, 70, 300), dtype, 8), data((3, 300, 90), dtype, 9)
        bias = data((90,), dtype, 10)
        plain = np.empty((3, 70, 90), dtype)
        _native.gemm(a, b, plain, 1)
        for threads in (1, 2, 3, 8):
            for first in (False, True):
                out = np.empty_like(plain)
                _native.gemm(a, b, out, threads, bias, first)
                with np.errstate(invalid="ignore"):  # (inf - inf)
                    assert_bitwise(out, bias + plain if first else plain + bias)
        with pytest.raises(ValueError, match="bias"):
            _native.gemm(a, b, np.empty_like(plain), 1, bias[:-1])
        with pytest.raises(ValueError, match="bias"):
            _native.gemm(a, b, np.empty_like(plain), 1, np.zeros(180, dtype)[::2])

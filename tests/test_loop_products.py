"""Products in compiled programs (``compiler/dots.py``): the prepared contraction gives
``dot_general``'s bits, and a scan body's products of a scanned slice and a loop-invariant
value, computed for every iteration before the loop, give the per-iteration bits (N3, N1)."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax.numpy as jnp
from invarax import grad, jit, lax, make_jaxpr, vmap
from invarax.compiler.lower import compile_loop
from invarax.kernels.contraction import dot_general, prepared

RNG = np.random.default_rng(0)

CASES = [  # lhs shape, rhs shape, dimension numbers
    ((5, 7), (7, 3), (((1,), (0,)), ((), ()))),
    ((7, 5), (7, 3), (((0,), (0,)), ((), ()))),
    ((5, 7), (3, 7), (((1,), (1,)), ((), ()))),
    ((2, 5, 7), (2, 7, 3), (((2,), (1,)), ((0,), (0,)))),
    ((4, 2, 6), (6, 3, 4), (((2,), (0,)), ((0,), (2,)))),
    ((3, 4, 5), (5, 4, 2), (((1, 2), (1, 0)), ((), ()))),
    ((32, 300), (300, 40), (((1,), (0,)), ((), ()))),
    ((6,), (6,), (((0,), (0,)), ((), ()))),
    ((0, 4), (4, 3), (((1,), (0,)), ((), ()))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.complex64])
@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", CASES)
def test_prepared_gives_dot_general_bits(lhs_shape, rhs_shape, dims, dtype):
    def draw(shape):
        x = RNG.standard_normal(shape) * 3
        if np.dtype(dtype).kind == "c":
            x = x + 1j * RNG.standard_normal(shape)
        return x.astype(dtype)

    lhs, rhs = draw(lhs_shape), draw(rhs_shape)
    run = prepared(lhs_shape, rhs_shape, dims, np.dtype(dtype))
    expected = dot_general(lhs, rhs, dims, np.dtype(dtype))
    got = run(lhs, rhs)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert_bitwise(got, expected)
    # strided operands (a transposed copy viewed back) give the same bits
    assert_bitwise(run(np.asfortranarray(lhs), np.asfortranarray(rhs)), expected)


def _rnn(w_in, w_rec, xs):
    def step(h, x):
        h = jnp.tanh(x @ w_in + h @ w_rec)
        return h, h * 2.0

    return lax.scan(step, jnp.zeros((xs.shape[1], w_rec.shape[0]), xs.dtype), xs)


def _rnn_unrolled(w_in, w_rec, xs):
    h, ys = jnp.zeros((xs.shape[1], w_rec.shape[0]), xs.dtype), []
    w_in, w_rec = jnp.asarray(w_in), jnp.asarray(w_rec)
    for x in xs:
        h = jnp.tanh(x @ w_in + h @ w_rec)
        ys.append(h * 2.0)
    return h, jnp.stack(ys)


def test_stacked_input_products_keep_each_iteration_bits(dtype=np.float32):
    w_in = (RNG.standard_normal((5, 8)) / 2).astype(dtype)
    w_rec = (RNG.standard_normal((8, 8)) / 3).astype(dtype)
    xs = RNG.standard_normal((9, 4, 5)).astype(dtype)
    expected = _rnn_unrolled(w_in, w_rec, xs)
    for f in (_rnn, jit(_rnn)):
        for got, want in zip(f(w_in, w_rec, xs), expected, strict=True):
            assert_bitwise(got, want)
    for rev in (False, True):  # reverse scans index the stacked products by iteration too
        def loss(w_in, w_rec, xs, rev=rev):
            def step(h, x):
                return jnp.tanh(x @ w_in + h @ w_rec), None
            h0 = jnp.zeros((xs.shape[1], w_rec.shape[0]), xs.dtype)
            return jnp.sum(lax.scan(step, h0, xs, reverse=rev)[0] ** 2)
        g = grad(loss, argnums=(0, 1))(w_in, w_rec, xs)
        for a, b in zip(g, jit(grad(loss, argnums=(0, 1)))(w_in, w_rec, xs), strict=True):
            assert_bitwise(a, b)


def test_stacked_products_on_either_side_and_batched_rows():
    w = RNG.standard_normal((3, 6)).astype(np.float32)
    xs = RNG.standard_normal((7, 6, 2)).astype(np.float32)

    def left(w, xs):  # the scanned slice is the rhs: W @ x[i]
        def step(c, x):
            y = w @ x
            return c + y, y
        return lax.scan(step, jnp.zeros((3, 2), np.float32), xs)

    c, ys = left(w, xs)
    c_ref = np.zeros((3, 2), np.float32)
    for i in range(7):
        y = np.asarray(w @ jnp.asarray(xs[i]))
        assert_bitwise(ys[i], y)
        c_ref = c_ref + y
    assert_bitwise(c, c_ref)
    batch = RNG.standard_normal((5, 7, 6, 2)).astype(np.float32)
    bc, bys = vmap(left, in_axes=(None, 0))(w, batch)
    for i in range(5):
        one = left(w, batch[i])
        assert_bitwise(bc[i], one[0])
        assert_bitwise(bys[i], one[1])


def test_the_loop_source_computes_the_stacked_product_once():
    def body(w, c, x):
        y = x @ w + c
        return y, y

    w = np.ones((3, 4), np.float32)
    jaxpr = make_jaxpr(body)(w, np.zeros((2, 4), np.float32), np.ones((2, 3), np.float32)).jaxpr
    run = compile_loop(jaxpr, 1, 1)
    before_loop = run.source.split("for _i in order:")[0]
    assert "s0 = " in before_loop and "s0[_i]" in run.source
    xs = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    ys = np.empty((5, 2, 4), np.float32)
    (c,) = run(w, np.zeros((2, 4), np.float32), xs, ys, range(5))
    c_ref = np.zeros((2, 4), np.float32)
    for i in range(5):
        c_ref = dot_general(xs[i], w, (((1,), (0,)), ((), ())), np.dtype(np.float32)) + c_ref
        assert_bitwise(ys[i], c_ref)
    assert_bitwise(c, c_ref)


def _pieces_sum(a, b, c):  # regions [0, 2), [2, 4), [5, 7): column 4 is no piece's
    ab = jnp.pad(a, ((0, 0), (0, 5))) + jnp.pad(b, ((0, 0), (2, 3)))
    return ab + jnp.pad(c, ((0, 0), (5, 0)))


def test_pad_sums_keep_the_bits_of_pads_and_adds():
    specials = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 1e-45, -1e-45, -3.5], np.float32)
    a, b, c = (RNG.choice(specials, (3, 2)) for _ in range(3))
    jitted = jit(_pieces_sum)
    from invarax.compiler.pads import pad_sums

    jaxpr = make_jaxpr(_pieces_sum)(a, b, c).jaxpr
    assert [str(i.primitive) for i in pad_sums(jaxpr.eqns, jaxpr.outvars)] == ["pad_sum"]
    assert_bitwise(jitted(a, b, c), _pieces_sum(a, b, c))
    assert np.signbit(np.asarray(jitted(a, b, c))).sum() == np.signbit(
        np.asarray(_pieces_sum(a, b, c))).sum()


def test_overlapping_or_signed_zero_pads_stay_as_they_are():
    from invarax.compiler.pads import pad_sums

    def overlap(a, b):
        return jnp.pad(a, ((0, 0), (0, 1))) + jnp.pad(b, ((0, 0), (1, 0)))

    def negative_zero(a, b):
        return (jax_pad(a, -0.0, ((0, 0, 0), (0, 2, 0)))
                + jax_pad(b, 0.0, ((0, 0, 0), (2, 0, 0))))

    def jax_pad(x, value, config):
        return lax.pad(x, np.float32(value), config)

    a = np.full((2, 2), -0.0, np.float32)
    for f in (overlap, negative_zero):
        jaxpr = make_jaxpr(f)(a, a).jaxpr
        assert "pad_sum" not in [str(i.primitive) for i in pad_sums(jaxpr.eqns, jaxpr.outvars)]
        assert_bitwise(jit(f)(a, a), f(a, a))


def test_sliced_gates_gradient_jit_equals_eager():
    def loss(z):
        n = z.shape[1] // 4
        parts = [jnp.tanh(z[:, k * n:(k + 1) * n]) * (k + 1.0) for k in range(4)]
        return jnp.sum(parts[0] * parts[1] - parts[2] * parts[3])

    z = RNG.standard_normal((3, 16)).astype(np.float32)
    z[0, :] = -0.0
    assert_bitwise(jit(grad(loss))(z), grad(loss)(z))


def test_recycled_carries_never_write_the_callers_arrays_or_views():
    init = RNG.standard_normal((4, 6)).astype(np.float32)
    keep = init.copy()
    xs = RNG.standard_normal((5, 4, 6)).astype(np.float32)

    def body(carry, x):
        acc, twin, flat = carry
        acc = acc + x * 2.0  # written over in place from the second iteration on
        same = acc * 1.0
        return (acc, same + 0.0, same.reshape(-1)[:24].reshape(4, 6) + flat), acc

    def unrolled(init, xs):
        acc, twin, flat, ys = init, init, init, []
        for x in xs:
            acc = acc + x * 2.0
            same = acc * 1.0
            acc, twin, flat = acc, same + 0.0, same.reshape(-1)[:24].reshape(4, 6) + flat
            ys.append(acc)
        return (acc, twin, flat), jnp.stack(ys)

    def scanned(i, x):
        return lax.scan(body, (i, i, i), x)

    for f in (scanned, jit(scanned)):
        (acc, twin, flat), ys = f(init, xs)
        (acc_r, twin_r, flat_r), ys_r = unrolled(jnp.asarray(init), xs)
        for got, want in ((acc, acc_r), (twin, twin_r), (flat, flat_r), (ys, ys_r)):
            assert_bitwise(got, want)
        assert_bitwise(init, keep)


def test_the_loop_source_accumulates_owned_carries_in_place():
    def body(w, acc, x):
        return acc + x @ w, None

    w = np.ones((3, 4), np.float32)
    jaxpr = make_jaxpr(body)(w, np.zeros((2, 4), np.float32), np.ones((2, 3), np.float32)).jaxpr
    run = compile_loop(jaxpr, 1, 1)
    assert "v1 = _copy(v1)" in run.source and "out=v1" in run.source
    init = np.zeros((2, 4), np.float32)
    xs = RNG.standard_normal((3, 2, 3)).astype(np.float32)
    (acc,) = run(w, init, xs, range(3))
    assert not init.any() and acc is not init


def test_ys_computed_into_their_places():
    def body(c, x):
        h = jnp.tanh(c * x)  # a y twice, and the carry
        return h, (h, x, h, c - 1.0, x + 0.0)

    jaxpr = make_jaxpr(body)(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)).jaxpr
    assert "out=y0[_i]" in compile_loop(jaxpr, 0, 1).source
    init = RNG.standard_normal((2, 3)).astype(np.float32)
    xs = RNG.standard_normal((6, 2, 3)).astype(np.float32)
    c, ys = init, []
    for x in xs:
        out = body(jnp.asarray(c), jnp.asarray(x))
        c = out[0]
        ys.append(out[1])
    for f in (lax.scan, jit(lax.scan, static_argnums=0)):
        got_c, got_ys = f(body, init, xs)
        assert_bitwise(got_c, c)
        for k in range(5):
            assert_bitwise(got_ys[k], jnp.stack([y[k] for y in ys]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kept_packing_gives_gemm_bits_at_any_thread_count(dtype):
    from invarax.kernels import _native

    for m, n, k in [(32, 1024, 256), (32, 200, 257), (6, 17, 1), (7, 33, 513), (50, 64, 255),
                    (300, 48, 40), (2, 1000, 9)]:
        a = RNG.standard_normal((1, m, k)).astype(dtype)
        for b in (RNG.standard_normal((1, k, n)).astype(dtype),
                  np.ascontiguousarray(RNG.standard_normal((n, k)).astype(dtype).T)[None]):
            packed = _native.gemm_pack(b, m)
            assert packed is not None
            for threads in (1, 2, 3):
                want, got = np.empty((1, m, n), dtype), np.empty((1, m, n), dtype)
                _native.gemm(a, b, want, 1)
                _native.gemm_packed(a, packed, got, threads)
                assert_bitwise(got, want)
    # no kept packing for narrow, one-row or wider-than-a-block products
    for m, n in [(32, 8), (1, 100), (4, 1025)]:
        assert _native.gemm_pack(np.ones((1, 3, n), dtype), m) is None
    packed = _native.gemm_pack(np.ones((1, 8, 64), dtype), 32)
    with pytest.raises(ValueError, match="not one of B"):
        _native.gemm_packed(np.ones((1, 32, 9), dtype), packed, np.empty((1, 32, 64), dtype), 1)


def test_loop_weights_are_packed_once_and_keep_the_bits():
    w_in = (RNG.standard_normal((5, 40)) / 2).astype(np.float32)
    w_rec = (RNG.standard_normal((40, 40)) / 6).astype(np.float32)
    xs = RNG.standard_normal((6, 8, 5)).astype(np.float32)

    def body(w_rec, h, x):
        return jnp.tanh(x + h @ w_rec), None

    jaxpr = make_jaxpr(body)(w_rec, np.zeros((8, 40), np.float32),
                             np.zeros((8, 40), np.float32)).jaxpr
    assert ".pack(" in compile_loop(jaxpr, 1, 1).source.split("for _i in order:")[0]
    expected = _rnn_unrolled(w_in, w_rec, xs)
    for got, want in zip(jit(_rnn)(w_in, w_rec, xs), expected, strict=True):
        assert_bitwise(got, want)

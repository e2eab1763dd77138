"""Control flow (cond, switch, while_loop, fori_loop, scan, map) under every transformation.

Bitwise: eager equals the Python loop; N3 (jit == eager, also of grad); N1 (vmap row i ==
the unbatched run, batch sizes 1..17 and 1000; per-example gradients; batched-predicate
cond and while_loop). Gradients equal the unrolled loop's; check_grads of each primitive.
"""

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import grad, jit, jvp, lax, make_jaxpr, vmap
from invarax.core.eval import eval_jaxpr


def check_n3(f, *args):
    """jit(f) and the optimised jaxpr of f give eager f's bits and weak types."""
    want = invarax.tree_leaves(f(*args))
    got = invarax.tree_leaves(jit(f)(*args))
    closed = make_jaxpr(f, optimize=True)(*args)
    opt = eval_jaxpr(closed.jaxpr, closed.consts, *invarax.tree_leaves(args))
    for g, o, w in zip(got, opt, want, strict=True):
        assert_bitwise(g, w)
        assert_bitwise(o, w)
        assert g.weak_type == w.weak_type
    return want


def rnn(params, h0, xs):
    W, U, b = params

    def step(h, x):
        h = jnp.tanh(W @ h + U @ x + b)
        return h, jnp.sum(h * h)

    return lax.scan(step, h0, xs)


def rnn_unrolled(params, h0, xs):
    W, U, b = params
    h, ys = h0, []
    for t in range(xs.shape[0]):
        h = jnp.tanh(W @ h + U @ xs[t] + b)
        ys.append(jnp.sum(h * h))
    return h, jnp.stack(ys)


def rnn_loss(params, h0, xs, f=rnn):
    h, ys = f(params, h0, xs)
    return jnp.sum(h) + jnp.sum(ys)


def params(dtype=np.float32, hidden=4, features=3):
    return (jnp.asarray(data((hidden, hidden), dtype, 1) * 0.4),
            jnp.asarray(data((hidden, features), dtype, 2) * 0.4),
            jnp.asarray(data((hidden,), dtype, 3) * 0.1))


# ---------------------------------------------------------------------------------------
# Eager semantics


def test_scan_is_the_python_loop_bitwise():
    p, h0, xs = params(), jnp.asarray(data((4,))), jnp.asarray(data((6, 3), seed=4))
    h, ys = rnn(p, h0, xs)
    h2, ys2 = rnn_unrolled(p, h0, xs)
    assert_bitwise(h, h2)
    assert_bitwise(ys, ys2)


def test_scan_reverse_pytrees_and_no_xs():
    xs = {"a": jnp.arange(4.0), "b": (jnp.ones((4, 2)),)}

    def f(c, x):
        return {"s": c["s"] + x["a"]}, (x["b"][0] * c["s"], None)

    carry, (ys, none) = lax.scan(f, {"s": jnp.float32(1.0)}, xs, reverse=True)
    assert none is None
    assert float(carry["s"]) == 7.0
    np.testing.assert_array_equal(ys[:, 0], [7.0, 6.0, 4.0, 1.0])  # positions kept
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=5)
    assert int(c) == 32 and ys.tolist() == [1, 2, 4, 8, 16]
    c, ys = lax.scan(lambda c, x: (c, x), 0.0, jnp.zeros((0, 3)))
    assert ys.shape == (0, 3)


def test_fori_while_cond_switch_map():
    assert int(lax.fori_loop(0, 5, lambda i, x: x + i, 0)) == 10
    assert int(lax.fori_loop(3, 1, lambda i, x: x + i, 0)) == 0
    assert int(lax.fori_loop(jnp.int32(0), 4, lambda i, x: x * 2, 1)) == 16
    x = jit(lambda n: lax.fori_loop(0, n, lambda i, x: x + i, 0))(5)  # traced bound: while
    assert int(x) == 10
    assert int(lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)) == 16
    assert float(lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 2.0)) == 3.0
    assert float(lax.cond(0.0, lambda x: x + 1.0, lambda x: x - 1.0, 2.0)) == 1.0
    branches = [lambda x: x, lambda x: -x, lambda x: x * 10]
    assert [float(lax.switch(i, branches, 2.0)) for i in (-3, 0, 1, 2, 7)] == [
        2.0, 2.0, -2.0, 20.0, 20.0]
    xs = jnp.arange(7.0)
    for bs in (None, 1, 3, 7, 10):
        assert_bitwise(lax.map(lambda x: jnp.sin(x) * 2.0, xs, batch_size=bs),
                       jnp.sin(xs) * 2.0)


def test_weak_typed_init_takes_the_body_type():
    y = jnp.float32(0.5)
    out = lax.fori_loop(0, 3, lambda i, x: x + y, 0.0)
    assert out.dtype == np.float32 and not out.weak_type
    c, _ = lax.scan(lambda c, x: (c + x, None), 0, jnp.arange(3.0))
    assert c.dtype == np.float32


def test_closures_over_tracers():
    def f(a, x):
        def body(i, c):
            return c * a + i
        branch = lax.cond(x > 0, lambda v: v * a, lambda v: v - a, x)
        return lax.fori_loop(0, 3, body, x) + branch

    a, x = jnp.float32(1.5), jnp.float32(0.7)
    want = check_n3(f, a, x)[0]
    np.testing.assert_allclose(want, ((0.7 * 1.5) * 1.5 + 1) * 1.5 + 2 + 0.7 * 1.5, rtol=1e-6)
    check_n3(grad(f, argnums=(0, 1)), a, x)


# ---------------------------------------------------------------------------------------
# N3: jit == eager, of each construct and its gradient; the body's fusion changes no bit


def newton(a):
    def cond(c):
        return jnp.abs(c[0] * c[0] - a) > 1e-6 * a

    def body(c):
        return (c[0] + a / c[0]) * 0.5, c[1] + 1

    return lax.while_loop(cond, body, (a, 0))


def piecewise(x):
    return lax.cond(jnp.sum(x) > 0, lambda x: jnp.sin(x) * 2.0, lambda x: jnp.cos(x) - x, x)


def three_way(i, x):
    return lax.switch(i, [jnp.sin, lambda x: x * x, lambda x: jnp.exp(-x)], x)


def fori_poly(x):
    return lax.fori_loop(0, 4, lambda i, c: c * x + jnp.sin(c), x)


def test_n3_each_construct_and_its_grad():
    p, h0, xs = params(), jnp.asarray(data((4,))), jnp.asarray(data((6, 3), seed=4))
    check_n3(rnn, p, h0, xs)
    check_n3(grad(rnn_loss, argnums=(0, 1, 2)), p, h0, xs)
    x = jnp.asarray(data((5,), seed=5))
    for f in (piecewise, fori_poly, lambda x: lax.map(jnp.tanh, x)):
        check_n3(f, x)
        check_n3(grad(lambda x, f=f: jnp.sum(f(x))), x)
    check_n3(lambda x: three_way(jnp.int32(2), x), x)
    check_n3(grad(lambda x: jnp.sum(three_way(jnp.int32(1), x))), x)
    check_n3(newton, jnp.float32(7.0))
    check_n3(lambda a: jvp(newton, (a,), (jnp.float32(1.0),)), jnp.float32(7.0))


def test_fused_body_changes_no_bit():
    x = jnp.asarray(data((3000,), seed=6))

    def body(c, _):  # a long elementwise chain: fused in the compiled body
        return jnp.tanh(c * 1.01 + jnp.sin(c) * jnp.exp(-c * c) - 0.3), None

    f = lambda x: lax.scan(body, x, None, length=3)[0]
    check_n3(f, x)
    c = x
    for _ in range(3):
        c = body(c, None)[0]
    assert_bitwise(f(x), c)


# ---------------------------------------------------------------------------------------
# Gradients: equal to the unrolled loop's; check_grads of each primitive


def test_scan_grad_equals_unrolled_loop():
    p, h0, xs = params(), jnp.asarray(data((4,))), jnp.asarray(data((6, 3), seed=4))
    g = grad(rnn_loss, argnums=(0, 1, 2))(p, h0, xs)
    u = grad(lambda *a: rnn_loss(*a, f=rnn_unrolled), argnums=(0, 1, 2))(p, h0, xs)
    for a, b in zip(invarax.tree_leaves(g), invarax.tree_leaves(u), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # Every cotangent is summed in the unrolled
    # loop's order, so the gradient is bitwise the unrolled one.
    for a, b in zip(invarax.tree_leaves(g), invarax.tree_leaves(u), strict=True):
        assert_bitwise(a, b)


def test_scan_grad_is_bitwise_the_unrolled_loop_with_shared_weights():
    """A weight used before, inside (twice) and after the loops: the loop adds its terms to
    the cotangent accumulated outside one by one, as the unrolled loop's backward pass."""
    p, h0, xs = params(), jnp.asarray(data((4,))), jnp.asarray(data((6, 3), seed=4))

    def loss(f):
        def run(p, h0, xs):
            W = p[0]
            h, ys = f(p, jnp.sin(W @ h0), xs)
            h2, ys2 = f(p, h, xs)
            return jnp.sum(W @ h2) + jnp.sum(ys) + jnp.sum(ys2)
        return run

    g = grad(loss(rnn), argnums=(0, 1, 2))(p, h0, xs)
    u = grad(loss(rnn_unrolled), argnums=(0, 1, 2))(p, h0, xs)
    for a, b in zip(invarax.tree_leaves(g), invarax.tree_leaves(u), strict=True):
        assert_bitwise(a, b)
    check_n3(grad(loss(rnn), argnums=(0, 1, 2)), p, h0, xs)


@pytest.mark.parametrize("reverse", [False, True])
def test_check_grads_scan(x64, reverse):
    p = params(np.float64)
    h0, xs = jnp.asarray(data((4,), np.float64)), jnp.asarray(data((5, 3), np.float64, 4))

    def f(p, h0, xs):
        W, U, b = p
        return lax.scan(lambda h, x: (jnp.tanh(W @ h + U @ x + b), jnp.sin(h) * x[0]),
                        h0, xs, reverse=reverse)

    check_grads(f, (p, h0, xs), order=2)


def test_check_grads_cond_switch_fori(x64):
    x = jnp.asarray(data((4,), np.float64, 5))
    check_grads(piecewise, (x,), order=2)
    check_grads(lambda x: piecewise(-jnp.abs(x)), (x,), order=1)
    check_grads(lambda x: three_way(jnp.int32(2), x), (x,), order=2)
    check_grads(fori_poly, (x * 0.3,), order=2)
    check_grads(lambda x: lax.map(lambda v: v * jnp.sin(v), x), (x,))


def test_check_grads_while_forward(x64):
    check_grads(lambda a: newton(a)[0], (jnp.float64(7.0),), modes=("fwd",), order=2)


def test_grad_of_while_loop_is_a_clear_error():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop"):
        grad(lambda a: newton(a)[0])(jnp.float32(2.0))
    with pytest.raises(ValueError, match="fori_loop with static start/stop"):
        jit(grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x)))(2.0, 3)


# ---------------------------------------------------------------------------------------
# N1: vmap row i is bitwise the unbatched run


@pytest.mark.parametrize("n", [*range(1, 18), 1000])
def test_n1_scan_rnn_batch_sizes(n):
    p = params()
    h0 = jnp.asarray(data((n, 4), seed=n))
    xs = jnp.asarray(data((n, 5, 3), seed=n + 1))
    h, ys = vmap(rnn, in_axes=(None, 0, 0))(p, h0, xs)
    single = jit(rnn)
    rows = range(n) if n < 1000 else range(0, 1000, 37)
    for i in rows:
        hi, yi = single(p, h0[i], xs[i])
        assert_bitwise(h[i], hi)
        assert_bitwise(ys[i], yi)


def test_n1_per_example_gradients():
    p = params()
    h0 = jnp.asarray(data((7, 4), seed=8))
    xs = jnp.asarray(data((7, 5, 3), seed=9))
    g = vmap(grad(rnn_loss), in_axes=(None, 0, 0))(p, h0, xs)
    for i in range(7):
        gi = grad(rnn_loss)(p, h0[i], xs[i])
        for a, b in zip(invarax.tree_leaves(g), invarax.tree_leaves(gi), strict=True):
            assert_bitwise(a[i], b)
    x = jnp.asarray(data((9, 4), seed=10))
    for f in (piecewise, fori_poly):
        gf = grad(lambda v, f=f: jnp.sum(f(v)))
        batched = vmap(gf)(x)
        for i in range(9):
            assert_bitwise(batched[i], gf(x[i]))


def test_n1_batched_predicates():
    x = jnp.asarray(data((11, 3), seed=11))
    batched = vmap(piecewise)(x)
    assert len({bool(jnp.sum(r) > 0) for r in x}) == 2  # both branches are taken
    for i in range(11):
        assert_bitwise(batched[i], piecewise(x[i]))
    idx = jnp.asarray(np.arange(11, dtype=np.int32) % 4 - 1)  # clamped: -1 -> 0, 2 -> 2
    sw = vmap(three_way)(idx, x)
    for i in range(11):
        assert_bitwise(sw[i], three_way(idx[i], x[i]))
    a = jnp.asarray(np.random.default_rng(0).uniform(0.5, 1e4, 64).astype(np.float32))
    root, steps = vmap(newton)(a)
    assert len(set(np.asarray(steps).tolist())) > 2  # per-example trip counts
    for i in range(64):
        r, s = newton(a[i])
        assert_bitwise(root[i], r)
        assert int(steps[i]) == int(s)
    jr, js = jit(vmap(newton))(a)
    assert_bitwise(jr, root)


def test_vmap_with_unbatched_predicate_and_closures():
    W = jnp.asarray(data((3, 3), seed=12))

    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: jnp.tanh(W @ c), x)

    x = jnp.asarray(data((5, 3), seed=13))
    out = vmap(f, in_axes=(0, None))(x, 4)
    for i in range(5):
        assert_bitwise(out[i], f(x[i], 4))
    outs = vmap(lambda w: f(x[0], 3) * w)(jnp.arange(3.0))
    assert outs.shape == (3, 3)


# ---------------------------------------------------------------------------------------
# Printing: JAX's format


def test_make_jaxpr_prints_jax_format():
    text = str(make_jaxpr(lambda x: lax.scan(lambda c, x: (c + x, c * x), 0.0, x))(
        jnp.arange(3.0)))
    assert "scan[" in text and "jaxpr={ lambda ; " in text and "length=3" in text
    assert "reverse=False" in text and "num_carry=1" in text and "num_consts=0" in text
    text = str(make_jaxpr(piecewise)(jnp.ones(2)))
    assert "cond[\n      branches=(\n        { lambda ; " in text
    text = str(make_jaxpr(newton)(1.0))
    assert "while[" in text and "body_jaxpr={" in text and "cond_jaxpr={" in text
    opt = str(make_jaxpr(fori_poly, optimize=True)(jnp.ones(2)))
    assert "scan[" in opt


def test_stop_gradient_and_select_n_inside_bodies():
    def f(x):
        def body(c, _):
            return lax.select_n(c > 1.0, c * x, lax.stop_gradient(c) + x), None
        return lax.scan(body, x, None, length=4)[0]

    def unrolled(x):
        c = x
        for _ in range(4):
            c = lax.select_n(c > 1.0, c * x, lax.stop_gradient(c) + x)
        return c

    for x in (0.3, 0.9, 1.5):
        assert_bitwise(f(jnp.float32(x)), unrolled(jnp.float32(x)))
        np.testing.assert_allclose(grad(f)(jnp.float32(x)), grad(unrolled)(jnp.float32(x)),
                                   rtol=1e-6)


def test_invarax_ir_prints_loops():
    from invarax.cli._ir import program_text

    text = program_text(lambda x: jnp.sum(fori_poly(x)), [((3,), np.dtype(np.float32))],
                        "grad", True, 4)
    assert text.count("scan[") == 2 and "reverse=True" in text


def test_nested_scans_with_cond_grad_vmap_hessian():
    W = jnp.asarray(data((3, 3), seed=14))

    def f(x, W):
        def outer(c, xi):
            def inner(d, _):
                d = lax.cond(jnp.sum(d) > 0, lambda v: jnp.tanh(W @ v),
                             lambda v: v * 0.5 + xi, d)
                return d, jnp.sum(d)
            d, ys = lax.scan(inner, c, None, length=3)
            return d, ys.sum()
        c, ys = lax.scan(outer, x, jnp.arange(4.0))
        return jnp.sum(c) + jnp.sum(ys)

    def unrolled(x, W):
        c, total = x, 0.0
        for xi in range(4):
            d, s = c, 0.0
            for _ in range(3):
                d = jnp.tanh(W @ d) if jnp.sum(d) > 0 else d * 0.5 + xi
                s = s + jnp.sum(d)
            c, total = d, total + s
        return jnp.sum(c) + total

    X = jnp.asarray(data((5, 3), seed=15))
    for i in range(3):
        for a, b in zip(grad(f, argnums=(0, 1))(X[i], W), grad(unrolled, argnums=(0, 1))(X[i], W),
                        strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    per_example = vmap(grad(f, argnums=1), in_axes=(0, None))(X, W)
    for i in range(5):
        assert_bitwise(per_example[i], grad(f, argnums=1)(X[i], W))
    check_n3(grad(f), X[0], W)
    assert invarax.hessian(lambda x: f(x, W))(X[0]).shape == (3, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_scalar_operators_in_loops_are_bitwise_the_ufuncs(x64, dtype):
    """A loop body's 0-d + - * / and comparisons run as Python operators on NumPy scalars:
    bitwise the eager ufuncs, with int32 wrap-around, NaN, inf and signed zeros."""
    def body(c, x):
        a, b, k = c
        a2 = a * x - lax.div(b, x + a) + (a - b)
        b2 = lax.select_n(a2 < b, b * x, -a2) + lax.select_n(a2 == x, a, b) * (a >= x)
        return (a2, b2, k * 3 + 7), (a2 != b2, a2 <= x, a2 > 0, lax.div(b2, a2))

    values = [0.5, -0.0, 3.0, np.inf, 1e30, np.nan, 2.0, 1e-30]
    if dtype == np.int32:
        values = [3, -7, 2**31 - 1, 5, -2**31, 1, 0, 9]
    with np.errstate(over="ignore"):  # 1e30 is inf in float16
        xs = jnp.asarray(np.array(values, dtype))
    init = (jnp.asarray(np.array(1.5).astype(dtype)), jnp.asarray(np.array(-0.25).astype(dtype)),
            jnp.int32(2**30))
    loop = lax.scan(body, init, xs)
    c, ys = init, []
    for t in range(xs.shape[0]):
        c, y = body(c, xs[t])
        ys.append(y)
    stacked = [jnp.stack([y[k] for y in ys]) for k in range(4)]
    for a, b in zip(invarax.tree_leaves(loop), [*c, *stacked], strict=True):
        assert_bitwise(a, b)
    check_n3(lambda init, xs: lax.scan(body, init, xs), init, xs)


def test_scalar_while_loop_is_bitwise_the_unrolled_loop():
    """A while loop's generated code (scalar operators, NaN recomputed by the ufunc) gives
    the bits of the same steps run eagerly, for a traced bound too."""
    def step(i, c):
        a, b = c
        return a * b - (a + 0.5), lax.select_n(a < b, b - a, a / b)

    init = (jnp.float32(1.25), jnp.float32(-3.0))
    eager = init
    for i in range(12):  # reaches inf and NaN
        eager = step(i, eager)
        eager = (eager[0] * 1e6, eager[1])
    f = jit(lambda n, c: lax.fori_loop(0, n, lambda i, c: (step(i, c)[0] * 1e6, step(i, c)[1]),
                                       c))
    for a, b in zip(f(12, init), eager, strict=True):
        assert_bitwise(a, b)
    assert np.isnan(np.asarray(eager[0])) or np.isinf(np.asarray(eager[0]))
    check_n3(lambda c: lax.while_loop(lambda c: c[0] < 1e30, lambda c: step(0, c), c), init)


def test_jitted_loop_bodies_compile_once():
    from invarax.control_flow import common as cf

    f = jit(lambda x: lax.fori_loop(0, 10, lambda i, c: c * 0.5 + 1.0, x))
    g = jit(grad(lambda x: lax.fori_loop(0, 10, lambda i, c: jnp.sin(c) * x, x)))
    f(np.float32(1.0))
    g(np.float32(1.0))
    before = cf._scan_loop.cache_info()
    for _ in range(4):
        f(np.float32(1.0))
        g(np.float32(2.0))
    after = cf._scan_loop.cache_info()
    assert after.misses == before.misses and after.hits >= before.hits + 12


def test_loop_invariant_statements_run_once_before_the_loop():
    from invarax.compiler.lower import compile_loop

    W = jnp.asarray(data((3, 3), seed=16))

    def f(x, n=5):
        return lax.scan(lambda c, _: (jnp.tanh(jnp.exp(W) @ c), None), x, None, length=n)[0]

    body = make_jaxpr(lambda W, c: (jnp.tanh(jnp.exp(W) @ c),))(W, jnp.ones(3)).jaxpr
    source = compile_loop(body, 1, 1).source
    assert source.index("= f0(v0)") < source.index("for _i in order")  # exp(W): hoisted
    x = jnp.asarray(data((3,), seed=17))
    c = x
    for _ in range(5):
        c = jnp.tanh(jnp.exp(W) @ c)
    assert_bitwise(f(x), c)
    assert_bitwise(f(x, 0), x)
    check_n3(f, x)


def test_loop_invariant_residuals_are_not_stacked():
    # W.T (computed from a loop constant) is needed by the backward pass: the staged scan
    # computes it again once, instead of the known scan saving a copy per iteration.
    W = jnp.asarray(data((4, 3), seed=21))
    xs = jnp.asarray(data((6, 3), seed=22))

    def f(W, h0):
        def step(h, x):
            h = jnp.tanh(h @ W.T[:3, :3] + x)
            return h, h

        return jnp.sum(lax.scan(step, h0, xs)[1] ** 2)

    h0 = jnp.asarray(data((3,), seed=23))
    closed = make_jaxpr(grad(f, argnums=(0, 1)))(W, h0)
    shapes = [v.aval.shape for e in closed.jaxpr.eqns for v in e.outvars]
    assert (6, 3, 4) not in shapes and (6, 3, 3) not in shapes, shapes
    want = check_n3(grad(f, argnums=(0, 1)), W, h0)

    def unrolled(W, h0):
        h, total = h0, 0.0
        for x in xs:
            h = jnp.tanh(h @ W.T[:3, :3] + x)
            total = total + jnp.sum(h ** 2)
        return total

    for g, u in zip(want, grad(unrolled, argnums=(0, 1))(W, h0), strict=True):
        np.testing.assert_allclose(g, u, rtol=1e-5, atol=1e-6)


def test_pooled_stacked_outputs_are_never_shared_with_a_live_array():
    from invarax.core import buffers as _buffers

    xs = jnp.asarray(data((8, 128, 64), seed=24))  # 256 KiB stacked ys: pooled

    def f(s):
        return lax.scan(lambda c, x: (c, x * s), 0.0, xs)[1]

    first = np.asarray(f(2.0))
    view = np.asarray(f(3.0))[1:]
    again = [np.asarray(f(float(k))) for k in range(4, 8)]
    assert_bitwise(first, np.asarray(xs) * np.float32(2.0))
    assert_bitwise(view, np.asarray(xs)[1:] * np.float32(3.0))
    assert len({id(a) for a in [first, view.base, *again]}) == 6
    del first, view, again
    a = np.asarray(f(1.0))
    b = np.asarray(f(1.0))
    assert a is not b  # one taken back from the pool, one new: never the same live buffer
    assert _buffers.MIN_BYTES <= xs.size * 4

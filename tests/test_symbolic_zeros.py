"""Symbolic zeros: ``custom_jvp.defjvp(rule, symbolic_zeros=True)`` and
``custom_vjp.defvjp(fwd, bwd, symbolic_zeros=True)`` (JAX's), ``filter_custom_jvp`` and
``filter_custom_vjp`` (Equinox's: None for an input that is not differentiated, for an
output that is not used, and ``perturbed``), the same pattern as JAX/Equinox under grad,
jvp, jit and vmap, and values bitwise across them."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax.custom_derivatives import SymbolicZero


def _filtered(mod, lib_jnp, seen):
    @mod.filter_custom_jvp
    def call(x, y, *, scale):
        return lib_jnp.sin(x) * y * scale

    @call.def_jvp
    def call_jvp(primals, tangents, *, scale):
        (x, y), (tx, ty) = primals, tangents
        seen.append((tx is None, ty is None))
        out = call(x, y, scale=scale)
        t = 0.0
        if tx is not None:
            t = t + lib_jnp.cos(x) * y * scale * tx
        if ty is not None:
            t = t + lib_jnp.sin(x) * scale * ty
        return out, t * lib_jnp.ones_like(out)

    return call


def _patterns(mod, lib_jnp, x, y):
    seen = []
    call = _filtered(mod, lib_jnp, seen)
    results = [
        mod.filter_grad(lambda x, y: call(x, y, scale=2.0).sum())(x, y),
        mod.filter_grad(lambda y, x: call(x, y, scale=2.0).sum())(y, x),
        mod.filter_grad(lambda xy: call(*xy, scale=2.0).sum())((x, y))[1],
        mod.filter_jvp(lambda x, y: call(x, y, scale=2.0), (x, y), (lib_jnp.ones_like(x),
                                                                   None))[1],
        mod.filter_jit(mod.filter_grad(lambda x, y: call(x, y, scale=2.0).sum()))(x, y),
    ]
    return seen, results


def test_filter_custom_jvp_symbolic_zeros_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    x, y = data(3), data(3, seed=1)
    ours, our_values = _patterns(invarax, jnp, jnp.asarray(x), jnp.asarray(y))
    theirs, their_values = _patterns(eqx, jax.numpy, x, y)
    assert ours == theirs
    assert ours[0] == (False, True) and ours[1] == (True, False)
    assert ours[2] == (False, False)
    for a, b in zip(our_values, their_values, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)


def test_filter_custom_jvp_symbolic_zeros_under_vmap_and_jit_bitwise():
    seen = []
    call = _filtered(invarax, jnp, seen)
    xs, ys = jnp.asarray(data((4, 3))), jnp.asarray(data((4, 3), seed=1))

    def grad_x(x, y):
        return invarax.filter_grad(lambda x: call(x, y, scale=2.0).sum())(x)

    rows = [grad_x(xs[i], ys[i]) for i in range(4)]
    for batched in (invarax.vmap(grad_x)(xs, ys),
                    invarax.filter_jit(invarax.vmap(grad_x))(xs, ys)):
        for i in range(4):
            assert_bitwise(batched[i], rows[i])
    summed = invarax.filter_grad(lambda x: invarax.vmap(
        lambda a, b: call(a, b, scale=2.0))(x, ys).sum())(xs)
    for i in range(4):
        assert_bitwise(summed[i], rows[i])
    assert_bitwise(invarax.filter_jit(grad_x)(xs[2], ys[2]), rows[2])
    assert set(seen) == {(False, True)}


def _plain(mod, lib_jnp, seen):
    @mod.custom_jvp
    def f(x, y):
        return x * y

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append(tuple(type(t).__name__ == "SymbolicZero" for t in tangents))
        tx = lib_jnp.zeros_like(x) if type(tx).__name__ == "SymbolicZero" else tx
        ty = lib_jnp.zeros_like(y) if type(ty).__name__ == "SymbolicZero" else ty
        return f(x, y), tx * y + x * ty

    f.defjvp(rule, symbolic_zeros=True)
    return f


def test_custom_jvp_symbolic_zeros_as_jax():
    jax = pytest.importorskip("jax")
    ours, theirs = [], []
    f, g = _plain(invarax, jnp, ours), _plain(jax, jax.numpy, theirs)
    for lib, h in ((invarax, f), (jax, g)):
        lib.grad(h)(2.0, 3.0)
        lib.grad(h, argnums=1)(2.0, 3.0)
        lib.jit(lib.grad(h, argnums=(0, 1)))(2.0, 3.0)
        lib.vmap(lib.grad(h), in_axes=(0, None))(lib.numpy.ones(2), 3.0)
    assert ours == theirs
    assert ours[:2] == [(False, True), (True, False)]


def test_symbolic_zero_object():
    z = SymbolicZero.from_primal_value(jnp.ones((2, 3)))
    assert z.shape == (2, 3) and z.dtype == np.float32 and repr(z) == "SymbolicZero"
    assert_bitwise(z.instantiate(), jnp.zeros((2, 3)))

    @invarax.custom_jvp
    def f(x):
        return x * 2.0

    f.defjvp(lambda p, t: (f(p[0]), SymbolicZero.from_primal_value(p[0])), symbolic_zeros=True)
    assert_bitwise(invarax.grad(f)(1.0), jnp.zeros((), jnp.float32))


def _vjp_pattern(jx, seen):
    @jx.custom_vjp
    def f(x, y):
        return x * y, jx.numpy.sin(x), y * 2.0

    def fwd(x, y):
        seen.append(("fwd", x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, cts):
        x, y = res
        seen.append(("bwd", *(type(c).__name__ == "SymbolicZero" for c in cts)))
        c0, c1, c2 = (0.0 if type(c).__name__ == "SymbolicZero" else c for c in cts)
        return c0 * y + c1 * jx.numpy.cos(x), c0 * x + 2.0 * c2

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    x, y = jx.numpy.array([0.5, 1.5]), jx.numpy.array([2.0, -1.0])
    loss = lambda x, y: f(x, y)[0].sum() + f(x, y)[1].sum()  # noqa: E731
    grads = [jx.grad(loss)(x, y), jx.jit(jx.grad(loss))(x, y),
             jx.vmap(jx.grad(lambda a, b: f(a, b)[0]))(x, y)]
    return [np.asarray(g) for g in grads]


def test_custom_vjp_symbolic_zeros_as_jax():
    jax = pytest.importorskip("jax")
    ours_seen, theirs_seen = [], []
    ours, theirs = _vjp_pattern(invarax, ours_seen), _vjp_pattern(jax, theirs_seen)
    # x perturbed, y not; the unused outputs' cotangents are symbolic zeros
    assert ours_seen == theirs_seen
    assert ours_seen[:4] == [("fwd", True, False), ("fwd", True, False),
                             ("bwd", True, False, True), ("bwd", False, True, True)]
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("lib", ["invarax", "equinox"])
def test_filter_custom_vjp_perturbed_and_unused_outputs_as_equinox(lib):
    # Equinox's test_filter_custom_vjp_symbolic_zero
    ex = invarax if lib == "invarax" else pytest.importorskip("equinox")
    jx = invarax if lib == "invarax" else pytest.importorskip("jax")
    seen = []

    @ex.filter_custom_vjp
    def f(x__y, *, foo):
        x, y = x__y
        return x + y + foo, x, y, foo

    @f.def_fwd
    def f_fwd(perturbed, x__y, *, foo):
        seen.append(("fwd", *perturbed))
        return f(x__y, foo=foo), None

    @f.def_bwd
    def f_bwd(res, ct, perturbed, x__y, *, foo):
        seen.append(("bwd", *perturbed, *(c is None for c in ct)))
        return ct[0], ct[2]

    run = jx.grad(lambda x, y: (lambda o: o[0] + o[2])(f((x, jx.numpy.array(1.0)), foo=y)))
    assert float(run(1.0, 2.0)) == 1.0
    assert seen == [("fwd", True, False), ("bwd", True, False, False, True, False, True)]

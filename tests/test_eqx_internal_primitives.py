"""``equinox.internal``'s primitives: filtered primitives and ``create_vprim`` (as lineax
builds its linear solve), ``noinline``, ``unvmap_*``, the transformation guards and
finalisation.

A lineax-like solve primitive is written once and run on invarax and on JAX + Equinox 0.13.8
(skipped when absent); values, JVPs, gradients and (nested) vmaps agree within float32
rounding. Within invarax the contract is bitwise: vmap of the primitive is the primitive per
example (N1), jit is eager (N3), a finalised function gives the function's bits.
"""

import functools
import types

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.interpreters.ad as inv_ad
import invarax.module.internal as eqxi
import invarax.numpy as jnp
from invarax.core.trace import PRIMITIVES

OURS = types.SimpleNamespace(jax=invarax, jnp=jnp, eqxi=eqxi, ad=inv_ad)


@pytest.fixture(scope="module")
def theirs():
    pytest.importorskip("equinox.internal")
    import equinox.internal
    import jax
    import jax.interpreters.ad

    return types.SimpleNamespace(jax=jax, jnp=jax.numpy, eqxi=equinox.internal,
                                 ad=jax.interpreters.ad)


def _make_solve(lib, name):
    """``solve(A, b)`` as a filtered vprim with lineax's rules: JVP by two solves, transpose
    by a solve with A.T, batching derived."""
    eqxi, jnp = lib.eqxi, lib.jnp

    def impl(matrix, vector, opts):
        return jnp.linalg.solve(matrix, vector) * opts["scale"], {"tag": opts["tag"]}

    @eqxi.filter_primitive_def
    def abstract(matrix, vector, opts):
        return vector, {"tag": opts["tag"]}

    @eqxi.filter_primitive_jvp
    def jvp(primals, tangents):
        matrix, vector, opts = primals
        t_matrix, t_vector, _ = tangents
        sol, aux = eqxi.filter_primitive_bind(prim, matrix, vector, opts)
        rhs = [t for t in (t_vector, None if t_matrix is None else -(t_matrix @ sol))
               if t is not None]
        t_sol, _ = eqxi.filter_primitive_bind(prim, matrix, functools.reduce(
            lambda a, b: a + b, rhs), opts)
        return (sol, aux), (t_sol, {"tag": None})

    @eqxi.filter_primitive_transpose(materialise_zeros=True)
    def transpose(inputs, cts):
        matrix, _, opts = inputs
        assert not isinstance(matrix, lib.ad.UndefinedPrimal)
        ct_vector, _ = eqxi.filter_primitive_bind(prim, matrix.T, cts[0], opts)
        return None, ct_vector, {"scale": None, "tag": None}

    prim = eqxi.create_vprim(name, eqxi.filter_primitive_def(impl), abstract, jvp, transpose)

    def solve(m, v, scale=1.0):
        return eqxi.filter_primitive_bind(prim, m, v, {"scale": scale, "tag": "t"})[0]

    return solve, prim


RNG = np.random.default_rng(0)
A = (RNG.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
AS = (RNG.standard_normal((4, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
BS = RNG.standard_normal((4, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def ours_solve():
    solve, prim = _make_solve(OURS, "solve_test_eqxi")
    yield solve
    del PRIMITIVES[prim.name]


def _solve_scenarios(lib, solve):
    jax = lib.jax
    loss = lambda A, b: (solve(A, b) ** 2).sum()  # noqa: E731
    return [solve(A, B), jax.grad(loss, argnums=(0, 1))(A, B),
            jax.jvp(solve, (A, B), (A, B))[1], jax.vmap(solve)(AS, BS),
            jax.vmap(jax.grad(loss))(AS, BS),
            jax.grad(lambda A: (jax.vmap(solve, in_axes=(None, 0))(A, BS) ** 2).sum())(A),
            jax.vmap(jax.vmap(solve, in_axes=(None, 0)), in_axes=(0, None))(AS, BS)]


def test_filtered_vprim_as_equinox(theirs, ours_solve):
    import jax

    solve, prim = _make_solve(theirs, "solve_test_eqxi")
    got, want = _solve_scenarios(OURS, ours_solve), _solve_scenarios(theirs, solve)
    for a, b in zip(invarax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_filtered_vprim_contract_bitwise(ours_solve):
    batched = invarax.vmap(ours_solve)(AS, BS)
    nested = invarax.vmap(invarax.vmap(ours_solve, in_axes=(None, 0)), in_axes=(0, None))(AS, BS)
    for i in range(len(AS)):
        assert_bitwise(batched[i], ours_solve(AS[i], BS[i]))
        for j in range(len(BS)):
            assert_bitwise(nested[i, j], ours_solve(AS[i], BS[j]))
    assert_bitwise(invarax.jit(ours_solve)(A, B), ours_solve(A, B))
    tangents = invarax.jit(invarax.vmap(lambda A, b: invarax.jvp(ours_solve, (A, b), (A, b))[1]))
    assert_bitwise(tangents(AS, BS)[2], invarax.jvp(ours_solve, (AS[2], BS[2]),
                                                    (AS[2], BS[2]))[1])
    grads = invarax.vmap(invarax.grad(lambda b: ours_solve(A, b).sum()))(BS)
    assert_bitwise(grads[1], invarax.grad(lambda b: ours_solve(A, b).sum())(BS[1]))


def test_filtered_outputs_keep_their_static_leaves(ours_solve):
    prim = PRIMITIVES["solve_test_eqxi"]
    sol, aux = eqxi.filter_primitive_bind(prim, A, B, {"scale": 2.0, "tag": "kept"})
    assert aux == {"tag": "kept"}
    assert_bitwise(sol, 2.0 * ours_solve(A, B))


def test_unvmap(theirs):
    x = np.array([[1, 5], [7, 2]], np.int32)
    for ours, want in [(eqxi.unvmap_any, theirs.eqxi.unvmap_any),
                       (eqxi.unvmap_all, theirs.eqxi.unvmap_all),
                       (eqxi.unvmap_max, theirs.eqxi.unvmap_max)]:
        pred = (lambda f: lambda r: f(r > 4)) if ours is not eqxi.unvmap_max else (lambda f: f)
        for a, b in [(pred(ours)(x), pred(want)(x)),
                     (invarax.vmap(pred(ours))(x), theirs.jax.vmap(pred(want))(x)),
                     (invarax.jit(invarax.vmap(pred(ours)))(x),
                      theirs.jax.jit(theirs.jax.vmap(pred(want)))(x))]:
            assert np.array_equal(a, b) and a.dtype == b.dtype


@pytest.mark.parametrize("which", ["ours", "theirs"])
def test_guards(theirs, which):
    lib, ad = (OURS, invarax) if which == "ours" else (theirs, theirs.jax)
    x = lib.jnp.ones(2)
    with pytest.raises(RuntimeError, match="Detected batching of my solve"):
        ad.vmap(lambda x: lib.eqxi.nontraceable(x, name="my solve"))(x)
    with pytest.raises(RuntimeError, match="Detected differentiation of my solve"):
        ad.grad(lambda x: lib.eqxi.nontraceable(x, name="my solve").sum())(x)
    with pytest.raises(ValueError, match="Unexpected batch tracer. s cannot be vmap'd"):
        ad.vmap(lambda x: lib.eqxi.nonbatchable(x, name="s"))(x)
    assert np.array_equal(ad.vmap(lambda x: lib.eqxi.nonbatchable(
        x, allow_constant_across_batch=True), axis_size=2, in_axes=None)(x), np.ones((2, 2)))
    with pytest.raises(RuntimeError, match="Unexpected tangent. o cannot be autodiff"):
        ad.jvp(lambda x: lib.eqxi.nondifferentiable(x, name="o"), (x,), (x,))
    nb = lambda x: lib.eqxi.nondifferentiable_backward(x, name="s").sum()  # noqa: E731
    assert float(ad.jvp(nb, (x,), (x,))[1]) == 2.0
    with pytest.raises(RuntimeError, match="Unexpected cotangent. s cannot be reverse"):
        ad.grad(nb)(x)
    for guard in (lib.eqxi.nonbatchable, lib.eqxi.unvmap_max):  # JAX has no rule either
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            ad.grad(lambda x, guard=guard: x.sum() + 0 * guard(x).sum())(x)


def test_nondifferentiable_backward_checks_at_run_time():
    both = lambda x: eqxi.nondifferentiable_backward(x, symbolic=False).sum()  # noqa: E731
    with pytest.raises(eqxi.EquinoxRuntimeError, match="Unexpected cotangent"):
        invarax.grad(both)(jnp.ones(2))


def test_noinline_as_equinox(theirs):
    traced = []

    def f(x, y):
        traced.append(1)
        return jnp.sin(x) * y + 1

    g = eqxi.noinline(f)
    call = invarax.jit(lambda x: g(x, jnp.float32(2.0)) + g(x * 2, jnp.float32(3.0)))
    x = jnp.linspace(0.0, 1.0, 4)
    assert_bitwise(call(x), f(x, 2.0) + f(x * 2, 3.0))
    assert len(traced) == 4  # abstract evaluation once, its own compilation once, eager twice
    for got, want in [(invarax.grad(lambda x: g(x, x).sum())(x),
                       invarax.grad(lambda x: f(x, x).sum())(x)),
                      (invarax.vmap(lambda x: g(x, 2.0))(x), invarax.vmap(lambda x: f(x, 2.0))(x)),
                      (invarax.jvp(lambda x: g(x, x), (x,), (x,))[1],
                       invarax.jvp(lambda x: f(x, x), (x,), (x,))[1])]:
        assert_bitwise(got, want)
    h = theirs.eqxi.noinline(lambda x, y: theirs.jnp.sin(x) * y + 1)
    np.testing.assert_allclose(invarax.grad(lambda x: g(x, x).sum())(x),
                               theirs.jax.grad(lambda x: h(x, x).sum())(np.asarray(x)),
                               rtol=1e-6)


def test_finalise():
    def f(x):
        y = eqxi.nondifferentiable_backward(eqxi.nonbatchable(x))
        y = invarax.lax.stop_gradient(y) * 2
        c = invarax.lax.cond(eqxi.unvmap_any(x > 0), lambda v: v * 2, lambda v: v, y)
        return eqxi.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])),
                               (0, c), kind="lax", max_steps=5)[1]

    x = jnp.arange(3.0)
    assert_bitwise(eqxi.finalise_fn(f)(x), f(x))
    text = str(eqxi.finalise_make_jaxpr(f)(x))
    for name in ("unvmap_any", "nonbatchable", "nondifferentiable_backward", "stop_gradient"):
        assert name not in text
    assert "reduce_or" in text
    closed, struct = eqxi.finalise_make_jaxpr(f, return_shape=True)(x)
    assert (struct.shape, struct.dtype) == ((3,), np.float32)
    assert_bitwise(eqxi.finalise_jaxpr_as_fn(closed)(x)[0], f(x))


def test_registered_impl_finalisation(ours_solve):
    prim = PRIMITIVES["solve_test_eqxi"]
    eqxi.register_impl_finalisation(prim)
    try:
        text = str(eqxi.finalise_make_jaxpr(ours_solve)(A, B))
        assert "solve_test_eqxi" not in text
        assert_bitwise(eqxi.finalise_fn(ours_solve)(A, B), ours_solve(A, B))
    finally:
        del eqxi.primitive_finalisations[prim]

"""Derivatives of reductions, scans and contractions (ops/reductions.py, ops/contractions.py,
ops/scan.py) through their jnp and lax entry points.

Each table row is ``(fun(m, *args), argument shapes, sampler)``, where ``m`` is a namespace
(``OURS``, or ``theirs(jax)``), so one row runs in invarax and in JAX. Each row is checked

- by ``check_grads`` (tests/ad_check.py): JVP against central finite differences and VJP
  against JVP by the inner-product identity, in float64, to second order where the
  function is smooth at the sample (order 1 at ties, where the JVP itself jumps);
- against JAX's JVP and VJP in float64 (``rtol=1e-10``), ties and zeros included.
"""

import functools
import types

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.scipy.special import logsumexp

OURS = types.SimpleNamespace(np=jnp, lax=lax, logsumexp=logsumexp)


def theirs(jax):
    import jax.scipy.special

    return types.SimpleNamespace(np=jax.numpy, lax=jax.lax, logsumexp=jax.scipy.special.logsumexp)


# ---------------------------------------------------------------------------------------
# Samplers: (rng, shape) -> float64 array


def normal(rng, shape):
    return rng.standard_normal(shape)


def nonzero(rng, shape):
    """|x| in [0.5, 2], either sign (away from the kinks of abs at 0)."""
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)


def zeros(count):
    """Normal values with ``count`` of them (the first ones) set to 0."""

    def sample(rng, shape):
        x = rng.standard_normal(shape)
        x.flat[:count] = 0.0
        return x

    return sample


def pair_ties(rng, shape):
    """Values in which every value occurs exactly twice (or once, for an odd size).

    Where a max/min is a two-way tie, central differences give the mean of the two
    tangents, which is the JVP's value there, so the tie is checked numerically.
    """
    size = int(np.prod(shape))
    values = rng.permutation(np.repeat(rng.permutation(size)[: (size + 1) // 2] * 0.25, 2))
    return values[:size].reshape(shape)


def grid(rng, shape):
    """Small integers: many-way ties (compared with JAX, not finite differences)."""
    return rng.integers(-2, 3, shape).astype(np.float64)


class Row:
    def __init__(self, fun, shapes, sampler=normal, order=2, fd=True):
        self.fun, self.shapes, self.sampler, self.order, self.fd = fun, shapes, sampler, order, fd


def unary(fun, *shapes, **kw):
    return Row(fun, [(s,) for s in shapes], **kw)


SCALAR, VECTOR, MATRIX, CUBE = (), (5,), (3, 4), (2, 3, 4)

REDUCTIONS = {
    "sum": unary(lambda m, x: m.np.sum(x), SCALAR, VECTOR, CUBE),
    "sum_axis": unary(lambda m, x: m.np.sum(x, axis=-1), VECTOR, MATRIX, (1, 4)),
    "sum_axes_keepdims": unary(lambda m, x: m.np.sum(x, axis=(0, 2), keepdims=True), CUBE),
    "mean": unary(lambda m, x: m.np.mean(x), SCALAR, MATRIX),
    "mean_axis": unary(lambda m, x: m.np.mean(x, axis=1), MATRIX, CUBE),
    "var": unary(lambda m, x: m.np.var(x), VECTOR, CUBE),
    "var_ddof_axis": unary(lambda m, x: m.np.var(x, axis=0, ddof=1), MATRIX),
    "std": unary(lambda m, x: m.np.std(x, axis=-1, keepdims=True), MATRIX, CUBE),
    "prod": unary(lambda m, x: m.np.prod(x), SCALAR, VECTOR, MATRIX),
    "prod_axes": unary(lambda m, x: m.np.prod(x, axis=(0, 2)), CUBE),
    "prod_one_zero": unary(lambda m, x: m.np.prod(x, axis=-1), VECTOR, MATRIX, sampler=zeros(1)),
    "prod_two_zeros": unary(lambda m, x: m.np.prod(x), VECTOR, sampler=zeros(2)),
    "prod_all_zeros": unary(lambda m, x: m.np.prod(x, axis=0), MATRIX, sampler=zeros(12)),
    "max": unary(lambda m, x: m.np.max(x), SCALAR, VECTOR, CUBE),
    "max_axis": unary(lambda m, x: m.np.max(x, axis=0), MATRIX),
    "min_axes": unary(lambda m, x: m.np.min(x, axis=(1, 2), keepdims=True), CUBE),
    "max_pair_ties": unary(lambda m, x: m.np.max(x, axis=1), (4, 6), sampler=pair_ties, order=1),
    "min_pair_ties": unary(lambda m, x: m.np.min(x), MATRIX, sampler=pair_ties, order=1),
    "max_many_ties": unary(lambda m, x: m.np.max(x, axis=-1), (4, 7), sampler=grid, fd=False),
    "min_many_ties": unary(lambda m, x: m.np.min(x, axis=0), (7, 4), sampler=grid, fd=False),
    "amax_broadcast": Row(
        lambda m, x, y: m.np.max(x * y, axis=0), [((3, 1), (1, 4)), ((), (3,))]
    ),
    "logsumexp": unary(lambda m, x: m.logsumexp(x), SCALAR, VECTOR, MATRIX),
    "logsumexp_axis": unary(lambda m, x: m.logsumexp(x, axis=1, keepdims=True), CUBE),
    "logsumexp_b": Row(
        lambda m, x, b: m.logsumexp(x, axis=0, b=b * b), [((3, 4), (3, 4)), ((3, 4), (1, 4))]
    ),
    "norm": unary(lambda m, x: m.np.linalg.norm(x), VECTOR, MATRIX, CUBE, sampler=nonzero),
    "norm_ord1": unary(lambda m, x: m.np.linalg.norm(x, ord=1), VECTOR, sampler=nonzero),
    "norm_ord3_axis": unary(
        lambda m, x: m.np.linalg.norm(x, ord=3, axis=1), MATRIX, sampler=nonzero
    ),
    "norm_inf": unary(lambda m, x: m.np.linalg.norm(x, ord=np.inf), VECTOR, sampler=nonzero),
    "norm_matrix_1": unary(lambda m, x: m.np.linalg.norm(x, ord=1), MATRIX, sampler=nonzero),
    "norm_fro_keepdims": unary(
        lambda m, x: m.np.linalg.norm(x, axis=(0, 2), keepdims=True), CUBE, sampler=nonzero
    ),
}

SCANS = {
    "cumsum": unary(lambda m, x: m.np.cumsum(x), SCALAR, VECTOR, MATRIX),
    "cumsum_axis": unary(lambda m, x: m.np.cumsum(x, axis=1), MATRIX, CUBE),
    "lax_cumsum_reverse": unary(lambda m, x: m.lax.cumsum(x, axis=0, reverse=True), MATRIX),
    "cumprod": unary(lambda m, x: m.np.cumprod(x), SCALAR, VECTOR, MATRIX),
    "cumprod_axis_zeros": unary(lambda m, x: m.np.cumprod(x, axis=-1), CUBE, sampler=zeros(2)),
    "lax_cumprod_reverse": unary(lambda m, x: m.lax.cumprod(x, axis=1, reverse=True), (3, 7)),
    "lax_cummax": unary(lambda m, x: m.lax.cummax(x, axis=0), VECTOR, (9, 2)),
    "lax_cummax_reverse": unary(lambda m, x: m.lax.cummax(x, axis=1, reverse=True), CUBE),
    "lax_cummin": unary(lambda m, x: m.lax.cummin(x, axis=1), (2, 8)),
    "lax_cummin_reverse": unary(lambda m, x: m.lax.cummin(x, axis=0, reverse=True), VECTOR),
    "lax_cummax_ties": unary(lambda m, x: m.lax.cummax(x, axis=1), (3, 9), sampler=grid, fd=False),
    "lax_cummin_ties": unary(
        lambda m, x: m.lax.cummin(x, axis=0, reverse=True), (11,), sampler=grid, fd=False
    ),
    "lax_cumlogsumexp": unary(lambda m, x: m.lax.cumlogsumexp(x, axis=0), (1,), VECTOR, MATRIX),
    "lax_cumlogsumexp_reverse": unary(
        lambda m, x: m.lax.cumlogsumexp(x, axis=2, reverse=True), CUBE
    ),
    "lax_cumlogsumexp_ties": unary(
        lambda m, x: m.lax.cumlogsumexp(x, axis=1), (3, 9), sampler=grid
    ),
}


def binary(fun, *shape_pairs, **kw):
    return Row(fun, list(shape_pairs), **kw)


def einsum(spec, *shapes):
    return Row(lambda m, *xs: m.np.einsum(spec, *xs), [shapes])


CONTRACTIONS = {
    "matmul": binary(
        lambda m, a, b: m.np.matmul(a, b),
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ),
    "matmul_batch": binary(
        lambda m, a, b: a @ b,
        ((5, 2, 3), (3, 4)), ((4, 3), (2, 3, 5)), ((5, 2, 3), (1, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
    ),
    "dot": binary(
        lambda m, a, b: m.np.dot(a, b),
        ((), (3,)), ((2, 3), ()), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 2)),
    ),
    "tensordot": binary(
        lambda m, a, b: m.np.tensordot(a, b, axes=2), ((2, 3, 4), (3, 4, 5)), ((3, 4), (3, 4))
    ),
    "tensordot_axes": binary(
        lambda m, a, b: m.np.tensordot(a, b, axes=([1, 0], [0, 2])), ((3, 2, 4), (2, 5, 3))
    ),
    "tensordot_outer": binary(lambda m, a, b: m.np.tensordot(a, b, axes=0), ((2,), (3, 2))),
    "inner": binary(lambda m, a, b: m.np.inner(a, b), ((3,), (3,)), ((2, 3), (4, 3)), ((), (2,))),
    "outer": binary(lambda m, a, b: m.np.outer(a, b), ((3,), (4,)), ((2, 2), (3,))),
    "vdot": binary(lambda m, a, b: m.np.vdot(a, b), ((3,), (3,)), ((2, 3), (3, 2))),
    "trace": unary(lambda m, x: m.np.trace(x), (3, 3), (3, 5)),
    "trace_offset_axes": unary(lambda m, x: m.np.trace(x, offset=1, axis1=1, axis2=2), CUBE),
    "einsum_matmul": einsum("ij,jk->ik", (2, 3), (3, 4)),
    "einsum_transposed": einsum("ji,kj->ik", (3, 2), (4, 3)),
    "einsum_batch": einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    "einsum_batch_last": einsum("ijb,kjb->bki", (3, 4, 2), (5, 4, 2)),
    "einsum_batch_middle": einsum("abc,cba->b", (2, 3, 4), (4, 3, 2)),
    "einsum_two_contracted": einsum("ijk,jil->kl", (2, 3, 4), (3, 2, 5)),
    "einsum_vector": einsum("i,i->", (4,), (4,)),
    "einsum_outer": einsum("i,j->ji", (3,), (2,)),
    "einsum_ellipsis": einsum("...ij,jk->...ik", (2, 3, 4), (4, 5)),
    "einsum_trace": einsum("ii->", (3, 3)),
    "einsum_chain": einsum("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    "einsum_chain_batch": einsum("bi,bij,bj->b", (2, 3), (2, 3, 4), (2, 4)),
    "einsum_chain_vector": einsum("ij,j,k->ik", (2, 3), (3,), (4,)),
}

TABLE = {**REDUCTIONS, **SCANS, **CONTRACTIONS}
CASES = [
    pytest.param(name, i, id=f"{name}-{'x'.join(map(str, row.shapes[i])) or 'scalar'}")
    for name, row in TABLE.items()
    for i in range(len(row.shapes))
]


def _args(name, i, seed=0):
    row = TABLE[name]
    rng = np.random.default_rng([seed, i, *name.encode()])
    return tuple(row.sampler(rng, s) for s in row.shapes[i])


@pytest.mark.parametrize("name, i", CASES)
def test_check_grads(name, i, x64):
    row = TABLE[name]
    f = functools.partial(row.fun, OURS)
    modes = ("fwd", "rev") if row.fd else ("rev",)
    check_grads(f, _args(name, i), order=row.order, modes=modes)


@pytest.mark.parametrize("name, i", CASES)
def test_jvp_and_vjp_match_jax(name, i, x64):
    jax = pytest.importorskip("jax")
    row = TABLE[name]
    args = _args(name, i)
    rng = np.random.default_rng(1)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    out, tan = invarax.jvp(functools.partial(row.fun, OURS), args, tangents)
    _, vjp_fun = invarax.vjp(functools.partial(row.fun, OURS), *args)
    ct = rng.standard_normal(out.shape)
    cts = vjp_fun(jnp.asarray(ct))
    f = functools.partial(row.fun, theirs(jax))

    @jax.jit  # one compilation instead of one per op: JAX's eager mode is slow here
    def jvp_and_vjp(args, tangents, ct):
        return jax.jvp(f, args, tangents), jax.vjp(f, *args)[1](ct)

    with jax.enable_x64(True):
        (out_jax, tan_jax), cts_jax = jvp_and_vjp(args, tangents, ct)
    tol = {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(out, out_jax, **tol)
    np.testing.assert_allclose(tan, tan_jax, **tol)
    for ours, jaxs in zip(cts, cts_jax, strict=True):
        np.testing.assert_allclose(ours, jaxs, **tol)


# ---------------------------------------------------------------------------------------
# lax.dot_general: the cotangent contractions for many dimension numbers

DOT_GENERAL = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((3,), (4,), (((), ()), ((), ()))),
    ((2, 3), (2, 3), (((), ()), ((0, 1), (0, 1)))),
    ((2, 3), (3, 2), (((), ()), ((0, 1), (1, 0)))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    ((2, 3, 4, 5), (5, 4, 6), (((3, 2), (0, 1)), ((), ()))),
    ((5, 2, 3), (3, 5, 2), (((1, 2), (2, 0)), ((), ()))),
    ((2, 3, 4), (4, 3, 2), (((1, 2), (1, 0)), ((0,), (2,)))),
    ((2, 3, 4, 5), (4, 2, 5, 7), (((2, 3), (0, 2)), ((0,), (1,)))),
    ((2, 3, 4, 5), (3, 2, 5, 6), (((3,), (2,)), ((0, 1), (1, 0)))),
    ((4, 2, 6, 3), (3, 5, 2, 4), (((3, 0), (0, 3)), ((1,), (2,)))),
]
DOT_IDS = [f"{a}x{b}-{d}".replace(" ", "") for a, b, d in DOT_GENERAL]


def _dot_args(lhs_shape, rhs_shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", DOT_GENERAL, ids=DOT_IDS)
def test_dot_general_check_grads(lhs_shape, rhs_shape, dims, x64):
    f = functools.partial(lax.dot_general, dimension_numbers=dims)
    check_grads(f, _dot_args(lhs_shape, rhs_shape), order=2)


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", DOT_GENERAL, ids=DOT_IDS)
def test_dot_general_vjp_matches_jax(lhs_shape, rhs_shape, dims, x64):
    jax = pytest.importorskip("jax")
    x, y = _dot_args(lhs_shape, rhs_shape)
    out, vjp_fun = invarax.vjp(functools.partial(lax.dot_general, dimension_numbers=dims), x, y)
    ct = np.random.default_rng(1).standard_normal(out.shape)
    f = functools.partial(jax.lax.dot_general, dimension_numbers=dims)
    with jax.enable_x64(True):
        expected = jax.jit(lambda x, y, ct: jax.vjp(f, x, y)[1](ct))(x, y, ct)
    for ours, jaxs in zip(vjp_fun(jnp.asarray(ct)), expected, strict=True):
        assert ours.shape == jaxs.shape
        np.testing.assert_allclose(ours, jaxs, rtol=1e-12, atol=1e-13)


def test_dot_general_preferred_element_type(x64):
    """float32 operands accumulated in float64: the cotangents are float32 again,
    contracted in float64 (then rounded once), and the tangent is float64."""
    x, y = (a.astype(np.float32) for a in _dot_args((3, 4), (4, 5)))
    f = functools.partial(
        lax.dot_general, dimension_numbers=(((1,), (0,)), ((), ())),
        preferred_element_type=np.float64,
    )
    out, vjp_fun = invarax.vjp(f, x, y)
    assert out.dtype == np.float64
    ct = np.random.default_rng(1).standard_normal(out.shape)
    x_ct, y_ct = vjp_fun(jnp.asarray(ct))
    assert (x_ct.dtype, y_ct.dtype) == (np.float32, np.float32)
    np.testing.assert_allclose(x_ct, (ct @ y.T.astype(np.float64)).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(y_ct, (x.T.astype(np.float64) @ ct).astype(np.float32), rtol=1e-6)
    _, tangent = invarax.jvp(f, (x, y), (np.ones_like(x), np.zeros_like(y)))
    assert tangent.dtype == np.float64


# ---------------------------------------------------------------------------------------
# Values at ties and zeros, and the numerics contract


@pytest.mark.parametrize("name, expected", [
    ("max", [0.0, 1 / 3, 0.0, 1 / 3, 1 / 3]),
    ("min", [0.5, 0.0, 0.5, 0.0, 0.0]),
])
def test_extremum_ties_share_the_gradient(name, expected):
    x = jnp.array([-1.0, 3.0, -1.0, 3.0, 3.0])
    np.testing.assert_array_equal(invarax.grad(getattr(jnp, name))(x), np.float32(expected))


def test_prod_gradient_at_zeros():
    """No division: one zero leaves a gradient only at the zero, two zeros none."""
    grad = invarax.grad(jnp.prod)
    np.testing.assert_array_equal(grad(jnp.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(grad(jnp.array([0.0, 5.0, 0.0])), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad(jnp.array([7.0])), [1.0])
    assert grad(jnp.array(4.0)) == 1.0
    assert grad(jnp.zeros((0,))).shape == (0,)


def test_cumulative_primal_is_the_primitives_own():
    """The JVP of cumprod/cummax/... differentiates an associative scan, but its primal
    output is still the sequential kernel's (a scan in a tree order rounds differently)."""
    x = jnp.asarray(np.random.default_rng(3).uniform(0.5, 1.5, 64).astype(np.float32))
    for f in (jnp.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp):
        out, _ = invarax.jvp(f, (x,), (jnp.ones_like(x),))
        assert_bitwise(out, f(x))
        out, _ = invarax.vjp(f, x)
        assert_bitwise(out, f(x))


def test_logaddexp_is_smooth_at_ties(x64):
    """cumlogsumexp's JVP combines with logaddexp, whose derivatives of every order are
    right at x == y (the second is 1/4), also with a broadcast scalar (jnp.logaddexp)."""
    hessian = invarax.hessian(lambda x: jnp.logaddexp(x, 0.3))(0.3)
    np.testing.assert_allclose(hessian, 0.25, rtol=1e-15)
    check_grads(jnp.logaddexp, (np.full(3, 0.3), np.array(0.3)), order=3)
    check_grads(lambda x: lax.cumlogsumexp(x, reverse=True), (np.zeros(5),), order=3)


def test_index_reductions_have_zero_tangents():
    x = jnp.array([[1.0, 5.0, 2.0], [4.0, 0.0, 6.0]])
    for f in (jnp.argmax, jnp.argmin):
        out, tangent = invarax.jvp(lambda a, f=f: f(a, axis=1), (x,), (jnp.ones_like(x),))
        np.testing.assert_array_equal(tangent, np.zeros(2))
        assert tangent.dtype == out.dtype
    grad = invarax.grad(lambda a: jnp.sum(jnp.take_along_axis(a, jnp.argmax(a, 1)[:, None], 1)))
    np.testing.assert_array_equal(grad(x), [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


JIT_CASES = {
    "sum_of_matmul": (lambda a, b: jnp.sum(jnp.tanh(a @ b)), ((5, 3), (3, 4))),
    "prod_with_zero": (lambda a: jnp.prod(a.at[1, 1].set(0.0), axis=0).sum(), ((3, 4),)),
    "max_ties": (lambda a: jnp.max(jnp.round(a), axis=1).sum(), ((6, 5),)),
    "cumprod_logsumexp": (lambda a: logsumexp(jnp.cumprod(a, axis=1)), ((3, 6),)),
    "cummax_reverse": (lambda a: jnp.sum(lax.cummax(a, 0, reverse=True) ** 2), ((7, 2),)),
    "einsum_chain": (
        lambda a, b, c: jnp.einsum("bi,bij,bj->", a, b, c), ((2, 3), (2, 3, 4), (2, 4))
    ),
    "norm_std": (lambda a: jnp.linalg.norm(a) + jnp.std(a, axis=0).sum(), ((4, 3),)),
}


@pytest.mark.parametrize("name", JIT_CASES)
def test_jit_of_grad_is_bitwise_grad(name):
    f, shapes = JIT_CASES[name]
    rng = np.random.default_rng(4)
    args = [jnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    argnums = tuple(range(len(args)))
    eager = invarax.grad(f, argnums)(*args)
    for jitted in (invarax.jit(invarax.grad(f, argnums))(*args),
                   invarax.grad(invarax.jit(f), argnums)(*args)):
        for a, b in zip(jitted, eager, strict=True):
            assert_bitwise(a, b)


def test_batch_rows_of_a_gradient_are_independent():
    """N2 through reverse mode: row i of d sum(x @ W) / dx does not depend on the rows."""
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.standard_normal((9, 6)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((6, 4)).astype(np.float32))
    grad = invarax.grad(lambda a: jnp.sum(jnp.sin(a @ w)))
    full = grad(x)
    for m in (1, 2, 5):
        assert_bitwise(grad(x[:m]), full[:m])


# ---------------------------------------------------------------------------------------
# lax.associative_scan


def _sequential(fn, xs, axis):
    xs = np.moveaxis(np.array(xs), axis, 0)
    for i in range(1, len(xs)):
        xs[i] = fn(xs[i - 1], xs[i])
    return np.moveaxis(xs, 0, axis)


@pytest.mark.parametrize("n", [*range(0, 10), 16, 17, 33])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_a_sequential_scan(n, reverse):
    x = np.random.default_rng(n).integers(-9, 10, (3, n)).astype(np.int32)
    for fn, np_fn in ((lax.add, np.add), (lax.max, np.maximum), (lax.mul, np.multiply)):
        out = lax.associative_scan(fn, x, reverse=reverse, axis=-1)
        expected = _sequential(np_fn, x[:, ::-1] if reverse else x, 1)
        assert_bitwise(out, expected[:, ::-1] if reverse else expected)


def test_associative_scan_over_a_pytree():
    """A linear recurrence h[t] = a[t] h[t-1] + b[t] as a scan over (a, b) pairs."""
    rng = np.random.default_rng(6)
    a, b = rng.uniform(0.5, 1.0, (11, 2)), rng.standard_normal((11, 2))

    def compose(first, second):
        return {"a": first["a"] * second["a"], "b": second["a"] * first["b"] + second["b"]}

    out = lax.associative_scan(compose, {"a": jnp.asarray(a), "b": jnp.asarray(b)})
    assert set(out) == {"a", "b"}
    h, expected = np.zeros(2), []
    for t in range(11):
        h = a[t] * h + b[t]
        expected.append(h)
    np.testing.assert_allclose(out["b"], np.array(expected), rtol=1e-6)
    np.testing.assert_allclose(out["a"], np.cumprod(a, axis=0), rtol=1e-6)


def test_associative_scan_moves_bits_exactly():
    """Slices and concatenations only: -0.0 and NaN payloads are kept (JAX's version
    interleaves by adding zero-padded halves, which turns -0.0 into 0.0)."""
    x = jnp.asarray(np.full(7, -0.0, np.float32))
    assert np.all(np.signbit(lax.associative_scan(lax.add, x)))
    assert np.all(np.signbit(lax.associative_scan(lax.min, x, reverse=True)))


def test_associative_scan_is_differentiable(x64):
    def recurrence(a, b):
        compose = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])
        return lax.associative_scan(compose, (a, b), axis=1)[1]

    rng = np.random.default_rng(7)
    check_grads(recurrence, (rng.uniform(0.5, 1.0, (2, 9)), rng.standard_normal((2, 9))), order=2)


def test_associative_scan_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(8).integers(-5, 6, (4, 13, 3)).astype(np.int32)
    for axis in (0, 1, 2):
        for reverse in (False, True):
            ours = lax.associative_scan(lax.add, x, reverse=reverse, axis=axis)
            scan = functools.partial(
                jax.lax.associative_scan, jax.lax.add, reverse=reverse, axis=axis
            )
            expected = jax.jit(scan)(x)
            assert_bitwise(ours, np.asarray(expected))


def test_associative_scan_under_jit_is_bitwise_eager():
    x = jnp.asarray(np.random.default_rng(9).standard_normal((5, 12)).astype(np.float32))
    f = lambda a: lax.associative_scan(lax.add, a, axis=1, reverse=True)
    assert_bitwise(invarax.jit(f)(x), f(x))


def test_associative_scan_errors():
    x = jnp.ones((3, 4))
    with pytest.raises(TypeError, match="fn must be callable"):
        lax.associative_scan(1, x)
    with pytest.raises(ValueError, match="same size along axis 0"):
        lax.associative_scan(lambda p, q: p, (x, jnp.ones(4)))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.associative_scan(lax.add, x, axis=2)
    with pytest.raises(ValueError, match="at least one array"):
        lax.associative_scan(lax.add, ())
    with pytest.raises(TypeError, match="must return the structure of elems"):
        lax.associative_scan(lambda p, q: (p["a"], q["b"]), {"a": x, "b": x})

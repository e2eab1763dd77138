"""Derivatives of the shape, indexing and sorting primitives (ops/shape.py, ops/indexing.py,
ops/sorting.py), through their jnp and lax entry points.

Each case of the table is checked by ``check_grads`` (JVP against finite differences and
VJP against JVP, float64), under jit (bitwise eager) and against JAX where installed.
The cases are written once for both libraries: ``m`` is ``invarax`` or ``jax``.
"""

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import lax

IDX = np.array([0, 3, 3, 1, 0])  # repeated indices
UNIQUE = np.array([3, 0, 2])
OOB = np.array([1, 9, -7, 2])  # out of bounds at positions 1 and 2 (lax level)


# name, f(m, *args), argument shapes, whether to compare with JAX: where a convention
# shows (fills, clamps, the winner of a scatter, ties, sorts). The other rows move values
# linearly, so their JVP is the op itself and check_grads pins down their VJP (JAX does not
# differentiate scatter-mul with repeated indices at all).
CASES = [
    ("reshape", lambda m, x: m.numpy.reshape(x, (5, 4)), [(4, 5)], False),
    ("reshape_scalar", lambda m, x: m.numpy.reshape(x, (1, 1)), [()], False),
    ("transpose", lambda m, x: m.numpy.transpose(x, (2, 0, 1)), [(2, 3, 4)], False),
    ("expand_dims", lambda m, x: m.numpy.expand_dims(x, (0, 2)), [(3, 4)], False),
    ("expand_dims_scalar", lambda m, x: m.numpy.expand_dims(x, 0), [()], False),
    ("squeeze", lambda m, x: m.numpy.squeeze(x, (0, 2)), [(1, 3, 1, 2)], False),
    ("flip", lambda m, x: m.numpy.flip(x, 1), [(3, 4)], False),
    ("concatenate", lambda m, x, y: m.numpy.concatenate([x, y, x], 1),
     [(2, 3), (2, 1)], False),
    ("concatenate_empty", lambda m, x, y: m.numpy.concatenate([x, y], 0),
     [(0, 3), (2, 3)], False),
    ("stack", lambda m, x, y: m.numpy.stack([x, y], 1), [(2, 3), (2, 3)], False),
    ("stack_scalars", lambda m, x, y: m.numpy.stack([x, y, x]), [(), ()], False),
    ("pad_constant", lambda m, x: m.numpy.pad(x, ((1, 2), (0, 3)), constant_values=1.5),
     [(3, 4)], False),
    ("pad_edge", lambda m, x: m.numpy.pad(x, ((2, 1), (3, 0)), mode="edge"),
     [(3, 4)], False),
    ("pad_reflect", lambda m, x: m.numpy.pad(x, ((2, 1), (3, 2)), mode="reflect"),
     [(3, 4)], False),
    ("lax_pad", lambda m, x, p: m.lax.pad(x, p, ((1, -2, 2), (-1, 0, 0))),
     [(3, 4), ()], False),
    ("lax_pad_crop", lambda m, x, p: m.lax.pad(x, p, ((-1, -1, 0),)), [(5,), ()], False),
    ("slice_strided", lambda m, x: x[1:5:2], [(6, 3)], False),
    ("slice_reversed", lambda m, x: x[::-1, -1:0:-2], [(4, 5)], False),
    ("newaxis", lambda m, x: x[None, :, None], [(3,)], False),
    ("int_index", lambda m, x: x[1, -1], [(3, 4)], False),
    ("lax_slice", lambda m, x: m.lax.slice(x, (1, 0), (4, 5), (2, 3)), [(4, 5)], False),
    ("gather_repeated", lambda m, x: x[IDX], [(4, 3)], False),
    ("gather_2d", lambda m, x: x[:, IDX[:3], IDX[2:]], [(2, 4, 4)], False),
    ("gather_traced", lambda m, x: m.jit(lambda x, i: x[i])(x, IDX), [(4,)], False),
    ("take_fill", lambda m, x: m.numpy.take(x, OOB, fill_value=2.0), [(4,)], True),
    ("take_clip", lambda m, x: m.numpy.take(x, OOB, axis=1, mode="clip"), [(2, 4)], True),
    ("get_promise_in_bounds", lambda m, x: x.at[UNIQUE].get(mode="promise_in_bounds"),
     [(4,)], True),
    ("at_set", lambda m, x, u: x.at[IDX].set(u), [(4, 2), (5, 2)], True),
    ("at_set_scalar", lambda m, x, u: x.at[1:3].set(u), [(4,), ()], True),
    ("at_set_drop", lambda m, x, u: x.at[OOB].set(u, mode="drop"), [(4,), (4,)], True),
    ("at_set_clip", lambda m, x, u: x.at[OOB].set(u, mode="clip"), [(4,), (4,)], True),
    ("at_add", lambda m, x, u: x.at[IDX].add(u), [(4, 2), (5, 2)], False),
    ("at_add_clip", lambda m, x, u: x.at[OOB].add(u, mode="clip"), [(4,), (4,)], True),
    ("at_multiply_unique", lambda m, x, u: x.at[UNIQUE].multiply(u, unique_indices=True),
     [(4,), (3,)], True),
    ("at_multiply_repeated", lambda m, x, u: x.at[IDX].multiply(u), [(4,), (5,)], False),
    ("at_divide", lambda m, x, u: x.at[IDX].divide(u + 3.0), [(4,), (5,)], False),
    ("at_min", lambda m, x, u: x.at[IDX].min(u), [(4, 2), (5, 2)], True),
    ("at_max", lambda m, x, u: x.at[IDX].max(u), [(4, 2), (5, 2)], True),
    ("at_max_drop", lambda m, x, u: x.at[OOB].max(u, mode="drop"), [(4,), (4,)], True),
    ("dynamic_slice", lambda m, x: m.lax.dynamic_slice(x, (1, -2), (2, 2)), [(3, 4)],
     True),
    ("dynamic_slice_traced",
     lambda m, x: m.jit(lambda x, i: m.lax.dynamic_slice(x, (i, 0), (2, 3)))(x, 5),
     [(4, 3)], True),
    ("dynamic_update_slice",
     lambda m, x, u: m.jit(lambda x, u, i: m.lax.dynamic_update_slice(x, u, (i, 1)))(x, u, 1),
     [(4, 3), (2, 2)], False),
    ("dynamic_update_slice_clamped",
     lambda m, x, u: m.lax.dynamic_update_slice(x, u, (3,)), [(4,), (2,)], True),
    ("take_along_axis", lambda m, x: m.numpy.take_along_axis(x, m.numpy.argsort(x, 0), 0),
     [(4, 3)], True),
    ("argsort_gather", lambda m, x: x[m.numpy.argsort(x)], [(6,)], True),
    ("sort", lambda m, x: m.numpy.sort(x), [(3, 5)], True),
    ("sort_axis0_descending", lambda m, x: m.numpy.sort(x, axis=0, descending=True),
     [(4, 3)], True),
    ("sort_flat", lambda m, x: m.numpy.sort(x, axis=None), [(2, 3)], False),
    ("lax_sort_two", lambda m, k, v: m.lax.sort((k, v), num_keys=1), [(5,), (5,)], True),
    ("lax_sort_two_keys", lambda m, k, v: m.lax.sort((k, v * k), dimension=0, num_keys=2),
     [(4, 2), (4, 2)], True),
    ("tile", lambda m, x: m.numpy.tile(x, (2, 1, 3)), [(2, 3)], False),
    ("repeat", lambda m, x: m.numpy.repeat(x, 2, axis=1), [(2, 3)], False),
    ("repeat_counts", lambda m, x: m.numpy.repeat(x, np.array([1, 0, 3]), axis=0),
     [(3, 2)], False),
    ("roll", lambda m, x: m.numpy.roll(x, (2, -1), (0, 1)), [(3, 4)], False),
    ("broadcast_to", lambda m, x: m.numpy.broadcast_to(x, (2, 3, 4)), [(3, 1)], False),
    ("broadcast_to_scalar", lambda m, x: m.numpy.broadcast_to(x, (2, 3)), [()], False),
    ("chain", lambda m, x: m.numpy.flip(x.T, 0)[1:, None].reshape(-1)[::2],
     [(3, 4)], False),
]
IDS = [c[0] for c in CASES]


def _args(shapes, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


@pytest.mark.parametrize("name, f, shapes, _", CASES, ids=IDS)
def test_check_grads(x64, name, f, shapes, _):
    check_grads(lambda *a: f(invarax, *a), _args(shapes))


SECOND_ORDER = {"lax_pad", "gather_repeated", "take_fill", "at_set", "at_multiply_repeated",
                "at_max", "dynamic_update_slice", "sort", "lax_sort_two_keys"}


@pytest.mark.parametrize("name, f, shapes, _", [c for c in CASES if c[0] in SECOND_ORDER],
                         ids=sorted(SECOND_ORDER, key=IDS.index))
def test_check_grads_second_order(x64, name, f, shapes, _):
    check_grads(lambda *a: f(invarax, *a), _args(shapes), order=2)


def _tree_bitwise(a, b):
    a_leaves, a_tree = invarax.tree_util.tree_flatten(a)
    b_leaves, b_tree = invarax.tree_util.tree_flatten(b)
    assert a_tree == b_tree
    for x, y in zip(a_leaves, b_leaves, strict=True):
        assert_bitwise(x, y)


def _random_like(tree, seed):
    rng = np.random.default_rng(seed)
    return invarax.tree_util.tree_map(
        lambda o: jnp.asarray(rng.standard_normal(o.shape).astype(o.dtype)), tree
    )


@pytest.mark.parametrize("name, f, shapes, _", CASES, ids=IDS)
def test_jit_is_bitwise_eager(name, f, shapes, _):
    g = lambda *a: f(invarax, *a)  # noqa: E731
    args = tuple(jnp.asarray(a) for a in _args(shapes, np.float32))
    tangents = _random_like(args, 1)
    cts = _random_like(g(*args), 2)

    def vjp(args, cts):
        return invarax.vjp(g, *args)[1](cts)

    def jvp(args, tangents):
        return invarax.jvp(g, args, tangents)

    _tree_bitwise(invarax.jit(jvp)(args, tangents), jvp(args, tangents))
    _tree_bitwise(invarax.jit(vjp)(args, cts), vjp(args, cts))


def _jvp_and_vjp(m, f, args, tangents, cts):
    """``f``'s output, JVP and VJP in library ``m`` (one jit, so JAX compiles once)."""

    @m.jit
    def run(args, tangents, cts):
        out, t = m.jvp(f, args, tangents)
        return out, t, m.vjp(f, *args)[1](cts)

    return run(args, tangents, cts)


JAX_CASES = [c for c in CASES if c[3]]


@pytest.mark.parametrize("name, f, shapes, _", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_against_jax(name, f, shapes, _):
    jax = pytest.importorskip("jax")
    args = _args(shapes, np.float32)
    tangents = _args(shapes, np.float32, seed=1)
    out = f(invarax, *(jnp.asarray(a) for a in args))
    cts = invarax.tree_util.tree_map(np.asarray, _random_like(out, 2))
    ours = _jvp_and_vjp(invarax, lambda *a: f(invarax, *a), args, tangents, cts)
    theirs = _jvp_and_vjp(jax, lambda *a: f(jax, *a), args, tangents, cts)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------
# Cases the table cannot cover: non-differentiable points, NaN fills, exact cotangents.


def test_grad_through_sum_jit_is_bitwise(x64):
    for f, shapes in [(lambda x: (jnp.pad(x, 2, mode="reflect") ** 2).sum(), [(5, 4)]),
                      (lambda x, u: jnp.sin(x.at[IDX].set(u)).sum(), [(4, 2), (5, 2)]),
                      (lambda x: (jnp.sort(x, axis=0) * jnp.arange(3.0)).sum(), [(4, 3)]),
                      (lambda x: jnp.broadcast_to(x, (3, 4)).sum(), [(4,)])]:
        args = _args(shapes)
        argnums = tuple(range(len(args)))
        grads = invarax.grad(f, argnums)(*args)
        _tree_bitwise(invarax.jit(invarax.grad(f, argnums))(*args), grads)


def test_fill_gather_has_zero_tangent_where_filled():
    x = jnp.array([1.0, 2.0, 3.0, 4.0])
    out, t = invarax.jvp(lambda x: jnp.take(x, OOB), (x,), (jnp.ones(4),))
    assert np.isnan(out[1]) and np.isnan(out[2])
    np.testing.assert_array_equal(t, [1.0, 0.0, 0.0, 1.0])
    (ct,) = invarax.vjp(lambda x: jnp.take(x, OOB), x)[1](jnp.array([1.0, 10.0, 100.0, 1e3]))
    np.testing.assert_array_equal(ct, [0.0, 1.0, 1e3, 0.0])


def test_promise_in_bounds_gather_sends_cotangents_where_it_read():
    # invarax's gather clamps a broken promise, so the cotangent goes to the clamped row.
    x = jnp.array([1.0, 2.0, 3.0])
    f = lambda x: lax.gather(x, OOB[:, None], axes=0, mode="promise_in_bounds")  # noqa: E731
    np.testing.assert_array_equal(f(x), [2.0, 3.0, 1.0, 3.0])
    (ct,) = invarax.vjp(f, x)[1](jnp.array([1.0, 10.0, 100.0, 1e3]))
    np.testing.assert_array_equal(ct, [100.0, 1.0, 1010.0])


def test_scatter_set_cotangent_goes_to_the_last_write():
    x = jnp.zeros(4)
    u = jnp.array([1.0, 2.0, 3.0, 4.0, 5.0])
    f = lambda x, u: x.at[IDX].set(u)  # noqa: E731
    np.testing.assert_array_equal(f(x, u), [5.0, 4.0, 0.0, 3.0])
    ct_x, ct_u = invarax.vjp(f, x, u)[1](jnp.array([1.0, 10.0, 100.0, 1e3]))
    np.testing.assert_array_equal(ct_x, [0.0, 0.0, 100.0, 0.0])
    np.testing.assert_array_equal(ct_u, [0.0, 0.0, 1e3, 10.0, 1.0])


def test_scatter_mul_with_zero_and_repeated_updates(x64):
    # The product rule without division: a zero update has the product of the others as
    # derivative, and two zeros at one slot give every update a zero derivative.
    x = np.array([2.0, 3.0, 5.0])
    u = np.array([0.0, 4.0, 0.0, 0.0, 7.0, 0.5])
    idx = np.array([0, 0, 1, 1, 2, 2])
    f = lambda x, u: x.at[idx].multiply(u)  # noqa: E731
    check_grads(f, (x, u), order=2)
    ct_x, ct_u = invarax.vjp(f, x, u)[1](jnp.ones(3))
    np.testing.assert_array_equal(ct_x, [0.0, 0.0, 3.5])
    np.testing.assert_array_equal(ct_u, [8.0, 0.0, 0.0, 0.0, 2.5, 35.0])


@pytest.mark.parametrize("kind", ["min", "max"])
def test_scatter_extremum_ties_average_the_tangents(kind):
    # At x[1] the operand and two updates tie: each gets a third of the tangent; at x[0]
    # one update beats the operand and the other update.
    best = 9.0 if kind == "max" else -9.0
    x = jnp.array([0.0, best, 1.0])
    u = jnp.array([best, best, best, 4.0 if kind == "max" else -4.0])
    idx = np.array([1, 0, 1, 0])
    f = lambda x, u: getattr(x.at[idx], kind)(u)  # noqa: E731
    t_x, t_u = jnp.array([1.0, 2.0, 3.0]), jnp.array([10.0, 20.0, 30.0, 40.0])
    _, t = invarax.jvp(f, (x, u), (t_x, t_u))
    np.testing.assert_allclose(t, [20.0, 14.0, 3.0])
    ct_x, ct_u = invarax.vjp(f, x, u)[1](jnp.array([3.0, 6.0, 1.0]))
    np.testing.assert_allclose(ct_x, [0.0, 2.0, 1.0])
    np.testing.assert_allclose(ct_u, [2.0, 3.0, 2.0, 0.0])


@pytest.mark.parametrize("kind", ["min", "max"])
def test_scatter_extremum_ties_against_jax(kind):
    jax = pytest.importorskip("jax")
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    u = np.array([2.0, 5.0, 2.0, 0.5, 1.0, 2.0], np.float32)
    idx = np.array([1, 1, 1, 2, 0, 3])
    t_x, t_u = _args([(4,), (6,)], np.float32, seed=3)

    f = lambda m: lambda x, u: getattr(x.at[idx], kind)(u)  # noqa: E731
    ours = _jvp_and_vjp(invarax, f(invarax), (x, u), (t_x, t_u), t_x)
    theirs = _jvp_and_vjp(jax, f(jax), (x, u), (t_x, t_u), t_x)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)  # JAX's weights round


def test_scatter_max_keeps_the_tangent_of_an_untouched_nan():
    x = jnp.array([np.nan, 2.0, 3.0])
    out, t = invarax.jvp(lambda x: x.at[np.array([1])].max(jnp.array([5.0])),
                         (x,), (jnp.array([1.0, 2.0, 3.0]),))
    np.testing.assert_array_equal(out, [np.nan, 5.0, 3.0])
    np.testing.assert_array_equal(t, [1.0, 0.0, 3.0])


def test_sort_permutes_values_by_integer_keys(x64):
    keys = np.array([[3, 1], [1, 1], [2, 0]])
    f = lambda v: lax.sort((keys, v), dimension=0, num_keys=1)  # noqa: E731
    check_grads(f, _args([(3, 2)]))
    v = jnp.arange(6.0).reshape(3, 2)
    (k_out, _), (k_t, v_t) = invarax.jvp(f, (v,), (v * 10,))
    np.testing.assert_array_equal(k_t, np.zeros((3, 2), keys.dtype))
    np.testing.assert_array_equal(v_t, [[20.0, 50.0], [40.0, 10.0], [0.0, 30.0]])


def test_sort_and_gather_linear_programs_print():
    # The linear part of a sort is a gather, of a gather a gather; their transposes
    # scatter-add.
    _, f_jvp = invarax.linearize(jnp.sort, jnp.array([3.0, 1.0, 2.0]))
    assert "gather" in str(f_jvp.jaxpr) and "sort" not in str(f_jvp.jaxpr)
    vjp_jaxpr = invarax.make_jaxpr(lambda x, ct: invarax.vjp(lambda x: x[IDX], x)[1](ct))
    assert "scatter-add" in str(vjp_jaxpr(jnp.ones(4), jnp.ones(5)))


@pytest.mark.parametrize("scatter", [lax.scatter, lax.scatter_add, lax.scatter_mul,
                                     lax.scatter_min, lax.scatter_max])
def test_scatter_of_no_updates_passes_the_operand_tangent(scatter):
    x, none, no_updates = jnp.array([1.0, 2.0, 3.0]), jnp.zeros((0, 1), jnp.int32), jnp.zeros(0)
    f = lambda x, u: scatter(x, none, u, axes=0)  # noqa: E731
    _, t = invarax.jvp(f, (x, no_updates), (x * 10, no_updates))
    np.testing.assert_array_equal(t, [10.0, 20.0, 30.0])
    ct_x, ct_u = invarax.vjp(f, x, no_updates)[1](x)
    np.testing.assert_array_equal(ct_x, x)
    assert ct_u.shape == (0,)

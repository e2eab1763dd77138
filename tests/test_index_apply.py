"""``x.at[idx].apply(f)`` and lax's one-axis index helpers (``index_in_dim``,
``dynamic_index_in_dim``, ``dynamic_slice_in_dim``, ``dynamic_update_*_in_dim``,
``index_take``): JAX's values (differential tests), jit == eager and vmap rows bitwise."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import lax

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) / 7


def affine(v):
    return v * 2.0 + 1.0


APPLY_CASES = [
    ((np.array([0, 0, 2]),), affine, {}),
    ((slice(1, 3),), affine, {}),
    ((0, np.array([1, 1, 1, 0])), affine, {}),
    ((slice(None), np.array([2, 2])), jnp.sin, {}),
    ((1, 7), affine, {}),
    ((1, 7), affine, {"mode": "clip"}),
    ((np.array([-1, 5, -1]),), jnp.cos, {"mode": "drop"}),
    ((Ellipsis, np.array([[0, 3], [3, 3]])), affine, {}),
]


@pytest.mark.parametrize("case", APPLY_CASES, ids=range(len(APPLY_CASES)))
def test_apply_as_jax(case):
    jax = pytest.importorskip("jax")
    jjnp = pytest.importorskip("jax.numpy")
    index, func, options = case
    ours = jnp.asarray(X).at[index].apply(func, **options)
    theirs_func = {jnp.sin: jjnp.sin, jnp.cos: jjnp.cos}.get(func, func)
    theirs = jax.numpy.asarray(X).at[index].apply(theirs_func, **options)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-7, atol=1e-7)


def test_apply_repeats_func_per_repeated_index_and_keeps_ints():
    x = jnp.arange(5)
    out = x.at[jnp.array([1, 1, 1, 3])].apply(lambda v: v * 3)
    assert out.dtype == x.dtype
    assert out.tolist() == [0, 27, 2, 9, 4]


@pytest.mark.parametrize("case", APPLY_CASES, ids=range(len(APPLY_CASES)))
def test_apply_jit_is_eager_bitwise(case):
    index, func, options = case
    x = jnp.asarray(X)
    eager = x.at[index].apply(func, **options)
    assert_bitwise(invarax.jit(lambda x: x.at[index].apply(func, **options))(x), eager)


def test_apply_traced_indices_jit_and_vmap_rows():
    x = jnp.asarray(X.reshape(6, 4))
    idx = jnp.array([[0, 0, 3], [1, 2, 2], [3, 3, 3], [0, 1, 2], [2, 2, 0], [1, 1, 1]])

    def f(row, i):
        return row.at[i].apply(jnp.sin)

    eager = [f(x[r], idx[r]) for r in range(6)]
    assert_bitwise(invarax.jit(f)(x[2], idx[2]), eager[2])
    for n in (1, 3, 6):
        batched = invarax.vmap(f)(x[:n], idx[:n])
        for r in range(n):
            assert_bitwise(batched[r], eager[r])


def test_apply_keeps_the_weak_type():
    x = invarax.jit(lambda: jnp.arange(3) * 1.0)()
    assert x.weak_type
    out = x.at[1].apply(lambda v: v * np.float32(2.0))
    assert out.weak_type and out.tolist() == [0.0, 2.0, 2.0]


def test_apply_forward_derivative():
    x = jnp.asarray(X.reshape(-1)[:5])
    out, tangent = invarax.jvp(lambda x: x.at[jnp.array([1, 1, 4])].apply(jnp.sin),
                               (x,), (jnp.ones(5),))
    expect = np.ones(5, np.float32)
    expect[1] = np.cos(np.sin(X.reshape(-1)[1])) * np.cos(X.reshape(-1)[1])
    expect[4] = np.cos(X.reshape(-1)[4])
    np.testing.assert_allclose(np.asarray(tangent), expect, rtol=1e-6)


def test_apply_errors_name_the_problem():
    with pytest.raises(TypeError, match="same dtype.*astype"):
        jnp.arange(4).at[1].apply(jnp.sin)
    with pytest.raises(TypeError, match="scalar"):
        jnp.zeros(3).at[1].apply(lambda v: jnp.stack([v, v]))
    with pytest.raises(TypeError, match="callable"):
        jnp.zeros(3).at[1].apply(2.0)


HELPER_CASES = [
    ("index_in_dim", (1,), {"axis": 1}),
    ("index_in_dim", (-1,), {"axis": 2, "keepdims": False}),
    ("dynamic_index_in_dim", (2,), {"axis": 1, "keepdims": False}),
    ("dynamic_index_in_dim", (-1,), {"axis": 2}),
    ("dynamic_index_in_dim", (7,), {"axis": -1}),
    ("dynamic_slice_in_dim", (1, 2), {"axis": 2}),
    ("dynamic_slice_in_dim", (-3, 2), {"axis": 2}),
    ("dynamic_slice_in_dim", (2, 1), {}),
]


@pytest.mark.parametrize("case", HELPER_CASES, ids=str)
def test_index_helpers_as_jax(case):
    jax = pytest.importorskip("jax")
    name, args, options = case
    ours = getattr(lax, name)(jnp.asarray(X), *args, **options)
    assert_bitwise(ours, np.asarray(getattr(jax.lax, name)(X, *args, **options)))
    if name != "index_in_dim":
        jitted = invarax.jit(lambda x, i: getattr(lax, name)(x, i, *args[1:], **options))
        assert_bitwise(jitted(jnp.asarray(X), jnp.asarray(args[0])), ours)


@pytest.mark.parametrize("update,index,axis", [
    (np.ones((2, 3), np.float32), 1, 2),
    (np.ones((2, 3, 1), np.float32), -1, 2),
    (np.ones((2, 1, 4), np.float32), 5, 1),
], ids=["drop-axis", "keep-axis", "clamped"])
def test_dynamic_update_index_in_dim_as_jax(update, index, axis):
    jax = pytest.importorskip("jax")
    ours = lax.dynamic_update_index_in_dim(jnp.asarray(X), jnp.asarray(update), index, axis)
    theirs = jax.lax.dynamic_update_index_in_dim(X, update, index, axis)
    assert_bitwise(ours, np.asarray(theirs))
    u = np.ones((2, 2, 4), np.float32)
    ours = lax.dynamic_update_slice_in_dim(jnp.asarray(X), jnp.asarray(u), 2, 1)
    assert_bitwise(ours, np.asarray(jax.lax.dynamic_update_slice_in_dim(X, u, 2, 1)))


def test_index_take_as_jax_and_under_vmap():
    jax = pytest.importorskip("jax")
    i0, i1 = np.array([0, 1, -1, 3]), np.array([2, -4, 1, 0])
    ours = lax.index_take(jnp.asarray(X), (jnp.asarray(i0), jnp.asarray(i1)), (1, 2))
    assert_bitwise(ours, np.asarray(jax.lax.index_take(X, (i0, i1), (1, 2))))
    take = invarax.vmap(lambda x: lax.index_take(x, (jnp.asarray(i1),), (1,)))
    batched = take(jnp.asarray(X))
    for r in range(2):
        assert_bitwise(batched[r], lax.index_take(jnp.asarray(X[r]), (jnp.asarray(i1),), (1,)))


def test_dynamic_index_gradient_and_vmap_rows():
    x = jnp.asarray(X[0])

    def f(x, i):
        return jnp.sum(lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False) ** 2)

    g = invarax.grad(f)(x, 2)
    expect = np.zeros_like(X[0])
    expect[:, 2] = 2 * X[0][:, 2]
    np.testing.assert_allclose(np.asarray(g), expect, rtol=1e-6)
    assert_bitwise(invarax.jit(invarax.grad(f))(x, jnp.asarray(2)), g)
    rows = invarax.vmap(lambda i: lax.dynamic_index_in_dim(x, i, 1, False))(jnp.arange(4))
    for i in range(4):
        assert_bitwise(rows[i], lax.dynamic_index_in_dim(x, i, 1, False))


def test_index_helper_errors():
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        lax.index_in_dim(jnp.asarray(X), 3, axis=1)
    with pytest.raises(TypeError, match="dynamic_index_in_dim"):
        invarax.jit(lambda x, i: lax.index_in_dim(x, i))(jnp.asarray(X), 1)
    with pytest.raises(ValueError, match="one index array per axis"):
        lax.index_take(jnp.asarray(X), (jnp.arange(2),), (0, 1))
    with pytest.raises(ValueError, match="1-d arrays of one shape"):
        lax.index_take(jnp.asarray(X), (jnp.arange(2), jnp.arange(3)), (0, 1))

"""sort, argsort (jnp and lax) and lax.top_k: values against NumPy's stable sort (and JAX
where installed), JAX's order for NaNs and signed zeros, each case eagerly and under jit,
jit bitwise eager."""

import numpy as np
import pytest
from helpers import assert_bitwise, data, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import lax

DTYPES = [np.float32, np.int32, np.bool_]


SPECIAL = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, -np.nan, 1.0, 0.0, -0.0, np.inf], np.float32)


@pytest.mark.parametrize("axis", [0, -1, None])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_match_numpy_stable(axis, dtype):
    x = data((5, 6), dtype)
    x = x if dtype == np.bool_ else x // 10  # many ties
    assert_bitwise(
        eager_and_jit(lambda a: jnp.sort(a, axis=axis), jnp.asarray(x)),
        np.sort(x, axis=axis, kind="stable"),
    )
    assert_bitwise(
        eager_and_jit(lambda a: jnp.argsort(a, axis=axis), jnp.asarray(x)),
        np.argsort(x, axis=axis, kind="stable").astype(np.int32),
    )


def test_sort_order_nan_last_signed_zeros_equal():
    got = eager_and_jit(jnp.sort, SPECIAL)
    assert_bitwise(got, np.sort(SPECIAL, kind="stable"))
    assert np.signbit(np.asarray(got)[1:5]).tolist() == [True, False, False, True]
    assert_bitwise(
        eager_and_jit(jnp.argsort, SPECIAL), np.argsort(SPECIAL, kind="stable").astype(np.int32)
    )


def test_descending_keeps_equal_values_in_input_order():
    x = jnp.array([1, 3, 1, 2, 3])
    assert eager_and_jit(lambda a: jnp.argsort(a, descending=True), x).tolist() == [1, 4, 3, 0, 2]
    assert eager_and_jit(lambda a: jnp.sort(a, descending=True), x).tolist() == [3, 3, 2, 1, 1]


def test_argsort_dtype_follows_x64(x64):
    assert jnp.argsort(jnp.array([2.0, 1.0])).dtype == np.int64


def test_lax_sort_several_operands_by_keys():
    keys = jnp.array([1, 0, 1, 0])
    second = jnp.array([5, 7, 4, 7])
    values = jnp.array([10.0, 20.0, 30.0, 40.0])
    out = eager_and_jit(lambda *ops: lax.sort(ops, num_keys=2)[2], keys, second, values)
    assert out.tolist() == [20.0, 40.0, 30.0, 10.0]
    a, b = lax.sort((keys, values))
    assert a.tolist() == [0, 0, 1, 1] and b.tolist() == [20.0, 40.0, 10.0, 30.0]


def test_array_methods_sort_argsort():
    x = jnp.array([[3, 1, 2]])
    assert x.sort().tolist() == [[1, 2, 3]] and x.argsort().tolist() == [[1, 2, 0]]


ERRORS = [
    (lambda: jnp.sort(jnp.ones(3), kind="stable"), TypeError, "'kind' argument to sort"),
    (lambda: jnp.argsort(jnp.ones(3), order="x"), TypeError, "'order'"),
    (lambda: lax.sort((jnp.ones(3), jnp.ones(2))), TypeError, "same shape"),
    (lambda: lax.sort(jnp.ones(3), num_keys=2), ValueError, "num_keys"),
]


@pytest.mark.parametrize("f, error, match", ERRORS)
def test_errors(f, error, match):
    with pytest.raises(error, match=match):
        f()


@pytest.mark.parametrize("name", ["sort", "argsort"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_with_nan_matches_jax(name, descending):
    jax = pytest.importorskip("jax")
    x = np.stack([SPECIAL, SPECIAL[::-1]])

    def f(m, a):
        return getattr(m, name)(a, axis=-1, descending=descending)

    ours = eager_and_jit(lambda a: f(jnp, a), jnp.asarray(x))
    assert_bitwise(ours, np.asarray(f(jax.numpy, x)))


# ---- top_k -------------------------------------------------------------------------------

TOP_K = [(SPECIAL, 10), (SPECIAL, 4), (SPECIAL, 0), (np.array([[1, 5, 5], [3, 2, 3]]), 2),
         (np.array([True, False, True, True]), 3), (data((4, 7), np.int32) // 20, 5),
         (np.array([2**32 - 1, 0, 7, 7], np.uint32), 3)]


@pytest.mark.parametrize("case", range(len(TOP_K)))
@pytest.mark.parametrize("axis", [-1, 0])
def test_top_k_matches_jax(case, axis):
    """IEEE's total order, largest first (NaNs of both signs, signed zeros), equal values
    by lowest index, int32 indices: JAX's values and indices bit for bit."""
    jax = pytest.importorskip("jax")
    x, k = TOP_K[case]
    k = min(k, x.shape[axis])
    ours = eager_and_jit(lambda a: lax.top_k(a, k, axis=axis), jnp.asarray(x))
    for got, want in zip(ours, jax.lax.top_k(x, k, axis=axis), strict=True):
        assert_bitwise(got, np.asarray(want))


def test_top_k_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.array([[1.0, 3.0, 3.0, 2.0, -0.0], [0.5, 0.0, 4.0, -1.0, 4.0]], np.float32)

    def loss(lax_module):
        return lambda a: (lax_module.top_k(a, 3)[0] ** 2).sum()

    assert_bitwise(eager_and_jit(invarax.grad(loss(lax)), jnp.asarray(x)),
                   np.asarray(jax.grad(loss(jax.lax))(x)))


TOP_K_ERRORS = [
    (lambda: lax.top_k(jnp.ones(3), 4), ValueError, r"k=4 must be between 0 and 3"),
    (lambda: lax.top_k(jnp.ones(3), -1), ValueError, r"k=-1"),
    (lambda: lax.top_k(jnp.ones(()), 1), TypeError, "0-d"),
    (lambda: lax.top_k(jnp.ones(3, np.complex64), 1), TypeError, "real part or the absolute"),
]


@pytest.mark.parametrize("f, error, match", TOP_K_ERRORS)
def test_top_k_errors(f, error, match):
    with pytest.raises(error, match=match):
        f()

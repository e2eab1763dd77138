"""Array operators and methods, eagerly and under jit, against NumPy."""

import operator

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax.core.dtypes import canonicalize

X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
Y = np.array([[2.0, 1.0, -3.0], [4.0, 0.5, 2.0]], np.float32)
IA = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
JA = np.array([[3, 1, 2], [1, 7, 2]], np.int32)

BINARY = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.eq, operator.ne, operator.lt, operator.le,
    operator.gt, operator.ge,
]
BITWISE = [operator.and_, operator.or_, operator.xor]


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.__name__)
@pytest.mark.parametrize("a, b", [(X, Y), (IA, JA)], ids=["f32", "i32"])
def test_binary_operators(op, a, b):
    if op is operator.pow and a.dtype == np.float32:
        a = np.abs(a)
    got = eager_and_jit(lambda x, y: op(x, y), jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(got), op(a, b), rtol=1e-6)
    assert got.dtype == canonicalize(op(a, b).dtype)  # int / int is float32, as in JAX


@pytest.mark.parametrize("op", BINARY[:7], ids=lambda op: op.__name__)
def test_reflected_operators_with_scalars(op):
    x = jnp.asarray(np.abs(X) + 1.0)
    got = op(2.0, x)
    np.testing.assert_allclose(np.asarray(got), op(np.float32(2.0), np.abs(X) + 1.0), rtol=1e-6)
    assert got.dtype == np.float32


@pytest.mark.parametrize("op", BITWISE, ids=lambda op: op.__name__)
def test_bitwise_operators(op):
    got = eager_and_jit(lambda x, y: op(x, y), jnp.asarray(IA), jnp.asarray(JA))
    np.testing.assert_array_equal(np.asarray(got), op(IA, JA))
    b = jnp.asarray(IA > 2)
    assert op(b, ~b).dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(~jnp.asarray(IA)), ~IA)


def test_unary_operators():
    x = jnp.asarray(X)
    assert_bitwise(-x, -X)
    assert_bitwise(+x, X)
    assert_bitwise(abs(x), np.abs(X))


def test_matmul_operator():
    a, b = jnp.asarray(X), jnp.asarray(Y.T)
    np.testing.assert_allclose(np.asarray(a @ b), X @ Y.T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(X @ b), X @ Y.T, rtol=1e-6)


METHODS = [
    ("sum", (), {}), ("sum", (0,), {}), ("sum", (), {"axis": 1, "keepdims": True}),
    ("mean", (), {"axis": 0}), ("max", (), {}), ("min", (), {"axis": -1}),
    ("argmax", (), {}), ("argmin", (), {"axis": 1}), ("prod", (), {"axis": 0}),
    ("var", (), {}), ("std", (), {"axis": 0}), ("cumsum", (), {"axis": 1}),
    ("ravel", (), {}), ("flatten", (), {}), ("transpose", (), {}), ("transpose", (1, 0), {}),
    ("reshape", (3, 2), {}), ("reshape", ((6,),), {}), ("reshape", (-1,), {}),
    ("squeeze", (), {}), ("swapaxes", (0, 1), {}), ("clip", (-1.0, 1.0), {}),
    ("round", (), {}), ("astype", (np.int32,), {}), ("any", (), {}), ("all", (), {"axis": 0}),
]


@pytest.mark.parametrize("name, args, kwargs", METHODS, ids=lambda v: str(v))
def test_methods_match_numpy(name, args, kwargs):
    x = jnp.asarray(X)
    got = eager_and_jit(lambda a: getattr(a, name)(*args, **kwargs), x)
    want = getattr(X, name)(*args, **kwargs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert got.shape == np.shape(want)


def test_transpose_property_and_squeeze():
    assert_bitwise(jnp.asarray(X).T, X.T)
    assert jnp.ones((1, 3, 1)).squeeze().shape == (3,)
    assert jnp.ones((1, 3, 1)).squeeze(0).shape == (3, 1)


def test_item_tolist_and_conversions():
    x = jnp.asarray(IA)
    assert x.tolist() == IA.tolist()
    assert x[1, 2].item() == 6 and x.item(4) == 5
    assert int(x[0, 0]) == 1 and float(x[0, 0]) == 1.0 and bool(x[0, 0])
    assert list(range(10))[x[0, 1]] == 2  # __index__


def test_at_updates():
    x = jnp.asarray(X)
    assert_bitwise(x.at[0, 1].set(9.0)[0, 1], np.float32(9.0))
    assert_bitwise(x.at[:, 0].add(1.0)[:, 0], X[:, 0] + 1)
    assert_bitwise(x.at[1].multiply(2.0)[1], X[1] * 2)
    assert_bitwise(x.at[0].min(0.0)[0], np.minimum(X[0], 0))
    assert_bitwise(x.at[0].max(0.0)[0], np.maximum(X[0], 0))
    assert_bitwise(x.at[1, ::-1].get(), X[1, ::-1])
    assert_bitwise(x, X)  # the original is unchanged


def test_indexing():
    x = jnp.asarray(np.arange(24.0, dtype=np.float32).reshape(2, 3, 4))
    n = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    indices = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, -1), (None, 0),
               (slice(None, None, -2),), (0, slice(3, 0, -1), None), (np.array([1, 0]),),
               (0, np.array([2, 2, 0]))]
    for idx in indices:
        assert_bitwise(eager_and_jit(lambda a, i=idx: a[i], x), n[idx])


def test_array_equals_numpy_semantics_under_jit():
    @invarax.jit
    def f(x):
        return (x.sum(axis=0) * 2.0 - x.mean()).reshape(3, 1).T

    np.testing.assert_allclose(np.asarray(f(X)), (X.sum(0) * 2 - X.mean()).reshape(3, 1).T,
                               rtol=1e-6)


def test_asarray_with_a_dtype_is_strongly_typed():
    weak = jnp.asarray(1.0)
    assert weak.weak_type
    assert jnp.asarray(weak).weak_type  # no dtype: unchanged, as JAX
    strong = jnp.asarray(weak, dtype=jnp.float32)
    assert not strong.weak_type and strong.dtype == np.float32
    assert not jnp.array(weak, dtype=jnp.float32).weak_type

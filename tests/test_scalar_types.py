"""The scalar types of invarax.numpy (jnp.float32, ...): callable as in JAX, and dtypes
wherever a dtype is accepted."""

import doctest
import pickle
import warnings

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
import invarax.numpy._scalar_types as scalar_types
from invarax import grad, jit, lax, vmap

NAMES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]
NARROW = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}
INEXACT = ["float16", "float32", "float64", "complex64", "complex128"]


def assert_same(a, b):
    assert_bitwise(a, b)
    assert a.weak_type == b.weak_type


# ---------------------------------------------------------------------------------------
# Calling a scalar type


@pytest.mark.parametrize("name", NAMES)
def test_call_gives_a_strongly_typed_array(name):
    out = getattr(jnp, name)(1)
    assert isinstance(out, invarax.Array)
    assert out.shape == () and not out.weak_type
    assert out.dtype == np.dtype(NARROW.get(name, name))
    assert out.tolist() == 1


@pytest.mark.parametrize("name", NAMES)
def test_call_under_x64_keeps_the_width(x64, name):
    out = getattr(jnp, name)(1)
    assert out.dtype == np.dtype(name) and not out.weak_type


def test_call_examples():
    assert repr(jnp.float32(3.0)) == "Array(3., dtype=float32)"
    assert repr(jnp.float64(1.0)) == "Array(1., dtype=float32)"  # x64 off, as in JAX
    assert repr(jnp.int32(3.7)) == "Array(3, dtype=int32)"
    assert repr(jnp.bool_(2)) == "Array(True, dtype=bool)"
    assert_same(jnp.float32([1, 2]), jnp.asarray([1, 2], jnp.float32))
    assert_same(jnp.int8(jnp.arange(3)), jnp.arange(3).astype(jnp.int8))
    assert jnp.bool is jnp.bool_


def test_call_under_transformations():
    assert grad(lambda x: jnp.float32(x) * x)(3.0) == 6.0
    assert_same(jit(jnp.int32)(jnp.asarray([1.5, -2.5])), jnp.asarray([1, -2], jnp.int32))
    assert_same(vmap(jnp.float16)(jnp.arange(3)), jnp.arange(3).astype(np.float16))


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "int64", "bool_", "uint8"])
def test_call_matches_jax(name):
    jax = pytest.importorskip("jax")
    for value in (3, [1.5, 2.0]):
        with warnings.catch_warnings():  # JAX warns that float64/int64 narrow without x64
            warnings.simplefilter("ignore", UserWarning)
            theirs = getattr(jax.numpy, name)(value)
        ours = getattr(jnp, name)(value)
        assert_bitwise(ours, theirs)
        assert ours.weak_type == theirs.weak_type


# ---------------------------------------------------------------------------------------
# A scalar type is a dtype


@pytest.mark.parametrize("name", NAMES)
def test_a_scalar_type_is_its_dtype(name):
    t, dt = getattr(jnp, name), np.dtype(name)
    assert t.dtype == dt
    assert np.dtype(t) == dt and jnp.dtype(t) == dt
    assert t == dt and dt == t and not t != dt and not dt != t
    assert t == dt.type and hash(t) == hash(dt.type)
    assert t != np.dtype("int16" if name == "float16" else "float16")
    assert jnp.zeros((), t).dtype == np.dtype(NARROW.get(name, name))
    assert jnp.issubdtype(t, dt.type) and jnp.issubdtype(dt, t)
    assert isinstance(dt.type(1), t) and not isinstance(1, t)
    assert repr(t) == f"<class 'invarax.numpy.{dt.type.__name__}'>"
    assert pickle.loads(pickle.dumps(t)) is t


@pytest.mark.parametrize("name", INEXACT)
def test_array_dtypes_compare_with_scalar_types(name):
    x = jnp.ones(2, getattr(jnp, name))
    t = getattr(jnp, NARROW.get(name, name))
    assert x.dtype == t and t == x.dtype and x.dtype in (t,)
    assert jnp.issubdtype(x.dtype, jnp.inexact)
    assert jnp.issubdtype(x.dtype, jnp.floating) == (name.startswith("float"))
    assert x.astype(jnp.complex64).dtype == jnp.complex64
    assert x.real.astype(jnp.int8).dtype == jnp.int8 != x.dtype


def test_dtype_queries():
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.result_type(jnp.float32, jnp.int8) == np.float32
    assert jnp.result_type(jnp.int8, 1.0) == np.float32
    assert jnp.result_type(jnp.int16, jnp.ones(2, jnp.int8)) == np.int16
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert not jnp.issubdtype(jnp.int32, jnp.floating)
    assert np.zeros(2, jnp.float16).dtype == np.float16


# Every function taking a dtype gives the same result for the scalar type and the dtype.
DTYPE_ARGS = {
    "zeros": lambda d: jnp.zeros((2, 3), d),
    "ones": lambda d: jnp.ones(3, dtype=d),
    "full": lambda d: jnp.full(3, 2, d),
    "empty": lambda d: jnp.empty(0, d),
    "zeros_like": lambda d: jnp.zeros_like(jnp.ones(3), d),
    "ones_like": lambda d: jnp.ones_like(jnp.ones(3), dtype=d),
    "full_like": lambda d: jnp.full_like(jnp.ones(3), 2, d),
    "array": lambda d: jnp.array([1, 2], d),
    "asarray": lambda d: jnp.asarray(np.arange(3), d),
    "arange": lambda d: jnp.arange(4, dtype=d),
    "linspace": lambda d: jnp.linspace(0, 4, 5, dtype=d),
    "eye": lambda d: jnp.eye(3, dtype=d),
    "identity": lambda d: jnp.identity(2, d),
    "astype": lambda d: jnp.arange(3).astype(d),
    "concatenate": lambda d: jnp.concatenate([jnp.ones(2), jnp.zeros(1)], dtype=d),
    "stack": lambda d: jnp.stack([jnp.ones(2), jnp.zeros(2)], dtype=d),
    "sum": lambda d: jnp.sum(jnp.arange(4), dtype=d),
    "cumsum": lambda d: jnp.cumsum(jnp.arange(4), dtype=d),
    "mean": lambda d: jnp.mean(jnp.arange(4), dtype=d),
    "trace": lambda d: jnp.trace(jnp.eye(2), dtype=d),
    "matmul": lambda d: jnp.matmul(jnp.ones((2, 2), jnp.int8), jnp.ones(2, jnp.int8),
                                   preferred_element_type=d),
    "einsum": lambda d: jnp.einsum("i,i->", jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8),
                                   preferred_element_type=d),
    "convert_element_type": lambda d: lax.convert_element_type(jnp.arange(3), d),
    "dot_general": lambda d: lax.dot_general(jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8),
                                             (((0,), (0,)), ((), ())), preferred_element_type=d),
    "iota": lambda d: lax.iota(d, 3),
    "argmax": lambda d: lax.argmax(jnp.asarray([1.0, 3.0]), 0, d),
}
FLOAT_ONLY = {"linspace", "mean"}
INT_ONLY = {"argmax"}


@pytest.mark.parametrize("name", ["int32", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("fun", DTYPE_ARGS, ids=str)
def test_dtype_arguments_take_scalar_types(fun, name):
    if (fun in FLOAT_ONLY and "int" in name) or (fun in INT_ONLY and "int" not in name):
        pytest.skip("dtype not accepted by this function")
    f = DTYPE_ARGS[fun]
    assert_same(f(getattr(jnp, name)), f(np.dtype(name)))
    assert_same(jit(lambda: f(getattr(jnp, name)))(), f(np.dtype(name)))


def test_scalar_type_as_a_static_argument():
    cast = jit(lambda x, d: x.astype(d), static_argnums=1)
    assert_same(cast(jnp.ones(2), jnp.int8), jnp.ones(2, np.int8))
    assert_same(cast(jnp.ones(2), np.dtype("int8")), jnp.ones(2, np.int8))


# ---------------------------------------------------------------------------------------
# Docstring examples


def test_docstring_examples():
    globs = {"jnp": jnp}
    result = doctest.testmod(scalar_types, extraglobs=globs)
    assert result.attempted > 0 and result.failed == 0
    runner = doctest.DocTestRunner()
    for name in NAMES:
        for test in doctest.DocTestFinder().find(getattr(jnp, name), name, globs=globs):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0

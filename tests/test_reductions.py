"""``jnp`` and ``lax`` reductions: values against NumPy in float64, dtypes as JAX, errors.

Every case runs eagerly and under ``jit``, and the two must agree bitwise (N3).
"""

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.ops.reductions import reduce_sum_p

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


def data(shape, seed=0):
    """float32 values near 1 (so that long products neither overflow nor vanish)."""
    rng = np.random.default_rng(seed)
    return (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)


# name: (invarax function, NumPy reference evaluated in float64)
FUNCS = {
    "sum": (jnp.sum, np.sum),
    "prod": (jnp.prod, np.prod),
    "max": (jnp.max, np.max),
    "amin": (jnp.amin, np.min),
    "mean": (jnp.mean, np.mean),
    "var": (jnp.var, np.var),
    "std": (jnp.std, np.std),
    "all": (jnp.all, np.all),
    "any": (jnp.any, np.any),
}
AXES = [None, 0, 1, -1, (0, 2), (2, 0, 1), ()]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", FUNCS)
def test_float32_values_against_float64(name, axis, keepdims):
    f, ref = FUNCS[name]
    x = data((4, 5, 6))
    x[1, 2, 3] = 0.0  # so that ``all`` sees a zero
    got = eager_and_jit(lambda a: f(a, axis=axis, keepdims=keepdims), jnp.asarray(x))
    expected = ref(x.astype(np.float64), axis=axis, keepdims=keepdims)
    assert got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 2, -2])
@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
def test_axis_functions_against_numpy(name, axis):
    x = data((4, 5, 6), seed=1)
    got = eager_and_jit(lambda a: getattr(jnp, name)(a, axis=axis), jnp.asarray(x))
    expected = getattr(np, name)(x.astype(np.float64), axis=axis)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-5)
    assert got.dtype == (I32 if name.startswith("arg") else F32)


def test_argmax_keepdims():
    x = jnp.asarray(data((2, 3, 4)))
    assert eager_and_jit(lambda a: jnp.argmax(a, axis=1, keepdims=True), x).shape == (2, 1, 4)
    assert eager_and_jit(lambda a: jnp.argmin(a, keepdims=True), x).shape == (1, 1, 1)


# Exact integer results: computed in int64 by NumPy, then wrapped to the result dtype.
INT_CASES = [
    (np.int8, [[100, 100, 100], [-128, 1, 2]]),
    (np.uint8, [[200, 200, 200], [0, 1, 255]]),
    (np.int32, [[2**30, 2**30, 2**30], [-(2**31), -1, 5]]),  # int32 sums wrap, as in JAX
    (np.bool_, [[True, True, False], [False, False, False]]),
]


@pytest.mark.parametrize(("dtype", "values"), INT_CASES, ids=lambda c: str(c)[:20])
@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
def test_integer_sums_and_products_are_exact(name, dtype, values):
    x = np.array(values, dtype)
    got = eager_and_jit(lambda a: getattr(jnp, name)(a, axis=1), jnp.asarray(x))
    out_dtype = RESULT_DTYPES[name][np.dtype(dtype).name]
    expected = getattr(np, name)(x.astype(np.int64), axis=1).astype(out_dtype)
    assert_bitwise(got, expected)


@pytest.mark.parametrize(("dtype", "values"), INT_CASES, ids=lambda c: str(c)[:20])
@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "all", "any"])
def test_integer_extrema_and_logic_are_exact(name, dtype, values):
    x = np.array(values, dtype)
    got = eager_and_jit(lambda a: getattr(jnp, name)(a, axis=1), jnp.asarray(x))
    expected = getattr(np, name)(x, axis=1)
    assert_bitwise(got, expected.astype(np.int32) if name.startswith("arg") else expected)


def test_bool_sum_is_a_count():
    x = jnp.asarray(np.arange(1000) % 3 == 0)
    assert_bitwise(eager_and_jit(jnp.sum, x), np.int32(334))
    assert_bitwise(eager_and_jit(jnp.mean, x), np.float32(0.334))


# (function, input dtype): result dtype, with x64 off (JAX's rules).
SUM_DTYPES = {
    "bool": "int32",
    "int8": "int32",
    "int16": "int32",
    "int32": "int32",
    "uint8": "uint32",
    "uint16": "uint32",
    "uint32": "uint32",
    "float16": "float16",
    "float32": "float32",
    "complex64": "complex64",
}
MEAN_DTYPES = {**{k: "float32" for k in SUM_DTYPES}, "float16": "float16", "complex64": "complex64"}
RESULT_DTYPES = {
    "sum": SUM_DTYPES,
    "prod": SUM_DTYPES,
    "max": {k: k for k in SUM_DTYPES if k != "complex64"},
    "mean": MEAN_DTYPES,
    "var": {**MEAN_DTYPES, "complex64": "float32"},
    "std": {**MEAN_DTYPES, "complex64": "float32"},
    "argmin": {k: "int32" for k in SUM_DTYPES if k != "complex64"},
    "any": {k: "bool" for k in SUM_DTYPES},
    "cumsum": {**{k: k for k in SUM_DTYPES}, "bool": "int32"},
    "cumprod": {**{k: k for k in SUM_DTYPES}, "bool": "int32"},
}
DTYPE_CASES = [(f, d, out) for f, table in RESULT_DTYPES.items() for d, out in table.items()]


@pytest.mark.parametrize(("name", "dtype", "expected"), DTYPE_CASES)
def test_result_dtypes(name, dtype, expected):
    x = jnp.asarray(np.ones((2, 3), dtype))
    out = eager_and_jit(lambda a: getattr(jnp, name)(a, axis=0), x)
    assert out.dtype == np.dtype(expected)
    assert not out.weak_type


@pytest.mark.parametrize("name", RESULT_DTYPES)
def test_reductions_of_weak_scalars_are_strong(name):
    """As JAX: ``jnp.sum(2.0)`` is a (strongly typed) float32, ``jnp.max(3)`` an int32."""
    for scalar, dtype in ((2.0, "float32"), (3, "int32")):
        out = getattr(jnp, name)(scalar)
        assert not out.weak_type
        assert out.dtype == np.dtype(RESULT_DTYPES[name][dtype])


def test_dtype_argument():
    x = jnp.asarray(np.array([1.5, 2.5, 3.5], np.float32))
    assert jnp.sum(x, dtype=np.float64).dtype == F32  # canonicalised: x64 is off
    assert_bitwise(jnp.sum(x, dtype=np.int32), np.int32(6))  # cast first, then summed
    assert jnp.sum(jnp.arange(3), dtype=np.float16).dtype == np.float16
    assert_bitwise(
        jnp.sum(jnp.asarray(np.array([100, 100], np.int8)), promote_integers=False), np.int8(-56)
    )
    assert_bitwise(jnp.mean(jnp.asarray(np.array([1, 2], np.int32)), dtype=np.int32), np.int32(1))
    assert jnp.cumsum(jnp.asarray(np.array([1, 2], np.int8)), dtype=np.int8).dtype == np.int8
    assert_bitwise(
        jnp.cumsum(jnp.asarray(np.array([-1, 1, 0])), dtype=bool), np.array([True, True, True])
    )


def test_x64_dtypes():
    invarax.config.update("jax_enable_x64", True)
    try:
        assert jnp.sum(jnp.asarray(np.ones(3, np.int32))).dtype == np.int64
        assert jnp.sum(jnp.asarray(np.ones(3, np.uint8))).dtype == np.uint64
        assert jnp.sum(jnp.asarray(np.ones(3, np.float32)), dtype=np.float64).dtype == np.float64
        assert jnp.argmax(jnp.asarray(np.ones(3))).dtype == np.int64
        assert jnp.mean(jnp.asarray(np.ones(3, np.int32))).dtype == np.float64
    finally:
        invarax.config.update("jax_enable_x64", False)


WHERE = np.array([True, False, True, True, False, True])


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("sum", {}),
        ("sum", {"initial": 2.0}),
        ("prod", {"initial": 3.0}),
        ("prod", {}),
        ("max", {"initial": -1.0}),
        ("min", {"initial": 5.0}),
        ("mean", {}),
        ("all", {}),
        ("any", {}),
    ],
)
def test_where_and_initial(name, kwargs):
    x = data((4, 6), seed=3)
    x[0, 0] = 0.0
    f = lambda a: getattr(jnp, name)(a, axis=1, where=WHERE, **kwargs)
    got = eager_and_jit(f, jnp.asarray(x))
    expected = getattr(np, name)(x.astype(np.float64), axis=1, where=WHERE, **kwargs)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-5)


def test_initial_without_where():
    x = jnp.asarray(np.array([1, 5], np.int32))
    assert_bitwise(jnp.max(x, initial=7), np.int32(7))
    assert_bitwise(jnp.sum(jnp.arange(3), initial=2.5), np.int32(5))  # cast to the result
    assert_bitwise(jnp.max(jnp.zeros((0, 2)), axis=0, initial=3.0), np.float32([3, 3]))


def test_var_and_std_options():
    x = data((5, 7), seed=4)
    x64 = x.astype(np.float64)
    for kwargs in ({"ddof": 1}, {"correction": 2}, {"correction": 0.5}):
        got = eager_and_jit(lambda a, kw=kwargs: jnp.var(a, axis=1, **kw), jnp.asarray(x))
        ref_ddof = kwargs.get("ddof", kwargs.get("correction"))
        np.testing.assert_allclose(np.asarray(got), np.var(x64, axis=1, ddof=ref_ddof), rtol=2e-5)
    m = jnp.mean(jnp.asarray(x), axis=1, keepdims=True)
    assert_bitwise(jnp.var(jnp.asarray(x), axis=1, mean=m), jnp.var(jnp.asarray(x), axis=1))
    got = eager_and_jit(lambda a: jnp.std(a, axis=0, where=x > 1), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.std(x64, axis=0, where=x > 1), rtol=2e-5)
    c = jnp.asarray(np.array([1j, 2.0, 1 + 1j], np.complex64))
    np.testing.assert_allclose(np.asarray(jnp.var(c)), np.var(np.asarray(c)), rtol=1e-6)


def test_empty_reductions():
    e = jnp.zeros((0, 3))
    assert_bitwise(eager_and_jit(lambda a: jnp.sum(a, axis=0), e), np.zeros(3, np.float32))
    assert_bitwise(eager_and_jit(lambda a: jnp.prod(a, axis=0), e), np.ones(3, np.float32))
    assert_bitwise(eager_and_jit(lambda a: jnp.max(a, axis=1), e), np.zeros(0, np.float32))
    assert np.isnan(np.asarray(eager_and_jit(jnp.mean, e)))  # 0 / 0, without a warning
    assert np.isnan(np.asarray(eager_and_jit(lambda a: jnp.var(a, ddof=1), jnp.ones(1))))
    assert_bitwise(eager_and_jit(jnp.all, e), np.True_)


def test_nan_handling_as_jax():
    x = jnp.asarray(np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, -1.0, 0.0]], np.float32))
    assert_bitwise(eager_and_jit(lambda a: jnp.argmax(a, axis=1), x), np.array([1, 1], np.int32))
    assert_bitwise(eager_and_jit(lambda a: jnp.argmin(a, axis=1), x), np.array([1, 2], np.int32))
    assert_bitwise(eager_and_jit(lambda a: jnp.max(a, axis=1), x), np.float32([np.nan, 5]))
    assert_bitwise(eager_and_jit(lambda a: jnp.min(a, axis=1), x), np.float32([np.nan, -1]))
    assert_bitwise(
        eager_and_jit(lambda a: lax.cummax(a, 1), x),
        np.float32([[1, np.nan, np.nan, np.nan], [2, 5, 5, 5]]),
    )


def test_methods():
    x = jnp.asarray(data((3, 4), seed=5))
    assert_bitwise(x.sum(axis=0), jnp.sum(x, axis=0))
    assert_bitwise(x.mean(), jnp.mean(x))
    assert_bitwise(x.argmax(axis=1), jnp.argmax(x, axis=1))
    assert_bitwise(x.cumsum(axis=1), jnp.cumsum(x, axis=1))
    assert_bitwise(x.std(ddof=1), jnp.std(x, ddof=1))


def test_lax_reductions():
    x = jnp.asarray(data((3, 4), seed=6))
    assert_bitwise(eager_and_jit(lambda a: lax.reduce_sum(a, (0, -1)), x), jnp.sum(x))
    assert_bitwise(eager_and_jit(lambda a: lax.reduce_max(a, [1]), x), jnp.max(x, axis=1))
    assert lax.reduce_sum(x, ()) is x
    weak = jnp.full((3,), 2.0)
    assert weak.weak_type and eager_and_jit(lambda a: lax.reduce_max(a, (0,)), weak).weak_type
    b = jnp.asarray(np.array([[True, False], [True, True]]))
    assert_bitwise(lax.reduce_and(b, (1,)), np.array([False, True]))
    assert_bitwise(lax.reduce_or(jnp.asarray(np.array([1, 6], np.int32)), (0,)), np.int32(7))
    assert_bitwise(lax.argmax(x, 1, np.int64), jnp.argmax(x, axis=1))  # canonicalised to int32
    rev = lax.cumsum(x, 1, reverse=True)
    assert_bitwise(rev, np.asarray(x)[:, ::-1].cumsum(axis=1)[:, ::-1])


def test_jaxprs():
    x = jnp.ones((2, 3))
    assert "reduce_sum[axes=(1,)]" in str(invarax.make_jaxpr(lambda a: jnp.sum(a, axis=-1))(x))
    text = str(invarax.make_jaxpr(lambda a: jnp.argmax(a, axis=0))(x))
    assert "argmax[axes=(0,) index_dtype=int32]" in text
    assert "cumsum[axis=1 reverse=True]" in str(
        invarax.make_jaxpr(lambda a: lax.cumsum(a, -1, reverse=True))(x)
    )


ERRORS = [
    (
        lambda: jnp.sum(jnp.ones((2, 3)), axis=2),
        ValueError,
        r"jnp.sum: axis 2 is out of bounds .* shape \(2, 3\)",
    ),
    (lambda: jnp.mean(jnp.ones((2, 3)), axis=(-3,)), ValueError, r"axis -3 is out of bounds"),
    (lambda: lax.reduce_sum(jnp.ones(2), (1,)), ValueError, r"lax.reduce_sum: axis 1 .*\(2,\)"),
    (lambda: lax.cumsum(jnp.ones(2), 1), ValueError, r"lax.cumsum: axis 1"),
    (lambda: jnp.sum(jnp.ones((2, 3)), axis=(0, -2)), ValueError, "repeated axis"),
    (lambda: jnp.sum(jnp.ones(2), dtype=object), TypeError, "jnp.sum: bad dtype argument"),
    (lambda: jnp.cumsum(jnp.ones(2), dtype="foo"), TypeError, "jnp.cumsum: bad dtype"),
    (lambda: jnp.std(jnp.ones(2), dtype=np.int32), ValueError, "must be inexact"),
    (
        lambda: jnp.max(jnp.zeros((0, 2)), axis=0),
        ValueError,
        "zero-size array to reduction operation max",
    ),
    (lambda: jnp.min(jnp.zeros(0)), ValueError, "zero-size array to reduction operation min"),
    (
        lambda: jnp.max(jnp.ones(2), where=np.array([True, False])),
        ValueError,
        "to use a where mask one has to specify 'initial'",
    ),
    (lambda: jnp.argmax(jnp.zeros((0, 2)), axis=0), ValueError, "argmax of an empty axis"),
    (lambda: jnp.var(jnp.ones(2), ddof=1, correction=1), ValueError, "ddof and correction"),
    (lambda: jnp.sum(jnp.ones(2), initial=jnp.ones(2)), ValueError, "must be a scalar"),
    (lambda: jnp.sum(jnp.ones(2), out=jnp.ones(())), NotImplementedError, "'out' argument"),
    (
        lambda: lax.reduce_sum(jnp.asarray(np.array([True])), (0,)),
        TypeError,
        "reduce_sum does not accept dtype bool",
    ),
    (lambda: lax.cumlogsumexp(jnp.arange(3)), TypeError, "cumlogsumexp does not accept"),
    (lambda: lax.argmax(jnp.ones(2), 0, np.float32), TypeError, "index_dtype must be an integer"),
    (lambda: reduce_sum_p.bind(jnp.ones((2, 2)), axes=(1, 0)), TypeError, "must be a sorted tuple"),
    (
        lambda: jnp.var(jnp.asarray(np.ones(2, np.complex64)), dtype=np.float32),
        ValueError,
        "needs a complex dtype",
    ),
]


@pytest.mark.parametrize(("thunk", "error", "match"), ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_errors(thunk, error, match):
    with pytest.raises(error, match=match):
        thunk()


def test_errors_under_jit():
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        invarax.jit(jnp.max)(jnp.zeros((0,)))
    with pytest.raises(ValueError, match=r"axis 1 is out of bounds"):
        invarax.jit(lambda a: jnp.sum(a, axis=1))(jnp.ones(3))


# Differential tests against JAX (float32 mode), where it is installed.
JAX_INPUTS = {
    "bool": np.array([[True, False, True], [False, False, True]]),
    "int8": np.array([[1, -2, 3], [4, 5, -6]], np.int8),
    "uint8": np.array([[1, 2, 3], [4, 5, 6]], np.uint8),
    "int32": np.array([[1, -2, 3], [4, 5, -6]], np.int32),
    "uint32": np.array([[1, 2, 3], [4, 5, 6]], np.uint32),
    "float16": np.array([[1, -2, 3], [4, 5, -6]], np.float16),
    "float32": np.array([[1, -2, 3], [4, 5, -6]], np.float32),
    "python float": 2.0,
    "python int": 3,
    "python bool": True,
}
JAX_FUNCS = [
    "sum",
    "prod",
    "max",
    "min",
    "mean",
    "var",
    "std",
    "argmax",
    "argmin",
    "all",
    "any",
    "cumsum",
    "cumprod",
]


@pytest.mark.parametrize("kind", JAX_INPUTS)
@pytest.mark.parametrize("name", JAX_FUNCS)
def test_dtypes_and_weak_types_match_jax(name, kind):
    """JAX's types by its abstract evaluation (``jax.eval_shape``: the dtype, weak type and
    shape its eager result has, without compiling 130 programs)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp

    def types(a):
        return a.shape, a.dtype, a.weak_type

    x = JAX_INPUTS[kind]
    f_ours, f_theirs = getattr(jnp, name), getattr(jjnp, name)
    assert types(f_ours(x)) == types(jax.eval_shape(f_theirs, x))
    if np.ndim(x) == 0:  # a weakly typed array, in both libraries
        x_ours, x_theirs = jnp.full((2, 3), x), jax.eval_shape(lambda: jjnp.full((2, 3), x))
        assert types(x_ours) == types(x_theirs)
    else:
        x_ours, x_theirs = jnp.asarray(x), x
    axis_theirs = jax.eval_shape(lambda a: f_theirs(a, axis=0), x_theirs)
    assert types(f_ours(x_ours, axis=0)) == types(axis_theirs)


ONE_AXIS = ("argmax", "argmin", "cumsum", "cumprod")
JAX_VALUE_CASES = [
    (name, axis)
    for name in JAX_FUNCS
    for axis in (None, 0, 1, (0, 2))
    if not (name in ONE_AXIS and isinstance(axis, tuple))
]


@pytest.mark.parametrize(("name", "axis"), JAX_VALUE_CASES, ids=str)
def test_values_match_jax(name, axis):
    pytest.importorskip("jax")
    import jax.numpy as jjnp

    x = data((3, 40, 5), seed=8)
    ours = eager_and_jit(lambda a: getattr(jnp, name)(a, axis=axis), jnp.asarray(x))
    theirs = getattr(jjnp, name)(x, axis=axis)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5, atol=1e-6)


def test_nan_extrema_match_jax():
    pytest.importorskip("jax")
    import jax.numpy as jjnp

    x = np.array([[1.0, np.nan, 3.0, np.nan], [np.nan, 5.0, -1.0, 0.0], [0, 1, 2, 2]], np.float32)
    for name in ("argmax", "argmin", "max", "min"):
        for axis in (None, 0, 1):
            assert_bitwise(
                getattr(jnp, name)(x, axis=axis), np.asarray(getattr(jjnp, name)(x, axis=axis))
            )


def test_where_initial_match_jax():
    pytest.importorskip("jax")
    import jax.numpy as jjnp

    x = data((4, 6), seed=9)
    for name, kwargs in (
        ("sum", {"initial": 1.5}),
        ("max", {"initial": 0.5}),
        ("mean", {}),
        ("var", {"ddof": 1}),
        ("prod", {}),
    ):
        ours = getattr(jnp, name)(x, axis=1, where=WHERE, **kwargs)
        theirs = getattr(jjnp, name)(x, axis=1, where=WHERE, **kwargs)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5)

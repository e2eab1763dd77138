"""Elementwise jnp functions: values against NumPy float64 and JAX, dtypes, jit == eager."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp

POS = (0.1, 5.0)
ANY = (-5.0, 5.0)
UNIT = (-0.99, 0.99)

# name: (number of arguments, sampling range)
UNARY = {
    "negative": ANY, "abs": ANY, "sign": ANY, "exp": ANY, "exp2": ANY, "expm1": ANY,
    "log": POS, "log1p": POS, "log2": POS, "log10": POS, "sqrt": POS, "square": ANY,
    "reciprocal": POS, "sin": ANY, "cos": ANY, "tan": UNIT, "arcsin": UNIT, "arccos": UNIT,
    "arctan": ANY, "sinh": ANY, "cosh": ANY, "tanh": ANY, "arcsinh": ANY, "arccosh": (1.1, 5.0),
    "arctanh": UNIT, "floor": ANY, "ceil": ANY, "round": ANY, "cbrt": ANY, "trunc": ANY,
    "rint": ANY, "isnan": ANY, "isinf": ANY, "isfinite": ANY, "logical_not": ANY,
}
BINARY = {
    "add": ANY, "subtract": ANY, "multiply": ANY, "divide": POS, "true_divide": POS,
    "floor_divide": POS, "mod": ANY, "remainder": ANY, "fmod": ANY, "power": POS,
    "arctan2": ANY, "maximum": ANY, "minimum": ANY, "logaddexp": ANY, "equal": ANY,
    "not_equal": ANY, "less": ANY, "less_equal": ANY, "greater": ANY, "greater_equal": ANY,
    "logical_and": ANY, "logical_or": ANY, "logical_xor": ANY,
}
SHAPES = [((), ()), ((7,), (7,)), ((3, 4), (4,)), ((2, 1, 3), (5, 1)), ((4,), ())]


def sample(rng, shape, lo_hi, dtype=np.float32):
    lo, hi = lo_hi
    x = rng.uniform(lo, hi, size=shape).astype(dtype)
    return x


def numpy_ref(name, *args):
    args = [np.asarray(a, np.float64) for a in args]
    aliases = {"abs": np.abs, "round": np.round, "mod": np.mod, "rint": np.rint}
    return (aliases.get(name) or getattr(np, name))(*args)


def tolerance(name):
    return 2e-6 if name not in ("power", "exp2", "cosh", "sinh", "exp", "expm1") else 1e-5


def check(name, args, rng):
    f = getattr(jnp, name)
    out = f(*args)
    assert_bitwise(invarax.jit(f)(*args), out)  # N3: jit is eager, bit for bit
    ref = numpy_ref(name, *args)
    got = np.asarray(out)
    if got.dtype == np.bool_ or name in ("floor_divide", "floor", "ceil", "round", "sign",
                                          "trunc", "rint"):
        mask = np.isfinite(ref)
        np.testing.assert_array_equal(got[mask] if got.ndim else got, ref[mask] if ref.ndim
                                      else ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=tolerance(name), atol=1e-6)
    return out


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
def test_unary(name, shape, rng):
    check(name, [sample(rng, shape, UNARY[name])], rng)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPES)
def test_binary(name, shapes, rng):
    x = sample(rng, shapes[0], BINARY[name])
    y = sample(rng, shapes[1], BINARY[name])
    out = check(name, [x, y], rng)
    assert out.shape == np.broadcast_shapes(*shapes)


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_matches_jax(name, rng):
    jax = pytest.importorskip("jax")
    arity = 1 if name in UNARY else 2
    lo_hi = UNARY.get(name) or BINARY[name]
    args = [sample(rng, (6,), lo_hi) for _ in range(arity)]
    ours, theirs = getattr(jnp, name)(*args), getattr(jax.numpy, name)(*args)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6, atol=1e-6)


INT_CASES = [
    ("floor_divide", [7, -7, 7, -7, 0], [2, 2, -2, -2, 3]),
    ("remainder", [7, -7, 7, -7, 0], [2, 2, -2, -2, 3]),
    ("fmod", [7, -7, 7, -7, 0], [2, 2, -2, -2, 3]),
    ("power", [2, 3, -2, 0, 1], [3, 2, 3, 0, 7]),
    ("multiply", [2**20, 3, -2, 0, 1], [2**12, 2, 3, 0, 7]),  # int32 wraps as in JAX
]


@pytest.mark.parametrize("name, a, b", INT_CASES)
def test_integer_semantics(name, a, b):
    a, b = np.array(a, np.int32), np.array(b, np.int32)
    out = getattr(jnp, name)(a, b)
    assert out.dtype == np.int32
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(out), getattr(np, name)(a, b))
    assert_bitwise(invarax.jit(getattr(jnp, name))(a, b), out)


def test_float_floor_divide_and_mod_signs():
    x = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0], np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(x, y)), np.floor_divide(x, y))
    np.testing.assert_array_equal(np.asarray(jnp.mod(x, y)), np.mod(x, y))


def test_static_integer_power_multiplies():
    text = str(invarax.make_jaxpr(lambda x: x**3)(1.0))
    assert "integer_pow[y=3]" in text
    x = np.float32(1.1)
    assert_bitwise(jnp.power(x, 3), x * x * x)  # binary exponentiation: (x*x)*x for y=3


def test_bool_arithmetic_is_logical():
    t = jnp.array([True, False])
    assert jnp.add(t, t).dtype == np.bool_
    assert (t * t).tolist() == [True, False]


def test_where_and_clip():
    x = jnp.arange(6.0) - 2.0
    assert jnp.where(x > 0, x, 0.0).tolist() == [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]
    assert jnp.where(x > 0, 1, x).dtype == np.float32
    assert jnp.clip(x, -1.0, 1.0).tolist() == [-1.0, -1.0, 0.0, 1.0, 1.0, 1.0]
    assert jnp.clip(x, max=0.5).tolist()[-1] == 0.5
    with pytest.raises(ValueError, match="pass both x and y"):
        jnp.where(x > 0)


def test_nan_and_inf_predicates():
    x = jnp.array([np.nan, np.inf, -np.inf, 1.0])
    assert jnp.isnan(x).tolist() == [True, False, False, False]
    assert jnp.isinf(x).tolist() == [False, True, True, False]
    assert jnp.isfinite(x).tolist() == [False, False, False, True]
    assert jnp.isnan(jnp.arange(3)).tolist() == [False] * 3


def test_logaddexp_edges():
    inf = np.inf
    x = jnp.array([inf, -inf, 1.0, np.nan])
    y = jnp.array([inf, -inf, -inf, 1.0])
    out = np.asarray(jnp.logaddexp(x, y))
    assert out[0] == inf and out[1] == -inf and out[2] == 1.0 and np.isnan(out[3])


def test_broadcast_error_shows_both_shapes():
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: \(3,\), \(4,\)"):
        jnp.add(jnp.ones(3), jnp.ones(4))


def test_elementwise_bits_do_not_depend_on_length_or_position(rng):
    # The promise behind N1/N2 for elementwise ops: element i's bits depend on its inputs only.
    x = rng.standard_normal(1001).astype(np.float32)
    for name in ("exp", "sin", "tanh", "log1p", "arctan", "sqrt"):
        f = getattr(jnp, name)
        full = np.asarray(f(np.abs(x)))
        for k in (1, 7, 16, 333):
            assert_bitwise(f(np.abs(x[k:2 * k])), full[k:2 * k])
        assert_bitwise(f(np.abs(x[5])), full[5])


def test_weak_literal_beyond_float16_range_becomes_inf():
    x = jnp.ones(2, jnp.float16)
    assert_bitwise(invarax.lax.max(x, 1e6), np.full(2, np.inf, np.float16))

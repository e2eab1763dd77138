"""floor_divide, divmod, remainder and fmod at zero, +-inf, NaN and signed zeros (issue 20.1).

NumPy and JAX agree on every value here but the sign of some zero results (NumPy's
``-0.0 // 1.0`` is ``-0.0``, JAX's ``0.0``); invarax gives JAX's bits, and NumPy's values.
Integers divided by zero give NumPy's 0 (XLA's result, -1 fixed toward -inf, is an artefact).
"""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, np.inf, -np.inf, np.nan]
FUNCS = ["floor_divide", "remainder", "fmod", "divmod"]


def grid(values, dtype):
    a, b = np.meshgrid(np.array(values, dtype), np.array(values, dtype))
    return a.ravel(), b.ravel()


def results(name, module, a, b):
    out = getattr(module, name)(a, b)
    return [np.asarray(o) for o in (out if name == "divmod" else (out,))]


def test_float_floor_divide_by_zero_is_signed_inf():
    # the example: was [nan, nan]
    x = jnp.array([1.0, -1.0])
    np.testing.assert_array_equal(np.asarray(x // 0.0), [np.inf, -np.inf])
    np.testing.assert_array_equal(np.asarray(x // -0.0), [-np.inf, np.inf])
    q, r = divmod(x, 0.0)
    np.testing.assert_array_equal(np.asarray(q), [np.inf, -np.inf])
    assert np.isnan(np.asarray(r)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", FUNCS)
def test_float_special_values_match_numpy(name, dtype, x64):
    a, b = grid(SPECIAL, dtype)
    with np.errstate(all="ignore"):
        want = results(name, np, a, b)
    got = results(name, jnp, a, b)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == dtype
        # equal values, NaN where NumPy has NaN (the sign of a zero may differ: see above)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32, np.int64])
@pytest.mark.parametrize("name", FUNCS)
def test_integer_special_values_match_numpy(name, dtype, x64):
    info = np.iinfo(dtype)
    values = np.unique(np.array([0, 1, -1, 2, -2, 7, -7, info.min, info.max]).astype(dtype))
    a, b = grid(values, dtype)
    with np.errstate(all="ignore"):
        want = results(name, np, a, b)
    for g, w in zip(results(name, jnp, a, b), want, strict=True):
        assert_bitwise(g, w)


@pytest.mark.parametrize("name", FUNCS)
def test_float32_special_values_bitwise_jax(name):
    jax = pytest.importorskip("jax")
    a, b = grid(SPECIAL, np.float32)
    want = results(name, jax.numpy, a, b)
    for g, w in zip(results(name, jnp, a, b), want, strict=True):
        assert_bitwise(g, w)  # signs of zeros included


@pytest.mark.parametrize("name", FUNCS)
def test_special_values_jit_equals_eager(name):
    a, b = grid(SPECIAL, np.float32)
    f = getattr(jnp, name)
    eager, jitted = f(a, b), invarax.jit(f)(a, b)
    for e, j in zip(*(o if name == "divmod" else (o,) for o in (eager, jitted)), strict=True):
        assert_bitwise(j, e)


def test_floor_divide_has_zero_gradient_at_a_zero_divisor():
    assert invarax.grad(lambda x: x // 0.0)(1.0) == 0.0
    assert invarax.grad(lambda y: 1.0 // y)(0.0) == 0.0
    assert invarax.grad(lambda x: x // 2.0)(3.0) == 0.0

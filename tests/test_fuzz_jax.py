"""The differential fuzzer against JAX (tests/difffuzz.py), bounded for CI, and a regression
test for each disagreement it found and we fixed. ``python tests/scripts/fuzz_vs_jax.py N``
runs N programs."""

import os
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import invarax
import invarax.numpy as jnp

sys.path.insert(0, os.path.dirname(__file__))
import difffuzz  # noqa: E402

EXAMPLES = int(os.environ.get("INVARAX_FUZZ_EXAMPLES", "25"))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(difffuzz.programs())
def test_random_programs_agree_with_jax(program):
    pytest.importorskip("jax")
    source, inputs = program
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX's own warnings (e.g. casts of NaN)
        found = difffuzz.compare(source, inputs)
    unknown = {name: diff for name, diff in found.items()
               if not difffuzz.known(diff, source)}
    assert not unknown, f"{source}\n{[(x.dtype, x.shape) for x in inputs]}\n{unknown}"


def test_float_to_int_casts_saturate_as_jax():
    """Found by the fuzzer: NumPy's cast of an out-of-range float is undefined (x86 gives
    the lowest integer); XLA truncates and saturates, NaN giving 0."""
    x = jnp.array([-2.5, -1.0, 300.0, 1e10, -1e10, np.nan, np.inf, -np.inf, 255.9, -129.0])
    expected = {
        "uint8": [0, 0, 255, 255, 0, 0, 255, 0, 255, 0],
        "int8": [-2, -1, 127, 127, -128, 0, 127, -128, 127, -128],
        "int32": [-2, -1, 300, 2**31 - 1, -(2**31), 0, 2**31 - 1, -(2**31), 255, -129],
        "uint32": [0, 0, 300, 2**32 - 1, 0, 0, 2**32 - 1, 0, 255, 0],
    }
    for dtype, values in expected.items():
        for f in (lambda a, d=dtype: a.astype(d), invarax.jit(lambda a, d=dtype: a.astype(d))):
            assert np.array_equal(f(x), np.array(values, dtype))
    assert int(jnp.float16(-3.5).astype("int8")) == -3
    z = jnp.array([-1.5 + 2j, 300 + 1j, 2.7 - 5j, np.nan + 0j])  # the real part, saturated
    assert np.array_equal(z.astype("uint8"), np.array([0, 255, 2, 0], np.uint8))
    assert np.array_equal(z.astype("int32"), np.array([-1, 300, 2, 0], np.int32))


def test_power_of_bools_is_integer_as_jax():
    a, b = jnp.array([True, True, False, False]), jnp.array([True, False, True, False])
    for out, values in ((a**b, [1, 1, 0, 1]), (a**2, [1, 1, 0, 0]), (a**True, [1, 1, 0, 0])):
        assert out.dtype == np.int32 and np.array_equal(out, values)


def test_round_of_bool_raises_as_jax():
    with pytest.raises(ValueError, match="round of a bool array"):
        jnp.round(jnp.array([True]))
    assert np.array_equal(jnp.round(jnp.array([2, 3])), [2, 3])


def test_integer_power_uses_six_exponent_bits_as_jax():
    a = jnp.array([2, 3, -1, 0, 0, 1, 5], jnp.int32)
    b = jnp.array([3, -1, -1, 5, 0, 100, 7], jnp.int32)
    assert np.array_equal(a**b, [8, 2111105451, -1, 0, 1, 1, 78125])  # JAX's values


def test_square_of_bool_is_int32_as_jax():
    out = jnp.square(jnp.array([True, False]))
    assert out.dtype == np.int32 and np.array_equal(out, [1, 0])


def test_weak_types_of_comparisons_and_full_like_as_jax():
    weak = jnp.array([True]) - 1.5
    assert (1.5 > weak).weak_type and (weak > weak).weak_type
    assert not (weak > jnp.zeros(1)).weak_type
    assert jnp.ones_like(weak).weak_type and jnp.full_like(weak, 2).weak_type
    assert not jnp.zeros_like(weak, dtype=jnp.float32).weak_type
    assert invarax.jit(lambda x: x > 0.5)(weak).weak_type


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "rint"])
def test_rounding_of_complex_raises(name):
    with pytest.raises(TypeError, match=f"{name} of a complex array"):
        getattr(jnp, name)(jnp.array([1.5 + 2.5j]))


def test_repeat_of_a_0d_array_as_jax():
    for axis in (None, 0, -1):
        out = jnp.repeat(jnp.float32(3), 2, axis=axis)
        assert out.shape == (2,) and np.array_equal(out, [3.0, 3.0])


def test_cumsum_of_a_0d_array_with_an_axis_raises_as_jax():
    with pytest.raises(ValueError, match="out of bounds for a 0-d array"):
        jnp.cumsum(jnp.float32(2), axis=0)
    assert np.array_equal(jnp.cumsum(jnp.float32(2)), [2.0])


def test_all_of_complex_tests_both_parts_as_numpy():
    """A deliberate difference: JAX 0.10's all/any of complex look at the real part only."""
    z = jnp.array([0.5j, 1.2j], jnp.complex64)
    assert bool(jnp.all(z)) and bool(jnp.any(z)) and not bool(jnp.all(jnp.array([0j, 1j])))

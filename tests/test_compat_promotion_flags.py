"""The ``jax_numpy_dtype_promotion`` and ``jax_numpy_rank_promotion`` flags, against JAX
(skipped without it): Equinox's test suite sets "strict" and "raise" before anything else."""

import warnings

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax.dtypes import TypePromotionError

jax = pytest.importorskip("jax")

_DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "float16", "float32", "complex64"]
_OPERANDS = [*_DTYPES, int, float, complex]


def _promoted(module, error, a, b):
    """``result_type(a, b)`` under the strict flag, or "error" where promotion is refused."""
    try:
        return np.dtype(module.numpy.result_type(a, b)).name
    except error:
        return "error"


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_result_types_as_jax(mode):
    with invarax.config.flag("jax_numpy_dtype_promotion", mode), jax.numpy_dtype_promotion(mode):
        for a in _OPERANDS:
            for b in _OPERANDS:
                want = _promoted(jax, jax.dtypes.TypePromotionError, a, b)
                assert _promoted(invarax, TypePromotionError, a, b) == want, (mode, a, b)


def test_strict_arithmetic_as_jax():
    with invarax.config.flag("jax_numpy_dtype_promotion", "strict"):
        assert (jnp.ones(2) + 1).dtype == jnp.float32        # a weak scalar still promotes
        assert (jnp.ones(2, bool) & True).dtype == jnp.bool_
        with pytest.raises(TypePromotionError, match="jax_numpy_dtype_promotion=strict"):
            jnp.ones(2) + jnp.ones(2, jnp.int32)
        with pytest.raises(TypePromotionError):
            jnp.ones(2, jnp.int32) * 1.0
        # internal dtype questions do not follow the flag: lax and dot_general still work
        assert invarax.lax.add(jnp.ones(2, jnp.int32), 1).dtype == jnp.int32
        assert jnp.dot(jnp.ones(2), jnp.ones(2), preferred_element_type=jnp.float32) == 2
    assert (jnp.ones(2) + jnp.ones(2, jnp.int32)).dtype == jnp.float32


def _rank_outcome(module, mode, x, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module.numpy.add(module.numpy.ones(x), module.numpy.ones(y))
        except ValueError as error:
            assert "jax_numpy_rank_promotion='raise'" in str(error)
            return "raise"
    return "warn" if any("rank promotion" in str(w.message) for w in caught) else "allow"


@pytest.mark.parametrize("mode", ["allow", "warn", "raise"])
def test_rank_promotion_as_jax(mode):
    shapes = [((2, 3), (3,)), ((2, 3), ()), ((2, 3), (1, 3)), ((3,), (2, 1, 3))]
    with invarax.config.flag("jax_numpy_rank_promotion", mode), jax.numpy_rank_promotion(mode):
        for x, y in shapes:
            assert _rank_outcome(invarax, mode, x, y) == _rank_outcome(jax, mode, x, y), (x, y)


def test_flags_refuse_other_values():
    with pytest.raises(ValueError, match="takes one of"):
        invarax.config.update("jax_numpy_rank_promotion", "yes")
    with pytest.raises(ValueError, match="takes one of"):
        invarax.config.update("jax_numpy_dtype_promotion", "loose")


def test_context_managers_as_jax():
    with invarax.numpy_dtype_promotion("strict"), invarax.numpy_rank_promotion("raise"):
        assert invarax.config.jax_numpy_dtype_promotion == "strict"
        assert invarax.config.jax_numpy_rank_promotion == "raise"
        with invarax.numpy_dtype_promotion("standard"):
            assert (jnp.ones(2) + jnp.ones(2, jnp.int32)).dtype == jnp.float32
        with pytest.raises(TypePromotionError):
            jnp.ones(2) + jnp.ones(2, jnp.int32)
    assert invarax.config.jax_numpy_dtype_promotion == "standard"
    assert invarax.config.jax_numpy_rank_promotion == "allow"

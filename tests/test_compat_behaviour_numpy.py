"""Behaviours of jnp/lax/random that real JAX tests and notebooks found different, each
checked against JAX itself (skipped without it)."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp

jax = pytest.importorskip("jax")


def _operands(module):
    """Named operands of every kind: strong and weak, bool, int, float and complex."""
    np_ = module.numpy
    return {
        "bool": np_.array([True, False]), "int": np_.array([1, 0]), "True": True, "1": 1,
        "1j": 1j, "weak bool": np_.asarray(1.0) > 0, "weak complex": np_.asarray(1j),
        "complex-derived bool": np_.array([1j, 0]).astype(bool),
    }


def test_logical_ops_weak_type_and_values_as_jax():
    # a bool derived from a complex array and a Python scalar gave a weak bool; JAX's is not
    ours, theirs = _operands(invarax), _operands(jax)
    cases = [(name, a, b) for name in ["logical_and", "logical_or", "logical_xor"]
             for a in ours for b in ours]
    # JAX's results from one compiled program (its eager ops compile one by one: slow)
    wants = jax.jit(lambda: [getattr(jax.numpy, n)(theirs[a], theirs[b])
                             for n, a, b in cases])()
    for (name, a, b), want in zip(cases, wants, strict=True):
        got = getattr(jnp, name)(ours[a], ours[b])
        assert_bitwise(got, want)
        assert got.weak_type == want.weak_type, (name, a, b)


def test_logical_not_keeps_a_weak_bool_as_jax():
    ours, theirs = _operands(invarax), _operands(jax)
    for a in ours:
        got, want = jnp.logical_not(ours[a]), jax.numpy.logical_not(theirs[a])
        assert_bitwise(got, want)
        assert got.weak_type == want.weak_type, a


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_random_normal_complex_bitwise_jax(dtype, x64):
    # a complex dtype was rejected; JAX draws the parts from split(key), over sqrt(2)
    for seed in range(3):
        got = invarax.random.normal(invarax.random.PRNGKey(seed), (64,), dtype)
        with jax.enable_x64(True):
            want = np.asarray(jax.random.normal(jax.random.PRNGKey(seed), (64,), dtype))
        if dtype == "complex64":
            assert_bitwise(got, want)
        else:  # float64 normals are within 3 ulp of JAX's (docs/random.md)
            assert got.dtype == want.dtype
            for part in (np.real, np.imag):
                np.testing.assert_array_max_ulp(part(np.asarray(got)), part(want), maxulp=3)
    assert_bitwise(invarax.jit(lambda k: invarax.random.normal(k, (3,), dtype))(
        invarax.random.PRNGKey(0)), invarax.random.normal(invarax.random.PRNGKey(0), (3,), dtype))


def test_random_uniform_rejects_complex_as_jax():
    # JAX's uniform takes float dtypes only; so does invarax's
    with pytest.raises(ValueError, match="float dtype"):
        jax.random.uniform(jax.random.PRNGKey(0), (2,), jax.numpy.complex64)
    with pytest.raises(ValueError, match="random.uniform: dtype must be a float dtype"):
        invarax.random.uniform(invarax.random.PRNGKey(0), (2,), jnp.complex64)


def _hermitian(n, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)) + 1j * rng.standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2).conj() + n * np.eye(n)).astype(np.complex64)


@pytest.mark.parametrize("n", [1, 2, 6])
def test_complex_cholesky_as_jax(n):
    # complex64 was rejected: a composition of canonical ops factorises it now
    a = _hermitian(n)
    got, want = jnp.linalg.cholesky(a), np.asarray(jax.numpy.linalg.cholesky(a))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cholesky(a, upper=True)),
                               np.asarray(jax.numpy.linalg.cholesky(a, upper=True)),
                               rtol=2e-6, atol=2e-6)
    lower_only = np.tril(a)  # symmetrize_input=False reads the lower triangle
    np.testing.assert_allclose(
        np.asarray(invarax.lax.linalg.cholesky(lower_only, symmetrize_input=False)),
        np.asarray(jax.lax.linalg.cholesky(lower_only, symmetrize_input=False)),
        rtol=2e-6, atol=2e-6)


def test_complex_cholesky_contract_and_failure():
    batch = _hermitian(4, (5,), seed=1)
    rows = invarax.vmap(jnp.linalg.cholesky)(batch)
    for i in (0, 3):  # N1: a matrix's bits whatever the batch; N3: jit is eager
        assert_bitwise(rows[i], jnp.linalg.cholesky(batch[i]))
    assert_bitwise(jnp.linalg.cholesky(batch), rows)
    assert_bitwise(invarax.jit(jnp.linalg.cholesky)(batch), rows)
    bad = np.array([[1, 2], [2, 1]], np.complex64)  # not positive definite: JAX's NaNs
    assert_bitwise(jnp.linalg.cholesky(bad), np.asarray(jax.numpy.linalg.cholesky(bad)))
    with pytest.raises(TypeError, match="eig real ones only"):
        jnp.linalg.eig(batch)


def test_complex_cholesky_gradient_as_jax():
    a, b = _hermitian(3, seed=2), _hermitian(3, seed=3)

    def loss(lib, t):
        factor = lib.numpy.linalg.cholesky(a + t * b)
        return lib.numpy.sum(lib.numpy.abs(factor) ** 2)

    got = invarax.grad(lambda t: loss(invarax, t))(0.5)
    want = jax.grad(lambda t: loss(jax, t))(0.5)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_integer_division_by_zero_is_numpy_zero(dtype):
    # a deliberate difference (docs/numpy_coverage.md): JAX's // by 0 is XLA's artefact,
    # [1, -1, 0] // 0 = [-2, -2, -1]; invarax gives NumPy's 0. % and fmod agree with JAX.
    a = np.array([1, -1, 0, 7], dtype) if dtype == np.int32 else np.array([1, 255, 0, 7], dtype)
    b = np.zeros_like(a)
    with np.errstate(divide="ignore"):
        for name in ["floor_divide", "remainder", "fmod"]:
            assert_bitwise(getattr(jnp, name)(a, b), getattr(np, name)(a, b))
        assert_bitwise(invarax.jit(jnp.floor_divide)(a, b), np.floor_divide(a, b))
    for name in ["remainder", "fmod"]:
        assert_bitwise(getattr(jnp, name)(a, b), np.asarray(getattr(jax.numpy, name)(a, b)))
    assert np.asarray(jax.numpy.floor_divide(a, b)).tolist() == (
        [-2, -2, -1, -2] if dtype == np.int32 else [255, 255, 255, 255])


def test_linspace_takes_traced_bounds_as_jax():
    """``jnp.linspace`` of traced bounds (diffrax interpolates between traced times): JAX's
    formula, so its values, derivatives and shapes are JAX's; ``jit`` and ``vmap`` give
    eager's bits."""
    cases = [(0.0, 1.0, 7), (-3.0, 3.0, 7, False), (np.zeros(2), np.arange(1.0, 3.0), 4),
             (1.0, 2.0, 1), (1.0, 2.0, 0)]
    for args in cases:
        ours, theirs = jnp.linspace(*args), jax.numpy.linspace(*args)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
        assert_bitwise(invarax.jit(lambda a, b, rest=args[2:]: jnp.linspace(a, b, *rest))(
            *args[:2]), ours)
    ends = jnp.arange(1.0, 4.0)
    rows = invarax.vmap(lambda b: jnp.linspace(0.5, b, 5))(ends)
    for i in range(3):
        assert_bitwise(rows[i], jnp.linspace(0.5, ends[i], 5))
    def loss(np_, a):
        return np_.sum(np_.linspace(a, 3.0 * a, 6, axis=0) ** 2)

    np.testing.assert_allclose(float(invarax.grad(lambda a: loss(jnp, a))(1.5)),
                               float(jax.grad(lambda a: loss(jax.numpy, a))(1.5)), rtol=1e-6)
    assert np.array_equal(np.asarray(jnp.linspace(0, 10, 4, dtype=jnp.int32)),
                          np.asarray(jax.numpy.linspace(0, 10, 4, dtype=jax.numpy.int32)))


def test_library_internals_hold_under_rank_promotion_raise():
    # diffrax's tests set jax_numpy_rank_promotion="raise": functions that broadcast ranks
    # inside (multivariate_normal's mean, isin's comparison, polyfit's Vandermonde matrix)
    # must not raise, as in JAX, and
    # reductions take a range of axes, as JAX's do
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    mean, cov = np.zeros(3, np.float32), np.eye(3, dtype=np.float32)
    for lib, lnp in ((invarax, jnp), (jax, jax.numpy)):
        with lib.numpy_rank_promotion("raise"):
            draw = lib.random.multivariate_normal(lib.random.key(0), mean, cov, (1, 2))
            found = lnp.isin(lnp.arange(6).reshape(2, 3), lnp.array([1, 4]))
            total = lnp.sum(x, axis=range(1, 3))
            fit = lnp.polyfit(x[0, 0], 2.0 * x[0, 0] ** 2 + 1.0, 2, w=np.ones(4))
        np.testing.assert_allclose(fit, [2.0, 0.0, 1.0], atol=1e-3)
        assert draw.shape == (1, 2, 3)
        np.testing.assert_array_equal(found, [[False, True, False], [False, True, False]])
        np.testing.assert_array_equal(total, [66.0, 210.0])

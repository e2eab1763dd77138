"""JAX's lax functions written with the primitives (clamp, reciprocal, full/full_like,
collapse, broadcast_to_rank, sort_key_val, batch_matmul, optimization_barrier, the bit
counts, the arithmetic shift, bitcast_convert_type, bessel_i0e/i1e, betainc): the same
values as JAX's, bitwise, and every transformation applies."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import lax

jax = pytest.importorskip("jax")
jlax = jax.lax

INTS = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def _ints(dtype, n=200):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    edge = np.array([0, 1, 2, info.max, info.min, info.max - 1, info.min + 1], dtype)
    return np.concatenate([edge, rng.integers(info.min, info.max, n, dtype=dtype,
                                              endpoint=True)])


def _same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8)), (
        ours, theirs)


@pytest.mark.parametrize("dtype", INTS)
def test_bit_counts_and_arithmetic_shift_are_jax_s(dtype):
    x = _ints(dtype)
    for name in ("population_count", "clz"):
        _same(getattr(lax, name)(x), getattr(jlax, name)(x))
        _same(invarax.jit(invarax.vmap(getattr(lax, name)))(x), getattr(jlax, name)(x))
    width = 8 * np.dtype(dtype).itemsize
    shifts = np.resize(np.arange(width + 2, dtype=dtype), x.shape)
    _same(lax.shift_right_arithmetic(x, shifts), jlax.shift_right_arithmetic(x, shifts))


def test_clamp_reciprocal_and_their_gradients_are_jax_s():
    x = np.array([-2.0, -0.5, 0.0, -0.0, 0.5, 3.0, np.inf, -np.inf, np.nan], np.float32)
    _same(lax.clamp(-1.0, x, 1.0), jlax.clamp(-1.0, x, 1.0))
    lo, hi = np.full(9, -1.0, np.float32), np.linspace(0, 2, 9).astype(np.float32)
    _same(lax.clamp(lo, x, hi), jlax.clamp(lo, x, hi))
    _same(lax.reciprocal(x), jlax.reciprocal(x))
    y = x[np.isfinite(x) & (x != 0)]
    pairs = [(lambda v: lax.clamp(-1.0, v, 1.0), lambda v: jlax.clamp(-1.0, v, 1.0)),
             (lax.reciprocal, jlax.reciprocal)]
    for ours, theirs in pairs:
        _same(invarax.vmap(invarax.grad(ours))(y), jax.vmap(jax.grad(theirs))(y))


def test_full_collapse_rank_and_barrier_are_jax_s():
    for args in [((2, 3), 1.5), ((4,), 7, np.int32), (3, True)]:
        _same(lax.full(*args), jlax.full(*args))
    for x in [np.zeros((2, 1), np.int32), np.ones(3, np.float32)]:
        _same(lax.full_like(x, 7), jlax.full_like(x, 7))
        _same(lax.full_like(x, 2, np.float32, (4,)), jlax.full_like(x, 2, np.float32, (4,)))
    assert lax.full_like(jnp.asarray(2.0), 3).weak_type == jlax.full_like(jax.numpy.asarray(
        2.0), 3).weak_type
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for args in [(1,), (0, 2), (1, 3), (0, 3), (-2,)]:
        _same(lax.collapse(x, *args), jlax.collapse(x, *args))
    _same(lax.broadcast_to_rank(np.ones(3, np.float32), 3),
          jlax.broadcast_to_rank(np.ones(3, np.float32), 3))
    tree = {"a": np.ones(2, np.float32), "b": (np.int32(3),)}
    for ours, theirs in zip(jax.tree.leaves(lax.optimization_barrier(tree)),
                            jax.tree.leaves(jlax.optimization_barrier(tree)), strict=True):
        _same(ours, theirs)
    with pytest.raises(TypeError, match="fill_value must be a scalar"):
        lax.full((2,), np.ones(2))


def test_sort_key_val_and_batch_matmul_are_jax_s():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 5, (3, 10)).astype(np.float32)
    vals = np.arange(30, dtype=np.int32).reshape(3, 10)
    for dim in (0, 1, -1):
        for ours, theirs in zip(lax.sort_key_val(keys, vals, dim),
                                jlax.sort_key_val(keys, vals, dim), strict=True):
            _same(ours, theirs)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    want = np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64))
    got = np.asarray(lax.batch_matmul(a, b))
    assert np.abs(got - want).max() < 1e-5
    _same(got, invarax.jit(lax.batch_matmul)(a, b))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\) and \(3, 4, 5\)"):
        lax.batch_matmul(a, np.ones((3, 4, 5), np.float32))


@pytest.mark.parametrize("src, dst", [(np.float32, np.int32), (np.int32, np.float32),
                                      (np.float32, np.uint16), (np.int8, np.int32),
                                      (np.uint8, np.uint16), (np.float32, np.float32)])
def test_bitcast_convert_type_is_jax_s(src, dst):
    rng = np.random.default_rng(2)
    shape = (3, 4) if np.dtype(src).itemsize >= np.dtype(dst).itemsize else (
        3, np.dtype(dst).itemsize // np.dtype(src).itemsize)
    x = rng.integers(0, 255, (*shape, np.dtype(src).itemsize), dtype=np.uint8).view(src)
    x = x.reshape(shape)
    _same(lax.bitcast_convert_type(x, dst), jlax.bitcast_convert_type(x, dst))
    stacked = np.stack([x, x[::-1]])
    _same(invarax.jit(invarax.vmap(lambda v: lax.bitcast_convert_type(v, dst)))(stacked),
          jax.vmap(lambda v: jlax.bitcast_convert_type(v, dst))(stacked))


def test_bitcast_to_a_wider_type_needs_its_trailing_axis():
    with pytest.raises(ValueError, match="needs a last axis of 4 elements"):
        lax.bitcast_convert_type(np.zeros((3, 2), np.int8), np.int32)


def test_bessel_and_betainc_names_are_accurate():
    special = pytest.importorskip("scipy.special")
    x = np.linspace(-20, 20, 41).astype(np.float32)
    for name, ref in (("bessel_i0e", special.i0e), ("bessel_i1e", special.i1e)):
        want = ref(x.astype(np.float64))
        got = np.asarray(getattr(lax, name)(x), np.float64)
        assert np.abs(got - want).max() <= 4 * 2.0**-24 * np.abs(want).max(), name
        assert getattr(jlax, name)(x).dtype == got.astype(np.float32).dtype
    a, b, v = (np.float32(2.0), np.float32(3.0), np.linspace(0, 1, 11).astype(np.float32))
    want = special.betainc(2.0, 3.0, v.astype(np.float64))
    assert np.abs(np.asarray(lax.betainc(a, b, v), np.float64) - want).max() < 1e-6

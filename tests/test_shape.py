"""Shape functions of invarax.numpy: values against NumPy (and JAX where installed), each case
eagerly and under jit, jit bitwise eager; error messages."""

import numpy as np
import pytest
from helpers import assert_bitwise, data, eager_and_jit

import invarax
import invarax.numpy as jnp

DTYPES = [np.float32, np.int32, np.bool_]


# (id, input shape, f(m, x)): m is numpy or invarax.numpy, which share these signatures.
CASES = [
    ("reshape", (2, 3, 4), lambda m, x: m.reshape(x, (4, -1))),
    ("reshape_int", (2, 3), lambda m, x: m.reshape(x, 6)),
    ("reshape_F", (2, 3, 4), lambda m, x: m.reshape(x, (4, 6), order="F")),
    ("reshape_0d", (), lambda m, x: m.reshape(x, (1, 1))),
    ("reshape_empty", (0, 3), lambda m, x: m.reshape(x, (3, 0, 2))),
    ("reshape_method", (2, 3), lambda m, x: x.reshape(3, 2)),
    ("ravel", (2, 3, 4), lambda m, x: m.ravel(x)),
    ("ravel_F", (2, 3, 4), lambda m, x: m.ravel(x, order="F")),
    ("flatten", (2, 3), lambda m, x: x.flatten()),
    ("transpose", (2, 3, 4), lambda m, x: m.transpose(x)),
    ("transpose_axes", (2, 3, 4), lambda m, x: m.transpose(x, (-1, 0, 1))),
    ("transpose_method", (2, 3, 4), lambda m, x: x.transpose(1, 0, 2)),
    ("T", (2, 3), lambda m, x: x.T),
    ("swapaxes", (2, 3, 4), lambda m, x: m.swapaxes(x, 0, -1)),
    ("moveaxis", (2, 3, 4), lambda m, x: m.moveaxis(x, 0, -1)),
    ("moveaxis_multi", (2, 3, 4, 5), lambda m, x: m.moveaxis(x, (0, -1), (-1, 1))),
    ("expand_dims", (2, 3), lambda m, x: m.expand_dims(x, 1)),
    ("expand_dims_tuple", (2, 3), lambda m, x: m.expand_dims(x, (0, -1, 2))),
    ("squeeze_all", (1, 3, 1), lambda m, x: m.squeeze(x)),
    ("squeeze_axis", (1, 3, 1), lambda m, x: m.squeeze(x, axis=-1)),
    ("squeeze_tuple", (1, 3, 1), lambda m, x: m.squeeze(x, axis=(0, 2))),
    ("squeeze_0d", (), lambda m, x: m.squeeze(x)),
    ("broadcast_to", (3, 1), lambda m, x: m.broadcast_to(x, (2, 3, 4))),
    ("broadcast_to_0d", (), lambda m, x: m.broadcast_to(x, 3)),
    ("broadcast_to_empty", (1, 3), lambda m, x: m.broadcast_to(x, (0, 3))),
    ("flip", (2, 3, 4), lambda m, x: m.flip(x)),
    ("flip_axis", (2, 3, 4), lambda m, x: m.flip(x, -1)),
    ("flip_tuple", (2, 3, 4), lambda m, x: m.flip(x, (0, 2))),
    ("roll", (2, 3, 4), lambda m, x: m.roll(x, 5)),
    ("roll_axis", (2, 3, 4), lambda m, x: m.roll(x, -7, axis=1)),
    ("roll_tuple", (2, 3, 4), lambda m, x: m.roll(x, (1, -2), axis=(2, 0))),
    ("roll_same_axis", (2, 3, 4), lambda m, x: m.roll(x, (1, 2), axis=-1)),
    ("roll_broadcast", (2, 3, 4), lambda m, x: m.roll(x, 2, axis=(0, 1))),
    ("roll_empty", (0, 3), lambda m, x: m.roll(x, 1, axis=0)),
    ("tile", (2, 3), lambda m, x: m.tile(x, 2)),
    ("tile_more", (2, 3), lambda m, x: m.tile(x, (2, 1, 3))),
    ("tile_fewer", (2, 3, 1), lambda m, x: m.tile(x, (2, 2))),
    ("tile_zero", (2, 3), lambda m, x: m.tile(x, (0, 2))),
    ("tile_0d", (), lambda m, x: m.tile(x, (2, 2))),
    ("repeat", (2, 3), lambda m, x: m.repeat(x, 2)),
    ("repeat_axis", (2, 3), lambda m, x: m.repeat(x, 3, axis=-1)),
    ("repeat_counts", (2, 3), lambda m, x: m.repeat(x, np.array([1, 0, 2]), axis=1)),
    ("repeat_counts_flat", (2, 2), lambda m, x: m.repeat(x, np.array([2, 0, 1, 3]))),
    ("repeat_zero", (2, 3), lambda m, x: m.repeat(x, 0, axis=0)),
    ("repeat_method", (3,), lambda m, x: x.repeat(2)),
    ("concatenate", (2, 3), lambda m, x: m.concatenate([x, x[:1]], axis=0)),
    ("concatenate_neg", (2, 3), lambda m, x: m.concatenate([x, x, x[:, :0]], axis=-1)),
    ("concatenate_none", (2, 3), lambda m, x: m.concatenate([x, x[0]], axis=None)),
    ("stack", (2, 3), lambda m, x: m.stack([x, x[::-1]])),
    ("stack_neg", (2, 3), lambda m, x: m.stack([x, x, x], axis=-1)),
    ("stack_0d", (), lambda m, x: m.stack([x, x])),
    ("hstack_1d", (3,), lambda m, x: m.hstack([x, x[:1]])),
    ("hstack_2d", (2, 3), lambda m, x: m.hstack([x, x])),
    ("vstack_1d", (3,), lambda m, x: m.vstack([x, x])),
    ("vstack_2d", (2, 3), lambda m, x: m.vstack([x, x[:1]])),
    ("dstack", (2, 3), lambda m, x: m.dstack([x, x])),
    ("dstack_1d", (3,), lambda m, x: m.dstack([x, x])),
    ("column_stack", (3,), lambda m, x: m.column_stack([x, x[::-1]])),
    ("column_stack_2d", (3, 2), lambda m, x: m.column_stack([x, x[:, 0]])),
    ("atleast_1d", (), lambda m, x: m.atleast_1d(x)),
    ("atleast_2d", (3,), lambda m, x: m.atleast_2d(x)),
    ("atleast_3d_1d", (3,), lambda m, x: m.atleast_3d(x)),
    ("atleast_3d_2d", (2, 3), lambda m, x: m.atleast_3d(x)),
    ("pad_int", (2, 3), lambda m, x: m.pad(x, 1)),
    ("pad_pair", (2, 3), lambda m, x: m.pad(x, (2, 0))),
    ("pad_axes", (2, 3), lambda m, x: m.pad(x, ((1, 0), (0, 2)), constant_values=1)),
    (
        "pad_values",
        (2, 3),
        lambda m, x: m.pad(x, ((1, 2), (3, 1)), constant_values=((1, 0), (0, 1))),
    ),
    ("pad_edge", (2, 3), lambda m, x: m.pad(x, ((2, 1), (0, 4)), mode="edge")),
    ("pad_wrap", (2, 3), lambda m, x: m.pad(x, ((5, 1), (7, 0)), mode="wrap")),
    ("pad_reflect", (2, 3), lambda m, x: m.pad(x, ((3, 4), (5, 2)), mode="reflect")),
    ("pad_reflect_1", (1, 3), lambda m, x: m.pad(x, ((2, 1), (1, 1)), mode="reflect")),
    ("pad_symmetric", (2, 3), lambda m, x: m.pad(x, ((3, 4), (7, 2)), mode="symmetric")),
    ("pad_empty_axis", (0, 3), lambda m, x: m.pad(x, 1)),
]


@pytest.mark.parametrize("name, shape, f", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_numpy(name, shape, f, dtype):
    x = data(shape, dtype)
    got = eager_and_jit(lambda a: f(jnp, a), jnp.asarray(x))
    assert_bitwise(got, f(np, x))


# (id, input shape, f(m, x)) for functions that return a list of arrays.
LIST_CASES = [
    ("split", (6, 2), lambda m, x: m.split(x, 3)),
    ("split_indices", (2, 7), lambda m, x: m.split(x, [2, 5, -1, 9], axis=1)),
    ("split_unordered", (7,), lambda m, x: m.split(x, [4, 2])),
    ("split_array_indices", (5,), lambda m, x: m.split(x, np.array([1, 3]))),
    ("array_split", (7, 2), lambda m, x: m.array_split(x, 3)),
    ("array_split_more", (2,), lambda m, x: m.array_split(x, 4)),
    ("broadcast_arrays", (3, 1), lambda m, x: m.broadcast_arrays(x, x[:1, 0], x.T)),
    ("atleast_several", (2,), lambda m, x: m.atleast_2d(x, x[0])),
]


@pytest.mark.parametrize("name, shape, f", LIST_CASES, ids=[c[0] for c in LIST_CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_list_results_match_numpy(name, shape, f, dtype):
    x = data(shape, dtype)
    eager = f(jnp, jnp.asarray(x))
    jitted = invarax.jit(lambda a: f(jnp, a))(jnp.asarray(x))
    want = f(np, x)
    assert len(eager) == len(jitted) == len(want)
    for e, j, w in zip(eager, jitted, want, strict=True):
        assert_bitwise(j, e)
        assert_bitwise(e, np.asarray(w))


def test_broadcast_shapes():
    assert jnp.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert jnp.broadcast_shapes(5, (2, 1)) == (2, 5)


def test_concatenate_promotes_dtypes_as_jax():
    ints, floats = jnp.arange(2), jnp.ones(2)
    assert jnp.concatenate([ints, floats]).dtype == np.float32
    assert jnp.concatenate([ints, ints], dtype=jnp.float32).dtype == np.float32
    assert jnp.stack([jnp.ones(2, jnp.bool_), ints]).dtype == np.int32
    assert jnp.concatenate([jnp.ones(2, jnp.float16), np.ones(2, np.float32)]).dtype == np.float32


def test_weak_type_is_kept():
    x = jnp.asarray(2.0)
    assert x.weak_type
    for f in (
        lambda a: jnp.reshape(a, (1, 1)),
        lambda a: jnp.tile(a, 3),
        lambda a: jnp.broadcast_to(a, (2,)),
        lambda a: jnp.pad(a[None], 1),
        lambda a: jnp.pad(a[None], 1, constant_values=np.float32(3)),
    ):
        assert eager_and_jit(f, x).weak_type


def test_roll_by_a_traced_shift():
    x = data((3, 5))
    for shift in (0, 2, -7, 13):
        got = eager_and_jit(lambda a, s: jnp.roll(a, s, axis=1), jnp.asarray(x), shift)
        assert_bitwise(got, np.roll(x, shift, axis=1))


def test_repeat_total_repeat_length():
    x = jnp.array([1, 2, 3])
    counts = np.array([1, 2, 0])
    assert jnp.repeat(x, counts, total_repeat_length=2).tolist() == [1, 2]
    assert jnp.repeat(x, counts, total_repeat_length=5).tolist() == [1, 2, 2, 3, 3]
    assert jnp.repeat(x, 2, total_repeat_length=7).tolist() == [1, 1, 2, 2, 3, 3, 3]


def test_shape_functions_are_static_under_jit():
    text = str(invarax.make_jaxpr(lambda a: jnp.pad(jnp.tile(a, 2), 1))(np.zeros(3, np.float32)))
    assert "gather" not in text


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
def test_pad_modes_with_large_widths(mode):
    x = data((3, 2))
    got = eager_and_jit(lambda a: jnp.pad(a, ((8, 11), (5, 0)), mode=mode), jnp.asarray(x))
    assert_bitwise(got, np.pad(x, ((8, 11), (5, 0)), mode=mode))


def test_pad_with_a_traced_constant():
    got = eager_and_jit(lambda a, c: jnp.pad(a, 1, constant_values=c), jnp.ones(2), 7.0)
    assert_bitwise(got, np.array([7, 1, 1, 7], np.float32))


ERRORS = [
    (
        lambda: jnp.reshape(jnp.ones((2, 3)), (4,)),
        TypeError,
        r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4,\) \(size 4\)",
    ),
    (
        lambda: jnp.reshape(jnp.ones((2, 3)), (4, -1)),
        TypeError,
        r"shape \(2, 3\) \(size 6\) into shape \(4, -1\)",
    ),
    (lambda: jnp.reshape(jnp.ones(4), (-1, -1)), ValueError, "at most one -1"),
    (lambda: jnp.reshape(jnp.ones(4), (4,), order="K"), ValueError, "order must be 'C' or 'F'"),
    (
        lambda: invarax.jit(lambda a, n: jnp.reshape(a, (n,)))(jnp.ones(4), 4),
        TypeError,
        "shapes are static",
    ),
    (
        lambda: jnp.swapaxes(jnp.ones((2, 3)), 0, 2),
        ValueError,
        "axis 2 is out of bounds for an array of dimension 2",
    ),
    (lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)), ValueError, "not a permutation"),
    (lambda: jnp.moveaxis(jnp.ones((2, 3)), 0, (0, 1)), ValueError, "same number"),
    (lambda: jnp.expand_dims(jnp.ones(3), (0, 0)), ValueError, "repeated axis"),
    (lambda: jnp.expand_dims(jnp.ones(3), 3), ValueError, "out of bounds"),
    (lambda: jnp.squeeze(jnp.ones((2, 3)), 0), ValueError, r"axis 0 .* shape \(2, 3\).* not 1"),
    (lambda: jnp.flip(jnp.ones(3), 1), ValueError, "axis 1 is out of bounds"),
    (
        lambda: jnp.broadcast_to(jnp.ones((2, 3)), (3, 3)),
        ValueError,
        r"cannot broadcast an array of shape \(2, 3\) to shape \(3, 3\)",
    ),
    (lambda: jnp.broadcast_to(jnp.ones((2, 3)), (3,)), ValueError, "cannot broadcast"),
    (lambda: jnp.broadcast_shapes((2,), (3,)), ValueError, r"Incompatible shapes.*\(2,\), \(3,\)"),
    (
        lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((3, 2))]),
        TypeError,
        r"all shapes must match except along axis 0.*\(2, 3\), \(3, 2\)",
    ),
    (lambda: jnp.concatenate([jnp.ones(()), jnp.ones(())]), ValueError, "zero-dimensional"),
    (lambda: jnp.concatenate([]), ValueError, "at least one array"),
    (lambda: jnp.stack([jnp.ones(2), jnp.ones(3)]), ValueError, r"same shape.*\(2,\), \(3,\)"),
    (lambda: jnp.split(jnp.ones(3), 2), ValueError, "equal division.*size 3 into 2"),
    (lambda: jnp.split(jnp.ones(3), 0), ValueError, "larger than 0"),
    (lambda: jnp.split(jnp.ones(3), 1.5), TypeError, "must be an int or a 1-D sequence"),
    (lambda: jnp.tile(jnp.ones(3), (-1,)), ValueError, "non-negative"),
    (lambda: jnp.repeat(jnp.ones(3), np.array([1, 2])), ValueError, "one count per element"),
    (lambda: jnp.repeat(jnp.ones(3), -1), ValueError, "non-negative"),
    (lambda: jnp.repeat(jnp.ones(3), 1.5), TypeError, "must be integers"),
    (
        lambda: invarax.jit(lambda a, r: jnp.repeat(a, r))(jnp.ones(2), jnp.array([1, 2])),
        TypeError,
        "static repeats",
    ),
    (lambda: jnp.roll(jnp.ones((2, 3)), (1, 2, 3), (0, 1)), ValueError, "same length"),
    (
        lambda: jnp.pad(jnp.ones(3), 1, mode="median"),
        NotImplementedError,
        "mode 'median' is not supported; supported modes: 'constant'",
    ),
    (
        lambda: jnp.pad(jnp.ones(3), 1, mode="edge", constant_values=1),
        ValueError,
        "unsupported keyword",
    ),
    (
        lambda: jnp.pad(jnp.ones(3), 1, mode="reflect", reflect_type="odd"),
        NotImplementedError,
        "reflect_type",
    ),
    (lambda: jnp.pad(jnp.ones(3), -1), ValueError, "non-negative"),
    (lambda: jnp.pad(jnp.ones((2, 3)), ((1, 2, 3),)), ValueError, "one pair per axis"),
    (lambda: jnp.pad(jnp.ones((0, 3)), 1, mode="wrap"), ValueError, "can't extend empty axis 0"),
]


@pytest.mark.parametrize("f, error, match", ERRORS)
def test_errors(f, error, match):
    with pytest.raises(error, match=match):
        f()


# Differential tests against JAX (float32 mode), for what NumPy does not define the same way.
JAX_CASES = [
    lambda m, x: m.concatenate([x, m.arange(3)[None]], axis=0),
    lambda m, x: m.pad(x, ((2, 3), (4, 1)), mode="reflect"),
    lambda m, x: m.repeat(x, m.array([2, 0, 1]), axis=1, total_repeat_length=5),
    lambda m, x: m.repeat(x, 2, axis=0, total_repeat_length=3),
    lambda m, x: m.roll(x, (1, -4), axis=(0, 1)),
    lambda m, x: m.reshape(x, (3, 2), order="F"),
    lambda m, x: m.stack([x, x.astype(m.int32)], axis=1),
]


@pytest.mark.parametrize("k", range(len(JAX_CASES)))
def test_matches_jax(k):
    jax = pytest.importorskip("jax")
    f, x = JAX_CASES[k], data((2, 3))
    ours = eager_and_jit(lambda a: f(jnp, a), jnp.asarray(x))
    assert_bitwise(ours, np.asarray(f(jax.numpy, jax.numpy.asarray(x))))


@pytest.mark.parametrize("lo, hi, interior", [(2, 1, 0), (-1, 2, 1), (3, -4, 2), (-3, -2, 1),
                                              (0, 0, 3), (-7, 1, 1), (1, -4, 0)])
def test_lax_pad_places_each_element(lo, hi, interior):
    x = np.arange(1, 5, dtype=np.float32)
    step = interior + 1
    size = lo + hi + len(x) + (len(x) - 1) * interior
    want = np.full(size, -1.0, np.float32)
    for i, v in enumerate(x):  # element i lands at lo + i * step, if inside
        if 0 <= lo + i * step < size:
            want[lo + i * step] = v
    got = invarax.lax.pad(jnp.asarray(x), np.float32(-1.0), [(lo, hi, interior)])
    assert_bitwise(got, want)
    two_d = invarax.lax.pad(jnp.asarray(np.stack([x, x + 4])), np.float32(-1.0),
                            [(1, -1, 0), (lo, hi, interior)])
    assert_bitwise(two_d[1], want)


def test_broadcast_to_unit_axes_is_a_read_only_view_with_broadcast_to_values():
    # The impl's fast path (a reshape when only unit axes appear) must look like
    # np.broadcast_to's result: same values and shape, read-only (jit never donates or
    # writes over it, which would change the operand it views).
    from invarax.ops.shape import _broadcast_in_dim_impl

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for shape, dims in [((2, 1, 3), (0, 2)), ((1, 2, 3, 1), (1, 2)), ((2, 3), (0, 1))]:
        got = _broadcast_in_dim_impl(x, shape, dims)
        want = np.broadcast_to(x.reshape([x.shape[dims.index(d)] if d in dims else 1
                                          for d in range(len(shape))]), shape)
        assert got.shape == want.shape and np.array_equal(got, want)
        assert not got.flags.writeable and np.shares_memory(got, x)
    assert x.flags.writeable

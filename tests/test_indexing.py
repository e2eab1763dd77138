"""Indexing, ``.at[]`` updates, take and the indexing lax ops: values against NumPy (and JAX
where installed), each case eagerly and under jit, jit bitwise eager."""

import numpy as np
import pytest
from helpers import assert_bitwise, data, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import lax

DTYPES = [np.float32, np.int32, np.bool_]


def index_id(idx):
    return repr(idx).replace("array", "a").replace(" ", "")


# ---------------------------------------------------------------------------------------
# x[idx] with static indices, against NumPy.

I2 = np.array([2, 0], np.int32)
BASIC = [
    ((5,), 3),
    ((5,), -1),
    ((5,), slice(1, 4)),
    ((5,), slice(None, None, -1)),
    ((5,), slice(-1, 0, -2)),
    ((5,), slice(4, None, -3)),
    ((5,), slice(10, 20)),
    ((5,), slice(3, 1)),
    ((5,), None),
    ((5,), Ellipsis),
    ((5,), ()),
    ((3, 4), (1, -1)),
    ((3, 4), (slice(None), 2)),
    ((3, 4), (None, slice(1, 3), None)),
    ((3, 4), (Ellipsis, 1)),
    ((3, 4), (0, Ellipsis, None)),
    ((3, 4), (slice(None, None, -2),)),
    ((2, 3, 4), (1, slice(None, None, 2), -1)),
    ((2, 3, 4), (Ellipsis, None, slice(2, None))),
    ((), ()),
    ((), None),
    ((), Ellipsis),
    ((0, 3), (slice(None), 1)),
    ((0, 3), (slice(1, 2),)),
]
ADVANCED = [
    ((5,), I2),
    ((5,), np.array([-1, -5, 4])),
    ((5,), np.array([[0, 1], [2, 3]])),
    ((5,), ([0, 4, 4],)),
    ((5,), np.array([], np.int32)),
    ((3, 4), (I2, slice(1, 3))),
    ((3, 4), (slice(1, 3), np.array([3, 0, 3]))),
    ((3, 4), (I2, np.array([1, 3]))),
    ((3, 4), (np.array([[0], [2]]), np.array([1, 3]))),
    ((3, 4), (None, I2, None)),
    ((2, 3, 4), (slice(None), I2, np.array([0, -1]))),  # adjacent: stay in place
    ((2, 3, 4), (np.array([1, 0]), slice(None), np.array([0, -1]))),  # separated: go first
    ((2, 3, 4), (0, slice(None), I2)),  # an int is advanced next to arrays (NumPy's rule)
    ((2, 3, 4), (Ellipsis, I2, None, slice(None, None, -1))),
    ((2, 3, 4), (np.array([1]), None, 1)),
    ((3, 4), np.array([True, False, True])),
    ((3, 4), np.array([[True, False] * 2] * 3)),
    ((3, 4), (slice(None), np.array([1, 0, 1, 1], bool))),
    ((2, 3, 4), (np.ones((2, 3), bool), np.array([1]))),
    ((3, 4), True),
    ((3, 4), (1, False)),
    ((3, 4), (True, I2)),
    ((0, 3), (slice(None), I2)),
    ((3, 0), I2),
]


@pytest.mark.parametrize("shape, idx", BASIC + ADVANCED, ids=index_id)
@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_matches_numpy(shape, idx, dtype):
    x = data(shape, dtype)
    got = eager_and_jit(lambda a: a[idx], jnp.asarray(x))
    assert_bitwise(got, x[idx])


@pytest.mark.parametrize("shape, idx", BASIC, ids=index_id)
def test_basic_indexing_never_gathers(shape, idx):
    text = str(invarax.make_jaxpr(lambda a: a[idx])(np.zeros(shape, np.float32)))
    assert "gather" not in text and "dynamic" not in text


def random_index(rng, shape):
    """A random NumPy index for ``shape`` (ints, slices, None, ..., int and bool arrays)."""
    items, axis = [], 0
    while axis < len(shape) and rng.random() < 0.85:
        kind, size = rng.integers(6), shape[axis]
        if kind == 0:
            items.append(None)
            continue
        if kind == 1 and size:
            items.append(int(rng.integers(-size, size)))
        elif kind == 2:
            bounds = [None, *range(-size - 1, size + 2)]
            step = rng.choice([None, 1, 2, 3, -1, -2, -3])
            items.append(slice(rng.choice(bounds), rng.choice(bounds), step))
        elif kind == 3 and size:
            items.append(rng.integers(-size, size, tuple(rng.integers(1, 3, rng.integers(3)))))
        elif kind == 4:
            items.append(rng.random(size) < 0.5)
        else:
            items.append(slice(None) if any(i is Ellipsis for i in items) else Ellipsis)
            axis = len(shape) if items[-1] is Ellipsis else axis
        axis += 1
    return tuple(items)


@pytest.mark.parametrize("seed", range(200))
def test_random_indices_get_set_add_match_numpy(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(0, 4, rng.integers(1, 4)))
    x, idx = data(shape, seed=seed), random_index(rng, shape)
    try:
        want = x[idx]
    except IndexError:
        with pytest.raises(IndexError):
            jnp.asarray(x)[idx]
        return
    assert_bitwise(eager_and_jit(lambda a: a[idx], jnp.asarray(x)), want)
    values = np.arange(want.size, dtype=np.float32).reshape(want.shape) + 100
    expected = x.copy()
    expected[idx] = values
    assert_bitwise(eager_and_jit(lambda a: a.at[idx].set(values), jnp.asarray(x)), expected)
    expected = x.copy()
    np.add.at(expected, idx, values)
    assert_bitwise(eager_and_jit(lambda a: a.at[idx].add(values), jnp.asarray(x)), expected)


# ---------------------------------------------------------------------------------------
# Traced indices and out-of-bounds semantics (JAX's: array indices clamp on reads).


@pytest.mark.parametrize("i", [0, 3, -1, -4])
def test_traced_scalar_index(i):
    x = data((4, 3))
    got = eager_and_jit(lambda a, j: a[j, 1:], jnp.asarray(x), jnp.asarray(i))
    assert_bitwise(got, x[i, 1:])
    got = eager_and_jit(lambda a, j: a[:, j - 2], jnp.asarray(x), jnp.asarray(i % 3))
    assert_bitwise(got, x[:, i % 3 - 2])


def test_traced_scalar_index_uses_dynamic_slice():
    text = str(invarax.make_jaxpr(lambda a, j: a[j])(np.zeros((4, 3), np.float32), 1))
    assert "dynamic_slice" in text and "gather" not in text


@pytest.mark.parametrize("index", [[7], [-9], [3, 100, -100]])
def test_out_of_bounds_index_arrays_clamp(index):
    x = data((4, 3))
    index = np.array(index, np.int32)
    got = eager_and_jit(lambda a, j: a[j], jnp.asarray(x), jnp.asarray(index))
    wrapped = np.where(index < 0, index + 4, index)
    assert_bitwise(got, x[np.clip(wrapped, 0, 3)])


def test_out_of_bounds_traced_scalar_clamps():
    x = data((4,))
    assert_bitwise(eager_and_jit(lambda a, j: a[j], jnp.asarray(x), jnp.asarray(9)), x[3])


@pytest.mark.parametrize(
    "mode, fill, want",
    [
        ("fill", None, [3.0, np.nan, np.nan, 0.0]),
        ("fill", -7.0, [3.0, -7.0, -7.0, 0.0]),
        ("clip", None, [3.0, 3.0, 0.0, 0.0]),
    ],
)
def test_get_modes(mode, fill, want):
    x = jnp.arange(4.0)
    index = jnp.array([-1, 4, -5, 0])
    got = eager_and_jit(lambda a, j: a.at[j].get(mode=mode, fill_value=fill), x, index)
    assert_bitwise(got, np.array(want, np.float32))


def test_get_fill_defaults_by_dtype():
    index = jnp.array([5])
    assert jnp.arange(3).at[index].get(mode="fill").tolist() == [np.iinfo(np.int32).min]
    assert jnp.arange(3, dtype=jnp.uint8).at[index].get(mode="fill").tolist() == [255]
    assert jnp.zeros(3, bool).at[index].get(mode="fill").tolist() == [True]


def test_traced_scalar_with_fill_mode_fills():
    got = eager_and_jit(lambda a, i: a.at[i].get(mode="fill"), jnp.arange(3.0), jnp.asarray(5))
    assert np.isnan(got)


def test_static_int_with_mode_is_not_bounds_checked():
    assert np.isnan(jnp.arange(3.0).at[7].get(mode="fill"))
    assert_bitwise(jnp.arange(3.0).at[7].set(9.0, mode="drop"), np.arange(3.0, dtype=np.float32))


# ---------------------------------------------------------------------------------------
# .at[] updates.

UFUNC_AT = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
UPDATE_INDICES = [
    (np.array([0, 2, 0, 0, -1]),),
    (slice(None), np.array([1, 1, 3])),
    (np.array([[0], [0]]), np.array([2, 2, 1])),
    (1, slice(None, None, -2)),
    (np.array([1, 1]), None, slice(1, 3)),
]


@pytest.mark.parametrize("idx", UPDATE_INDICES, ids=index_id)
@pytest.mark.parametrize("method", sorted(UFUNC_AT))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_at_combines_duplicates_like_ufunc_at(idx, method, dtype):
    x = data((3, 4), dtype)
    values = data(x[idx].shape, dtype, seed=1)
    expected = x.copy()
    UFUNC_AT[method].at(expected, idx, values)
    got = eager_and_jit(
        lambda a, v: getattr(a.at[idx], method)(v), jnp.asarray(x), jnp.asarray(values)
    )
    assert_bitwise(got, expected)


def test_at_add_accumulates_in_index_order():
    x = jnp.zeros(2)
    values = jnp.array([1e8, 1.0, -1e8, 1.0])
    # ((0 + 1e8) + 1) - 1e8 + 1: 1e8 + 1 rounds to 1e8 in float32, so the result is 1.
    got = eager_and_jit(lambda a, v: a.at[jnp.zeros(4, int)].add(v), x, values)
    assert_bitwise(got, np.array([1.0, 0.0], np.float32))


def test_at_set_duplicates_last_wins():
    got = eager_and_jit(
        lambda a: a.at[jnp.array([1, 0, 1, 1, 0])].set(jnp.arange(5.0)), jnp.zeros(3)
    )
    assert_bitwise(got, np.array([4.0, 3.0, 0.0], np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_at_set_broadcasts_and_casts_the_value(dtype):
    x = data((3, 4), dtype)
    got = eager_and_jit(lambda a: a.at[1:, ::2].set(1), jnp.asarray(x))
    expected = x.copy()
    expected[1:, ::2] = 1
    assert_bitwise(got, expected)
    assert not got.weak_type


def test_at_update_of_int_array_with_float_value_keeps_dtype():
    got = eager_and_jit(lambda a: a.at[0].set(2.7), jnp.arange(3))
    assert_bitwise(got, np.array([2, 1, 2], np.int32))
    got = eager_and_jit(lambda a: a.at[1].add(np.float32(0.5)), jnp.arange(3))
    assert_bitwise(got, np.array([0, 1, 2], np.int32))


def test_at_out_of_bounds_updates_drop_or_clip():
    index = jnp.array([-1, 5, -7])
    dropped = eager_and_jit(lambda a, j: a.at[j].set(9.0), jnp.zeros(4), index)
    assert_bitwise(dropped, np.array([0, 0, 0, 9], np.float32))
    clipped = eager_and_jit(lambda a, j: a.at[j].add(1.0, mode="clip"), jnp.zeros(4), index)
    assert_bitwise(clipped, np.array([1, 0, 0, 2], np.float32))


def test_at_traced_scalar_index():
    got = eager_and_jit(lambda a, i: a.at[i, 1:].set(5.0), jnp.zeros((3, 3)), jnp.asarray(-1))
    expected = np.zeros((3, 3), np.float32)
    expected[-1, 1:] = 5.0
    assert_bitwise(got, expected)


def test_at_divide_power_get():
    x = jnp.array([1.0, 2.0, 4.0])
    index = jnp.array([0, 2, 2])
    assert_bitwise(
        eager_and_jit(lambda a: a.at[index].divide(2.0), x), np.array([0.5, 2.0, 1.0], np.float32)
    )
    assert_bitwise(eager_and_jit(lambda a: a.at[1].power(3), x), np.array([1, 8, 4], np.float32))
    assert_bitwise(
        eager_and_jit(lambda a: a.at[index].mul(2.0), x), np.array([2.0, 2.0, 16.0], np.float32)
    )
    assert_bitwise(eager_and_jit(lambda a: a.at[::-1].get(), x), np.array([4, 2, 1], np.float32))


def test_at_accepts_jax_keywords():
    x = jnp.zeros(3)
    got = x.at[jnp.array([0, 1])].add(1.0, indices_are_sorted=True, unique_indices=True)
    assert_bitwise(got, np.array([1, 1, 0], np.float32))


def test_at_of_empty_selection_returns_x():
    x = jnp.arange(3.0)
    assert_bitwise(x.at[jnp.array([], int)].set(1.0), np.arange(3, dtype=np.float32))
    assert_bitwise(x.at[np.zeros(3, bool)].add(1.0), np.arange(3, dtype=np.float32))


# ---------------------------------------------------------------------------------------
# take and take_along_axis.

TAKE_INDEX = np.array([[-1, 5], [0, -9]], np.int32)
TAKE_CASES = [
    # (mode, axis, expected index into the axis of size 4 for TAKE_INDEX; None: filled)
    (None, 1, [[3, None], [0, None]]),
    ("fill", 0, [[3, None], [0, None]]),
    ("clip", 1, [[0, 3], [0, 0]]),
    ("wrap", -1, [[3, 1], [0, 3]]),
]


@pytest.mark.parametrize("mode, axis, positions", TAKE_CASES)
def test_take_modes(mode, axis, positions):
    x = data((4, 4, 4))
    got = eager_and_jit(
        lambda a, j: jnp.take(a, j, axis=axis, mode=mode), jnp.asarray(x), jnp.asarray(TAKE_INDEX)
    )
    rows = [
        [
            np.full(np.delete(x.shape, axis), np.nan, np.float32)
            if p is None
            else np.take(x, p, axis=axis)
            for p in row
        ]
        for row in positions
    ]
    want = np.moveaxis(np.array(rows), (0, 1), (axis % 3, axis % 3 + 1))
    assert_bitwise(got, want)


@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_take_in_bounds_matches_numpy(axis, dtype):
    x = data((3, 4), dtype)
    index = np.array([[0, 2, 1], [2, 2, 0]])
    got = eager_and_jit(lambda a: jnp.take(a, index, axis=axis), jnp.asarray(x))
    assert_bitwise(got, np.take(x, index, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_axis_matches_numpy(axis, dtype):
    x = data((3, 4, 2), dtype)
    index = np.argsort(data(x.shape, seed=3), axis=axis, kind="stable")
    if axis is None:
        x = x.ravel()
    got = eager_and_jit(
        lambda a, j: jnp.take_along_axis(a, j, axis), jnp.asarray(x), jnp.asarray(index)
    )
    assert_bitwise(got, np.take_along_axis(x, index, axis))


def test_take_method():
    assert jnp.array([[3, 1, 2]]).take(jnp.array([2]), axis=1).tolist() == [[2]]


def test_take_along_axis_broadcasts_and_fills():
    x = jnp.arange(6.0).reshape(2, 3)
    got = eager_and_jit(lambda a: jnp.take_along_axis(a, jnp.array([[-1, 7]]), 1), x)
    assert_bitwise(got, np.array([[2.0, np.nan], [5.0, np.nan]], np.float32))


# ---------------------------------------------------------------------------------------
# lax: dynamic_slice, dynamic_update_slice, gather, scatter.


@pytest.mark.parametrize(
    "start, want", [(1, [1, 2, 3]), (4, [3, 4, 5]), (-2, [3, 4, 5]), (-9, [0, 1, 2])]
)
def test_dynamic_slice_clamps_and_wraps(start, want):
    x = jnp.arange(6)
    got = eager_and_jit(lambda a, s: lax.dynamic_slice(a, (s,), (3,)), x, jnp.asarray(start))
    assert got.tolist() == want
    assert lax.dynamic_slice(x, (start,), (3,)).tolist() == want


def test_dynamic_update_slice_clamps():
    x = jnp.zeros((3, 4))
    got = eager_and_jit(
        lambda a, i: lax.dynamic_update_slice(a, jnp.ones((2, 2)), (i, 3)), x, jnp.asarray(2)
    )
    expected = np.zeros((3, 4), np.float32)
    expected[1:, 2:] = 1
    assert_bitwise(got, expected)


def test_gather_scatter_form():
    x = jnp.arange(12.0).reshape(3, 4)
    index = jnp.array([[2, 1], [3, 0], [0, 3]])
    got = eager_and_jit(lambda a: lax.gather(a, index, axes=(1, 0)), x)
    assert got.tolist()[:2] == [6.0, 3.0] and np.isnan(got[2])  # row 3 is out of bounds
    rows = eager_and_jit(lambda a: lax.gather(a, jnp.array([[2], [2]]), axes=0, mode="clip"), x)
    assert rows.tolist() == [[8.0, 9.0, 10.0, 11.0]] * 2
    added = eager_and_jit(
        lambda a: lax.scatter_add(a, jnp.array([[1], [1]]), jnp.ones((2, 3)), axes=1),
        jnp.zeros((3, 2)),
    )
    assert added.tolist() == [[0.0, 2.0]] * 3


def test_gather_is_the_transpose_of_scatter_add():
    rng = np.random.default_rng(0)
    x, y = data((4, 5), seed=1), data((6, 5), seed=2)
    index = jnp.asarray(rng.integers(0, 4, (6, 1)))
    lhs = np.vdot(np.asarray(lax.gather(jnp.asarray(x), index, axes=0)), y)
    rhs = np.vdot(x, np.asarray(lax.scatter_add(jnp.zeros((4, 5)), index, jnp.asarray(y), axes=0)))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5)


# ---------------------------------------------------------------------------------------
# Errors.


def _traced_mask(a):
    return a[a > 0]


def _traced_slice(a, i):
    return a[i:]


ERRORS = [
    (lambda: jnp.ones(3)[1.0], TypeError, "integer or boolean type.*astype"),
    (lambda: jnp.ones(3)[jnp.array([0.5])], TypeError, "integer or boolean type"),
    (lambda: jnp.ones((2, 3))[0, 0, 0], IndexError, r"Too many indices.*\(2, 3\)"),
    (lambda: jnp.ones((2, 0))[:, 0], IndexError, "index 0 is out of bounds for axis 1 with size 0"),
    (lambda: jnp.ones(0).at[0].set(1.0), IndexError, "index 0 is out of bounds"),
    (lambda: jnp.ones(3)[[0, 1]], TypeError, "non-tuple sequence.*jnp.array"),
    (lambda: jnp.ones(3)["a"], TypeError, "not supported"),
    (lambda: jnp.ones(3)[..., ...], IndexError, "single ellipsis"),
    (lambda: jnp.ones((2, 3))[np.ones(3, bool)], IndexError, r"boolean index of shape \(3,\)"),
    (
        lambda: jnp.ones((2, 3))[jnp.array([0, 1]), jnp.array([0, 1, 2])],
        IndexError,
        "could not be broadcast",
    ),
    (lambda: invarax.jit(_traced_mask)(jnp.ones(3)), IndexError, "must be concrete.*jnp.where"),
    (
        lambda: invarax.jit(_traced_slice)(jnp.ones(3), 1),
        IndexError,
        "static integers.*dynamic_slice",
    ),
    (lambda: jnp.ones(3).at[0].set(jnp.ones(2)), ValueError, r"shape \(\) with a value of shape"),
    (lambda: jnp.zeros(3, bool).at[0].add(True), TypeError, "scatter-add does not accept"),
    (lambda: jnp.take(jnp.ones(3), jnp.array([0]), mode="raise"), NotImplementedError, "raise"),
    (lambda: jnp.take(jnp.ones(3), jnp.array([0]), mode="bad"), ValueError, "Invalid mode"),
    (lambda: jnp.take(jnp.ones(3), jnp.array([0.0])), TypeError, "integer type"),
    (lambda: jnp.take(jnp.ones((0, 2)), jnp.array([0]), axis=0), IndexError, "empty axis"),
    (
        lambda: jnp.take_along_axis(jnp.ones((2, 3)), jnp.array([0]), 1),
        ValueError,
        "same number of dimensions",
    ),
    (
        lambda: lax.gather(jnp.ones(3), jnp.array([[0, 0]]), axes=0),
        TypeError,
        r"must end in an axis of size 1",
    ),
    (lambda: lax.gather(jnp.ones(3), jnp.array([[0.0]]), axes=0), TypeError, "integer array"),
    (lambda: lax.gather(jnp.ones((0, 2)), jnp.array([[0]]), axes=0), IndexError, "size 0"),
    (
        lambda: lax.scatter(jnp.ones(3), jnp.array([[0]]), jnp.ones(2), axes=0),
        TypeError,
        r"updates of shape \(2,\) do not match the indexed shape \(1,\)",
    ),
    (
        lambda: lax.gather(jnp.ones(3), jnp.array([[0]]), axes=0, mode="bad"),
        ValueError,
        "unknown gather/scatter mode",
    ),
    (
        lambda: lax.dynamic_slice(jnp.ones((2, 3)), (0,), (1, 1)),
        TypeError,
        "one start index per dimension",
    ),
    (lambda: lax.dynamic_slice(jnp.ones(3), (0,), (4,)), TypeError, "slice_sizes"),
    (lambda: lax.dynamic_slice(jnp.ones(3), (0.5,), (1,)), TypeError, "integer scalars"),
    (lambda: lax.dynamic_update_slice(jnp.ones(3), jnp.ones(4), (0,)), TypeError, "fit"),
]


@pytest.mark.parametrize("f, error, match", ERRORS)
def test_errors(f, error, match):
    with pytest.raises(error, match=match):
        f()


# ---------------------------------------------------------------------------------------
# Differential tests against JAX (float32 mode).


JAX_GETS = [
    lambda a, i: a[i, 1:, ::-1],
    lambda a, i: a[None, i, 0],
    lambda a, i: a[i[:, None], :, i[:2]],
    lambda a, i: a[1, :, i],
    lambda a, i: a[..., i[0]],
    lambda a, i: a.at[i].get(mode="fill", fill_value=-1.0),
    lambda a, i: a.at[:, i].get(mode="clip"),
]


@pytest.mark.parametrize("k", range(len(JAX_GETS)))
def test_indexing_matches_jax(k):
    jax = pytest.importorskip("jax")
    f = JAX_GETS[k]
    x, index = data((4, 5, 3)), np.array([-1, 3, 7, -6], np.int32)
    ours = eager_and_jit(f, jnp.asarray(x), jnp.asarray(index))
    assert_bitwise(ours, np.asarray(f(jax.numpy.asarray(x), jax.numpy.asarray(index))))


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_at_duplicates_match_jax(method):
    jax = pytest.importorskip("jax")
    x, values = data((4, 3)), data((6, 3), seed=1) * 1e3
    index = np.array([0, 2, 0, 0, -1, 9], np.int32)

    def f(a, i, v):
        return getattr(a.at[i], method)(v)

    ours = eager_and_jit(f, jnp.asarray(x), jnp.asarray(index), jnp.asarray(values))
    assert_bitwise(ours, np.asarray(f(jax.numpy.asarray(x), index, values)))


@pytest.mark.parametrize("axis", [None, 1])
@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
def test_take_matches_jax(mode, axis):
    jax = pytest.importorskip("jax")
    x, index = data((3, 5)), np.array([[-1, 5], [-6, 2]], np.int32)
    ours = eager_and_jit(lambda a: jnp.take(a, index, axis=axis, mode=mode), jnp.asarray(x))
    assert_bitwise(ours, np.asarray(jax.numpy.take(x, index, axis=axis, mode=mode)))


def test_dynamic_slice_matches_jax():
    jax = pytest.importorskip("jax")
    x = data((5, 4))
    for start in [(1, 2), (-1, 3), (9, -9)]:
        ours = lax.dynamic_slice(jnp.asarray(x), start, (2, 3))
        assert_bitwise(ours, np.asarray(jax.lax.dynamic_slice(x, start, (2, 3))))
        upd = lax.dynamic_update_slice(jnp.asarray(x), jnp.ones((2, 3)), start)
        assert_bitwise(
            upd, np.asarray(jax.lax.dynamic_update_slice(x, np.ones((2, 3), np.float32), start))
        )


# issue 20.3: a static out-of-bounds int is clamped (reads) or dropped (updates), as JAX
# and as jit with a traced int; eager == jit bitwise
STATIC_OOB = {
    "x[11]": lambda x, m: x[11], "x[-11]": lambda x, m: x[-11], "x[10]": lambda x, m: x[10],
    "m[5]": lambda x, m: m[5], "m[1, 7]": lambda x, m: m[1, 7], "m[-4, 0]": lambda x, m: m[-4, 0],
    "m[5, 1:3]": lambda x, m: m[5, 1:3], "m[..., 9]": lambda x, m: m[..., 9],
    "m[None, 3]": lambda x, m: m[None, 3],
    "m[3, jnp.array([0, 9])]": lambda x, m: m[3, np.array([0, 9])],
    "x.at[11].set": lambda x, m: x.at[11].set(99), "x.at[-11].set": lambda x, m: x.at[-11].set(99),
    "x.at[11].add": lambda x, m: x.at[11].add(99), "x.at[11].mul": lambda x, m: x.at[11].mul(3),
    "x.at[11].min": lambda x, m: x.at[11].min(-3), "x.at[11].get": lambda x, m: x.at[11].get(),
    "x.at[11].get fill": lambda x, m: x.at[11].get(mode="fill", fill_value=-1),
    "x.at[-11].get fill": lambda x, m: x.at[-11].get(mode="fill", fill_value=-1),
    "x.at[11].set clip": lambda x, m: x.at[11].set(99, mode="clip"),
    "m.at[1, 7].set": lambda x, m: m.at[1, 7].set(-5), "m.at[5].set": lambda x, m: m.at[5].set(-5),
    "m.at[5, 1:3].set": lambda x, m: m.at[5, 1:3].set(-5),
    "take": lambda x, m: x.take(11), "take clip": lambda x, m: x.take(11, mode="clip"),
}


@pytest.mark.parametrize("case", STATIC_OOB)
def test_static_out_of_bounds_int_matches_jit_and_jax(case):
    f = STATIC_OOB[case]
    x, m = jnp.arange(10), jnp.arange(12).reshape(3, 4)
    eager = f(x, m)
    assert_bitwise(invarax.jit(f)(x, m), eager)
    jax = pytest.importorskip("jax")
    want = f(jax.numpy.arange(10), jax.numpy.arange(12).reshape(3, 4))
    assert_bitwise(eager, np.asarray(want))


def test_static_out_of_bounds_equals_traced_index():
    x = jnp.arange(10.0)
    for i in (10, 11, 100, -11, -100):
        assert_bitwise(x[i], invarax.jit(lambda x, i: x[i])(x, i))
        assert_bitwise(x.at[i].set(-1.0), invarax.jit(lambda x, i: x.at[i].set(-1.0))(x, i))
    g = invarax.grad(lambda x: x[11] * 2.0)(x)  # the clamped read's gradient lands on x[9]
    assert np.asarray(g).tolist() == [0.0] * 9 + [2.0]
    assert_bitwise(invarax.vmap(lambda r: r[5])(jnp.arange(12).reshape(3, 4)),
                   jnp.array([3, 7, 11]))

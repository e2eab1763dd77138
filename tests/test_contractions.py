"""Contractions: the dot_general kernel and primitive, lax.dot, and jnp's matmul, dot, vdot,
inner, outer, tensordot and trace (einsum is in test_einsum.py).

Every case runs eagerly and under jit (bitwise equal, N3) and is compared with NumPy in
float64 (float32 within a tolerance, integers exactly).
"""

import ast
import itertools
import pathlib
import string

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import dot_general as kernel_dot_general

TOL = {"rtol": 2e-5, "atol": 2e-5}


def random_data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-9 if dtype.kind == "i" else 0, 10, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def assert_matches(got, ref, dtype):
    """``got`` has ``dtype``; it equals ``ref`` exactly for ints and bools, else within TOL."""
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, np.asarray(ref).astype(got.dtype))
    else:
        np.testing.assert_allclose(got, ref, **TOL)


def reference(f, *arrays):
    """``f`` of the arrays in float64 (complex128; ints in int64, bools as ints)."""

    def wide(a):
        a = np.asarray(a)
        return a.astype(
            {"b": np.int64, "i": np.int64, "u": np.int64, "c": np.complex128}.get(
                a.dtype.kind, np.float64
            )
        )

    out = np.asarray(f(*(wide(a) for a in arrays)))
    if arrays and np.asarray(arrays[0]).dtype == np.bool_:
        return out > 0
    return out


def _einsum_spec(lhs_ndim, rhs_ndim, dimension_numbers):
    """The einsum spec equivalent to ``dot_general`` with ``dimension_numbers``."""
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    lhs, rhs = [None] * lhs_ndim, [None] * rhs_ndim
    for a, b in zip((*lc, *lb), (*rc, *rb), strict=True):
        lhs[a] = rhs[b] = next(letters)
    lhs = [c or next(letters) for c in lhs]
    rhs = [c or next(letters) for c in rhs]
    free_l = [lhs[i] for i in range(lhs_ndim) if i not in lc and i not in lb]
    free_r = [rhs[i] for i in range(rhs_ndim) if i not in rc and i not in rb]
    out = [lhs[a] for a in lb] + free_l + free_r
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


# --- dot_general --------------------------------------------------------------------------

DOT_GENERAL = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),
    ((5,), (5,), (((0,), (0,)), ((), ()))),
    ((3,), (4,), (((), ()), ((), ()))),
    ((3, 4), (), (((), ()), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    ((2, 3, 4), (4, 3, 5), (((1, 2), (1, 0)), ((), ()))),
    ((2, 3, 4, 5), (3, 2, 5, 6), (((3,), (2,)), ((0, 1), (1, 0)))),
    ((2, 3, 0), (2, 0, 4), (((2,), (1,)), ((0,), (0,)))),
    ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),
    ((17, 33), (33, 9), (((1,), (0,)), ((), ()))),
]


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex64"])
@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", DOT_GENERAL)
def test_dot_general(lhs_shape, rhs_shape, dims, dtype, rng):
    lhs, rhs = random_data(rng, lhs_shape, dtype), random_data(rng, rhs_shape, dtype)
    got = eager_and_jit(lambda a, b: lax.dot_general(a, b, dims), lhs, rhs)
    spec = _einsum_spec(lhs.ndim, rhs.ndim, dims)
    assert_matches(got, reference(lambda a, b: np.einsum(spec, a, b), lhs, rhs), dtype)


def test_dot_general_int32_wraps_like_jax(rng):
    lhs = np.full((2, 300), 100_000, np.int32)
    rhs = np.full((300, 3), 1_000, np.int32)
    got = lax.dot_general(lhs, rhs, (((1,), (0,)), ((), ())))
    wrapped = (lhs.astype(np.int64) @ rhs.astype(np.int64)).astype(np.int32)
    assert_bitwise(got, wrapped)


def test_dot_general_preferred_element_type_accumulates_wide(rng):
    lhs = np.full((2, 50), 100, np.int8)
    rhs = np.full((50,), 100, np.int8)
    dims = (((1,), (0,)), ((), ()))
    got = eager_and_jit(
        lambda a, b: lax.dot_general(a, b, dims, preferred_element_type="int32"), lhs, rhs
    )
    assert_bitwise(got, np.full((2,), 500_000, np.int32))
    half = eager_and_jit(
        lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=jnp.float32),
        lhs.astype(np.float16),
        rhs.astype(np.float16),
    )
    assert half.dtype == np.float32 and np.all(np.asarray(half) == 500_000)


def test_dot_general_bool_is_or_of_ands():
    lhs = np.array([[True, False], [False, False]])
    rhs = np.array([[False, True], [True, True]])
    got = lax.dot_general(lhs, rhs, (((1,), (0,)), ((), ())))
    assert_bitwise(got, np.array([[False, True], [False, False]]))


def test_kernel_output_layout_is_batch_lhs_free_rhs_free(rng):
    lhs, rhs = random_data(rng, (3, 2, 4), "int32"), random_data(rng, (4, 5, 2), "int32")
    out = kernel_dot_general(lhs, rhs, (((2,), (0,)), ((1,), (2,))), np.dtype("int32"))
    assert out.shape == (2, 3, 5)
    np.testing.assert_array_equal(out, np.einsum("iab,bca->aic", lhs, rhs))


def test_dot_general_prints_params():
    text = str(
        invarax.make_jaxpr(lambda a, b: lax.dot_general(a, b, (([1], [0]), ([], []))))(
            np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
        )
    )
    assert "dot_general" in text and "precision=None" in text
    assert "dimension_numbers=(((1,), (0,)), ((), ()))" in text


DOT_GENERAL_ERRORS = [
    (
        (2, 3),
        (4, 5),
        (((1,), (0,)), ((), ())),
        r"contracting dimensions to have the same shape, got \(3,\) and \(4,\)",
    ),
    (
        (2, 3, 4),
        (3, 4, 5),
        (((2,), (1,)), ((0,), (0,))),
        r"batch dimensions to have the same shape, got \(2,\) and \(3,\)",
    ),
    ((2, 3), (3, 4), (((2,), (0,)), ((), ())), r"less than the rank 2 of the lhs"),
    ((2, 3), (3, 4), (((1,), (0,)), ((1,), (1,))), r"distinct"),
    ((2, 3), (3, 2), (((1,), (0,)), ((0,), ())), r"equal numbers of lhs_batch and rhs_batch"),
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims, match", DOT_GENERAL_ERRORS)
def test_dot_general_shape_errors(lhs_shape, rhs_shape, dims, match):
    with pytest.raises(TypeError, match=match):
        lax.dot_general(jnp.ones(lhs_shape), jnp.ones(rhs_shape), dims)


def test_dot_general_error_shows_both_shapes():
    with pytest.raises(TypeError, match=r"lhs shape \(2, 3\).*rhs shape \(4, 5\)"):
        lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 5)), (((1,), (0,)), ((), ())))


def test_dot_general_dtype_errors():
    with pytest.raises(TypeError, match=r"same dtypes, got float32 and int32.*jnp"):
        lax.dot_general(jnp.ones(3), jnp.ones(3, jnp.int32), (((0,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="preferred_element_type int32 cannot hold"):
        lax.dot_general(
            jnp.ones(3), jnp.ones(3), (((0,), (0,)), ((), ())), preferred_element_type=jnp.int32
        )
    with pytest.raises(TypeError, match=r"must be \(\(lhs_contracting"):
        lax.dot_general(jnp.ones(3), jnp.ones(3), (0, 0))


def test_dot_general_weak_scalar_takes_the_other_dtype():
    out = lax.dot_general(jnp.ones(3, jnp.int32), 2, (((), ()), ((), ())))
    assert out.dtype == np.int32 and out.tolist() == [2, 2, 2]


@pytest.mark.parametrize(
    "lhs_shape, rhs_shape", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4))]
)
def test_lax_dot(lhs_shape, rhs_shape, rng):
    lhs, rhs = random_data(rng, lhs_shape, "float32"), random_data(rng, rhs_shape, "float32")
    got = eager_and_jit(lax.dot, lhs, rhs)
    assert_matches(got, reference(np.dot, lhs, rhs), "float32")


def test_lax_dot_rejects_batched_operands():
    with pytest.raises(TypeError, match=r"lax.dot: incompatible shapes \(2, 3, 4\) and \(4,\)"):
        lax.dot(jnp.ones((2, 3, 4)), jnp.ones(4))


# --- matmul -------------------------------------------------------------------------------

MATMUL = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((1, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (1, 4, 5)),
    ((1, 1, 3, 4), (7, 1, 4, 2)),
    ((3, 1, 2, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((0, 3, 4), (4, 2)),
    ((3, 4), (1, 4, 5)),
    ((1, 3, 4), (4, 5)),
    ((4,), (1, 4, 5)),
    ((1, 1, 4), (4,)),
    ((3, 0), (0, 2)),
]


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize("a_shape, b_shape", MATMUL)
def test_matmul(a_shape, b_shape, dtype, rng):
    a, b = random_data(rng, a_shape, dtype), random_data(rng, b_shape, dtype)
    got = eager_and_jit(jnp.matmul, a, b)
    assert_matches(got, reference(np.matmul, a, b), dtype)
    assert_bitwise(eager_and_jit(lambda x, y: jnp.asarray(x) @ y, a, b), got)


BATCHES = [(), (1,), (3,), (2, 1), (1, 3), (2, 3)]


def test_matmul_broadcasting_exhaustive(rng):
    for a_batch, b_batch, a_vec, b_vec in itertools.product(
        BATCHES, BATCHES, (False, True), (False, True)
    ):
        a_shape = (4,) if a_vec else (*a_batch, 2, 4)
        b_shape = (4,) if b_vec else (*b_batch, 4, 5)
        a, b = random_data(rng, a_shape, "int32"), random_data(rng, b_shape, "int32")
        assert_bitwise(jnp.matmul(a, b), np.matmul(a, b))


def test_matmul_float64(x64, rng):
    a, b = random_data(rng, (5, 6), "float64"), random_data(rng, (6, 7), "float64")
    got = eager_and_jit(jnp.matmul, a, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a @ b, rtol=1e-13)


def test_matmul_inner_mismatch_message():
    match = (
        r"matmul: inner dimensions do not match: x has shape \(3, 4\) and y has shape "
        r"\(5, 6\) \(4 != 5\)"
    )
    with pytest.raises(ValueError, match=match):
        jnp.matmul(jnp.ones((3, 4)), jnp.ones((5, 6)))


@pytest.mark.parametrize(
    "a_shape, b_shape, hint",
    [((3, 4), (5, 4), r"x @ y\.T"), ((4, 3), (4, 5), r"x\.T @ y"), ((3, 4), (5,), "transpose")],
)
def test_matmul_mismatch_suggests_a_transpose(a_shape, b_shape, hint):
    with pytest.raises(ValueError, match=hint):
        jnp.ones(a_shape) @ jnp.ones(b_shape)


def test_matmul_other_errors():
    with pytest.raises(ValueError, match=r"batch dimensions do not broadcast.*\(2,\) and \(3,\)"):
        jnp.matmul(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5)))
    with pytest.raises(ValueError, match=r"operand 0 is 0-d.*jnp.multiply"):
        jnp.matmul(2.0, jnp.ones(3))


# --- dot, vdot, inner, outer, tensordot, trace ------------------------------------------

DOT = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 3, 4), (5, 4, 6)),
    ((), (3, 4)),
    ((3, 4), ()),
    ((2, 3), (4, 3, 5)),
    ((), ()),
]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("a_shape, b_shape", DOT)
def test_dot(a_shape, b_shape, dtype, rng):
    a, b = random_data(rng, a_shape, dtype), random_data(rng, b_shape, dtype)
    got = eager_and_jit(jnp.dot, a, b)
    assert_matches(got, reference(np.dot, a, b), dtype)


def test_dot_method_and_mismatch():
    x = jnp.ones((2, 3))
    assert x.dot(jnp.ones(3)).shape == (2,)
    with pytest.raises(ValueError, match=r"dot: shapes \(2, 3\) and \(4, 5\) are not aligned"):
        jnp.dot(x, jnp.ones((4, 5)))


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int32"])
def test_vdot_flattens_and_conjugates(dtype, rng):
    a, b = random_data(rng, (2, 3), dtype), random_data(rng, (3, 2), dtype)
    got = eager_and_jit(jnp.vdot, a, b)
    assert_matches(got, reference(np.vdot, a, b), dtype)
    with pytest.raises(ValueError, match="vdot: shapes"):
        jnp.vdot(jnp.ones(3), jnp.ones(4))


@pytest.mark.parametrize(
    "a_shape, b_shape", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 3, 4), (5, 4)), ((), (2, 3))]
)
def test_inner(a_shape, b_shape, rng):
    a, b = random_data(rng, a_shape, "float32"), random_data(rng, b_shape, "float32")
    assert_matches(eager_and_jit(jnp.inner, a, b), reference(np.inner, a, b), "float32")


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("a_shape, b_shape", [((3,), (4,)), ((2, 2), (3,)), ((), (2,))])
def test_outer(a_shape, b_shape, dtype, rng):
    a, b = random_data(rng, a_shape, dtype), random_data(rng, b_shape, dtype)
    assert_matches(eager_and_jit(jnp.outer, a, b), reference(np.outer, a, b), dtype)


TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (3, 4), 1),
    ((2, 3), (4, 5), 0),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3), (4, 3), ([-1], [1])),
    ((2, 3), (3, 4), (1, 0)),
    ((2, 3, 4), (2, 3, 4), 3),
]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("a_shape, b_shape, axes", TENSORDOT)
def test_tensordot(a_shape, b_shape, axes, dtype, rng):
    a, b = random_data(rng, a_shape, dtype), random_data(rng, b_shape, dtype)
    got = eager_and_jit(lambda x, y: jnp.tensordot(x, y, axes), a, b)
    assert_matches(got, reference(lambda x, y: np.tensordot(x, y, axes), a, b), dtype)


def test_tensordot_errors():
    a = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="as many axes of the first operand as of the second"):
        jnp.tensordot(a, a, ([0, 1], [0]))
    with pytest.raises(ValueError, match="axes=3 must be between 0 and the smaller rank 2"):
        jnp.tensordot(a, a, 3)
    with pytest.raises(ValueError, match=r"tensordot: shapes \(2, 3\) and \(2, 3\) are not"):
        jnp.tensordot(a, a, ([1], [0]))


@pytest.mark.parametrize(
    "shape, offset, axis1, axis2",
    [
        ((3, 3), 0, 0, 1),
        ((3, 4), 1, 0, 1),
        ((3, 4), -1, 0, 1),
        ((3, 4), 7, 0, 1),
        ((4, 3), -6, 0, 1),
        ((2, 3, 4), 0, 2, 0),
        ((2, 3, 4), 1, -1, 1),
        ((0, 0), 0, 0, 1),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_trace(shape, offset, axis1, axis2, dtype, rng):
    a = random_data(rng, shape, dtype)
    got = eager_and_jit(lambda x: jnp.trace(x, offset, axis1, axis2), a)
    assert_matches(got, reference(lambda x: np.trace(x, offset, axis1, axis2), a), dtype)


def test_trace_dtypes_and_errors():
    a = np.arange(9, dtype=np.int8).reshape(3, 3)
    assert jnp.trace(a).dtype == np.int32  # jnp.sum widens small ints, as JAX
    assert jnp.trace(a, dtype=jnp.float32).dtype == np.float32
    assert jnp.asarray(a).trace() == 12
    with pytest.raises(ValueError, match=r"at least 2 dimensions, got shape \(3,\)"):
        jnp.trace(jnp.ones(3))
    with pytest.raises(ValueError, match="axis1 and axis2 must differ"):
        jnp.trace(jnp.ones((3, 3)), axis1=1, axis2=-1)


# --- promotion, weak types, precision -----------------------------------------------------


def test_operands_promote_as_jax():
    assert jnp.dot(jnp.ones(3, jnp.int32), jnp.ones(3)).dtype == np.float32
    assert jnp.matmul(np.ones((2, 2), np.int8), np.ones((2, 2), np.uint8)).dtype == np.int16
    assert jnp.dot(jnp.ones(3), 2.0).weak_type is False
    both_weak = jnp.dot(2.0, 3.0)
    assert both_weak.weak_type and both_weak.dtype == np.float32
    out = jnp.matmul(
        np.ones((2, 3), np.int8), np.ones((3,), np.int8), preferred_element_type=jnp.float32
    )
    assert out.dtype == np.float32 and out.tolist() == [3.0, 3.0]


def test_precision_is_accepted_and_ignored(rng):
    a, b = random_data(rng, (3, 4), "float32"), random_data(rng, (4, 2), "float32")
    assert_bitwise(jnp.matmul(a, b, precision="highest"), jnp.matmul(a, b))
    assert_bitwise(lax.dot(a, b, precision=("high", "high")), jnp.matmul(a, b))


# --- N4: every formulation is one dot_general, and the same kernel call -----------------

X = np.random.default_rng(1).standard_normal((7, 5)).astype(np.float32)
W = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)


def _formulations():
    w = jnp.asarray(W)
    return {
        "x @ W.T": lambda x: x @ w.T,
        "jnp.dot": lambda x: jnp.dot(x, w.T),
        "jnp.matmul": lambda x: jnp.matmul(x, lax.transpose(w, (1, 0))),
        "einsum": lambda x: jnp.einsum("nk,mk->nm", x, w),
        "tensordot": lambda x: jnp.tensordot(x, w, ([1], [1])),
        "inner": lambda x: jnp.inner(x, w),
        "dot_general": lambda x: lax.dot_general(x, w, (((1,), (1,)), ((), ()))),
    }


@pytest.mark.parametrize("name", list(_formulations()))
def test_each_formulation_is_one_dot_general(name):
    f = _formulations()[name]
    eqns = invarax.make_jaxpr(f)(X).eqns
    names = [e.primitive.name for e in eqns]
    assert names.count("dot_general") == 1, names
    assert not {"mul", "reduce_sum"} & set(names), names


def test_formulations_agree_bitwise():
    results = {name: f(jnp.asarray(X)) for name, f in _formulations().items()}
    first = results.pop("x @ W.T")
    for got in results.values():
        assert_bitwise(got, first)


# --- differentiation: the gradient of a weight comes out in the weight's layout ----------


# The gradient of w, written as the cotangent-first contraction and a transpose to w's axes.
WEIGHT_CASES = {
    "x @ w": (
        lambda x, w: x @ w,
        [(7, 300), (300, 5)],
        lambda ct, x: lax.transpose(jnp.einsum("nm,nk->mk", ct, x), (1, 0)),
    ),
    "contract w's last axis": (
        lambda x, w: lax.dot_general(x, w, (((1,), (1,)), ((), ()))),
        [(7, 300), (5, 300)],
        lambda ct, x: jnp.einsum("nm,nk->mk", ct, x),
    ),
    "batched": (
        lambda x, w: jnp.einsum("bnk,bkm->bnm", x, w),
        [(2, 7, 3), (2, 3, 5)],
        lambda ct, x: lax.transpose(jnp.einsum("bnm,bnk->bmk", ct, x), (0, 2, 1)),
    ),
    "two free axes": (
        lambda x, w: jnp.einsum("nk,kmj->nmj", x, w),
        [(7, 3), (3, 4, 5)],
        lambda ct, x: lax.transpose(jnp.einsum("nmj,nk->mjk", ct, x), (2, 0, 1)),
    ),
}


@pytest.mark.parametrize("name", list(WEIGHT_CASES))
def test_weight_gradient_needs_no_transpose_and_keeps_the_bits(name, rng):
    """The cotangent of ``w`` contracts ``x`` with the output cotangent in the order that
    gives ``w``'s axes directly (no transpose: a row-major result), with the bits of the
    cotangent-first contraction and a transpose (the canonical order is symmetric)."""
    f, shapes, reference_vjp = WEIGHT_CASES[name]
    x, w = (jnp.asarray(random_data(rng, s, np.float32)) for s in shapes)
    ct = jnp.asarray(random_data(rng, f(x, w).shape, np.float32))
    _, vjp = invarax.vjp(lambda w: f(x, w), w)
    names = [e.primitive.name for e in invarax.make_jaxpr(vjp)(ct).eqns]
    assert names == ["dot_general"], names
    got = eager_and_jit(lambda c: vjp(c)[0], ct)
    assert np.asarray(got).flags.c_contiguous
    assert_bitwise(got, reference_vjp(ct, x))


# --- JAX differential -------------------------------------------------------------------

JAX_CASES = [
    ("matmul", lambda m: m.matmul, [(2, 1, 3, 4), (5, 4, 6)]),
    ("matmul_vec", lambda m: m.matmul, [(4,), (2, 4, 5)]),
    ("dot", lambda m: m.dot, [(2, 3, 4), (5, 4, 6)]),
    ("dot_scalar", lambda m: m.dot, [(), (3,)]),
    ("vdot", lambda m: m.vdot, [(2, 3), (6,)]),
    ("inner", lambda m: m.inner, [(2, 3), (4, 3)]),
    ("outer", lambda m: m.outer, [(2, 2), (3,)]),
    (
        "tensordot",
        lambda m: lambda a, b: m.tensordot(a, b, ([1, 2], [1, 0])),
        [(2, 3, 4), (4, 3, 5)],
    ),
    ("trace", lambda m: lambda a: m.trace(a, 1, 0, 2), [(3, 2, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8", "bool"])
@pytest.mark.parametrize("name, get, shapes", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_against_jax(name, get, shapes, dtype, rng):
    jax = pytest.importorskip("jax")
    args = [random_data(rng, s, dtype) for s in shapes]
    ours, theirs = get(jnp)(*args), get(jax.numpy)(*args)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.weak_type == theirs.weak_type
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(ours, theirs, **TOL)
    else:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("args", [(2.0, 3.0), (2, jnp.ones(3)), (jnp.ones(3, jnp.int8), 2.0)])
def test_weak_types_against_jax(args):
    jax = pytest.importorskip("jax")
    ours = jnp.dot(*args)
    theirs = jax.numpy.dot(*(np.asarray(a) if isinstance(a, invarax.Array) else a for a in args))
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)


# --- the kernel is the only place that contracts ------------------------------------------

NUMPY_CONTRACTIONS = {"matmul", "dot", "einsum", "tensordot", "inner", "vdot", "linalg"}
# Allowed uses, with the reason (each documented in docs/numerics.md).
EXEMPT = {"kernels/linalg.py: np.linalg": "eig: LAPACK's geev, forward only, as JAX's CPU eig"}


def test_no_numpy_contraction_outside_the_kernel():
    root = pathlib.Path(invarax.__file__).parent
    kernel = root / "kernels" / "contraction.py"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == kernel:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("np", "numpy")
                and node.attr in NUMPY_CONTRACTIONS
            ):
                where = f"{path.relative_to(root)}: np.{node.attr}"
                if where not in EXEMPT:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: np.{node.attr}")
    assert not found, found

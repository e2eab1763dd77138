"""jnp.einsum: specs against NumPy (float64) and JAX, eager and jit bitwise, lowering and errors."""

import numpy as np
import pytest
from helpers import assert_bitwise, eager_and_jit
from test_contractions import TOL, assert_matches, random_data, reference

import invarax
import invarax.numpy as jnp

SPECS = [
    # matrix products and transposed operands
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ij,kj->ikj", [(3, 4), (5, 4)]),
    # batch
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ibj,jbk->bki", [(3, 2, 4), (4, 2, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    # one operand: trace, diagonal, sums, transposes
    ("ii", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ij", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("ijij->ij", [(2, 3, 2, 3)]),
    ("ij->", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ijk->kij", [(2, 3, 4)]),
    ("ij", [(3, 4)]),
    ("", [()]),
    # implicit outputs (alphabetical; upper case sorts first)
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba", [(3, 4)]),
    ("jk,ij", [(4, 5), (3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("bA,Ac", [(2, 3), (3, 4)]),
    ("ii,i", [(3, 3), (3,)]),
    # ellipsis, with broadcasting
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 6)]),
    ("...ij,jk->...ik", [(2, 3, 3, 4), (4, 5)]),
    ("i...->...i", [(2, 3, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...", [(2, 3)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    # size-1 broadcasting of a named index
    ("ij,jk->ijk", [(3, 1), (4, 5)]),
    # three and more operands, contracted left to right
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 5)]),
    ("i,j,ij->", [(2,), (3,), (2, 3)]),
    ("abc,cd,dbe->ae", [(2, 3, 4), (4, 5), (5, 3, 6)]),
    ("ij,jk,k->i", [(2, 3), (3, 1), (5,)]),
    ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 4), (3, 4, 2, 3), (5, 2), (2, 3)]),
    # zero sizes
    ("ij,jk->ik", [(0, 3), (3, 2)]),
    ("ij,jk->ik", [(2, 0), (0, 2)]),
    ("ii", [(0, 0)]),
]

IDS = [f"{spec or 'empty'}-{i}" for i, (spec, _) in enumerate(SPECS)]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("spec, shapes", SPECS, ids=IDS)
def test_einsum_against_numpy(spec, shapes, dtype, rng):
    ops = [random_data(rng, s, dtype) for s in shapes]
    got = eager_and_jit(lambda *xs: jnp.einsum(spec, *xs), *ops)
    assert_matches(got, reference(lambda *xs: np.einsum(spec, *xs), *ops), dtype)


@pytest.mark.parametrize("spec, shapes", SPECS, ids=IDS)
def test_einsum_against_jax(spec, shapes, rng):
    jax = pytest.importorskip("jax")
    ops = [random_data(rng, s, "float32") for s in shapes]
    ours, theirs = jnp.einsum(spec, *ops), jax.numpy.einsum(spec, *ops)
    assert (ours.dtype, ours.shape, ours.weak_type) == (
        theirs.dtype,
        theirs.shape,
        theirs.weak_type,
    )
    np.testing.assert_allclose(ours, theirs, **TOL)


def test_ellipsis_dropped_from_output_is_summed_as_jax():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert jnp.einsum("...i->i", x).tolist() == [3.0, 5.0, 7.0]


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 2)]),
        ("ii->i", [(3, 3)]),
        ("ij->", [(3, 4)]),
        ("ij,ij->i", [(3, 4), (3, 4)]),
        ("i,j->ij", [(3,), (4,)]),
    ],
)
def test_bool_is_logical(spec, shapes, rng):
    ops = [random_data(rng, s, "bool") for s in shapes]
    got = eager_and_jit(lambda *xs: jnp.einsum(spec, *xs), *ops)
    assert_matches(got, reference(lambda *xs: np.einsum(spec, *xs), *ops), "bool")


def test_interleaved_form():
    x, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    assert_bitwise(jnp.einsum(x, [0, 1], y, [1, 2], [0, 2]), jnp.einsum("ab,bc->ac", x, y))
    assert jnp.einsum(x, [0, Ellipsis]).shape == (3, 2)  # 'a...' -> '...a'


def test_promotion_and_preferred_element_type():
    i8, f32 = np.ones((2, 3), np.int8), np.ones((3,), np.float32)
    assert jnp.einsum("ij,j->i", i8, f32).dtype == np.float32
    assert jnp.einsum("ij,ij->", i8, i8).dtype == np.int8
    wide = jnp.einsum("ij,ij->", i8 * 100, i8 * 100, preferred_element_type=jnp.int32)
    assert wide.dtype == np.int32 and int(wide) == 60_000


def test_keywords_are_accepted_and_do_not_change_bits(rng):
    ops = [random_data(rng, s, "float32") for s in [(3, 40), (40, 50), (50, 2)]]
    base = jnp.einsum("ij,jk,kl->il", *ops)
    for kwargs in [
        {"optimize": "greedy"},
        {"optimize": False},
        {"optimize": "optimal"},
        {"precision": "highest"},
        {"preferred_element_type": jnp.float32},
    ]:
        assert_bitwise(jnp.einsum("ij,jk,kl->il", *ops, **kwargs), base)


def _primitives(f, *args):
    return [e.primitive.name for e in invarax.make_jaxpr(f)(*args).eqns]


@pytest.mark.parametrize(
    "spec, shapes, count",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)], 1),
        ("nk,mk->nm", [(3, 4), (5, 4)], 1),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 2),
        ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 4), (3, 4, 2, 3), (5, 2), (2, 3)], 4),
        ("ii->i", [(3, 3)], 0),
    ],
)
def test_one_dot_general_per_pair(spec, shapes, count):
    names = _primitives(lambda *xs: jnp.einsum(spec, *xs), *(jnp.ones(s) for s in shapes))
    assert names.count("dot_general") == count, names
    assert "mul" not in names and "gather" not in names, names


def test_diagonal_is_a_strided_slice_and_sums_use_reduce_sum():
    names = _primitives(lambda x: jnp.einsum("ii", x), jnp.ones((3, 3)))
    assert names == ["reshape", "slice", "reduce_sum"]


ERRORS = [
    ("ij,jk->ik", [(2, 3)], "name 2 operand"),
    ("ij", [(2, 3), (3,)], "name 1 operand"),
    (
        "ij,jk->ik",
        [(2, 3), (4, 5)],
        r"index 'j' has size 3 in operand 0 \(shape \(2, 3\)\) but size 4 in operand 1",
    ),
    ("i1,jk", [(2, 3), (3, 4)], r"invalid character '1'"),
    ("ij,j$", [(2, 3), (3, 4)], r"invalid character '\$'"),
    ("i.j", [(2, 3)], r"invalid character '\.'"),
    ("ij", [(2, 3, 4)], r"operand 0 has 3 dimensions.*'ij' name 2; add '...'"),
    ("ijk", [(2, 3)], "operand 0 has 2 dimensions"),
    ("ij->k", [(2, 3)], "output index 'k'.*does not appear in any input"),
    ("ij->ii", [(2, 2)], "output index 'i' appears more than once"),
    ("ii", [(2, 3)], "repeated in operand 0.*sizes 2 and 3"),
    ("ij->i->j", [(2, 3)], "more than once"),
    ("...i,...i", [(2, 3), (4, 3)], r"'...' axis 0 from the right has size 2.*size 4"),
]


@pytest.mark.parametrize("spec, shapes, match", ERRORS)
def test_errors(spec, shapes, match):
    with pytest.raises(ValueError, match=match):
        jnp.einsum(spec, *(jnp.ones(s) for s in shapes))


def test_other_argument_errors():
    with pytest.raises(ValueError, match="at least one operand"):
        jnp.einsum("")
    with pytest.raises(NotImplementedError, match="out"):
        jnp.einsum("i", jnp.ones(2), out=jnp.ones(2))
    with pytest.raises(ValueError, match="sublist"):
        jnp.einsum(jnp.ones(2), [99])

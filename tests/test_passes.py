"""The optimisation passes (invarax/compiler/passes.py): each does its job, none changes a bit.

Every test runs the original and the optimised program on the same inputs and asserts
bitwise equality (``same_bits``), after typechecking the optimised jaxpr.
"""

import doctest

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import lax, make_jaxpr, random
from invarax.compiler import passes
from invarax.compiler.passes import cse, dce, fold_constants, optimize, remove_noops
from invarax.core.aval import ShapedArray
from invarax.core.eval import eval_jaxpr
from invarax.core.ir import Literal, typecheck


def prims(closed):
    """The primitive names of the top-level equations, in order."""
    return [e.primitive.name for e in closed.eqns]


def same_bits(original, optimised, *args):
    """Typecheck ``optimised`` and assert that it computes ``original``'s bits on ``args``."""
    typecheck(optimised.jaxpr)
    assert optimised.jaxpr.invars == original.jaxpr.invars
    want = eval_jaxpr(original.jaxpr, original.consts, *args)
    got = eval_jaxpr(optimised.jaxpr, optimised.consts, *args)
    for g, w in zip(got, want, strict=True):
        assert_bitwise(g, w)
        assert g.weak_type == w.weak_type


def expr(x1, x2):
    return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))


# ---------------------------------------------------------------------------------------
# Dead-code elimination


def test_dce_removes_unused_equations_and_consts():
    w = jnp.arange(3.0)

    def f(x):
        unused = jnp.cos(x) * w  # reads the const w
        del unused
        return jnp.sin(x)

    closed = make_jaxpr(f)(jnp.ones(3))
    assert prims(closed) == ["cos", "mul", "sin"] and len(closed.consts) == 1
    out = dce(closed)
    assert prims(out) == ["sin"] and out.consts == [] and out.jaxpr.constvars == []
    same_bits(closed, out, data((3,)))


def test_dce_keeps_every_output_and_input():
    closed = make_jaxpr(lambda x, y: (x, jnp.sin(x), x))(1.0, 2.0)
    out = dce(closed)
    assert len(out.jaxpr.invars) == 2 and len(out.jaxpr.outvars) == 3
    same_bits(closed, out, 0.5, 3.0)


def test_dce_keeps_what_the_outputs_need_through_multiple_results():
    def f(x):
        values, _ = lax.sort((x, -x), dimension=0, num_keys=1)  # second output unused
        return values

    closed = make_jaxpr(f)(jnp.ones(4))
    assert prims(dce(closed)) == prims(closed)


# ---------------------------------------------------------------------------------------
# Common-subexpression elimination


def test_cse_of_the_expression_of_jax_issue_15736():
    closed = make_jaxpr(expr)(1.0, 2.0)
    assert prims(closed).count("div") == 3 and prims(closed).count("exp") == 2
    out = optimize(closed)
    assert prims(out).count("div") == 1 and prims(out).count("exp") == 1
    text = str(make_jaxpr(expr, optimize=True)(1.0, 2.0))
    assert text.count(" div ") == 1 and text.count(" exp ") == 1
    same_bits(closed, out, data((5,)), data((5,), seed=1))


def test_cse_merges_across_the_forward_and_backward_pass_of_grad():
    f = lambda x: jnp.sin(x) * jnp.cos(x)
    closed = make_jaxpr(invarax.grad(f))(1.0)
    assert prims(closed).count("cos") == 2 and prims(closed).count("sin") == 2
    out = optimize(closed)
    assert prims(out).count("cos") == 1 and prims(out).count("sin") == 1
    same_bits(closed, out, 0.7)
    text = invarax.jit(invarax.grad(f)).lower(1.0).as_text()
    assert text.count(" cos ") == 1


def test_cse_needs_equal_literals_of_one_dtype_and_weak_type():
    def f(x):
        return (x * 0.0, x * -0.0, x * 0.0, x + 1.0, x + 2.0)

    closed = make_jaxpr(f)(jnp.ones(3))
    out = dce(cse(closed))
    assert prims(out) == ["mul", "mul", "add", "add"]  # 0.0 twice merges, -0.0 differs
    assert out.jaxpr.outvars[0] is out.jaxpr.outvars[2]
    same_bits(closed, out, np.array([1.0, -2.0, np.inf], np.float32))


def test_literal_keys_hold_dtype_weak_type_and_bits():
    key = passes._literal_key
    lit = lambda v, dtype, weak: Literal(jnp.asarray(np.asarray(v, dtype)),
                                         ShapedArray((), dtype, weak))
    assert key(lit(0.0, np.float32, True)) == key(lit(0.0, np.float32, True))
    assert key(lit(0.0, np.float32, True)) != key(lit(-0.0, np.float32, True))
    assert key(lit(0.0, np.float32, True)) != key(lit(0.0, np.float32, False))
    assert key(lit(1, np.int32, False)) != key(lit(1.0, np.float32, False))


def test_cse_compares_parameters():
    def f(x):
        return (jnp.sum(x, 0), jnp.sum(x, 1), jnp.sum(x, 0), x.astype(jnp.int32),
                x.astype(jnp.int16), lax.reduce_max(x, (0,)))

    closed = make_jaxpr(f)(jnp.ones((2, 3)))
    out = dce(cse(closed))
    assert prims(out) == ["reduce_sum", "reduce_sum", "convert_element_type",
                          "convert_element_type", "reduce_max"]
    same_bits(closed, out, data((2, 3)))


def test_cse_of_random_draws_from_one_key():
    def f(key):
        return random.normal(key, (3,)) + random.normal(key, (3,)), random.uniform(key, (3,))

    key = random.PRNGKey(0)
    closed = make_jaxpr(f)(key)
    out = optimize(closed)
    assert len(out.eqns) < len(closed.eqns) / 2
    same_bits(closed, out, key)
    # different keys stay different draws
    g = lambda k: random.normal(random.split(k)[0], (3,)) - random.normal(k, (3,))
    assert float(jnp.abs(invarax.jit(g)(key)).sum()) > 0


def test_cse_recurses_into_nested_jit_and_merges_equal_calls():
    inner = invarax.jit(lambda x: jnp.exp(x) + jnp.exp(x))
    outer = lambda x: inner(x) * inner(x)
    closed = make_jaxpr(outer)(1.0)
    assert prims(closed) == ["jit", "jit", "mul"]
    out = optimize(closed)
    assert prims(out) == ["jit", "mul"]
    assert prims(out.eqns[0].params["jaxpr"]) == ["exp", "add"]
    same_bits(closed, out, 0.3)


def test_cse_recurses_into_custom_jvp_and_keeps_the_call():
    @invarax.custom_jvp
    def f(x):
        return jnp.sin(x) * jnp.sin(x)

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0]))
    closed = make_jaxpr(f)(1.0)
    out = optimize(closed)
    assert prims(out) == ["custom_jvp_call"]
    assert prims(out.eqns[0].params["call_jaxpr"]) == ["sin", "mul"]
    same_bits(closed, out, 0.4)
    assert float(invarax.grad(invarax.jit(f))(0.4)) == 1.0  # the rule is kept


@pytest.mark.parametrize("prevent,count", [(True, 2), (False, 1)])
def test_checkpoint_calls_are_merged_only_without_prevent_cse(prevent, count):
    g = invarax.checkpoint(lambda x: jnp.sin(x) * 2.0, prevent_cse=prevent)
    closed = make_jaxpr(lambda x: g(x) + g(x))(1.0)  # two traces of g: equal jaxprs
    out = optimize(closed)
    assert prims(out).count("checkpoint") == count
    same_bits(closed, out, 0.25)


# ---------------------------------------------------------------------------------------
# Constant folding


def test_folding_evaluates_constant_equations_with_the_eager_impl():
    def f(x):
        return x * jnp.exp(2.0) + jnp.sin(jnp.float32(1.5)) * jnp.arange(3.0)

    closed = make_jaxpr(f)(jnp.ones(3))
    out = dce(fold_constants(closed))
    assert prims(out) == ["mul", "add"]
    literal = out.eqns[0].invars[1]
    assert isinstance(literal, Literal)
    assert_bitwise(literal.val, jnp.exp(2.0))  # eager's bits
    assert not literal.aval.weak_type  # jnp's mul made it float32 before the product
    same_bits(closed, out, data((3,)))


def test_folding_turns_closed_over_arrays_into_new_consts():
    w = jnp.asarray(data((4,)))
    closed = make_jaxpr(lambda x: x + jnp.tanh(w) * 2.0)(jnp.ones(4))
    out = optimize(closed)
    assert prims(out) == ["add"] and len(out.consts) == 1
    assert_bitwise(out.consts[0], jnp.tanh(w) * 2.0)
    same_bits(closed, out, data((4,), seed=3))


def test_folding_is_bounded_in_size():
    f = lambda x: x + jnp.zeros((passes.FOLD_MAX_SIZE + 1,)) * 2.0
    closed = make_jaxpr(f)(1.0)
    assert "broadcast_in_dim" in prims(optimize(closed))
    g = lambda x: x + jnp.zeros((passes.FOLD_MAX_SIZE,)) * 2.0
    assert prims(optimize(make_jaxpr(g)(jnp.float32(1.0)))) == ["add"]


def test_folding_leaves_an_impl_that_raises_to_run_time():
    # Integer division by zero: the eager impl gives NumPy's answer without raising; a
    # folded value is whatever the impl returns, so the bits are eager's.
    f = lambda x: x + lax.div(jnp.int32(7), jnp.int32(0))
    closed = make_jaxpr(f)(jnp.int32(1))
    same_bits(closed, optimize(closed), jnp.int32(1))


def test_folded_scalar_outputs_keep_their_weak_type():
    closed = make_jaxpr(lambda x: (jnp.sin(1.0), jnp.cos(jnp.float32(1.0))))(2.0)
    out = optimize(closed)
    assert out.eqns == [] and all(isinstance(v, Literal) for v in out.jaxpr.outvars)
    same_bits(closed, out, 2.0)
    got = invarax.jit(lambda x: (jnp.sin(1.0), jnp.cos(jnp.float32(1.0))))(2.0)
    assert got[0].weak_type and not got[1].weak_type
    assert_bitwise(got[0], jnp.sin(1.0))


# ---------------------------------------------------------------------------------------
# No-op removal


def test_exact_noops_are_removed():
    def f(x):
        y = x.astype(jnp.float32).reshape(2, 3)
        y = lax.transpose(y, (0, 1))
        y = lax.broadcast_in_dim(y, (2, 3), (0, 1))
        return jnp.sin(lax.integer_pow(y, 1))

    closed = make_jaxpr(f)(jnp.ones((2, 3)))
    out = dce(remove_noops(closed))
    assert prims(out) == ["sin"]
    same_bits(closed, out, data((2, 3)))


def test_changes_of_type_or_shape_are_kept():
    def f(x):
        return (x.astype(jnp.float64 if invarax.config.jax_enable_x64 else jnp.int32),
                lax.convert_element_type(x, np.float32, weak_type=True),
                x.reshape(3, 2), x.T, lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)))

    closed = make_jaxpr(f)(jnp.ones((2, 3)))
    assert prims(optimize(closed)) == prims(closed)


# ---------------------------------------------------------------------------------------
# What no pass does


@pytest.mark.parametrize("name,f,x", [
    ("x + 0.0 (wrong for -0.0)", lambda x: x + 0.0, np.array([-0.0, 1.0], np.float32)),
    ("x * 2 / 2 (wrong on overflow)", lambda x: x * 2.0 / 2.0,
     np.array([3e38, 1.0], np.float32)),
    ("log(sqrt(x)) (rounds differently)", lambda x: jnp.log(jnp.sqrt(x)),
     np.array([2.0, 3.0], np.float32)),
    ("x * 1.0", lambda x: x * 1.0, np.array([np.nan, -0.0], np.float32)),
    ("(a + b) + c", lambda x: (x + 1e-8) + 1.0, np.array([1.0, 2.0], np.float32)),
    ("a * b + c (no FMA)", lambda x: x * x + 1.0, np.array([1.1, 2.3], np.float32)),
    ("sum stays one reduction", lambda x: jnp.sum(x * 3.0), data((300,))),
])
def test_no_algebraic_rewrites(name, f, x):
    closed = make_jaxpr(f)(x)
    out = optimize(closed)
    assert prims(out) == prims(closed), name
    same_bits(closed, out, x)


def test_optimize_is_idempotent_and_keeps_the_original():
    closed = make_jaxpr(expr)(1.0, 2.0)
    before = str(closed)
    once = optimize(closed)
    assert str(closed) == before
    assert str(optimize(once)) == str(once)


def test_make_jaxpr_default_is_jaxs_program():
    assert str(make_jaxpr(expr)(1.0, 2.0)).count(" div ") == 3


def test_docstring_examples():
    result = doctest.testmod(passes, extraglobs={"jnp": jnp, "make_jaxpr": make_jaxpr},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------------------------------
# Transposed products (layout)


def _layout(closed):
    return passes._run(closed, frozenset({"layout", "dce"}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_transposed_product_becomes_the_swapped_product(dtype):
    # the cotangent of W in x @ W.T (an Equinox Linear's weight gradient) is a transpose
    # of x.T @ ct: computed as ct.T @ x, contiguous, with the same bits
    x, w = (jnp.asarray((data(s) * 4).astype(dtype)) for s in ((9, 300), (7, 300)))
    def f(x, w):
        return lax.transpose(jnp.matmul(x.T, x @ w.T), (1, 0))
    closed = make_jaxpr(f)(x, w)
    out = _layout(closed)
    # x.T and w.T stay (dot_general reads them in place), the product's transpose goes
    assert prims(closed).count("transpose") == 3 and prims(out).count("transpose") == 2
    same_bits(closed, out, x, w)
    assert_bitwise(invarax.jit(f)(x, w), f(x, w))


def test_transposed_batched_product_keeps_batch_axes_first():
    a, b = data((5, 3, 300)), data((5, 300, 4))
    def f(a, b):
        return lax.transpose(lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (0, 2, 1))
    closed = make_jaxpr(f)(a, b)
    out = _layout(closed)
    assert prims(out) == ["dot_general"]
    assert out.eqns[0].invars == closed.jaxpr.invars[::-1]
    same_bits(closed, out, a, b)


def test_transposed_product_left_alone_when_read_twice_complex_or_other_permutation():
    a, b = data((6, 300)), data((300, 4))
    def read_twice(a, b):
        p = a @ b
        return p, p.T
    twice = make_jaxpr(read_twice)(a, b)
    assert "transpose" in prims(_layout(twice))
    batch = make_jaxpr(lambda a, b: lax.transpose(jnp.einsum("bij,bjk->bik", a, b), (1, 0, 2)))
    assert "transpose" in prims(_layout(batch(data((2, 3, 4)), data((2, 4, 5)))))
    c = (data((6, 300)) + 1j * data((6, 300))).astype(np.complex64)
    cplx = make_jaxpr(lambda c: (c @ c.T).T)(c)
    assert "transpose" in prims(_layout(cplx))


def test_grad_of_linear_weight_has_no_transposed_cotangent():
    x, w = data((64, 300)), data((128, 300))
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w.T))
    g = invarax.grad(loss)
    closed = make_jaxpr(g)(w, x)
    text = str(optimize(closed))
    assert text.count("transpose") == 1  # the forward's w.T only
    assert_bitwise(invarax.jit(g)(w, x), g(w, x))
    got = invarax.jit(g)(w, x)
    assert np.asarray(got).flags.c_contiguous

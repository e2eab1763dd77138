"""Derivatives of the elementwise primitives: JAX as an oracle (values, dtypes, weak types,
conventions at kinks), jit(grad(f)) bitwise grad(f), symbolic zeros, stop_gradient.

The rows and their domains come from the op table (tests/test_ad_optable.py), which
checks the same functions against finite differences.
"""

import numpy as np
import pytest
from helpers import eager_and_jit
from test_ad_optable import ELEMENTWISE, OPS, _args, _xfail_if_rule_missing

import invarax
import invarax.numpy as jnp
from invarax import grad, jvp, make_jaxpr, vjp
from invarax.lax import stop_gradient
from invarax.tree_util import tree_flatten

# Rows that are a jnp function itself, so that jax.numpy has the same function.
JNP_ROWS = [name for name, op in ELEMENTWISE.items() if op.fun is getattr(jnp, name, None)]
UNARY_ROWS = [name for name in JNP_ROWS if len(OPS[name].samplers) == 1]
TOLERANCE = {np.float32: 2e-6, np.float64: 1e-13}


def _cases(names, last_only=False):
    """The rows' shape cases (only the last, the broadcasting one for binary rows: JAX
    compiles each shape, a second or so)."""
    for name in names:
        for shapes in OPS[name].shapes[-1:] if last_only else OPS[name].shapes:
            shape_id = "-".join(map(str, shapes))
            yield pytest.param(name, shapes, id=f"{name}-{shape_id}", marks=OPS[name].marks)


@pytest.fixture
def jax_x64():
    """``jax`` with x64 enabled for the test (restored after)."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", before)


def _assert_close_to_jax(got, want, dtype):
    got_leaves, got_tree = tree_flatten(got)
    want_leaves = list(want) if isinstance(want, tuple) else [want]
    assert len(got_leaves) == len(want_leaves), got_tree
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        w_weak = getattr(w, "weak_type", False)  # JAX passes NumPy cotangents through
        assert g.weak_type == w_weak, (g.weak_type, w_weak)
        np.testing.assert_allclose(
            np.asarray(g), np.asarray(w), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype]
        )


@pytest.mark.parametrize("name,shapes", list(_cases(JNP_ROWS, last_only=True)))
def test_jvp_and_vjp_match_jax(jax_x64, name, shapes, dtype=np.float64):
    jax = jax_x64
    invarax.config.update("jax_enable_x64", True)
    ours, theirs = getattr(jnp, name), getattr(jax.numpy, name)
    args = tuple(a.astype(dtype) for a in _args(name, shapes))
    rng = np.random.default_rng(2)
    tangents = tuple(rng.standard_normal(a.shape).astype(dtype) for a in args)
    ct = rng.standard_normal(jax.eval_shape(theirs, *args).shape).astype(dtype)

    @jax.jit  # one compilation instead of one per op: JAX's eager mode is slow here
    def jvp_and_vjp(args, tangents, ct):
        return jax.jvp(theirs, args, tangents), jax.vjp(theirs, *args)[1](ct)

    (j_out, j_tan), j_cts = jvp_and_vjp(args, tangents, ct)
    out, tan = jvp(ours, tuple(map(jnp.asarray, args)), tuple(map(jnp.asarray, tangents)))
    _assert_close_to_jax(out, j_out, dtype)
    _assert_close_to_jax(tan, j_tan, dtype)
    _assert_close_to_jax(vjp(ours, *args)[1](jnp.asarray(ct)), j_cts, dtype)


@pytest.mark.parametrize("name", UNARY_ROWS)
def test_second_derivative_matches_jax(jax_x64, name):
    jax = jax_x64
    invarax.config.update("jax_enable_x64", True)
    (x,) = _args(name, ((),))
    want = jax.jit(jax.grad(jax.grad(getattr(jax.numpy, name))))(x)  # one program, not per op
    _assert_close_to_jax(grad(grad(getattr(jnp, name)))(x), want, np.float64)


# Points where a function is not differentiable: the derivative is JAX's convention.
KINKS = [
    pytest.param("abs", (0.0,), id="abs-0"),
    pytest.param("abs", (-0.0,), id="abs--0"),
    pytest.param("maximum", (1.0, 1.0), id="maximum-tie"),
    pytest.param("minimum", (-2.0, -2.0), id="minimum-tie"),
    pytest.param("sign", (0.0,), id="sign-0"),
    pytest.param("round", (2.5,), id="round-half"),
    pytest.param("floor", (3.0,), id="floor-integer"),
    pytest.param("remainder", (6.0, 3.0), id="remainder-exact"),
    pytest.param("floor_divide", (6.0, 3.0), id="floor_divide-exact"),
    pytest.param("sqrt", (0.0,), id="sqrt-0"),
    pytest.param("cbrt", (0.0,), id="cbrt-0"),
    pytest.param("power", (0.0, 2.0), id="power-0-2"),
    pytest.param("power", (0.0, 0.5), id="power-0-half"),
    pytest.param("arctan2", (0.0, 0.0), id="arctan2-origin"),
    pytest.param("logaddexp", (-np.inf, -np.inf), id="logaddexp-minus-inf"),
]


@pytest.mark.parametrize("name,args", KINKS)
def test_derivative_at_kinks_matches_jax(jax_x64, name, args):
    jax = jax_x64
    invarax.config.update("jax_enable_x64", True)
    argnums = tuple(range(len(args)))
    want = jax.grad(getattr(jax.numpy, name), argnums)(*args)
    got = grad(getattr(jnp, name), argnums)(*args)
    for g, w in zip(got, want, strict=True):  # weak types: see the tests below
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert g.dtype == w.dtype


def test_logaddexp_at_infinity():
    # d/dy logaddexp(inf, y) = exp(y - inf) = 0 (JAX 0.10 gives e here).
    invarax.config.update("jax_enable_x64", True)
    dx, dy = grad(jnp.logaddexp, (0, 1))(np.inf, 1.0)
    assert (float(dx), float(dy)) == (1.0, 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,shapes", list(_cases(ELEMENTWISE)))
def test_jit_of_grad_is_bitwise_grad(name, shapes, dtype):
    invarax.config.update("jax_enable_x64", dtype == np.float64)
    f = OPS[name].fun
    args = tuple(jnp.asarray(a.astype(dtype)) for a in _args(name, shapes))
    loss = lambda *a: jnp.sum(jnp.sin(f(*a)))  # a non-trivial cotangent
    try:
        eager_and_jit(grad(loss, argnums=tuple(range(len(args)))), *args)
    except NotImplementedError as e:
        _xfail_if_rule_missing(e)


@pytest.mark.parametrize("name", UNARY_ROWS)
def test_grad_of_weak_scalar_is_weak_as_jax(name):
    jax = pytest.importorskip("jax")
    (x,) = _args(name, ((),))
    ours, theirs = getattr(jnp, name), getattr(jax.numpy, name)
    weak = grad(ours)(float(x))
    assert weak.dtype == np.float32
    # JAX's types by its abstract evaluation: what its eager result has, without compiling
    assert weak.weak_type == jax.eval_shape(jax.grad(theirs), float(x)).weak_type
    strong = grad(ours)(np.float32(x))
    assert strong.weak_type == jax.eval_shape(jax.grad(theirs), np.float32(x)).weak_type


# ---------------------------------------------------------------------------------------
# Symbolic zeros: no work is spent on tangents known to be zero.


def _uses(jaxpr, var):
    return any(v is var for eqn in jaxpr.eqns for v in eqn.invars)


def test_grad_does_no_work_for_other_arguments():
    closed = make_jaxpr(grad(lambda x, y: x * 2.0, argnums=0))(1.0, 2.0)
    jaxpr = closed.jaxpr
    x, y = jaxpr.invars
    assert not _uses(jaxpr, y), closed
    assert y not in jaxpr.outvars


def test_grad_differentiates_only_the_selected_argument():
    closed = make_jaxpr(grad(lambda x, y: jnp.sin(x) * jnp.cos(y), argnums=0))(1.0, 2.0)
    jaxpr = closed.jaxpr
    _, y = jaxpr.invars
    users = [eqn.primitive.name for eqn in jaxpr.eqns if any(v is y for v in eqn.invars)]
    assert users == ["cos"], closed  # its value only: no sin(y) for a derivative
    assert not any(eqn.primitive.name == "neg" for eqn in jaxpr.eqns), closed


def test_linearize_of_a_constant_term_stages_nothing_for_it():
    c = np.float32(2.0)
    _, f_jvp = invarax.linearize(lambda x: x * 3.0 + jnp.sin(c), 1.0)
    names = {eqn.primitive.name for eqn in f_jvp.jaxpr.jaxpr.eqns}
    assert not names & {"sin", "cos"}, f_jvp.jaxpr
    assert "mul" in names


def test_jvp_of_a_function_ignoring_its_input_has_zero_tangent():
    closed = make_jaxpr(lambda x, t: jvp(lambda a: jnp.cos(np.float32(1.0)) + 0 * a, (x,), (t,)))(
        1.0, 1.0
    )
    out, tangent = jvp(lambda a: jnp.sin(np.float32(1.0)), (1.0,), (1.0,))
    assert float(tangent) == 0.0
    assert closed.jaxpr.eqns  # the 0 * a term is real work, the constant is not
    assert sum(eqn.primitive.name == "sin" for eqn in closed.jaxpr.eqns) == 0, closed


# ---------------------------------------------------------------------------------------
# stop_gradient (not in the op table: its derivative is zero by definition)


def test_stop_gradient_blocks_the_derivative():
    assert float(grad(lambda x: x * stop_gradient(x))(3.0)) == 3.0
    _, tangent = jvp(stop_gradient, (np.float32(2.0),), (np.float32(1.0),))
    assert float(tangent) == 0.0


def test_stop_gradient_of_a_pytree_leaves_integers_alone():
    tree = {"w": np.float32(2.0), "n": np.int32(3)}
    out = stop_gradient(tree)
    assert out["n"].dtype == np.int32
    assert float(grad(lambda w: stop_gradient({"w": w})["w"] * w)(np.float32(2.0))) == 2.0

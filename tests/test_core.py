"""Core: dtypes and weak types, Array, tracing, the IR printer, eval_jaxpr, tracer errors."""

import pickle

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.core import dtypes
from invarax.core.aval import ShapedArray
from invarax.core.ir import Eqn, Jaxpr, JaxprTypeError, Var

# --- dtypes -----------------------------------------------------------------------------

F32, I32 = np.dtype("float32"), np.dtype("int32")

PROMOTIONS = [
    # (a, b, expected dtype, expected weak): JAX's table with x64 off.
    (np.float32(1), 2.0, "float32", False),
    (np.int32(1), 2.0, "float32", True),
    (np.int32(1), 2, "int32", False),
    (np.int8(1), 2, "int8", False),
    (np.uint8(1), np.int8(1), "int16", False),
    (np.uint32(1), np.int32(1), "int32", False),  # int64 narrows to int32 without x64
    (np.float16(1), np.int32(1), "float16", False),
    (np.float16(1), 2.0, "float16", False),
    (np.bool_(True), 2, "int32", True),
    (np.bool_(True), np.bool_(False), "bool", False),
    (2, 2.0, "float32", True),
    (np.float32(1), np.float64(1), "float32", False),
    (np.float32(1), 1j, "complex64", False),
]


@pytest.mark.parametrize("a, b, dtype, weak", PROMOTIONS)
def test_promotion_table(a, b, dtype, weak):
    out = jnp.add(a, b)
    assert out.dtype == np.dtype(dtype)
    assert out.weak_type == weak


def test_promotion_matches_jax():
    jax = pytest.importorskip("jax")
    for a, b, _, _ in PROMOTIONS:
        ours = jnp.add(a, b)
        theirs = jax.numpy.add(a, b)
        assert ours.dtype == theirs.dtype
        assert ours.weak_type == theirs.weak_type


def test_weak_scalar_keeps_array_dtype():
    x = jnp.ones(3, jnp.float16)
    assert (x + 2.0).dtype == jnp.float16
    assert (2 * x).dtype == jnp.float16
    assert (jnp.ones(3, jnp.int8) + 300).dtype == jnp.int8


def test_x64_flag(x64):
    assert jnp.array(1.0).dtype == np.float64
    assert jnp.arange(3).dtype == np.int64
    assert (jnp.ones(3, jnp.float32) + 1.0).dtype == np.float32


def test_x64_off_narrows():
    assert jnp.asarray(np.arange(3, dtype=np.int64)).dtype == I32
    assert jnp.asarray(np.ones(2)).dtype == F32
    assert jnp.zeros(2, dtype=jnp.float64).dtype == F32


def test_unsupported_dtype():
    with pytest.raises(TypeError, match="not supported"):
        dtypes.canonicalize("U3")


def test_unknown_config_flag():
    with pytest.raises(AttributeError, match="unknown config flag"):
        invarax.config.update("jax_enable_x46", True)
    with pytest.raises(AttributeError, match="unknown config flag"):
        with invarax.config.flag("jax_enable_x46", True):
            pass


def test_config_flag_restores_the_value_even_after_an_error():
    import doctest

    from invarax.core import config

    assert invarax.config.invarax_exact_elementary  # the default
    with pytest.raises(ValueError, match="inside"):
        with invarax.config.flag("invarax_exact_elementary", False):
            assert not invarax.config.invarax_exact_elementary
            raise ValueError("inside")
    assert invarax.config.invarax_exact_elementary
    result = doctest.testmod(config)
    assert result.attempted > 0 and result.failed == 0


# --- Array ------------------------------------------------------------------------------


def test_array_basics():
    x = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == F32
    assert isinstance(x, invarax.Array)
    assert np.asarray(x).flags.writeable is False
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert jnp.array(2.5).item() == 2.5
    assert float(jnp.array(2.5)) == 2.5 and int(jnp.array(3)) == 3
    assert len(x) == 2
    assert [r.tolist() for r in x] == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert x.block_until_ready() is x


def test_array_repr():
    assert repr(jnp.arange(3.0)) == "Array([0., 1., 2.], dtype=float32)"
    assert repr(jnp.array(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert repr(jnp.array([1, 2])) == "Array([1, 2], dtype=int32)"


def test_array_repr_matches_jax():
    jax = pytest.importorskip("jax")
    for value in ([1.0, 2.0], 3.0, [[1, 2], [3, 4]], [True, False]):
        assert repr(jnp.array(value)) == repr(jax.numpy.array(value))


def test_item_assignment_points_to_at():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"x.at\[index\].set"):
        x[0] = 1.0


def test_array_is_unhashable_and_picklable():
    x = jnp.arange(4)
    with pytest.raises(TypeError):
        hash(x)
    y = pickle.loads(pickle.dumps(x))
    assert_bitwise(x, y)


def test_numpy_interop():
    x = jnp.arange(3.0)
    out = np.ones(3, np.float32) + x  # NumPy defers to Array.__radd__
    assert isinstance(out, invarax.Array)
    assert np.asarray(x).dtype == F32
    assert np.array(x, dtype=np.float64).dtype == np.float64


def test_asarray_copies_numpy_input():
    a = np.zeros(3, np.float32)
    x = jnp.asarray(a)
    a[0] = 5.0
    assert float(x[0]) == 0.0


def test_bad_argument_types():
    with pytest.raises(TypeError, match="must be an array or a scalar, got str"):
        jnp.sin("hello")
    with pytest.raises(TypeError, match="got list.*jnp.asarray"):
        jnp.sin([1.0, 2.0])
    with pytest.raises(TypeError, match="cannot create an invarax array"):
        jnp.array(["a", "b"])
    with pytest.raises(TypeError, match="got object"):
        jnp.add(1.0, object())


# --- tracing, the IR and its printer ----------------------------------------------------

EXPR = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = div a b
    d:f32[] = exp b
    e:f32[] = sub c d
    f:f32[] = div a b
    g:f32[] = sin f
    h:f32[] = div a b
    i:f32[] = add g h
    j:f32[] = exp b
    k:f32[] = sub i j
    l:f32[] = mul e k
  in (l,) }"""


def expr(x1, x2):
    return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))


def test_make_jaxpr_prints_like_jax():
    assert str(invarax.make_jaxpr(expr)(1.0, 1.0)) == EXPR


def test_make_jaxpr_matches_jax_text():
    jax = pytest.importorskip("jax")
    theirs = str(jax.make_jaxpr(expr_jax(jax))(1.0, 1.0))
    assert str(invarax.make_jaxpr(expr)(1.0, 1.0)) == theirs


def expr_jax(jax):
    jjnp = jax.numpy
    return lambda x1, x2: (x1 / x2 - jjnp.exp(x2)) * (jjnp.sin(x1 / x2) + x1 / x2 - jjnp.exp(x2))


def test_jaxpr_literals_consts_and_pytrees():
    w = jnp.arange(3.0)
    closed = invarax.make_jaxpr(lambda d: {"y": d["x"] * 2.0 + w, "n": d["x"]})({"x": jnp.ones(3)})
    text = str(closed)
    assert text.startswith("{ lambda a:f32[3]; b:f32[3]. let")
    assert "mul b 2.0:f32[]" in text
    assert len(closed.consts) == 1 and closed.out_avals[0].shape == (3,)


def test_make_jaxpr_static_argnums():
    def f(x, n):
        for _ in range(n):
            x = jnp.sin(x)
        return x

    text = str(invarax.make_jaxpr(f, static_argnums=1)(1.0, 3))
    assert text.count("sin") == 3


def test_variable_names_continue_past_z():
    def f(x):
        for _ in range(30):
            x = x + 1.0
        return x

    text = str(invarax.make_jaxpr(f)(1.0))
    assert "ba:f32[] = add z 1.0:f32[]" in text


def test_eval_jaxpr_reproduces_and_retraces():
    closed = invarax.make_jaxpr(expr)(1.0, 2.0)
    out = invarax.eval_jaxpr(closed.jaxpr, closed.consts, 1.5, 2.5)
    assert_bitwise(out[0], expr(1.5, 2.5))
    again = invarax.make_jaxpr(lambda a, b: invarax.eval_jaxpr(closed.jaxpr, closed.consts, a, b))
    assert str(again(1.0, 2.0)) == str(closed)


def test_typecheck_rejects_bad_jaxprs():
    a = Var(ShapedArray((3,), F32))
    b = Var(ShapedArray((4,), F32))
    from invarax.ops.elementwise import sin_p

    with pytest.raises(JaxprTypeError, match="produces"):
        Jaxpr([], [a], [b], [Eqn(sin_p, [a], [b], {})])
    c = Var(ShapedArray((3,), F32))
    with pytest.raises(JaxprTypeError, match="before it is defined"):
        Jaxpr([], [a], [c], [Eqn(sin_p, [c], [Var(c.aval)], {})])


# --- errors for traced values -----------------------------------------------------------


def test_bool_of_tracer_names_fixes():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(invarax.TracerBoolConversionError, match="static_argnums") as err:
        invarax.jit(f)(1.0)
    message = str(err.value)
    assert "lax.cond" in message and "jnp.where" in message and "bool[]" in message


@pytest.mark.parametrize("convert", [int, float, np.asarray, lambda x: x.item()])
def test_concretization_errors(convert):
    with pytest.raises(invarax.ConcretizationTypeError, match="static_argnums"):
        invarax.jit(lambda x: convert(x))(1.0)


def test_concretization_error_is_a_type_error():
    assert issubclass(invarax.TracerBoolConversionError, TypeError)


def test_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    invarax.jit(f)(1.0)
    with pytest.raises(invarax.UnexpectedTracerError, match="Return the value"):
        jnp.sin(leaked[0])
    with pytest.raises(invarax.UnexpectedTracerError, match="jit of f"):
        invarax.jit(lambda y: y + leaked[0])(1.0)


def test_lax_ops_do_not_promote():
    with pytest.raises(TypeError, match="same dtypes, got float32, int32"):
        lax.add(jnp.ones(2), jnp.ones(2, jnp.int32))
    with pytest.raises(TypeError, match=r"incompatible shapes for broadcasting: \(3,\), \(4,\)"):
        lax.add(jnp.ones(3), jnp.ones(4))
    assert lax.add(jnp.ones(2), 2.0).dtype == F32  # a weak scalar takes the array's dtype
    with pytest.raises(TypeError, match="sin does not accept dtype int32"):
        lax.sin(jnp.arange(3))


PROGRAMS = {
    # name: (function of a numpy module, example args)
    "one_line": (lambda np_, x: np_.sin(x) * 2, (1.0,)),
    "two_outputs": (lambda np_, x, y: (np_.sin(x) * y + 1, x), (1.0, 2.0)),
    "identity": (lambda np_, x: x, (1.0,)),
    "compare_and_cast": (lambda np_, x: (x > 0, x.astype(int)), (1.0,)),
    "weak_promotion": (lambda np_, x, y: x / y, (np.ones(5, np.float32), 2.0)),
    "int_literal": (lambda np_, x: x + 1, (np.int32(1),)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printer_matches_jax(name):
    jax = pytest.importorskip("jax")
    f, args = PROGRAMS[name]
    ours = invarax.make_jaxpr(lambda *a: f(jnp, *a))(*args)
    theirs = jax.make_jaxpr(lambda *a: f(jax.numpy, *a))(*args)
    assert str(ours) == str(theirs)


def test_printer_nested_jit_matches_jax():
    jax = pytest.importorskip("jax")
    ours = invarax.make_jaxpr(lambda x: invarax.jit(jnp.sin)(x) + 1)(1.0)
    theirs = jax.make_jaxpr(lambda x: jax.jit(jax.numpy.sin)(x) + 1)(1.0)
    assert str(ours) == str(theirs)


def test_numpy_scalars_are_not_weak(x64):
    # np.float64 subclasses Python's float, but is strongly typed (as in JAX).
    assert not jnp.asarray(np.float64(0.5)).weak_type
    assert jnp.asarray(0.5).weak_type
    assert not invarax.jit(lambda x: x)(np.float64(0.5)).weak_type

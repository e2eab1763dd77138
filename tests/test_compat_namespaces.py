"""JAX's namespaces that real code imports first, against JAX: ``jax.errors`` (raised where
JAX raises them), ``jax.dtypes``, ``flatten_util``, ``tree_util``'s keyed registration,
``lax``'s additions and primitive objects, ``jax.nn``'s activations and initializers, and
the small top-level names."""

import logging

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.nn import initializers
from tests.helpers import assert_bitwise, data

jax = pytest.importorskip("jax")
jjnp = jax.numpy

# --- jax.errors ---------------------------------------------------------------------------

CONVERSIONS = {
    "bool": lambda x: bool(x),
    "int": lambda x: int(x),
    "float": lambda x: float(x),
    "array": lambda x: np.asarray(x),
    "item": lambda x: x.item(),
    "index": lambda x: range(x),
}


def _error(lib, transform, conversion, arg):
    def f(x):
        conversion(x)
        return x

    try:
        transform(lib)(f)(arg)
    except Exception as err:  # noqa: BLE001 (the class is what is compared)
        return err
    return None


@pytest.mark.parametrize("transform", [lambda lib: lib.jit, lambda lib: lib.vmap],
                         ids=["jit", "vmap"])
@pytest.mark.parametrize("name", CONVERSIONS)
def test_tracer_conversions_raise_jaxs_classes(name, transform):
    arg = np.arange(3, dtype=np.int32) if name == "index" else np.ones(3, np.float32)
    if transform(invarax) is invarax.jit:
        arg = arg[0]
    ours = _error(invarax, transform, CONVERSIONS[name], arg)
    theirs = _error(jax, transform, CONVERSIONS[name], arg)
    assert type(theirs).__name__ in {c.__name__ for c in type(ours).__mro__}
    assert isinstance(ours, getattr(invarax.errors, type(theirs).__name__))


def test_error_hierarchy_is_jaxs():
    for name in invarax.errors.__all__:
        ours, theirs = getattr(invarax.errors, name), getattr(jax.errors, name)
        for base in theirs.__mro__:
            if base.__module__ in ("builtins", "jax.errors"):
                assert base.__name__ in {c.__name__ for c in ours.__mro__}, (name, base)


def test_traced_boolean_index_and_callback_errors():
    with pytest.raises(invarax.errors.NonConcreteBooleanIndexError):
        invarax.jit(lambda x: x[x > 0])(jnp.ones(3))

    def boom(x):
        raise ValueError("kaboom")

    spec = invarax.ShapeDtypeStruct((), jnp.float32)
    with pytest.raises(invarax.errors.JaxRuntimeError, match="kaboom") as info:
        invarax.jit(lambda x: invarax.pure_callback(boom, spec, x))(1.0)
    assert isinstance(info.value, ValueError)  # still the callback's class
    with pytest.raises(jax.errors.JaxRuntimeError):
        jax.jit(lambda x: jax.pure_callback(boom, jax.ShapeDtypeStruct((), np.float32), x))(1.0)


# --- jax.dtypes ---------------------------------------------------------------------------

DTYPE_ARGS = [(np.int8, 2.0), (float,), (int, np.int8), (np.float16, np.int32), (complex,),
              (np.uint8, np.int8), (True, np.int16), (np.float32, 1j)]


@pytest.mark.parametrize("args", DTYPE_ARGS, ids=str)
def test_result_type_matches_jax(args):
    assert (invarax.dtypes.result_type(*args, return_weak_type_flag=True)
            == jax.dtypes.result_type(*args, return_weak_type_flag=True))


def test_dtypes_names_match_jax():
    d, jd = invarax.dtypes, jax.dtypes
    import ml_dtypes

    for t in (np.float64, np.int64, np.float16, float, ml_dtypes.bfloat16, np.complex128):
        assert d.canonicalize_dtype(t) == jd.canonicalize_dtype(t)
    for a, b in [(d.bfloat16, np.floating), (d.bfloat16, np.integer), (np.float32, d.prng_key),
                 (np.int8, np.signedinteger), (d.float0, np.number)]:
        jb = jd.prng_key if b is d.prng_key else b
        assert d.issubdtype(a, b) == jd.issubdtype(a, jb), (a, b)
    assert d.float0 == jd.float0 and d.bfloat16 is jd.bfloat16
    for x in (np.ones(2, np.float32), np.int8(1), True, 1j):
        assert d.scalar_type_of(x) == jd.scalar_type_of(x)
    for t in (np.bool_, np.float16, np.int64, ml_dtypes.bfloat16):
        assert d.itemsize_bits(t) == jd.itemsize_bits(t)
    assert d.finfo(d.bfloat16).eps == jd.finfo(jd.bfloat16).eps
    assert issubclass(d.TypePromotionError, ValueError)


# --- flatten_util, tree_util --------------------------------------------------------------

TREES = [{"a": 1.0, "b": (np.ones(2, np.int32), np.arange(3.0, dtype=np.float32))},
         [np.ones((2, 2), np.float32), (np.zeros(0, np.float32),)], [], (np.float32(2.0), None)]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_ravel_pytree_matches_jax(tree):
    from jax.flatten_util import ravel_pytree as theirs

    from invarax.flatten_util import ravel_pytree

    flat, unravel = ravel_pytree(tree)
    jflat, junravel = theirs(tree)
    assert_bitwise(flat, jflat)
    back, jback = unravel(flat * 2), junravel(jflat * 2)
    for a, b in zip(invarax.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jback),
                    strict=True):
        assert_bitwise(a, b)
    assert unravel == ravel_pytree(tree)[1] and hash(unravel) == hash(ravel_pytree(tree)[1])


def test_unravel_checks_dtype_and_length_as_jax():
    from invarax.flatten_util import ravel_pytree

    _, unravel = ravel_pytree((np.ones(2, np.float32), np.ones(1, np.int32)))
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(jnp.ones(3, jnp.int32))
    with pytest.raises(ValueError, match="expected shape"):
        unravel(jnp.ones(4))


def test_register_pytree_with_keys_matches_jax():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    for tu in (invarax.tree_util, jax.tree_util):
        class Keyed(Pair):
            pass

        tu.register_pytree_with_keys(
            Keyed, lambda p, tu=tu: (((tu.GetAttrKey("x"), p.a), (tu.DictKey("y"), p.b)), 7),
            lambda aux, c, cls=Keyed: cls(*c))
        tree = Keyed(1, [2, 3])
        paths = [tu.keystr(k) for k, _ in tu.tree_leaves_with_path(tree)]
        doubled = tu.tree_map(lambda v: v * 2, tree)
        equal = tu.tree_structure(tree) == tu.tree_structure(Keyed(0, [0, 0]))
        if tu is invarax.tree_util:
            ours = (paths, doubled.b, equal)
        else:
            assert ours == (paths, doubled.b, equal)


# --- lax ----------------------------------------------------------------------------------


def test_lax_additions_match_jax():
    x = data((6, 4))
    for sizes, axis in [([2, 4], 0), ([1, 0, 3], 1)]:
        for a, b in zip(lax.split(x, sizes, axis), jax.lax.split(x, sizes, axis), strict=True):
            assert_bitwise(a, b)
    assert lax.broadcast_shapes((2, 1), (3,), ()) == jax.lax.broadcast_shapes((2, 1), (3,), ())
    f = lambda lib: lib.vmap(lambda v: lib.lax.pswapaxes(v, "i", 0), axis_name="i")  # noqa: E731
    assert_bitwise(f(invarax)(x[:4]), f(jax)(x[:4]))
    args = (True, lambda v: v + 1.0, lambda v: v - 1.0)
    assert_bitwise(lax.cond(*args, operand=x), jax.lax.cond(*args, operand=x))
    with pytest.raises(TypeError, match="operand"):
        lax.cond(*args, x, operand=x)
    for name in ("default", "high", "highest", "fastest"):
        assert repr(lax.Precision(name)) == repr(jax.lax.Precision(name))
    assert_bitwise(jnp.dot(x, x.T, precision=lax.Precision.HIGHEST), jnp.dot(x, x.T))


def test_primitive_objects_are_the_ones_in_jaxprs():
    closed = invarax.make_jaxpr(lambda a, b: (a + b) * b @ b.T)(jnp.ones((2, 2)), jnp.ones((2, 2)))
    assert [e.primitive for e in closed.eqns] == [lax.add_p, lax.mul_p, lax.transpose_p,
                                                  lax.dot_general_p]
    for name in ("convert_element_type_p", "broadcast_in_dim_p", "scatter_add_p", "while_p"):
        assert hasattr(jax.lax, name) and getattr(lax, name).name.replace("-", "_") + "_p" == name
    from invarax.custom_derivatives import custom_jvp_call_p

    f = invarax.custom_jvp(lambda v: v * 2.0)
    f.defjvp(lambda p, t: (f(*p), t[0] * 2.0))
    assert invarax.make_jaxpr(f)(1.0).eqns[0].primitive is custom_jvp_call_p
    assert custom_jvp_call_p is invarax.extend.core.primitives.custom_jvp_call_p


# --- jax.nn -------------------------------------------------------------------------------

ACTIVATIONS = ["log_sigmoid", "elu", "leaky_relu", "relu6", "hard_tanh", "celu", "selu",
               "soft_sign", "hard_sigmoid", "hard_silu", "mish", "squareplus", "sparse_plus",
               "sparse_sigmoid", "swish", "log1mexp"]


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_match_jax(name):
    x = np.linspace(-7, 7, 57).astype(np.float32)
    if name == "log1mexp":
        x = np.abs(x) + 0.05
    ours, theirs = getattr(invarax.nn, name), getattr(jax.nn, name)
    np.testing.assert_allclose(ours(x), theirs(x), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(invarax.vmap(invarax.grad(ours))(x),
                               jax.vmap(jax.grad(theirs))(x), rtol=5e-6, atol=1e-7)
    assert_bitwise(invarax.jit(ours)(x), ours(x))  # N3
    assert_bitwise(invarax.vmap(ours)(x[:, None])[:, 0], ours(x))  # N1


def test_axis_activations_match_jax():
    x = data((4, 10))
    for name, kwargs in [("glu", {}), ("standardize", {}), ("standardize", {"algorithm": "stable"}),
                         ("logmeanexp", {"axis": 1})]:
        np.testing.assert_allclose(getattr(invarax.nn, name)(x, **kwargs),
                                   getattr(jax.nn, name)(x, **kwargs), rtol=1e-5, atol=1e-6)


INITS = [("glorot_normal", ()), ("he_uniform", ()), ("normal", (0.3,)), ("constant", (0.25,))]


def test_initializers_are_jaxs_bits():
    for name, args in INITS:
        ours = getattr(initializers, name)(*args)(invarax.random.key(3), (5, 7))
        theirs = getattr(jax.nn.initializers, name)(*args)(jax.random.key(3), (5, 7))
        assert_bitwise(ours, theirs)
    for mode in ("fan_geo_avg",):
        spec, kw = (2.0, mode, "normal"), dict(in_axis=(0, 1), out_axis=2, batch_axis=3)
        ours = initializers.variance_scaling(*spec, **kw)(invarax.random.key(1), (2, 3, 4, 2))
        theirs = jax.nn.initializers.variance_scaling(*spec, **kw)(jax.random.key(1),
                                                                   (2, 3, 4, 2))
        assert_bitwise(ours, theirs)
    with pytest.raises(ValueError, match="at least 2D"):
        initializers.glorot_normal()(invarax.random.key(0), (3,))


# --- top-level names ----------------------------------------------------------------------


def test_ensure_compile_time_eval_matches_jax():
    def f(lib):
        def g(x):
            with lib.ensure_compile_time_eval():
                n = int(lib.numpy.sum(lib.numpy.arange(4)))
                y = x * 2.0
            return y * n

        return g

    for transform in (lambda g: g, invarax.jit, invarax.grad):
        jtransform = {invarax.jit: jax.jit, invarax.grad: jax.grad}.get(transform, transform)
        assert float(transform(f(invarax))(2.0)) == float(jtransform(f(jax))(2.0))


def test_small_top_level_names(caplog):
    assert isinstance(invarax.devices()[0], invarax.Device)
    assert invarax.named_call(abs, name="x")(-2) == 2
    with invarax.named_scope("block"):
        pass
    with caplog.at_level(logging.WARNING, logger="invarax"), invarax.log_compiles():
        invarax.jit(lambda x: x + 1)(np.ones(3, np.float32))
    assert "Compiling <lambda> with global shapes and types" in caplog.text
    assert not invarax.config.jax_log_compiles
    assert invarax.float0 == jax.float0


def test_saved_residuals_of_a_checkpoint_match_jax():
    from jax._src.ad_checkpoint import saved_residuals as theirs

    from invarax.ad_checkpoint import saved_residuals

    def f(lib):
        return lib.checkpoint(lambda x, y: lib.numpy.sum(lib.numpy.sin(x) * y))

    x, y = data(3), data(3, seed=1)
    ours = [(a.str_short(), s) for a, s in saved_residuals(f(invarax), x, y)]
    assert ours == [(a.str_short(short_dtypes=True), s) for a, s in theirs(f(jax), x, y)]
    plain = saved_residuals(lambda x, y: jnp.sum(jnp.sin(x) * y), x, y)
    assert {s for _, s in plain} == {"from the argument y", "output of cos", "output of sin"}

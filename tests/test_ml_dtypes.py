"""ml_dtypes' types (bfloat16, float8/6/4, int4/2/1): served by name, promoted on JAX's
lattice, converted with one round to nearest even, computed in float32 (int32) and rounded
once; JAX and ml_dtypes are the oracles."""

import itertools
import subprocess
import sys

import numpy as np
import pytest

import invarax as ivx
import invarax.numpy as jnp
from invarax.core import dtypes as core_dtypes

ml_dtypes = pytest.importorskip("ml_dtypes")
NEW = core_dtypes.ML_FLOATS + core_dtypes.ML_INTS
OLD = ("bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32",
       "complex64")


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def test_every_type_is_served_as_jax_numpy_names_it():
    jax_numpy = pytest.importorskip("jax.numpy")
    for name in NEW:
        assert np.dtype(getattr(jnp, name)) == np.dtype(getattr(jax_numpy, name)), name
        assert name in dir(jnp)
        assert jnp.zeros(2, getattr(jnp, name)).dtype == np.dtype(getattr(ml_dtypes, name))
    with pytest.raises(AttributeError, match="no attribute 'float8_nope'"):
        _ = jnp.float8_nope


def test_promotion_is_jax_lattice_for_every_pair_and_weak_scalars():
    jax_numpy = pytest.importorskip("jax.numpy")
    for a, b in itertools.product(NEW + OLD, repeat=2):
        try:
            want = jax_numpy.promote_types(getattr(jax_numpy, a), getattr(jax_numpy, b))
        except ValueError:  # jax.dtypes.TypePromotionError
            with pytest.raises(ivx.dtypes.TypePromotionError, match="promotion path"):
                jnp.promote_types(getattr(jnp, a), getattr(jnp, b))
            continue
        assert jnp.promote_types(getattr(jnp, a), getattr(jnp, b)) == want, (a, b)
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"):  # JAX CPU's
        x, y = jnp.zeros(2, getattr(jnp, name)), jax_numpy.zeros(2, getattr(jax_numpy, name))
        for scalar in (1, 2.0) if core_dtypes.kind(x.dtype) == "f" else (1,):
            assert (x + scalar).dtype == (y + scalar).dtype, (name, scalar)


def _float32_samples(n=4000):
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, n, dtype=np.uint32).view(np.float32)
    normal = rng.standard_normal(n).astype(np.float32) * np.float32(3.0)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 65504, 1.00390625,
                         1.01171875, 448.0, 464.0, 57344.0], np.float32)  # ties, edges
    return np.concatenate([bits, normal, specials])


@pytest.mark.parametrize("name", core_dtypes.ML_FLOATS)
def test_conversions_round_once_to_nearest_even_both_ways(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    x = _float32_samples()
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(dtype)
    got = np.asarray(ivx.lax.convert_element_type(x, dtype))
    finite = np.isfinite(want.astype(np.float32))
    assert np.array_equal(_bits(got)[finite], _bits(want)[finite])  # NaN bits: no contract
    assert np.array_equal(np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32)))
    back = np.asarray(jnp.asarray(want).astype(jnp.float32))  # exact
    assert np.array_equal(back[finite], want.astype(np.float32)[finite])


def test_bfloat16_arithmetic_is_jax_bitwise_and_transcendentals_within_one_ulp():
    jax_numpy = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(500).astype(ml_dtypes.bfloat16) for _ in range(2))
    for op in ("add", "subtract", "multiply", "divide", "maximum", "nextafter"):
        got = getattr(jnp, op)(a, b)
        assert got.dtype == jnp.bfloat16
        assert np.array_equal(_bits(got), _bits(getattr(jax_numpy, op)(a, b))), op
    for op in ("spacing", "nan_to_num"):  # bfloat16's own ulp and limits
        assert np.array_equal(_bits(getattr(jnp, op)(a)), _bits(getattr(jax_numpy, op)(a))), op
    ulp = np.float32(2.0**-7)  # bfloat16 has 8 significant bits
    for op in ("exp", "sin", "tanh", "log1p", "sqrt"):
        x = np.abs(a) if op in ("sqrt", "log1p") else a
        got = np.asarray(getattr(jnp, op)(x)).astype(np.float32)
        want = np.asarray(getattr(jax_numpy, op)(x)).astype(np.float32)
        assert np.all(np.abs(got - want) <= ulp * np.maximum(np.abs(want), 2.0**-126)), op
        # computed in float32, rounded once
        own = np.asarray(getattr(jnp, op)(x.astype(np.float32))).astype(ml_dtypes.bfloat16)
        assert np.array_equal(_bits(getattr(jnp, op)(x)), _bits(own)), op


def test_contractions_and_reductions_are_float32_rounded_once():
    jax_numpy = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 300)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((300, 5)).astype(ml_dtypes.bfloat16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for got, own, want in [
        (a @ jnp.asarray(b), jnp.asarray(a32) @ b32, jax_numpy.asarray(a) @ b),
        (jnp.sum(a, axis=1), jnp.sum(a32, axis=1), jax_numpy.sum(a, axis=1)),
        (jnp.asarray(a).max(axis=0), jnp.asarray(a32).max(axis=0), jax_numpy.max(a, axis=0)),
        (jnp.mean(a, axis=1), jnp.mean(a32, axis=1), jax_numpy.mean(a, axis=1)),
    ]:
        assert got.dtype == jnp.bfloat16 == want.dtype
        assert np.array_equal(_bits(got), _bits(np.asarray(own).astype(ml_dtypes.bfloat16)))
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                                   rtol=2**-7, atol=2**-7)  # JAX sums in another order


def test_jit_vmap_grad_keep_eager_bits():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(3).standard_normal((4, 33)).astype(ml_dtypes.bfloat16)

    def f(x):
        return jnp.tanh(x) * 2.0 + jnp.sum(x * x) / 3.0

    eager = f(x)
    assert eager.dtype == jnp.bfloat16
    assert np.array_equal(_bits(ivx.jit(f)(x)), _bits(eager))
    rows = ivx.vmap(f)(x)
    for i in range(len(x)):
        assert np.array_equal(_bits(rows[i]), _bits(f(x[i])))
    g = ivx.grad(lambda x: jnp.sum(x * x))(x)
    assert g.dtype == jnp.bfloat16
    assert np.array_equal(_bits(g), _bits(jax.grad(lambda x: jax.numpy.sum(x * x))(x)))
    assert "bf16[4,33]" in str(ivx.make_jaxpr(f)(x))


def test_loops_and_branches_round_as_eager():
    x = jnp.asarray(np.random.default_rng(4).standard_normal((5, 40)), jnp.bfloat16)

    def body(c, r):
        c = jnp.tanh(c * r + jnp.sum(r) / 40.0)
        return c, jnp.exp(c)

    carry, out = x[0], []
    for r in x:
        carry, y = body(carry, r)
        out.append(y)
    want = _bits(jnp.stack(out))
    assert np.array_equal(_bits(ivx.lax.scan(body, x[0], x)[1]), want)
    assert np.array_equal(_bits(ivx.jit(lambda x: ivx.lax.scan(body, x[0], x)[1])(x)), want)
    w = ivx.lax.while_loop(lambda c: c[1] < 3, lambda c: (jnp.sin(c[0]) * 1.5, c[1] + 1),
                           (x[0], 0))[0]
    branch = ivx.jit(lambda x: ivx.lax.cond(x[0] > 0, jnp.sin, jnp.cos, x))(x[1])
    w2 = x[0]
    for _ in range(3):
        w2 = jnp.sin(w2) * 1.5
    assert np.array_equal(_bits(w), _bits(w2))
    assert np.array_equal(_bits(branch), _bits((jnp.sin if x[1, 0] > 0 else jnp.cos)(x[1])))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "int4", "uint4", "int2"])
def test_narrow_types_compute_as_jax(name):
    jax_numpy = pytest.importorskip("jax.numpy")
    dtype = np.dtype(getattr(ml_dtypes, name))
    info = (ml_dtypes.finfo if core_dtypes.kind(dtype) == "f" else ml_dtypes.iinfo)(dtype)
    values = np.linspace(float(info.min), float(info.max), 23)
    with np.errstate(invalid="ignore", over="ignore"):
        a, b = values.astype(dtype), values[::-1].astype(dtype)
    ops = ("add", "subtract", "multiply", "maximum")
    for op in ops + ("nextafter",) if core_dtypes.kind(dtype) == "f" else ops:
        got, want = getattr(jnp, op)(a, b), getattr(jax_numpy, op)(a, b)
        assert got.dtype == want.dtype == dtype
        assert np.array_equal(_bits(got), _bits(want)), op
    wide = np.linspace(-300.0, 300.0, 41, dtype=np.float32)  # saturating, as XLA
    assert np.array_equal(_bits(jnp.asarray(wide).astype(dtype)),
                          _bits(jax_numpy.asarray(wide).astype(dtype)))


def test_dtype_queries_are_jax():
    jax = pytest.importorskip("jax")
    jax_numpy = jax.numpy
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4", "uint2"):
        for parent in (np.floating, np.inexact, np.integer, np.signedinteger,
                       np.unsignedinteger, np.number, np.generic):
            assert jnp.issubdtype(getattr(jnp, name), parent) == jax_numpy.issubdtype(
                getattr(jax_numpy, name), parent), (name, parent)
        assert ivx.dtypes.itemsize_bits(getattr(jnp, name)) == jax.dtypes.itemsize_bits(
            getattr(jax_numpy, name))
    assert jnp.finfo(jnp.bfloat16).eps == jax_numpy.finfo(jax_numpy.bfloat16).eps
    assert jnp.iinfo(jnp.int4).min == jax_numpy.iinfo(jax_numpy.int4).min == -8
    assert ivx.dtypes.canonicalize_dtype(jnp.bfloat16) == np.dtype(ml_dtypes.bfloat16)


def test_samplers_refuse_what_they_do_not_draw_with_the_fix():
    with pytest.raises(ValueError, match=r"draw float32 and convert"):
        ivx.random.gamma(ivx.random.PRNGKey(0), 1.0, (2,), jnp.bfloat16)
    with pytest.raises(ValueError, match=r"16- and 8-bit floats.*astype\(jnp.float4_e2m1fn"):
        ivx.random.uniform(ivx.random.PRNGKey(0), (2,), jnp.float4_e2m1fn)


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"])
def test_samplers_draw_narrow_floats_as_jax(name):
    jax = pytest.importorskip("jax")
    ours, theirs = getattr(jnp, name), getattr(jax.numpy, name)
    key, jkey = ivx.random.PRNGKey(5), jax.random.PRNGKey(5)
    draws = [("uniform", (), {}), ("uniform", (), {"minval": -2.3, "maxval": 1.1}),
             ("normal", (), {}), ("truncated_normal", (-1.5, 0.7), {}),
             ("exponential", (), {}), ("logistic", (), {}), ("laplace", (), {}),
             ("gumbel", (), {})]
    if name.startswith("float8"):  # the same code paths: two draws suffice
        draws = draws[1:3]
    for sampler, args, kwargs in draws:
        got = getattr(ivx.random, sampler)(key, *args, shape=(500,), dtype=ours, **kwargs)
        want = getattr(jax.random, sampler)(jkey, *args, shape=(500,), dtype=theirs, **kwargs)
        assert got.dtype == want.dtype
        assert np.array_equal(_bits(got), _bits(want)), (sampler, kwargs)
    if name == "bfloat16":
        p = np.linspace(0.0, 1.0, 200).astype(ml_dtypes.bfloat16)
        assert np.array_equal(np.asarray(ivx.random.bernoulli(key, p)),
                              np.asarray(jax.random.bernoulli(jkey, p)))
    jitted = ivx.jit(lambda k: ivx.random.normal(k, (500,), ours))(key)
    assert np.array_equal(_bits(jitted), _bits(ivx.random.normal(key, (500,), ours)))


def test_models_of_bfloat16_train_as_equinox_and_optax():
    eqx = pytest.importorskip("equinox")
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    x = np.ones(3, ml_dtypes.bfloat16)
    assert ivx.is_inexact_array(jnp.asarray(x)) == eqx.is_inexact_array(jax.numpy.asarray(x))
    lin = ivx.nn.Linear(3, 2, key=ivx.random.PRNGKey(0))
    model = ivx.tree_util.tree_map(lambda a: a.astype(jnp.bfloat16), lin)
    grads = ivx.filter_grad(lambda m, x: jnp.sum(m(x)))(model, x)
    assert grads.weight.dtype == jnp.bfloat16
    # the gradient of sum(W x + b) is x for each row of W: bitwise JAX's
    assert np.array_equal(_bits(grads.weight), _bits(np.ones((2, 3), ml_dtypes.bfloat16)))
    opt, opt_jax = ivx.optim.adam(1e-2), optax.adam(1e-2)
    updates, _ = opt.update(grads, opt.init(model), model)
    params = (jax.numpy.asarray(model.weight), jax.numpy.asarray(model.bias))
    want, _ = opt_jax.update((jax.numpy.asarray(grads.weight), jax.numpy.asarray(grads.bias)),
                             opt_jax.init(params), params)
    assert updates.weight.dtype == want[0].dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(updates.weight, np.float32),
                               np.asarray(want[0], np.float32), rtol=2**-7)


def test_the_core_does_not_import_ml_dtypes_and_works_without_it():
    code = """if True:
        import sys
        import invarax, invarax.numpy as jnp, invarax.nn, invarax.optim
        assert "ml_dtypes" not in sys.modules
        sys.modules["ml_dtypes"] = None  # as if it were not installed
        assert not hasattr(jnp, "bfloat16") and float((jnp.ones(3) + 1).sum()) == 6.0
        try:
            jnp.float8_e4m3fn
        except AttributeError as e:
            assert "pip install ml_dtypes" in str(e)
        """
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_strict_promotion_is_jax_for_every_pair():
    jax = pytest.importorskip("jax")
    names = NEW + ("int8", "uint8", "float16", "float32", "int32", "bool_", "complex64")

    def promoted(module, a, b):
        try:
            return str(module.promote_types(getattr(module, a), getattr(module, b)))
        except ValueError:  # TypePromotionError
            return "error"

    before = (jax.config.jax_numpy_dtype_promotion, ivx.config.jax_numpy_dtype_promotion)
    jax.config.update("jax_numpy_dtype_promotion", "strict")
    ivx.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        for a, b in itertools.product(names, repeat=2):
            assert promoted(jnp, a, b) == promoted(jax.numpy, a, b), (a, b)
    finally:
        jax.config.update("jax_numpy_dtype_promotion", before[0])
        ivx.config.update("jax_numpy_dtype_promotion", before[1])


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_cumulative_sums_and_products_round_each_step_as_jax(name):
    jax = pytest.importorskip("jax")
    dtype = np.dtype(getattr(ml_dtypes, name, None) or getattr(np, name))
    rng = np.random.default_rng(7)
    cases = [((17,), 0), ((300, 2), 0), ((2, 300), 1)]  # one tile and a level, two levels
    for (shape, axis), kind, reverse in itertools.product(cases, ("sum", "prod"), (False, True)):
        scale = 1.0 if kind == "sum" else 0.05
        x = (float(kind == "prod") + scale * rng.standard_normal(shape)).astype(dtype)
        ours = getattr(ivx.lax, f"cum{kind}")
        want = getattr(jax.lax, f"cum{kind}")(x, axis=axis, reverse=reverse)
        got = ours(x, axis=axis, reverse=reverse)
        assert got.dtype == want.dtype == dtype
        assert np.array_equal(_bits(got), _bits(want)), (shape, axis, kind, reverse)
        jitted = ivx.jit(lambda x: ours(x, axis=axis, reverse=reverse))(x)  # noqa: B023
        assert np.array_equal(_bits(jitted), _bits(got))
    rows = np.asarray(rng.standard_normal((3, 40)), dtype)
    batched = ivx.vmap(jnp.cumsum)(rows)
    for i in range(3):
        assert np.array_equal(_bits(batched[i]), _bits(jnp.cumsum(rows[i])))


def test_cumsum_of_narrow_types_is_jax_on_known_values():
    jax_numpy = pytest.importorskip("jax.numpy")
    ones = jnp.ones(1000, jnp.bfloat16)
    # steps past 256 round (257 -> 256), but the tiles of 16 keep the total exact
    assert np.asarray(jnp.cumsum(ones))[[255, 256, 257, 258, 999]].tolist() == [256, 256, 258,
                                                                           260, 1000]
    x = np.random.default_rng(8).standard_normal((4, 700)).astype(np.float32)
    for got, want in [(jnp.cumsum(x, axis=1, dtype=jnp.bfloat16),
                       jax_numpy.cumsum(x, axis=1, dtype=jax_numpy.bfloat16)),
                      (jnp.cumprod(1 + x / 64, axis=1, dtype=jnp.float16),
                       jax_numpy.cumprod(1 + x / 64, axis=1, dtype=jax_numpy.float16)),
                      (jnp.cumsum(x.T, axis=0, dtype=jnp.float8_e4m3fn),
                       jax_numpy.cumsum(x.T, axis=0, dtype=jax_numpy.float8_e4m3fn))]:
        assert np.array_equal(_bits(got), _bits(want))


# (operands, preferred_element_type): JAX on the CPU computes the product as without the
# preferred type and converts it (a float holding the operands: the float32 product).
NARROWER = [("float32", "bfloat16"), ("float32", "float16"), ("float32", "float8_e4m3fn"),
            ("bfloat16", "float16"), ("bfloat16", "float8_e5m2"), ("float16", "float8_e4m3fn"),
            ("float8_e4m3fn", "bfloat16"), ("float8_e5m2", "float16")]


@pytest.mark.parametrize("operands, preferred", NARROWER)
def test_preferred_element_type_narrower_than_the_operands_is_jax(operands, preferred):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(9)
    typed = getattr(ml_dtypes, operands, None) or getattr(np, operands)
    a = rng.standard_normal((6, 64)).astype(typed)
    b = rng.standard_normal((64, 3)).astype(typed)
    got = ivx.lax.dot(a, b, preferred_element_type=getattr(jnp, preferred))
    want = jax.lax.dot(a, b, preferred_element_type=getattr(jax.numpy, preferred))
    assert got.dtype == want.dtype
    assert np.array_equal(_bits(got), _bits(want))
    for other in (jnp.matmul(a, b, preferred_element_type=getattr(jnp, preferred)),
                  jnp.einsum("ik,kj->ij", a, b, preferred_element_type=getattr(jnp, preferred)),
                  ivx.jit(lambda a, b: ivx.lax.dot(
                      a, b, preferred_element_type=getattr(jnp, preferred)))(a, b)):
        assert np.array_equal(_bits(other), _bits(got))


def test_preferred_narrower_float_is_the_product_rounded_once():
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal((5, 300)).astype(np.float32), rng.standard_normal((300, 4))
    b = b.astype(np.float32)
    once = np.asarray(jnp.asarray(a) @ b).astype(ml_dtypes.bfloat16)
    assert np.array_equal(_bits(ivx.lax.dot(a, b, preferred_element_type=jnp.bfloat16)),
                          _bits(once))
    x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
    w = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    conv = ivx.lax.conv(x, w, (1, 1), "SAME", preferred_element_type=jnp.bfloat16)
    assert np.array_equal(_bits(conv), _bits(np.asarray(ivx.lax.conv(x, w, (1, 1), "SAME"))
                                             .astype(ml_dtypes.bfloat16)))
    g = ivx.grad(lambda a: ivx.lax.dot(a, b, preferred_element_type=jnp.bfloat16)
                 .astype(jnp.float32).sum())(a)
    assert np.array_equal(_bits(g), _bits(ivx.grad(lambda a: (a @ b).sum())(a)))

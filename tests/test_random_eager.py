"""Eager invarax.random calls run a cached jit of the function (invarax/random/_eager.py):
bitwise the inline (op by op) results, taken only eagerly, same errors, no retraces when
values change."""

import warnings

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import random
from invarax.random import _eager

KEY = random.PRNGKey(42)


def calls(dtype=None):
    """One call per public function (several for some), as ``(function, args, kwargs)``."""
    p = jnp.array([0.1, 0.2, 0.3, 0.4])
    arr = jnp.arange(12.0).reshape(3, 4)
    return [
        (random.PRNGKey, (7,), {}),
        (random.PRNGKey, (np.int32(-3),), {}),
        (random.PRNGKey, (jnp.array(2**31 - 1),), {}),
        (random.key, (3,), {}),
        (random.split, (KEY,), {}),
        (random.split, (KEY, 5), {}),
        (random.split, (KEY, (2, 3)), {}),
        (random.split, (KEY, [2, 2]), {}),
        (random.fold_in, (KEY, 7), {}),
        (random.fold_in, (KEY, 2**32 - 1), {}),
        (random.fold_in, (KEY, jnp.array(5)), {}),
        (random.bits, (KEY, (5,)), {}),
        (random.bits, (KEY, (2, 3), jnp.uint8), {}),
        (random.bits, (KEY, (3,), jnp.uint16), {}),
        (random.uniform, (KEY, (7,)), {"dtype": dtype}),
        (random.uniform, (KEY, (2, 3)), {"dtype": dtype, "minval": -2.0, "maxval": 3.5}),
        (random.uniform, (KEY, (3,)), {"dtype": dtype, "minval": jnp.array([0.0, 1.0, 2.0]),
                                       "maxval": 5}),
        (random.normal, (KEY, (9,)), {"dtype": dtype}),
        (random.normal, (KEY, [2, 2], dtype), {}),
        (random.truncated_normal, (KEY, -1.5, 2.0, (6,)), {"dtype": dtype}),
        (random.truncated_normal, (KEY, jnp.zeros(3), 1.0), {"dtype": dtype}),
        (random.exponential, (KEY, (5,)), {"dtype": dtype}),
        (random.gumbel, (KEY, (5,)), {"dtype": dtype}),
        (random.gumbel, (KEY, (5,)), {"dtype": dtype, "mode": "high"}),
        (random.logistic, (KEY, (5,)), {"dtype": dtype}),
        (random.laplace, (KEY, (5,)), {"dtype": dtype}),
        (random.bernoulli, (KEY,), {}),
        (random.bernoulli, (KEY, 0.3, (10,)), {}),
        (random.bernoulli, (KEY, jnp.array([0.0, 0.5, 1.0])), {"mode": "high"}),
        (random.randint, (KEY, (8,), -5, 1000), {}),
        (random.randint, (KEY, (8,), 0, 200, jnp.uint8), {}),
        (random.randint, (KEY, (4,), jnp.array([0, 1, 2, 3]), 10, jnp.int16), {}),
        (random.permutation, (KEY, 12), {}),
        (random.permutation, (KEY, arr), {"axis": 1}),
        (random.permutation, (KEY, arr), {"axis": 0, "independent": True}),
        (random.choice, (KEY, 10, (6,)), {"replace": False}),
        (random.choice, (KEY, 4, (5,)), {"p": p}),
        (random.choice, (KEY, 4, (3,)), {"p": p, "replace": False}),
        (random.choice, (KEY, arr, (2,)), {"axis": 1}),
        (random.choice, (KEY, 5, (0,)), {}),
        (random.categorical, (KEY, jnp.log(p)), {"shape": (6,)}),
        (random.categorical, (KEY, jnp.zeros((2, 3))), {"axis": 0}),
        (random.categorical, (KEY, jnp.log(p), -1, (2,)), {"replace": False}),
        (random.gamma, (KEY, jnp.array([0.5, 3.0])), {"dtype": dtype}),
        (random.binomial, (KEY, 20.0, p), {"dtype": dtype}),
        (random.multinomial, (KEY, 10.0, p), {}),
        (random.cauchy, (KEY, (3,)), {"dtype": dtype}),
    ]


def call_id(c):
    fun, args, kwargs = c
    return fun.__name__


def inline(fun, *args, **kwargs):
    """The call with the compiled path switched off: op by op, as before it existed."""
    _eager.ENABLED = False
    try:
        return fun(*args, **kwargs)
    finally:
        _eager.ENABLED = True


def assert_same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def check_call(fun, args, kwargs):
    compiled = fun(*args, **kwargs)
    again = fun(*args, **kwargs)  # from the cache
    expected = inline(fun, *args, **kwargs)
    assert compiled.weak_type == expected.weak_type
    assert_same_bits(compiled, expected)
    assert_same_bits(again, expected)
    # The same call traced inline into a user's jit.
    statics = {i: a for i, a in enumerate(args) if not hasattr(a, "shape")}
    arrays = [a for a in args if hasattr(a, "shape")]

    def user(*arrs):
        it = iter(arrs)
        full = [statics[i] if i in statics else next(it) for i in range(len(args))]
        return fun(*full, **kwargs)

    assert_same_bits(invarax.jit(user)(*arrays), expected)


@pytest.fixture(params=[True, False], ids=["partitionable", "original"])
def partitionable(request):
    invarax.config.update("jax_threefry_partitionable", request.param)
    yield request.param
    invarax.config.update("jax_threefry_partitionable", True)


@pytest.mark.parametrize("index", range(len(calls())), ids=[call_id(c) for c in calls()])
def test_compiled_equals_inline(index, partitionable):
    check_call(*calls()[index])


@pytest.mark.parametrize("index", range(len(calls())), ids=[call_id(c) for c in calls()])
def test_compiled_equals_inline_x64(index, x64):
    global KEY
    key = KEY
    KEY = random.PRNGKey(2**40 + 3)
    try:
        check_call(*calls(jnp.float64)[index])
    finally:
        KEY = key


def test_float16_and_large_draws():
    check_call(random.uniform, (KEY, (5,), jnp.float16), {"minval": 0.25, "maxval": 1.5})
    check_call(random.normal, (KEY, (100_000,)), {})
    check_call(random.bits, (KEY, (3,), jnp.uint8), {})


PUBLIC_COMPILED = [random.PRNGKey, random.split, random.fold_in, random.bits, random.uniform,
                   random.normal, random.truncated_normal, random.exponential, random.gumbel,
                   random.logistic, random.laplace, random.bernoulli, random.randint,
                   random.permutation, random.choice, random.categorical]
PUBLIC_COMPILED += [getattr(random, name) for name in (
    "ball", "beta", "binomial", "cauchy", "chisquare", "dirichlet", "double_sided_maxwell",
    "f", "gamma", "generalized_normal", "geometric", "loggamma", "lognormal", "maxwell",
    "multinomial", "multivariate_normal", "orthogonal", "pareto", "poisson", "rademacher",
    "rayleigh", "t", "triangular", "wald", "weibull_min")]


def cache_sizes():
    return [len(f._compiled_cache) for f in PUBLIC_COMPILED]


def test_every_public_function_is_compiled_or_a_view():
    for name in random.__all__:
        fun = getattr(random, name)
        assert fun in PUBLIC_COMPILED or name in ("key", "key_data", "clone"), name
    # key is PRNGKey; key_data and clone compute nothing (they check and return the array).
    assert random.key_data(KEY) is KEY


def test_eager_calls_take_the_compiled_path():
    for fun, args, kwargs in calls():
        if fun is random.key:
            continue
        fun._compiled_cache.clear()
        fun(*args, **kwargs)
        assert len(fun._compiled_cache) == 1, fun.__name__
        (jitted,) = fun._compiled_cache.values()
        assert jitted._cache_size() == 1
        fun(*args, **kwargs)
        assert len(fun._compiled_cache) == 1 and jitted._cache_size() == 1


def test_key_runs_prng_key_compiled():
    random.PRNGKey._compiled_cache.clear()
    assert_same_bits(random.key(5), random.PRNGKey(5))
    assert len(random.PRNGKey._compiled_cache) == 1


def test_transformations_trace_inline():
    def draws(k, x):
        return (random.normal(k, (3,)) * x, random.uniform(k, (3,), minval=x),
                random.bernoulli(k, 0.3, (3,)), random.split(k, 3), random.fold_in(k, 2),
                random.randint(k, (3,), 0, 9), random.permutation(k, 5),
                random.choice(k, 4, (2,)), random.categorical(k, jnp.zeros(3)),
                random.truncated_normal(k, -1.0, x), random.bits(k, (2,)),
                random.exponential(k, (2,)), random.gumbel(k, (2,)), random.logistic(k, (2,)),
                random.laplace(k, (2,)), random.PRNGKey(3))

    for f in PUBLIC_COMPILED:
        f._compiled_cache.clear()
    x = jnp.float32(0.5)
    keys = random.split(KEY, 3)
    before = cache_sizes()
    jaxpr = invarax.make_jaxpr(draws)(KEY, x)
    invarax.jit(draws)(KEY, x)
    invarax.vmap(draws, in_axes=(0, None))(keys, x)
    invarax.grad(lambda x: jnp.sum(draws(KEY, x)[0]))(x)
    invarax.jvp(lambda x: draws(KEY, x)[1], (x,), (x,))
    assert cache_sizes() == before
    # The traced equations are those of the inline path.
    _eager.ENABLED = False
    try:
        assert str(invarax.make_jaxpr(draws)(KEY, x)) == str(jaxpr)
    finally:
        _eager.ENABLED = True


def test_grad_through_eager_keys():
    lo_grad = invarax.grad(lambda lo: jnp.sum(random.uniform(KEY, (3,), minval=lo)))(0.0)
    _eager.ENABLED = False
    try:
        expected = invarax.grad(lambda lo: jnp.sum(random.uniform(KEY, (3,), minval=lo)))(0.0)
    finally:
        _eager.ENABLED = True
    assert_same_bits(lo_grad, expected)


def raised(fun, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fun(*args, **kwargs)
    return type(info.value), str(info.value)


BAD_CALLS = [
    (random.normal, (jnp.zeros(2), (3,)), {}),
    (random.split, (jnp.zeros(3, jnp.uint32),), {}),
    (random.uniform, (random.split(KEY), (2,)), {}),
    (random.normal, ([0, 0], (2,)), {}),
    (random.PRNGKey, (1.5,), {}),
    (random.PRNGKey, (2.0,), {}),
    (random.PRNGKey, (np.float64(3.0),), {}),
    (random.PRNGKey, (jnp.arange(2),), {}),
    (random.PRNGKey, (2**64,), {}),
    (random.PRNGKey, ("3",), {}),
    (random.fold_in, (KEY, -1), {}),
    (random.fold_in, (KEY, 2**32), {}),
    (random.fold_in, (jnp.zeros(2), -1), {}),
    (random.fold_in, (KEY, 1.5), {}),
    (random.fold_in, (KEY, jnp.arange(2)), {}),
    (random.split, (KEY, 2.0), {}),
    (random.split, (KEY, -1), {}),
    (random.uniform, (KEY, 3), {}),
    (random.uniform, (KEY, [2.5]), {}),
    (random.normal, (KEY, (2.5,)), {}),
    (random.normal, (KEY, (-1,)), {}),
    (random.normal, (KEY, np.array([2, 3])), {}),
    (random.uniform, (KEY, (3,)), {"minval": jnp.zeros(4)}),
    (random.uniform, (KEY, (3,)), {"minval": 2.0, "maxval": 1.0}),
    (random.uniform, (KEY, (3,)), {"minval": jnp.array([0.0, 3.0, 0.0]), "maxval": 2.0}),
    (random.uniform, (KEY, (3,)), {"minval": 2.0, "maxval": 1.0, "dtype": jnp.int32}),
    (random.randint, (KEY, (3,), 5, 1), {}),
    (random.randint, (KEY, (3,), 0, 2**40), {}),
    (random.truncated_normal, (KEY, 1.0, -1.0), {}),
    (random.bernoulli, (KEY, 1.5, (2,)), {}),
    (random.bernoulli, (KEY, -0.1, (2,)), {}),
    (random.bernoulli, (KEY, float("nan"), (2,)), {}),
    (random.bernoulli, (KEY, 1, (2,)), {}),
    (random.bernoulli, (KEY, 0.5, (2,)), {"mode": "middle"}),
    (random.uniform, (KEY, (2,), jnp.int32), {}),
    (random.randint, (KEY, (2,), 0, 3, jnp.float32), {}),
    (random.bits, (KEY, (2,), jnp.int32), {}),
    (random.choice, (KEY, 3, (2,)), {"p": jnp.array([0.5, 1.5, 0.0])}),
    (random.choice, (KEY, 3, (2,)), {"p": jnp.array([0.5, 0.5])}),
    (random.choice, (KEY, 3, (4,)), {"replace": False}),
    (random.choice, (KEY, 0, (2,)), {}),
    (random.choice, (KEY, 2.5, (2,)), {}),
    (random.permutation, (KEY, 2.5), {}),
    (random.permutation, (KEY, -3), {}),
    (random.permutation, (KEY, jnp.arange(3)), {"axis": 2}),
    (random.categorical, (KEY, jnp.zeros((2, 3))), {"shape": (4,)}),
    (random.categorical, (KEY, jnp.zeros(3), -1, (4,)), {"replace": False}),
    (random.normal, (KEY,), {"shape": (2,), "colour": "red"}),
    (random.normal, (), {}),
    (random.normal, (KEY, (2,), None, 3), {}),
]


@pytest.mark.parametrize("index", range(len(BAD_CALLS)), ids=[call_id(c) for c in BAD_CALLS])
def test_errors_unchanged(index):
    fun, args, kwargs = BAD_CALLS[index]
    expected = raised(inline, fun, *args, **kwargs)
    assert raised(fun, *args, **kwargs) == expected
    assert raised(fun, *args, **kwargs) == expected  # a failed trace is not cached


def test_errors_after_a_cached_signature():
    # A good call of the same signature first: the bad value must still be checked.
    random.uniform(KEY, (3,), minval=0.0, maxval=1.0)
    assert raised(random.uniform, KEY, (3,), minval=2.0, maxval=1.0)[1].startswith(
        "random.uniform: minval must be <= maxval")
    random.bernoulli(KEY, 0.5, (2,))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        random.bernoulli(KEY, 1.5, (2,))
    random.split(KEY, 2)
    with pytest.raises(TypeError, match="tuple of ints"):
        random.split(KEY, 2.0)  # equal to 2, but a float: not the cached signature
    random.normal(KEY, (3,))
    with pytest.raises(TypeError, match="tuple of ints"):
        random.normal(KEY, (3.0,))
    random.fold_in(KEY, 3)
    with pytest.raises(OverflowError, match="uint32"):
        random.fold_in(KEY, 2**32)


def test_bounds_equal_after_rounding_are_not_an_error():
    # 1 + 2**-30 > 1 as given, but equal in float32: no error today, none compiled.
    low = 1.0 + 2.0**-30
    assert_same_bits(random.uniform(KEY, (2,), minval=low, maxval=1.0),
                     inline(random.uniform, KEY, (2,), minval=low, maxval=1.0))


def test_varying_values_never_retrace():
    funs = {
        "uniform": lambda v: random.uniform(KEY, (4,), minval=v, maxval=v + 1.0),
        "uniform_array": lambda v: random.uniform(KEY, (2,), maxval=jnp.array([v, 2 * v])),
        "bernoulli": lambda v: random.bernoulli(KEY, v / 20, (4,)),
        "randint": lambda v: random.randint(KEY, (4,), int(v * 10), 1000),
        "truncated_normal": lambda v: random.truncated_normal(KEY, -v - 0.5, v, (3,)),
        "choice": lambda v: random.choice(KEY, 2, (3,), p=jnp.array([v / 20, 1 - v / 20])),
        "categorical": lambda v: random.categorical(KEY, jnp.array([v, 1.0, 2.0])),
        "fold_in": lambda v: random.fold_in(KEY, int(v * 100)),
        "PRNGKey": lambda v: random.PRNGKey(int(v * 1000)),
        "permutation": lambda v: random.permutation(KEY, jnp.array([v, 1.0, 2.0])),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, f in funs.items():
            fun = getattr(random, name.split("_array")[0])
            fun._compiled_cache.clear()
            for v in np.linspace(0.0, 1.0, 20):
                f(float(v))
            assert len(fun._compiled_cache) == 1, name
            (jitted,) = fun._compiled_cache.values()
            assert jitted._cache_size() == 1, name


def test_many_shapes_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, 15):
            random.normal(KEY, (n,))
            random.permutation(KEY, jnp.arange(n))
            random.uniform(KEY, (n,), minval=jnp.zeros(n))


def test_flags_are_part_of_the_key(x64):
    random.normal._compiled_cache.clear()
    a = random.normal(KEY, (4,))
    invarax.config.update("jax_threefry_partitionable", False)
    try:
        b = random.normal(KEY, (4,))
        assert_same_bits(b, inline(random.normal, KEY, (4,)))
    finally:
        invarax.config.update("jax_threefry_partitionable", True)
    invarax.config.update("jax_enable_x64", False)
    c = random.normal(KEY, (4,))
    assert a.dtype == np.float64 and c.dtype == np.float32
    assert_same_bits(c, inline(random.normal, KEY, (4,)))
    # One signature; its jit holds a program per flag setting.
    (jitted,) = random.normal._compiled_cache.values()
    assert jitted._cache_size() == 3


def test_switch_and_decorated_metadata():
    assert random.normal.__name__ == "normal" and "Standard normal" in random.normal.__doc__
    assert list(__import__("inspect").signature(random.uniform).parameters) == [
        "key", "shape", "dtype", "minval", "maxval"]

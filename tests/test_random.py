"""invarax.random: JAX's bits (stored reference vectors, and JAX itself where installed),
jit/vmap invariance, statistics on large samples, and errors for bad input."""

import hashlib
from fractions import Fraction

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import random
from invarax.ops.fused import fma

# Reference vectors, generated once with JAX 0.10.2 (x64 off, default threefry config).
KEY_42 = [0, 42]
SPLIT_42 = [[1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]]
FOLD_IN_42_7 = [2547012911, 1371500959]
BITS_42 = [2098992034, 2919706841, 2646866425, 2409546199, 1935504149, 2516274904]
UNIFORM_42 = ["0x1.f470480000000p-2", "0x1.5c0e600000000p-1", "0x1.3b87f00000000p-1",
              "0x1.1f3d800000000p-1", "0x1.cd75c80000000p-2", "0x1.2bf69c0000000p-1"]
RANDINT_42 = [184, 514, 736, 539, 804, 979, 102, 652]  # randint(key, (8,), -5, 1000)
BERNOULLI_42 = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]  # bernoulli(key, 0.3, (12,))
PERMUTATION_42 = [7, 4, 2, 5, 3, 6, 10, 11, 8, 9, 0, 1]  # permutation(key, 12)
CATEGORICAL_42 = [3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 3, 3]  # logits log([.1, .2, .3, .4]), (12,)
CHOICE_42 = [7, 4, 2, 5, 3, 6]  # choice(key, 10, (6,), replace=False)
NORMAL_42 = ["-0x1.cfbe2a0000000p-6", "0x1.de57d00000000p-2", "0x1.2eccc20000000p-2",
             "0x1.3a76480000000p-3", "-0x1.fc09d60000000p-4", "0x1.bc42340000000p-3"]

# The same with jax_threefry_partitionable off (JAX's streams before 0.5).
SPLIT_42_OFF = [[3134548294, 3733159049], [3746501087, 894150801], [801545058, 2363201431]]
BITS_42_OFF = [3134548294, 3733159049, 3746501087, 894150801, 801545058, 2363201431]
BITS8_42_OFF = [45, 179, 215, 3, 244]  # bits(key, (5,), uint8)
UNIFORM_42_OFF = ["0x1.75aad00000000p-1", "0x1.bd06f80000000p-1", "0x1.be9e200000000p-1",
                  "0x1.aa5d400000000p-3", "0x1.7e34d00000000p-3", "0x1.19b72c0000000p-1"]
NORMAL_42_OFF = ["0x1.397ad40000000p-1", "0x1.1f61f20000000p+0", "0x1.23282c0000000p+0",
                 "-0x1.a01e7a0000000p-1", "-0x1.c7e32a0000000p-1", "0x1.0285a20000000p-3"]
RANDINT_42_OFF = [610, 35, 796, 485, 850, 383, 573, 372]
PERMUTATION_42_OFF = [11, 10, 4, 0, 2, 7, 8, 3, 6, 5, 9, 1]

# SHA-256 (first 16 hex digits) of the bytes of 20,000 draws with PRNGKey(5), JAX 0.10.2,
# for partitionable streams on and off: bitwise agreement on many values, stored.
DRAWS = 20_000
DRAW_CASES = {
    "normal": lambda key: random.normal(key, (DRAWS,)),
    "truncated_normal": lambda key: random.truncated_normal(key, -2.5, 1.25, (DRAWS,)),
    "exponential": lambda key: random.exponential(key, (DRAWS,)),
    "gumbel": lambda key: random.gumbel(key, (DRAWS,)),
    "gumbel_high": lambda key: random.gumbel(key, (DRAWS,), mode="high"),
    "logistic": lambda key: random.logistic(key, (DRAWS,)),
    "laplace": lambda key: random.laplace(key, (DRAWS,)),
    "uniform": lambda key: random.uniform(key, (DRAWS,)),
    "bits8": lambda key: random.bits(key, (DRAWS + 1,), jnp.uint8),
}
DRAW_DIGESTS = {
    True: {"normal": "da424316dc567c0f", "truncated_normal": "4bb4ee58c0ff1831",
           "exponential": "6d8d9a46af572d0c", "gumbel": "78bad1d2a2dabf36",
           "gumbel_high": "ad5f770392769062", "logistic": "e657f4fb468ef7e1",
           "laplace": "467c74b6d4d6475f", "uniform": "8494788a7b062036",
           "bits8": "13cbb1abc1834320"},
    False: {"normal": "03f09f14a637e922", "truncated_normal": "f583c786ab1066b6",
            "exponential": "4b768e5dce8903f0", "gumbel": "6efc1e3dc317cf66",
            "gumbel_high": "859131f47db2d81c", "logistic": "113347ea805dc740",
            "laplace": "4505080625060e4d", "uniform": "b73d126e02a5291b",
            "bits8": "3e328dc262467d7a"},
}


def digest(x):
    return hashlib.sha256(np.ascontiguousarray(np.asarray(x)).tobytes()).hexdigest()[:16]


def floats(hexes, dtype=np.float32):
    return np.array([float.fromhex(h) for h in hexes], dtype)


def ulps(a, b):
    """The distance from ``a`` to ``b`` in units of ``b``'s last place."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype
    return np.abs(a.astype(np.float64) - b) / np.spacing(np.abs(b))


# ---------------------------------------------------------------------------------------
# Stored reference vectors (run without JAX)


def test_keys_match_stored_jax_vectors():
    key = random.PRNGKey(42)
    assert key.dtype == np.uint32 and key.tolist() == KEY_42
    assert random.split(key, 3).tolist() == SPLIT_42
    assert random.fold_in(key, 7).tolist() == FOLD_IN_42_7
    assert random.bits(key, (6,)).tolist() == BITS_42
    assert random.key(42).tolist() == KEY_42
    assert random.key_data(key).tolist() == KEY_42


def test_samplers_match_stored_jax_vectors():
    key = random.PRNGKey(42)
    np.testing.assert_array_equal(random.uniform(key, (6,)), floats(UNIFORM_42))
    assert random.randint(key, (8,), -5, 1000).tolist() == RANDINT_42
    assert random.bernoulli(key, 0.3, (12,)).astype(int).tolist() == BERNOULLI_42
    np.testing.assert_array_equal(random.normal(key, (6,)), floats(NORMAL_42))
    assert random.permutation(key, 12).tolist() == PERMUTATION_42
    logits = jnp.log(jnp.array([0.1, 0.2, 0.3, 0.4]))
    assert random.categorical(key, logits, shape=(12,)).tolist() == CATEGORICAL_42
    assert random.choice(key, 10, (6,), replace=False).tolist() == CHOICE_42


@pytest.fixture(params=[True, False], ids=["partitionable", "original"])
def partitionable(request):
    """Both threefry stream layouts: sets the flag in invarax (and in JAX when installed),
    and restores both."""
    try:
        import jax
    except ImportError:
        jax = None
    flag = request.param
    before = invarax.config.jax_threefry_partitionable
    jax_before = jax.config.jax_threefry_partitionable if jax else None
    invarax.config.update("jax_threefry_partitionable", flag)
    if jax:
        jax.config.update("jax_threefry_partitionable", flag)
    yield flag
    invarax.config.update("jax_threefry_partitionable", before)
    if jax:
        jax.config.update("jax_threefry_partitionable", jax_before)


def test_partitionable_is_on_by_default():
    assert invarax.config.jax_threefry_partitionable is True


def test_original_streams_match_stored_jax_vectors(partitionable):
    if partitionable:
        pytest.skip("the stored vectors above cover the default streams")
    key = random.PRNGKey(42)
    assert random.split(key, 3).tolist() == SPLIT_42_OFF
    assert random.fold_in(key, 7).tolist() == FOLD_IN_42_7  # the same in both layouts
    assert random.bits(key, (6,)).tolist() == BITS_42_OFF
    assert random.bits(key, (5,), jnp.uint8).tolist() == BITS8_42_OFF
    np.testing.assert_array_equal(random.uniform(key, (6,)), floats(UNIFORM_42_OFF))
    np.testing.assert_array_equal(random.normal(key, (6,)), floats(NORMAL_42_OFF))
    assert random.randint(key, (8,), -5, 1000).tolist() == RANDINT_42_OFF
    assert random.permutation(key, 12).tolist() == PERMUTATION_42_OFF


@pytest.mark.parametrize("name", sorted(DRAW_CASES))
def test_draws_match_stored_jax_digests(name, partitionable):
    assert digest(DRAW_CASES[name](random.PRNGKey(5))) == DRAW_DIGESTS[partitionable][name]


def test_jit_retraces_when_the_stream_layout_changes():
    draw = invarax.jit(lambda k: random.bits(k, (4,)))
    key = random.PRNGKey(42)
    assert draw(key).tolist() == BITS_42[:4]
    invarax.config.update("jax_threefry_partitionable", False)
    try:
        assert draw(key).tolist() == random.bits(key, (4,)).tolist()
    finally:
        invarax.config.update("jax_threefry_partitionable", True)


# ---------------------------------------------------------------------------------------
# Agreement with JAX


SEEDS = [0, 1, 42, -1, -5, 2**31, 2**32 + 7, 2**40 + 3, -(2**40), 2**63 - 1,
         np.uint32(4_000_000_000), np.int32(-3), np.int64(2**40 + 3), np.uint64(2**63 + 5)]


@pytest.mark.parametrize("seed", SEEDS, ids=repr)
def test_prng_key_matches_jax(seed):
    jax = pytest.importorskip("jax")
    np.testing.assert_array_equal(random.PRNGKey(seed), jax.random.PRNGKey(seed))


def test_split_fold_in_bits_match_jax(partitionable):
    jax = pytest.importorskip("jax")
    for seed in (0, 7, 123456):
        key, jkey = random.PRNGKey(seed), jax.random.PRNGKey(seed)
        for num in (1, 2, 3, 5, (2, 3), 0):
            np.testing.assert_array_equal(random.split(key, num), jax.random.split(jkey, num))
        for data in (0, 1, 2**32 - 1, np.int32(-7), np.uint32(7)):
            np.testing.assert_array_equal(random.fold_in(key, data),
                                          jax.random.fold_in(jkey, data))
        for dtype in (np.uint8, np.uint16, np.uint32):
            for shape in ((3, 5), (7,), (1,), (2, 3, 3), ()):  # odd word counts pad with 0
                np.testing.assert_array_equal(random.bits(key, shape, dtype),
                                              jax.random.bits(jkey, shape, dtype))
        np.testing.assert_array_equal(random.bits(key, (0,)), jax.random.bits(jkey, (0,)))


def test_shift_primitives_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    for dtype in (np.uint32, np.int32, np.uint8):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 200, endpoint=True).astype(dtype)
        s = rng.integers(0, 2 * info.bits, 200).astype(dtype)
        for ours, theirs in ((invarax.lax.shift_left, jax.lax.shift_left),
                             (invarax.lax.shift_right_logical, jax.lax.shift_right_logical)):
            np.testing.assert_array_equal(ours(x, s), theirs(x, s))


@pytest.mark.parametrize("seed", [0, 1, 123])
def test_uniform_randint_bernoulli_match_jax(seed, partitionable):
    jax = pytest.importorskip("jax")
    jr = jax.random
    key, jkey = random.PRNGKey(seed), jr.PRNGKey(seed)
    np.testing.assert_array_equal(random.uniform(key, (1000,)), jr.uniform(jkey, (1000,)))
    for lo, hi in ((-3.5, np.arange(7.0) + 0.3), (1e-3, 7e5), (np.float32(-1e-30), 2.5)):
        np.testing.assert_array_equal(random.uniform(key, (50, 7), minval=lo, maxval=hi),
                                      jr.uniform(jkey, (50, 7), minval=lo, maxval=hi))
    for p, mode in ((0.3, "low"), (np.linspace(0, 1, 50, dtype=np.float32), "low"),
                    (0.3, "high")):
        np.testing.assert_array_equal(random.bernoulli(key, p, (50,), mode),
                                      jr.bernoulli(jkey, p, (50,), mode))
    for lo, hi, dtype in [(0, 10, None), (-5, 1000, None), (-(2**31), 2**31 - 1, None),
                          (0, 256, np.uint8), (-3, 7, np.int8), (5, 5, None),
                          (0, 2**31 - 1, np.uint32), (np.arange(4), 9, np.int16)]:
        ours, theirs = random.randint(key, (3, 4), lo, hi, dtype), jr.randint(jkey, (3, 4), lo,
                                                                           hi, dtype)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_permutation_choice_categorical_match_jax(seed, partitionable):
    jax = pytest.importorskip("jax")
    jr = jax.random
    key, jkey = random.PRNGKey(seed), jr.PRNGKey(seed)

    def same(ours, theirs):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)

    for n in (1, 5, 100, 2000):  # 2000 takes two sorting rounds
        same(random.permutation(key, n), jr.permutation(jkey, n))
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    for axis in (0, 1, -1):
        for independent in (False, True):
            same(random.permutation(key, x, axis, independent),
                 jr.permutation(jkey, x, axis, independent))
    p = np.array([0.1, 0.2, 0.3, 0.05, 0.35], np.float32)
    for args, kwargs in [((10, (3, 2)), {}), ((10, (4,)), {"replace": False}),
                         ((x, (2,)), {"axis": 1}), ((x, (3,)), {"replace": False}),
                         ((5, (50,)), {"p": p}), ((5, (3,)), {"replace": False, "p": p})]:
        same(random.choice(key, *args, **kwargs), jr.choice(jkey, *args, **kwargs))
    rng = np.random.default_rng(seed)
    logits = np.log(rng.dirichlet(np.ones(7), size=3)).astype(np.float32)
    big = rng.normal(size=(200, 50)).astype(np.float32)
    for args, kwargs in [((logits,), {}), ((logits,), {"axis": 0}),
                         ((logits,), {"shape": (1000, 3)}),
                         ((logits,), {"shape": (4, 3), "replace": False}),
                         ((big,), {"shape": (20, 200)})]:
        same(random.categorical(key, *args, **kwargs), jr.categorical(jkey, *args, **kwargs))


def same_bits(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    return ours.view(f"u{ours.dtype.itemsize}") == theirs.view(f"u{ours.dtype.itemsize}")


def test_continuous_samplers_match_jax_bitwise(partitionable):
    # XLA's log, log1p and erf are reproduced (random/_xla_math.py): float32 draws are JAX's
    # bits, all of them.
    jax = pytest.importorskip("jax")
    jr = jax.random
    key, jkey = random.PRNGKey(3), jr.PRNGKey(3)
    n = 100_000
    lows = np.linspace(-4, 1, 50, dtype=np.float32)
    for name, args, kwargs in [
            ("normal", ((n,),), {}), ("exponential", ((n,),), {}), ("gumbel", ((n,),), {}),
            ("gumbel", ((n,),), {"mode": "high"}), ("logistic", ((n,),), {}),
            ("laplace", ((n,),), {}), ("truncated_normal", (-1.0, 2.0, (n,)), {}),
            ("truncated_normal", (-5.0, -0.1, (n,)), {}),
            ("truncated_normal", (lows, lows + 1.5, (n // 50, 50)), {})]:
        ours = getattr(random, name)(key, *args, **kwargs)
        assert same_bits(ours, getattr(jr, name)(jkey, *args, **kwargs)).all(), name


@pytest.fixture
def jax_x64():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    invarax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", False)


def test_x64_matches_jax(jax_x64, partitionable):
    jr = jax_x64.random
    for seed in (0, 2**40 + 3, -5, 2**63 - 1, np.uint64(2**63 + 5)):
        np.testing.assert_array_equal(random.PRNGKey(seed), jr.PRNGKey(seed))
    key, jkey = random.PRNGKey(7), jr.PRNGKey(7)
    np.testing.assert_array_equal(random.bits(key, (5,)), jr.bits(jkey, (5,)))
    for lo, hi in ((0.0, 1.0), (-3.5, np.arange(7.0) + 0.3), (1e-3, 7e5)):
        ours = random.uniform(key, (40, 7), minval=lo, maxval=hi)
        assert ours.dtype == np.float64
        np.testing.assert_array_equal(ours, jr.uniform(jkey, (40, 7), minval=lo, maxval=hi))
    np.testing.assert_array_equal(random.randint(key, (100,), -(10**12), 10**12),
                                  jr.randint(jkey, (100,), -(10**12), 10**12))
    # float64 normal: XLA's log1p calls the C library's log, invarax's is its own (N6,
    # invarax/kernels/elementary.py); they differ in the last bit for about one input in
    # ten thousand (measured: 30 of 200,000 normals), and normal by up to 3 ulp.
    ours, theirs = random.normal(key, (200_000,)), jr.normal(jkey, (200_000,))
    assert ulps(ours, theirs).max() <= 3
    assert same_bits(ours, theirs).mean() > 0.9998


def test_fma_is_correctly_rounded(x64):
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        # few-bit operands make ties of the final rounding common
        a = (rng.integers(1, 2**12, 2000) * 2.0 ** rng.integers(-20, 0, 2000)).astype(dtype)
        b = (rng.integers(1, 2**14, 2000) * 2.0 ** rng.integers(-20, 0, 2000)).astype(dtype)
        c = (rng.integers(-(2**20), 2**20, 2000) * 2.0 ** rng.integers(-50, 0, 2000)).astype(dtype)
        got = np.asarray(fma(a, b, c))
        assert got.dtype == dtype
        exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
                 for x, y, z in zip(a, b, c, strict=True)]
        for g, v in zip(got, exact, strict=True):
            below, above = np.nextafter(g, dtype(-np.inf)), np.nextafter(g, dtype(np.inf))
            err = abs(Fraction(float(g)) - v)
            assert err <= abs(Fraction(float(below)) - v) and err <= abs(Fraction(float(above)) - v)


# ---------------------------------------------------------------------------------------
# Transformations


def test_jit_and_vmap_give_the_eager_bits():
    keys = random.split(random.PRNGKey(0), 5)

    def draw(k):
        return (random.normal(k, (3,)), random.uniform(k, (2,), minval=-2.0, maxval=3.0),
                random.randint(k, (4,), 0, 100), random.bernoulli(k, 0.4, (3,)),
                random.split(k, 3), random.fold_in(k, 9), random.bits(k, (2,)),
                random.permutation(k, 6), random.choice(k, 5, (3,), p=jnp.full(5, 0.2)),
                random.categorical(k, jnp.zeros((2, 4)), shape=(3, 2)),
                random.truncated_normal(k, -1.0, 1.0, (2,)), random.gumbel(k, (2,)))

    eager = [draw(k) for k in keys]
    for f in (invarax.vmap(draw), invarax.jit(invarax.vmap(draw)),
              invarax.vmap(invarax.jit(draw))):
        batched = f(keys)
        for i, one in enumerate(eager):
            for a, b in zip(one, batched, strict=True):
                np.testing.assert_array_equal(a, b[i])
    for a, b in zip(invarax.jit(draw)(keys[2]), eager[2], strict=True):
        np.testing.assert_array_equal(a, b)


def test_vmap_over_seeds():
    seeds = jnp.arange(4)
    keys = invarax.vmap(random.PRNGKey)(seeds)
    np.testing.assert_array_equal(keys, np.stack([random.PRNGKey(i) for i in range(4)]))


def test_grad_treats_keys_as_constants():
    key = random.PRNGKey(1)
    noise = random.normal(key, (3,))
    g = invarax.grad(lambda x: jnp.sum(x * random.normal(key, (3,))))(jnp.ones(3))
    np.testing.assert_array_equal(g, noise)
    lo_grad = invarax.grad(lambda lo: jnp.sum(random.uniform(key, (3,), minval=lo)))(0.0)
    assert np.isfinite(lo_grad)
    with pytest.raises(TypeError, match="uint32.*PRNG keys .* cannot be differentiated"):
        invarax.grad(lambda k, x: jnp.sum(x * random.normal(k, (3,))))(key, jnp.ones(3))


# ---------------------------------------------------------------------------------------
# Statistics on large samples


def test_statistics():
    stats = pytest.importorskip("scipy.stats")
    key = random.PRNGKey(2024)
    n = 200_000
    cases = [
        (random.uniform(key, (n,)), stats.uniform().cdf, 0.5, 1 / 12),
        (random.normal(key, (n,)), stats.norm().cdf, 0.0, 1.0),
        (random.exponential(key, (n,)), stats.expon().cdf, 1.0, 1.0),
        (random.gumbel(key, (n,)), stats.gumbel_r().cdf, np.euler_gamma, np.pi**2 / 6),
        (random.logistic(key, (n,)), stats.logistic().cdf, 0.0, np.pi**2 / 3),
        (random.laplace(key, (n,)), stats.laplace().cdf, 0.0, 2.0),
    ]
    for sample, cdf, mean, var in cases:
        x = np.asarray(sample, np.float64)
        assert abs(x.mean() - mean) < 5 * np.sqrt(var / n)
        assert abs(x.var() - var) < 0.03 * var
        assert stats.kstest(x, cdf).pvalue > 1e-3
    t = np.asarray(random.truncated_normal(key, -1.0, 2.0, (n,)), np.float64)
    assert t.min() > -1 and t.max() < 2
    assert stats.kstest(t, stats.truncnorm(-1.0, 2.0).cdf).pvalue > 1e-3
    ints = np.asarray(random.randint(key, (n,), 0, 10))
    assert stats.chisquare(np.bincount(ints, minlength=10)).pvalue > 1e-3
    assert abs(np.asarray(random.bernoulli(key, 0.3, (n,))).mean() - 0.3) < 0.005
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    cats = np.asarray(random.categorical(key, jnp.log(jnp.asarray(probs)), shape=(n,)))
    assert stats.chisquare(np.bincount(cats, minlength=4), n * probs).pvalue > 1e-3
    draws = np.asarray(random.choice(key, 4, (n,), p=jnp.asarray(probs)))
    assert stats.chisquare(np.bincount(draws, minlength=4), n * probs).pvalue > 1e-3
    perms = invarax.vmap(lambda k: random.permutation(k, 4))(random.split(key, 24_000))
    first = np.asarray(perms)[:, 0]
    assert stats.chisquare(np.bincount(first, minlength=4)).pvalue > 1e-3


# ---------------------------------------------------------------------------------------
# Bad input


def test_bad_keys_and_seeds():
    with pytest.raises(TypeError, match="uint32\\[2\\]"):
        random.normal(jnp.zeros(2), (3,))
    with pytest.raises(TypeError, match="uint32\\[2\\]"):
        random.split(jnp.zeros(3, jnp.uint32))
    with pytest.raises(ValueError, match="vmap"):
        random.uniform(random.split(random.PRNGKey(0)), (2,))
    for seed in (1.5, 2.0, np.float64(3.0)):
        with pytest.raises(TypeError, match="seed must be an integer"):
            random.PRNGKey(seed)
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(jnp.arange(2))
    with pytest.raises(OverflowError):
        random.PRNGKey(2**64)
    with pytest.raises(OverflowError, match="uint32"):
        random.fold_in(random.PRNGKey(0), -1)


def test_bad_shapes_bounds_and_probabilities():
    key = random.PRNGKey(0)
    with pytest.raises(TypeError, match="tuple of ints"):
        random.uniform(key, 3)
    with pytest.raises(TypeError, match="tuple of ints"):
        random.normal(key, (2.5,))
    with pytest.raises(ValueError, match="negative"):
        random.normal(key, (-1,))
    with pytest.raises(ValueError, match="does not broadcast"):
        random.uniform(key, (3,), minval=jnp.zeros(4))
    with pytest.raises(ValueError, match="minval must be <= maxval"):
        random.uniform(key, (3,), minval=2.0, maxval=1.0)
    with pytest.raises(ValueError, match="minval must be <= maxval"):
        random.randint(key, (3,), 5, 1)
    with pytest.raises(ValueError, match="lower must be <= upper"):
        random.truncated_normal(key, 1.0, -1.0)
    for p in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            random.bernoulli(key, p, (2,))
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(key, (2,), jnp.int32)
    with pytest.raises(TypeError, match="integer dtype"):
        random.randint(key, (2,), 0, 3, jnp.float32)
    with pytest.raises(ValueError, match="unsigned"):
        random.bits(key, (2,), jnp.int32)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        random.choice(key, 3, (2,), p=jnp.array([0.5, 1.5, 0.0]))
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(key, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="integer or an array"):
        random.permutation(key, 2.5)
    with pytest.raises(ValueError, match="batch shape"):
        random.categorical(key, jnp.zeros((2, 3)), shape=(4,))


def test_normal_float16_matches_jax_bitwise():
    # issue 20.10: float16 raised in erf_inv; XLA computes a float16 erf_inv in float32
    draws = random.normal(random.PRNGKey(5), (20_000,), dtype=jnp.float16)
    assert draws.dtype == np.float16
    jitted = invarax.jit(lambda k: random.normal(k, (20_000,), dtype=jnp.float16))
    assert same_bits(jitted(random.PRNGKey(5)), draws).all()
    assert abs(float(np.asarray(draws, np.float64).mean())) < 0.03
    x = np.linspace(-1, 1, 4001).astype(np.float16)
    jax = pytest.importorskip("jax")
    jr = jax.random
    assert same_bits(draws, jr.normal(jr.PRNGKey(5), (20_000,), dtype=jax.numpy.float16)).all()
    assert same_bits(invarax.lax.erf_inv(x), jax.lax.erf_inv(x)).all()

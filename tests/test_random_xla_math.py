"""invarax.random's XLA-compatible log, log1p, erf and erf_inv (random/_xla_math.py): bitwise
JAX's on float32 inputs of every exponent, stored digests for runs without JAX, and the
public jnp.log1p / lax.erf_inv left invarax's own."""

import hashlib
import os

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels.elementary import elementary
from invarax.ops import special
from invarax.ops.fused import fma
from invarax.random import _xla_math as xla

TINY = np.finfo(np.float32).tiny


def inputs(low=-np.inf, n=300_000):
    """Random float32 bit patterns (every sign and exponent) above ``low``, without NaNs and
    subnormals (XLA flushes those to zero), plus special values and a uniform sample."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    specials = np.array([0.0, -0.0, np.inf, 1.0, -1.0, 0.41421354, -0.41421354,
                         np.nextafter(np.float32(-1), np.float32(0)), TINY, 3.7439213, -3.7439213,
                         np.float32(np.finfo(np.float32).max)], np.float32)
    x = np.concatenate([x, specials, rng.uniform(-1, 1, n // 3).astype(np.float32)])
    keep = ~np.isnan(x) & ((np.abs(x) >= TINY) | (x == 0)) & (x >= low)
    return x[keep]


def bits(x):
    return np.asarray(x).view(np.uint32)


def digest(x):
    return hashlib.sha256(np.ascontiguousarray(bits(x)).tobytes()).hexdigest()[:16]


# Digests of the float32 results on inputs(...) (the values checked against JAX 0.10.2 below).
DIGESTS = {"log": "7a1bcdcc8729669c", "log1p": "518c7fbe143a7c7b",
           "erf": "2251a177203c8c1f", "erf_inv": "377719384d752d05"}

SQRT_HALF = np.float32(1 / np.float32(np.sqrt(2)))


def cases():
    """name -> (our function, JAX's function as JAX's samplers compile it, inputs)."""
    x = inputs(-1)
    uniform = x[(np.abs(x) <= 1) & ((np.abs(x) >= 2 * TINY) | (x == 0))]  # no subnormal results
    return {
        "log": (xla.log, lambda j, x: j.lax.log(x), inputs(0)),
        "log1p": (xla.log1p, lambda j, x: j.lax.log1p(x), inputs(-1)),
        # truncated_normal's erf(bound / sqrt(2)): XLA fuses it with the scaling
        "erf": (lambda x: xla.erf(x * SQRT_HALF),
                lambda j, x: j.lax.erf(x / np.float32(np.sqrt(2))),
                inputs()[np.abs(inputs()) * SQRT_HALF >= TINY]),
        "erf_inv": (xla.erf_inv, lambda j, x: j.lax.erf_inv(x), uniform),
    }


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_matches_stored_digests(name):
    ours, _, x = cases()[name]
    out = ours(jnp.asarray(x))
    assert out.dtype == np.float32
    assert digest(out) == DIGESTS[name]


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_matches_jax_bitwise(name):
    jax = pytest.importorskip("jax")
    ours, theirs, x = cases()[name]
    expected = np.asarray(jax.jit(lambda v: theirs(jax, v))(x))
    got = np.asarray(ours(jnp.asarray(x)))
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(bits(got)[~nan], bits(expected)[~nan])


#: Every STRIDE-th value of the uniform grid, and its 4096 values at each end (erf_inv's
#: tails): 1.3 s, most of it JAX's compile. INVARAX_NORMAL_STRIDE=1 checks all 2**23
#: values: 4.2 s (both measured on 2 shared cores).
STRIDE = int(os.environ.get("INVARAX_NORMAL_STRIDE", "16"))


def test_normal_path_for_the_uniform_values():
    # normal is sqrt(2) * erf_inv(u) for u on a grid of 2**23 values: against JAX, bitwise
    jax = pytest.importorskip("jax")
    low = np.nextafter(np.float32(-1), np.float32(0))
    steps = np.arange(2**23)
    steps = steps[(steps % STRIDE == 0) | (steps < 4096) | (steps >= 2**23 - 4096)]
    grid = steps.astype(np.float32) * np.float32(2.0**-23)
    u = np.maximum(low, np.asarray(fma(grid, np.float32(2.0), low)))
    sqrt2 = np.float32(np.sqrt(2))
    expected = np.asarray(jax.jit(lambda v: jax.lax.erf_inv(v) * sqrt2)(u))
    got = np.asarray(lax.mul(xla.erf_inv(jnp.asarray(u)), sqrt2))
    np.testing.assert_array_equal(bits(got), bits(expected))


def test_public_functions_keep_their_own_semantics():
    # jnp.log1p and lax.erf_inv are invarax's own kernels (NumPy's log1p and XLA's polynomials
    # on it with the flag off): only the samplers use XLA's formulas
    x = inputs(-1)
    u = x[np.abs(x) < 1]
    np.testing.assert_array_equal(bits(jnp.log1p(x)), bits(elementary("log1p", x)))
    public = np.asarray(special.erf_inv(u))
    np.testing.assert_array_equal(bits(public), bits(elementary("erf_inv", u)))
    assert not np.array_equal(bits(public), bits(xla.erf_inv(jnp.asarray(u))))
    with invarax.config.flag("invarax_exact_elementary", False):
        with np.errstate(divide="ignore"):  # log1p(-1)
            np.testing.assert_array_equal(bits(jnp.log1p(x)), bits(np.log1p(x)))
        public = np.asarray(special.erf_inv(u))
        np.testing.assert_array_equal(bits(public),
                                      bits(special.erf_inv_on(jnp.asarray(u), lax.log1p)))
        assert not np.array_equal(bits(public), bits(xla.erf_inv(jnp.asarray(u))))


# jax.lax.log1p of LOG1P_64_X in float64 (JAX 0.10.2): XLA's rational is up to ~100 ulp
# off near its bound (-0.41 here), which these values keep.
LOG1P_64_X = [-0.9, -0.5, -0.41, -0.3, 1e-10, 0.2, 0.41, 0.5, 3.0, 1e300]
LOG1P_64 = ["-0x1.26bb1bbb55516p+1", "-0x1.62e42fefa39efp-1", "-0x1.0e25e0f715c84p-1",
            "-0x1.6d3c324e13f4fp-2", "0x1.b7cdfd9d1d693p-34", "0x1.7565011e49676p-3",
            "0x1.5fd5fabe64085p-2", "0x1.9f323ecbf984cp-2", "0x1.62e42fefa39efp+0",
            "0x1.5963447f87fb5p+9"]


def test_float64_log1p(x64):
    # float64: XLA's rational below sqrt(2) - 1, log(1 + x) above (bitwise JAX's where
    # NumPy's log rounds as the C library's, which XLA calls: all but a few in ten thousand)
    got = np.asarray(xla.log1p(jnp.asarray(LOG1P_64_X)))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [float.fromhex(h) for h in LOG1P_64])

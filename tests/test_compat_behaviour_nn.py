"""``nn`` behaviours that Equinox's tests and notebooks found different, each checked against
Equinox (skipped without it)."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp

eqx = pytest.importorskip("equinox")
jax = pytest.importorskip("jax")


def _prelu_class(ex, jx):
    class PReLU(ex.Module):
        slope: object

        def __init__(self):
            self.slope = jx.numpy.array(0.1)

        def __call__(self, x):
            return jx.numpy.where(x > 0, x, self.slope * x)

    return PReLU


def _mlp_with_learnt_slopes(ex, jx, scan):
    """Equinox's MLP with a PReLU whose slopes differ per layer and neuron."""
    prelu = _prelu_class(ex, jx)()
    mlp = ex.nn.MLP(2, 3, 8, 2, activation=prelu, final_activation=prelu, scan=scan,
                    key=jx.random.key(0))
    slopes = np.linspace(-0.3, 0.7, 16, dtype=np.float32).reshape(2, 8)
    mlp = ex.tree_at(lambda m: m.activation.slope, mlp, jx.numpy.asarray(slopes))
    return ex.tree_at(lambda m: m.final_activation.slope, mlp,
                      jx.numpy.array([0.5, -2.0, 3.0]))


@pytest.mark.parametrize("scan", [False, True])
def test_mlp_learnt_activation_has_a_copy_per_layer_and_neuron(scan):
    ours = _mlp_with_learnt_slopes(invarax, invarax, scan)
    theirs = _mlp_with_learnt_slopes(eqx, jax, scan)
    assert ours.activation.slope.shape == theirs.activation.slope.shape == (2, 8)
    assert ours.final_activation.slope.shape == theirs.final_activation.slope.shape == (3,)
    x = np.array([[0.3, -1.2], [2.0, 0.5], [-0.7, -0.1]], np.float32)
    out = invarax.vmap(ours)(x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(jax.vmap(theirs)(x)), rtol=1e-6,
                               atol=1e-7)
    assert_bitwise(ours(x), out)  # leading batch dimensions: rows bitwise vmap's (N1)
    assert_bitwise(invarax.jit(ours)(x), out)  # N3

    def loss(m, lib):
        return lib.vmap(m)(x).sum()

    ours_g = invarax.filter_grad(lambda m: loss(m, invarax))(ours)
    theirs_g = eqx.filter_grad(lambda m: loss(m, jax))(theirs)
    for a, b in [(ours_g.activation.slope, theirs_g.activation.slope),
                 (ours_g.final_activation.slope, theirs_g.final_activation.slope)]:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_mlp_learnt_activation_scan_is_bitwise_unscanned():
    x = jnp.array([[0.3, -1.2], [2.0, 0.5]])
    scanned, plain = (_mlp_with_learnt_slopes(invarax, invarax, s) for s in (True, False))
    assert_bitwise(scanned(x), plain(x))


def test_mlp_scalar_out_and_depth_0_keep_equinox_structure():
    for lib, ex in [(invarax, invarax), (jax, eqx)]:
        prelu = _prelu_class(ex, lib)()
        mlp = ex.nn.MLP(2, "scalar", 4, 0, activation=prelu, final_activation=prelu,
                        key=lib.random.key(0))
        assert mlp.activation.slope.shape == (0, 4)
        assert mlp.final_activation.slope.shape == ()


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float32"])
@pytest.mark.parametrize("padding", [0, 1])
def test_max_pool_of_integers_and_bools_as_equinox(dtype, padding):
    # -inf, MaxPool's init, was cast to the operand's dtype (a RuntimeWarning for ints, an
    # error for bools); as JAX, it is max's identity whatever the operand's dtype
    x = (np.arange(16).reshape(1, 4, 4) % 5).astype(dtype)
    ours = invarax.nn.MaxPool2d(2, 2, padding=padding)(jnp.asarray(x))
    theirs = eqx.nn.MaxPool2d(2, 2, padding=padding)(jax.numpy.asarray(x))
    assert_bitwise(ours, np.asarray(theirs))


def test_reduce_window_init_is_the_identity_in_either_dtype():
    lax = invarax.lax
    x = jnp.arange(4, dtype=jnp.int8)
    for init in (-np.inf, -128):
        assert_bitwise(lax.reduce_window(x, init, lax.max, (2,), (1,), "VALID"),
                       np.int8([1, 2, 3]))
    with pytest.raises(NotImplementedError, match="identities"):
        lax.reduce_window(x, 1.5, lax.max, (2,), (1,), "VALID")


@pytest.mark.parametrize(("jx", "ex"), [(invarax, invarax), (jax, eqx)])
def test_dropout_deterministic_and_generic_layers_as_equinox(jx, ex):
    assert ex.nn.Dropout(0.3, inference=True).deterministic is True
    assert ex.nn.Dropout(0.3).deterministic is False
    linear = ex.nn.Linear(2, 2, key=jx.random.key(0))
    spectral = ex.nn.SpectralNorm[ex.nn.Linear](linear, "weight", key=jx.random.key(1))
    assert spectral.__orig_class__ == ex.nn.SpectralNorm[ex.nn.Linear]
    assert ex.nn.WeightNorm[ex.nn.Linear](linear).__orig_class__ == ex.nn.WeightNorm[
        ex.nn.Linear]
    assert ex.nn.StateIndex[int] is not None


@pytest.mark.parametrize("layer", ["Linear", "Conv2d", "GRUCell"])
def test_complex_layers_initialise_as_equinox(layer):
    # Equinox draws a complex parameter's real and imaginary parts from split keys
    args = {"Linear": (3, 2), "Conv2d": (2, 3, 2), "GRUCell": (3, 2)}[layer]
    theirs = getattr(eqx.nn, layer)(*args, key=jax.random.PRNGKey(5), dtype=jax.numpy.complex64)
    ours = getattr(invarax.nn, layer)(*args, key=invarax.random.PRNGKey(5), dtype=jnp.complex64)
    for mine, want in zip(invarax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        assert mine.dtype == jnp.complex64
        assert_bitwise(mine, want)


def test_prelu_promotes_under_strict_flags_as_equinox():
    # Equinox's PReLU promotes with the standard rules whatever the flags say
    x = np.array([[-1, -2, -3], [-1, 2, 3]], np.int32)
    with invarax.numpy_dtype_promotion("strict"), invarax.numpy_rank_promotion("raise"):
        ours = invarax.nn.PReLU(jnp.array([0.2, 0.1, 0.1]))(jnp.asarray(x))
    with jax.numpy_dtype_promotion("strict"), jax.numpy_rank_promotion("raise"):
        theirs = eqx.nn.PReLU(jax.numpy.array([0.2, 0.1, 0.1]))(jax.numpy.asarray(x))
    assert_bitwise(ours, theirs)


def test_normalisation_and_attention_compute_in_float32_under_strict_as_equinox():
    # Equinox computes in result_type(x, float32) with the standard rules whatever the flag
    q = np.array([[1.0]], np.float16)
    k = np.array([[9.0], [1.0]], np.float16)
    x = np.linspace(-1, 1, 8).astype(np.float16)
    with invarax.numpy_dtype_promotion("strict"):
        ours = (invarax.nn._attention.dot_product_attention_weights(jnp.asarray(q),
                                                                    jnp.asarray(k)),
                invarax.nn.LayerNorm(8, dtype=jnp.float16)(jnp.asarray(x)))
    with jax.numpy_dtype_promotion("strict"):
        theirs = (eqx.nn._attention.dot_product_attention_weights(jax.numpy.asarray(q),
                                                                  jax.numpy.asarray(k)),
                  eqx.nn.LayerNorm(8, dtype=jax.numpy.float16)(jax.numpy.asarray(x)))
    for got, want in zip(ours, theirs, strict=True):
        assert got.dtype == jnp.float16
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                                   rtol=2e-3)

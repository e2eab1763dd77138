"""Defects reported by a new user (issue 18), each with the behaviour JAX has."""

import io

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax.cli import _demo as cli_demo


def _loss_with_aux(x):
    return jnp.sum(x**2), {"name": "run", "step": 3, "ratio": 0.5, "x": x, "twice": 2 * x}


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev", "jacfwd"])
def test_has_aux_returns_a_non_array_aux_as_it_is(transform):
    out, aux = getattr(invarax, transform)(_loss_with_aux, has_aux=True)(jnp.ones(3))
    if transform == "value_and_grad":
        out, aux = (out[0], aux), out[1]
    assert aux["name"] == "run" and aux["step"] == 3 and aux["ratio"] == 0.5
    assert type(aux["step"]) is int and type(aux["ratio"]) is float
    np.testing.assert_array_equal(aux["x"], np.ones(3, np.float32))
    np.testing.assert_array_equal(aux["twice"], np.full(3, 2, np.float32))


def test_has_aux_non_array_aux_through_vjp_jvp_linearize():
    x = jnp.arange(3.0)
    for aux in (
        invarax.vjp(_loss_with_aux, x, has_aux=True)[2],
        invarax.jvp(_loss_with_aux, (x,), (jnp.ones(3),), has_aux=True)[2],
        invarax.linearize(_loss_with_aux, x, has_aux=True)[2],
    ):
        assert (aux["name"], aux["step"], aux["ratio"]) == ("run", 3, 0.5)
        np.testing.assert_array_equal(aux["twice"], 2 * np.arange(3, dtype=np.float32))


def test_has_aux_grad_values_unchanged_by_a_non_array_aux():
    g, _ = invarax.grad(_loss_with_aux, has_aux=True)(jnp.arange(3.0))
    assert np.array_equal(g, invarax.grad(lambda x: jnp.sum(x**2))(jnp.arange(3.0)))


def test_jit_of_grad_still_rejects_a_string_output_as_jax():
    with pytest.raises(TypeError, match="str 'run'"):
        invarax.jit(invarax.grad(_loss_with_aux, has_aux=True))(jnp.ones(3))


def test_asarray_of_a_strided_array_is_c_contiguous():
    x = invarax.vmap(lambda r: r * 2, out_axes=1)(jnp.ones((3, 4)))
    a = np.asarray(x)
    assert a.flags.c_contiguous and not a.flags.writeable  # as JAX: read-only
    assert a.view(np.uint32).shape == (4, 3)
    assert np.asarray(x, dtype=np.float64).flags.c_contiguous
    assert np.array(x, copy=True).flags.c_contiguous
    assert np.asarray(jnp.float32(3)).shape == ()


def test_demo_says_why_it_fails():
    out = io.StringIO()
    assert cli_demo.demo(out, steps=2, png="", peers=False) == 1
    text = out.getvalue()
    assert "invarax demo: exit status 1: training did not converge" in text
    assert "10x" in text


def test_nn_tanh_is_jnp_tanh():
    x = jnp.linspace(-3.0, 3.0, 7)
    assert np.array_equal(invarax.nn.tanh(x), jnp.tanh(x))
    assert "tanh" in invarax.nn.__all__

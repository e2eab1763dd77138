"""``check_grads`` (tests/ad_check.py) passes correct rules and catches wrong ones.

Wrong rules are registered on temporary primitives, removed again after each test.
"""

import re

import numpy as np
import pytest
from ad_check import check_grads

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.core.trace import PRIMITIVES, Primitive
from invarax.interpreters import ad

X = np.array([0.3, -1.2, 0.7])


@pytest.fixture
def temporary_primitives():
    """``make(name, impl)``: a new elementwise primitive, unregistered after the test."""
    made = []

    def make(name, impl):
        prim = Primitive(f"test_ad_check_{name}")
        prim.def_impl(impl)
        prim.def_abstract_eval(lambda x: x)
        made.append(prim)
        return prim

    yield make
    for prim in made:
        del PRIMITIVES[prim.name]
        ad.jvp_rules.pop(prim, None)
        ad.transpose_rules.pop(prim, None)


def _numbers(message):
    return [float(s) for s in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", message)]


def test_correct_rules_pass(x64):
    check_grads(jnp.sin, (X,), order=2)
    check_grads(lambda x, y: {"p": x * y, "q": (jnp.exp(x),)}, (X, X[::-1].copy()), order=2)
    check_grads(lambda d: d["a"] * jnp.tanh(d["b"]), ({"a": 1.5, "b": 0.3},), order=3)


def test_wrong_jvp_is_caught_by_finite_differences(x64, temporary_primitives):
    bad_sin = temporary_primitives("sin_jvp_off_by_1_percent", np.sin)
    ad.defjvp(bad_sin, lambda t, y, x: lax.mul(lax.mul(t, lax.cos(x)), 1.01))
    with pytest.raises(AssertionError, match="JVP check") as info:
        check_grads(bad_sin.bind, (X,), modes=("fwd",))
    message = str(info.value)
    assert "finite differences give" in message and "jvp gives" in message
    fd, jvp = _numbers(message)[:2]
    assert jvp == pytest.approx(1.01 * fd, rel=1e-6)


def test_wrong_transpose_is_caught_by_the_identity(x64, temporary_primitives):
    double = temporary_primitives("double_transpose_triples", lambda x: 2 * x)
    ad.deflinear(double, lambda ct, x: [lax.mul(ct, 3.0)])
    check_grads(double.bind, (X,), modes=("fwd",))  # the JVP is right
    with pytest.raises(AssertionError, match="VJP check") as info:
        check_grads(double.bind, (X,), modes=("rev",))
    lhs, rhs = _numbers(str(info.value))[:2]
    assert rhs == pytest.approx(1.5 * lhs, rel=1e-12)
    # Without forward mode (custom_vjp), finite differences stand in for the JVP.
    with pytest.raises(AssertionError, match="VJP check of .* against finite differences") as info:
        check_grads(double.bind, (X,), modes=("rev_fd",))
    lhs, rhs = _numbers(str(info.value))[:2]
    assert rhs == pytest.approx(1.5 * lhs, rel=1e-6)


def test_wrong_second_derivative_is_caught_at_order_2(x64, temporary_primitives):
    bad_cos = temporary_primitives("cos_jvp_wrong_sign", np.cos)
    ad.defjvp(bad_cos, lambda t, y, x: lax.mul(t, lax.sin(x)))  # should be -t sin(x)
    good_sin = temporary_primitives("sin_via_bad_cos", np.sin)
    ad.defjvp(good_sin, lambda t, y, x: lax.mul(t, bad_cos.bind(x)))
    check_grads(good_sin.bind, (X,), order=1)
    with pytest.raises(AssertionError, match="JVP check of JVP of"):
        check_grads(good_sin.bind, (X,), order=2, modes=("fwd",))
    with pytest.raises(AssertionError, match="JVP check of JVP of"):
        check_grads(good_sin.bind, (X,), order=2)
    # The identity alone cannot see it: both modes come from the same wrong rule.
    check_grads(good_sin.bind, (X,), order=2, modes=("rev",))


def test_primal_outputs_must_be_bitwise(x64, temporary_primitives):
    # A JVP rule that recomputes the primal differently changes a value: caught.
    sloppy = temporary_primitives("exp_primal_recomputed", np.exp)

    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        y = lax.mul(lax.exp(lax.mul(x, 0.5)), lax.exp(lax.mul(x, 0.5)))
        return y, lax.mul(t, y)

    ad.jvp_rules[sloppy] = rule
    x = np.linspace(0.1, 3.0, 50)
    with pytest.raises(AssertionError, match="primal output differs"):
        check_grads(sloppy.bind, (x,))


def test_inputs_must_be_float64(x64):
    with pytest.raises(AssertionError, match="float64"):
        check_grads(jnp.sin, (X.astype(np.float32),))


def test_switches_x64_on_for_the_check():
    assert not invarax.config.jax_enable_x64
    seen = []
    check_grads(lambda x: seen.append(x.dtype) or jnp.sin(x), (X.astype(np.float32),))
    assert set(seen) == {np.dtype(np.float64)} and not invarax.config.jax_enable_x64
    with pytest.raises(AssertionError, match="VJP check"):  # switched back after a failure
        check_grads(lambda x: jnp.sin(invarax.lax.stop_gradient(x)) + x, (X,), modes=["rev"],
                    identity_rtol=-1.0)
    assert not invarax.config.jax_enable_x64

"""custom_jvp, custom_vjp and checkpoint/remat: eager, staged, jitted and differentiated
(first and second order, pytrees, nondiff_argnums), with their error messages."""


import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import (
    checkpoint,
    custom_jvp,
    custom_vjp,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    lax,
    linearize,
    make_jaxpr,
    remat,
    value_and_grad,
    vjp,
)
from invarax.tree_util import tree_flatten


def counting(fun):
    """``fun`` with a list of its calls' arguments attached as ``.calls``."""
    def wrapper(*args):
        wrapper.calls.append(args)
        return fun(*args)

    wrapper.calls = []
    wrapper.__name__ = fun.__name__
    return wrapper


# ---------------------------------------------------------------------------------------
# custom_jvp


def make_scaled_sin():
    """sin with a JVP rule that is 10 times the true one, so a test sees which one ran."""

    @custom_jvp
    def scaled_sin(x):
        return jnp.sin(x)

    @scaled_sin.defjvp
    def scaled_sin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return scaled_sin(x), 10.0 * jnp.cos(x) * t

    return scaled_sin


def test_custom_jvp_runs_the_function_eagerly():
    @custom_jvp
    def f(x):
        return jnp.sin(x) * 2.0

    rule = counting(lambda p, t: (f(*p), t[0]))
    f.defjvp(rule)
    x = jnp.asarray([0.5, 1.5])
    assert_bitwise(f(x), jnp.sin(x) * 2.0)
    assert_bitwise(jit(f)(x), f(x))
    assert rule.calls == []


def test_custom_jvp_rule_is_used_by_every_mode():
    f = make_scaled_sin()
    x = 0.7
    want = 10.0 * np.cos(np.float32(x))
    np.testing.assert_allclose(jvp(f, (x,), (1.0,))[1], want, rtol=1e-6)
    np.testing.assert_allclose(grad(f)(x), want, rtol=1e-6)
    np.testing.assert_allclose(linearize(f, x)[1](1.0), want, rtol=1e-6)
    np.testing.assert_allclose(vjp(f, x)[1](1.0)[0], want, rtol=1e-6)
    np.testing.assert_allclose(grad(jit(f))(x), want, rtol=1e-6)
    np.testing.assert_allclose(jit(grad(f))(x), want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(f)(jnp.full(2, x)), np.diag([want] * 2), rtol=1e-6)
    np.testing.assert_allclose(jacrev(f)(jnp.full(2, x)), np.diag([want] * 2), rtol=1e-6)
    # Second order differentiates the rule: d/dx (10 cos x) = -10 sin x.
    np.testing.assert_allclose(grad(grad(f))(x), -10.0 * np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(hessian(f)(x), -10.0 * np.sin(x), rtol=1e-6)


def test_custom_jvp_stages_as_one_equation():
    f = make_scaled_sin()
    text = str(make_jaxpr(f)(1.0))
    assert text.splitlines()[1].strip().startswith("b:f32[] = custom_jvp_call[")
    assert "name=scaled_sin" in text and "jvp=scaled_sin_jvp" in text
    assert "num_consts=0" in text and "sin" in text
    inner = str(make_jaxpr(jit(lambda x: f(x) * 2.0))(1.0))
    assert "custom_jvp_call[" in inner
    # The linear part of linearize holds the rule's tangent work, not the call.
    _, f_jvp = linearize(f, jnp.ones(2))
    assert "custom_jvp_call" not in str(f_jvp.jaxpr)


def test_custom_jvp_fixes_a_nan_gradient(x64):
    @custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))

    assert np.isnan(grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(1000.0))
    assert grad(log1pexp)(1000.0) == 1.0
    check_grads(log1pexp, (np.array([-1.0, 0.3, 2.0]),), order=2)


def test_custom_jvp_with_pytrees(x64):
    @custom_jvp
    def f(params, x):
        return {"y": params["w"] * jnp.sin(x), "z": (params["b"] + x,)}

    @f.defjvp
    def f_jvp(primals, tangents):
        (params, x), (dp, dx) = primals, tangents
        out = f(params, x)
        tangent = {"y": dp["w"] * jnp.sin(x) + params["w"] * jnp.cos(x) * dx,
                   "z": (dp["b"] + dx,)}
        return out, tangent

    params = {"w": np.array([1.0, 2.0]), "b": np.array([0.5, -0.5])}
    check_grads(f, (params, np.array([0.3, 0.9])), order=2)
    g = grad(lambda p, x: jnp.sum(f(p, x)["y"]))(params, np.array([0.3, 0.9]))
    np.testing.assert_allclose(g["w"], np.sin([0.3, 0.9]))
    assert_bitwise(g["b"], jnp.zeros(2))


def test_custom_jvp_defjvps(x64):
    f = custom_jvp(lambda x, y: jnp.sin(x) * y)
    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)
    check_grads(f, (np.array([0.3, 1.2]), np.array([2.0, -1.0])), order=2)
    # None: that argument has no derivative.
    g = custom_jvp(lambda x, y: x * y)
    g.defjvps(lambda t, ans, x, y: t * y, None)
    assert grad(g, argnums=(0, 1))(2.0, 3.0) == (3.0, 0.0)
    h = custom_jvp(lambda x: x * 2.0)
    h.defjvps(None)
    assert grad(h)(1.0) == 0.0
    with pytest.raises(TypeError, match="given 1 rule.*2 argument"):
        k = custom_jvp(lambda x, y: x * y)
        k.defjvps(lambda t, ans, x, y: t * y)
        grad(k)(1.0, 2.0)


def test_custom_jvp_nondiff_argnums():
    # A function-valued argument.
    app = custom_jvp(lambda f, x: f(x), nondiff_argnums=(0,))

    @app.defjvp
    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 3.0 * t  # deliberately not f'(x)

    assert app(jnp.sin, 1.0) == jnp.sin(1.0)
    assert grad(lambda x: app(jnp.sin, x))(1.0) == 3.0
    assert jit(grad(lambda x: app(jnp.sin, x)))(1.0) == 3.0
    assert "custom_jvp_call" in str(make_jaxpr(lambda x: app(jnp.sin, x))(1.0))

    # A Python number and an array constant (not differentiated, even when traced).
    power = custom_jvp(lambda x, n, scale: scale * x ** n, nondiff_argnums=(1, 2))

    @power.defjvp
    def power_jvp(n, scale, primals, tangents):
        (x,), (t,) = primals, tangents
        return power(x, n, scale), scale * n * x ** (n - 1) * t

    assert grad(power)(2.0, 3, 1.5) == 18.0
    # scale is stop_gradient-ed: only x's derivative flows.
    assert grad(lambda s: power(2.0 * s, 3, s))(1.0) == 24.0
    # The rule receives the nondiff arguments in the order nondiff_argnums gives, as JAX.
    affine = custom_jvp(lambda a, x, b: a * x + b, nondiff_argnums=(2, 0))
    affine.defjvp(lambda b, a, p, t: (affine(a, p[0], b), (a - b) * t[0]))
    assert grad(affine, argnums=1)(5.0, 1.0, 2.0) == 3.0

    bad = custom_jvp(lambda x: x, nondiff_argnums=(3,))
    bad.defjvp(lambda p, t: (p, t))
    with pytest.raises(TypeError, match=r"nondiff_argnums=\(3,\) is out of range"):
        grad(bad)(1.0)


def test_custom_jvp_keyword_and_default_arguments():
    @custom_jvp
    def f(x, y=2.0):
        return x * y

    rule = counting(lambda primals, tangents: (f(*primals), tangents[0] * primals[1] * 10.0))
    f.defjvp(rule)
    assert grad(f)(1.0) == 20.0
    assert grad(lambda x: f(x, y=3.0))(1.0) == 30.0
    assert len(rule.calls[-1][0]) == 2  # the default is passed to the rule


def test_custom_jvp_integer_arguments_and_outputs():
    seen = []

    @custom_jvp
    def f(x, n):
        return x * n, n * 2

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, n), (tx, tn) = primals, tangents
        seen.append(tn)
        return f(x, n), (tx * n, tn)

    (y, m), (ty, tm) = jvp(f, (2.0, 3), (1.0, 0))
    assert ty == 3.0 and m == 6 and tm == 0
    assert seen[0].dtype == np.int32 and seen[0] == 0  # an integer input's zero tangent
    assert grad(lambda x: f(x, 3)[0])(2.0) == 3.0


def test_custom_jvp_closure_over_a_staged_value():
    # A custom function defined inside jit closes over a traced value: it becomes an
    # operand of the call (num_consts=1), so the jaxpr never holds a tracer.
    def outer(x, y):
        f = custom_jvp(lambda x: jnp.sin(x) * y)
        f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0] * 100.0))
        return grad(f)(x)

    assert "num_consts=1" in str(make_jaxpr(lambda x, y: custom_jvp_closing(x, y))(1.0, 2.0))
    np.testing.assert_allclose(jit(outer)(0.5, 2.0), 100.0 * np.cos(0.5), rtol=1e-6)
    assert_bitwise(jit(lambda x, y: custom_jvp_closing(x, y))(0.5, 2.0),
                   custom_jvp_closing(0.5, 2.0))


def custom_jvp_closing(x, y):
    f = custom_jvp(lambda x: jnp.sin(x) * y)
    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * y * t[0]))
    return f(x)


def test_custom_jvp_closure_over_a_differentiated_value_raises():
    with pytest.raises(TypeError, match="closes over a value that is being differentiated"):
        grad(lambda y: custom_jvp_closing(1.0, y))(2.0)


def test_custom_jvp_rule_errors():
    def with_rule(rule):
        f = custom_jvp(lambda x: jnp.sin(x))
        f.defjvp(rule)
        return f

    x = jnp.ones(3)
    with pytest.raises(TypeError, match="must return a pair"):
        jvp(with_rule(lambda p, t: p[0]), (x,), (x,))
    with pytest.raises(TypeError, match=r"tangent output is f32\[2\] for a primal output f32\[3\]"):
        jvp(with_rule(lambda p, t: (jnp.sin(p[0]), t[0][:2])), (x,), (x,))
    with pytest.raises(TypeError, match="tangent output with the primal output's structure"):
        jvp(with_rule(lambda p, t: (jnp.sin(p[0]), (t[0],))), (x,), (x,))
    # under jvp the function itself is not run (as JAX): the rule's outputs must agree
    with pytest.raises(TypeError, match=r"tangent output is f32\[3\] for a primal output f32\[1\]"):
        jvp(with_rule(lambda p, t: (p[0][:1], t[0])), (x,), (x,))
    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function"):
        custom_jvp(jnp.sin)(1.0)


def test_custom_jvp_rule_tangent_dtype(x64):
    f = custom_jvp(lambda x: jnp.sin(x))
    f.defjvp(lambda p, t: (jnp.sin(p[0]), t[0].astype(jnp.float64)))
    x = jnp.ones(3, jnp.float32)
    with pytest.raises(TypeError, match=r"tangent output is f64\[3\] for a primal output f32\[3\]"):
        jvp(f, (x,), (x,))


def test_custom_jvp_against_jax():
    jax = pytest.importorskip("jax")

    def define(custom, np_):
        @custom
        def f(x, y):
            return np_.sin(x) * y

        @f.defjvp
        def f_jvp(primals, tangents):
            (x, y), (tx, ty) = primals, tangents
            return f(x, y), 2.0 * np_.cos(x) * y * tx + np_.sin(x) * ty

        return lambda x, y: np_.sum(f(x, y) ** 2)

    x, y = np.array([0.1, 0.7], np.float32), np.array([1.5, -2.0], np.float32)
    ours = grad(define(custom_jvp, jnp), argnums=(0, 1))(x, y)
    theirs = jax.grad(define(jax.custom_jvp, jax.numpy), argnums=(0, 1))(x, y)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# custom_vjp


def make_sin_vjp():
    fwd = counting(lambda x: (jnp.sin(x), jnp.cos(x)))
    fwd.__name__ = "sin_fwd"
    bwd = counting(lambda res, g: (res * g,))
    bwd.__name__ = "sin_bwd"

    @custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(fwd, bwd)
    return f, fwd, bwd


def test_custom_vjp_runs_the_function_eagerly_and_under_jit():
    f, fwd, bwd = make_sin_vjp()
    x = jnp.asarray([0.5, 1.5])
    assert_bitwise(f(x), jnp.sin(x))
    assert_bitwise(jit(f)(x), f(x))
    assert fwd.calls == [] and bwd.calls == []
    text = str(make_jaxpr(f)(x))
    assert "custom_vjp_call[" in text and "fwd=sin_fwd" in text and "bwd=sin_bwd" in text


def test_custom_vjp_rules_are_used():
    @custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))
    f = lambda x: jnp.sum(3.0 * clip_gradient(x))
    x = jnp.asarray([1.0, 2.0])
    assert_bitwise(grad(f)(x), jnp.ones(2))
    assert_bitwise(jit(grad(f))(x), jnp.ones(2))
    assert_bitwise(grad(jit(f))(x), jnp.ones(2))
    assert_bitwise(jacrev(lambda x: 3.0 * clip_gradient(x))(x), jnp.eye(2))


def test_custom_vjp_linearize_stages_custom_lin_with_the_residuals():
    f, fwd, bwd = make_sin_vjp()
    x = jnp.asarray([0.5, 1.5])
    y, f_jvp = linearize(f, x)
    assert len(fwd.calls) == 1 and bwd.calls == []
    assert [eqn.primitive.name for eqn in f_jvp.jaxpr.eqns] == ["custom_lin"]
    assert_bitwise(f_jvp.jaxpr.consts[0], jnp.cos(x))  # the residual fwd returned
    _, f_vjp = vjp(f, x)
    assert_bitwise(f_vjp(jnp.ones(2))[0], jnp.cos(x))
    assert len(bwd.calls) == 1


@pytest.mark.parametrize("call", [
    lambda f, x: jvp(f, (x,), (x,)),
    lambda f, x: linearize(f, x)[1](x),
    lambda f, x: jacfwd(f)(x),
    lambda f, x: jit(lambda x: jvp(f, (x,), (x,)))(x),
], ids=["jvp", "linearize", "jacfwd", "jit_of_jvp"])
def test_custom_vjp_forward_mode_raises(call):
    f, _, _ = make_sin_vjp()
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a "
                                        r"custom_vjp function\."):
        call(f, jnp.ones(2))


def test_custom_vjp_second_order_differentiates_fwd_and_bwd():
    f, _, _ = make_sin_vjp()
    x = 0.7
    np.testing.assert_allclose(grad(grad(f))(x), -np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(grad(grad(grad(f)))(x), -np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(jit(grad(grad(f)))(x), -np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(hessian(lambda x: jnp.sum(f(x)))(jnp.full(2, x)),
                               np.diag([-np.sin(x)] * 2), rtol=1e-6)
    # jvp of grad: forward mode over the backward pass (bwd's ops) is fine.
    np.testing.assert_allclose(jvp(grad(f), (x,), (1.0,))[1], -np.sin(x), rtol=1e-6)


def test_custom_vjp_with_pytrees_and_none_cotangents(x64):
    @custom_vjp
    def f(params, x):
        return {"y": params["w"] * x, "s": (jnp.sum(x),)}

    def f_fwd(params, x):
        return f(params, x), (params["w"], x)

    def f_bwd(res, g):
        w, x = res
        return {"w": g["y"] * x, "b": None}, g["y"] * w + g["s"][0]

    f.defvjp(f_fwd, f_bwd)
    params = {"w": jnp.asarray([1.0, 2.0]), "b": jnp.asarray(5.0)}
    x = jnp.asarray([3.0, 4.0])
    loss = lambda p, x: jnp.sum(f(p, x)["y"] ** 2) + f(p, x)["s"][0]
    gp, gx = grad(loss, argnums=(0, 1))(params, x)
    y = np.asarray(params["w"]) * np.asarray(x)
    np.testing.assert_allclose(gp["w"], 2 * y * np.asarray(x))
    assert_bitwise(gp["b"], jnp.zeros((), jnp.float64))
    np.testing.assert_allclose(gx, 2 * y * np.asarray(params["w"]) + 1.0)
    # Whole-argument None is a zero cotangent too.
    g = custom_vjp(lambda x, y: x * y)
    g.defvjp(lambda x, y: (x * y, y), lambda y, ct: (ct * y, None))
    assert grad(g, argnums=(0, 1))(2.0, 3.0) == (3.0, 0.0)


def test_custom_vjp_nondiff_argnums():
    app = custom_vjp(lambda f, x: f(x), nondiff_argnums=(0,))
    app.defvjp(lambda f, x: (f(x), x), lambda f, x, g: (g * 5.0,))
    assert app(jnp.sin, 1.0) == jnp.sin(1.0)
    assert grad(lambda x: app(jnp.sin, x))(1.0) == 5.0
    assert jit(grad(lambda x: app(jnp.sin, x)))(1.0) == 5.0
    affine = custom_vjp(lambda a, x, b: a * x + b, nondiff_argnums=(2, 0))
    affine.defvjp(lambda a, x, b: (affine(a, x, b), None), lambda b, a, r, g: ((a - b) * g,))
    assert grad(affine, argnums=1)(5.0, 1.0, 2.0) == 3.0
    with pytest.raises(TypeError, match="argument 0 of custom_vjp function <lambda> is marked "
                                        "non-differentiable.*traced array"):
        jit(lambda s, x: app(s, x))(1.0, 2.0)


def test_custom_vjp_integer_argument():
    f = custom_vjp(lambda x, n: x * n)
    f.defvjp(lambda x, n: (x * n, n), lambda n, g: (g * n, g))  # the int cotangent is ignored
    assert grad(f)(2.0, 3) == 3.0
    g = grad(f, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[0] == 3.0 and g[1] == 0


def test_custom_vjp_bwd_errors():
    def with_bwd(bwd):
        f = custom_vjp(lambda *a: sum(a[1:], a[0] * 2.0))
        f.defvjp(lambda *a: (f(*a), None), bwd)
        return f

    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"must return a tuple with one cotangent per "
                                        r"differentiable argument \(1: arguments \[0\]\), but "
                                        r"it returned an array \(for one argument, return a "
                                        r"tuple of one: \(ct,\)\)"):
        grad(lambda x: jnp.sum(with_bwd(lambda r, g: g)(x)))(x)
    with pytest.raises(TypeError, match=r"\(2: arguments \[0, 1\]\), but it returned a tuple of "
                                        r"length 1"):
        grad(lambda x: jnp.sum(with_bwd(lambda r, g: (g,))(x, x)))(x)
    with pytest.raises(ValueError, match=r"shape/dtype f32\[2\] for argument 1, which has "
                                         r"shape/dtype f32\[3\]"):
        grad(lambda x: jnp.sum(with_bwd(lambda r, g: (g, g[:2]))(x, x)))(x)
    with pytest.raises(ValueError, match=r"shape/dtype i32\[3\] for argument 0"):
        grad(lambda x: jnp.sum(with_bwd(lambda r, g: (g.astype(jnp.int32),))(x)))(x)
    with pytest.raises(TypeError, match=r"cotangent for argument 0 that does not have the "
                                        r"argument's structure"):
        grad(lambda x: jnp.sum(with_bwd(lambda r, g: ((g, g),))(x)))(x)
    with pytest.raises(ValueError, match=r"argument 0\['b'\], which has shape/dtype f32\[\]"):
        f = custom_vjp(lambda d: d["a"] * d["b"])
        f.defvjp(lambda d: (f(d), None), lambda r, g: ({"a": g, "b": g},))
        grad(lambda x: jnp.sum(f({"a": x, "b": 2.0})))(x)


def test_custom_vjp_fwd_errors():
    f = custom_vjp(lambda x: x * 2.0)
    f.defvjp(lambda x: x * 2.0, lambda r, g: (g,))
    with pytest.raises(TypeError, match="fwd rule <lambda> of custom_vjp function <lambda> must "
                                        "return a pair"):
        grad(f)(1.0)
    g = custom_vjp(lambda x: x * 2.0)
    g.defvjp(lambda x: ((x, x), None), lambda r, g: (g,))
    # under grad the function itself is not run (as JAX), so fwd's output is the output
    with pytest.raises(TypeError, match="grad requires a function returning one scalar"):
        grad(g)(1.0)
    with pytest.raises(TypeError, match="output structure"):  # traced under vmap
        grad(lambda x: invarax.vmap(g)(x).sum())(jnp.ones(2))
    with pytest.raises(AttributeError, match="No VJP defined"):
        custom_vjp(jnp.sin)(1.0)


def test_custom_vjp_closure_over_a_differentiated_value_raises():
    def outer(y):
        f = custom_vjp(lambda x: x * y)
        f.defvjp(lambda x: (x * y, None), lambda r, g: (g * y,))
        return f(1.0)

    with pytest.raises(TypeError, match="custom_vjp function <lambda> closes over a value"):
        grad(outer)(2.0)


def test_custom_vjp_against_jax():
    jax = pytest.importorskip("jax")

    def define(custom, np_):
        f = custom(lambda x, y: np_.sin(x) * y)
        f.defvjp(lambda x, y: (f(x, y), (np_.cos(x), x, y)),
                 lambda r, g: (3.0 * r[0] * r[2] * g, np_.sin(r[1]) * g))
        return lambda x, y: np_.sum(f(x, y) ** 2)

    x, y = np.array([0.1, 0.7], np.float32), np.array([1.5, -2.0], np.float32)
    ours = grad(define(custom_vjp, jnp), argnums=(0, 1))(x, y)
    theirs = jax.grad(define(jax.custom_vjp, jax.numpy), argnums=(0, 1))(x, y)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# checkpoint / remat


def chain(x):
    return jnp.sin(jnp.sin(jnp.sin(x)))


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return jnp.sum(x * x)


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [(jnp.asarray(rng.standard_normal((4, 4)), jnp.float32),
             jnp.asarray(rng.standard_normal(4), jnp.float32)) for _ in range(3)]


def test_checkpoint_forward_is_unchanged():
    x = jnp.asarray([0.1, 0.5, 0.9])
    assert_bitwise(checkpoint(chain)(x), chain(x))
    assert_bitwise(jit(checkpoint(chain))(x), chain(x))
    text = str(make_jaxpr(checkpoint(chain))(x))
    assert "checkpoint[" in text and "prevent_cse=True" in text and "policy=None" in text
    assert remat is checkpoint


def test_checkpoint_saves_only_the_inputs():
    x = jnp.asarray([0.1, 0.5, 0.9])
    _, plain = linearize(chain, x)
    _, f_jvp = linearize(checkpoint(chain), x)
    assert len(plain.jaxpr.consts) > 1  # intermediates (cosines, sines) are residuals
    assert len(f_jvp.jaxpr.consts) == 1
    assert f_jvp.jaxpr.consts[0] is x
    assert [e.primitive.name for e in f_jvp.jaxpr.eqns] == ["checkpoint"]
    assert_bitwise(f_jvp(x), plain(x))
    params = mlp_params()
    _, m_jvp = linearize(checkpoint(mlp), params, x[:1] * jnp.ones((2, 4)))
    assert len(m_jvp.jaxpr.consts) == 7  # three (w, b) pairs and x


def test_checkpoint_recomputes_the_forward_pass():
    x = jnp.asarray([0.1, 0.5, 0.9])
    loss = lambda f: lambda x: jnp.sum(f(x))
    count = lambda f: str(make_jaxpr(grad(loss(f)))(x)).count("= sin ")
    assert count(chain) == 3
    assert count(checkpoint(chain)) == 6  # the body once forward, once again backward


def test_checkpoint_gradient_is_bitwise_the_plain_gradient():
    x = jnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    loss = lambda x: jnp.sum(chain(x) * x)
    want = grad(loss)(x)
    assert_bitwise(grad(lambda x: jnp.sum(checkpoint(chain)(x) * x))(x), want)
    assert_bitwise(grad(checkpoint(loss))(x), want)
    assert_bitwise(jit(grad(checkpoint(loss)))(x), want)
    assert_bitwise(grad(jit(checkpoint(loss)))(x), want)
    assert_bitwise(jvp(checkpoint(loss), (x,), (x,))[1], jvp(loss, (x,), (x,))[1])
    params, inputs = mlp_params(), x[:, :1] * jnp.ones((2, 4))
    for got, exp in zip(tree_flatten(grad(checkpoint(mlp))(params, inputs))[0],
                        tree_flatten(grad(mlp)(params, inputs))[0], strict=True):
        assert_bitwise(got, exp)


def test_checkpoint_per_layer():
    def mlp_remat(params, x):
        layer = checkpoint(lambda wb, x: jnp.tanh(x @ wb[0] + wb[1]))
        for wb in params:
            x = layer(wb, x)
        return jnp.sum(x * x)

    params, x = mlp_params(1), jnp.ones((3, 4))
    for got, exp in zip(tree_flatten(grad(mlp_remat)(params, x))[0],
                        tree_flatten(grad(mlp)(params, x))[0], strict=True):
        assert_bitwise(got, exp)


def test_checkpoint_higher_order(x64):
    f = checkpoint(lambda x: jnp.sin(x) * jnp.exp(x))
    check_grads(f, (np.array([0.3, -0.4]),), order=2)
    g = lambda x: jnp.sum(checkpoint(chain)(x))
    x = jnp.asarray([0.2, 0.4])
    np.testing.assert_allclose(hessian(g)(x), hessian(lambda x: jnp.sum(chain(x)))(x),
                               rtol=1e-14)
    np.testing.assert_allclose(grad(grad(grad(checkpoint(jnp.sin))))(0.5), -np.cos(0.5))
    nested = checkpoint(lambda x: checkpoint(chain)(x) * 2.0)
    assert_bitwise(grad(lambda x: jnp.sum(nested(x)))(x),
                   grad(lambda x: jnp.sum(chain(x) * 2.0))(x))


def test_checkpoint_closure_pytrees_and_static_arguments():
    # A closed-over value that is differentiated is an operand of the call.
    assert grad(lambda y: checkpoint(lambda x: x * y)(2.0))(3.0) == 2.0

    def f(d, n):
        return {"out": d["a"] ** n * d["b"]}

    g = checkpoint(f, static_argnums=(1,))
    d = {"a": jnp.asarray([1.0, 2.0]), "b": jnp.asarray(3.0)}
    out = grad(lambda d: jnp.sum(g(d, 3)["out"]))(d)
    want = grad(lambda d: jnp.sum(f(d, 3)["out"]))(d)
    assert_bitwise(out["a"], want["a"])
    assert_bitwise(out["b"], want["b"])
    assert "integer_pow" in str(make_jaxpr(lambda d: g(d, 3))(d))
    value, _ = value_and_grad(lambda x: checkpoint(chain, policy=None, prevent_cse=False)(x))(
        0.5)
    assert_bitwise(value, chain(0.5))


def test_checkpoint_of_custom_rules():
    f = make_scaled_sin()
    np.testing.assert_allclose(grad(checkpoint(f))(0.5), 10 * np.cos(0.5), rtol=1e-6)
    g, _, bwd = make_sin_vjp()
    np.testing.assert_allclose(grad(checkpoint(g))(0.5), np.cos(0.5), rtol=1e-6)
    assert len(bwd.calls) == 1


def test_stop_gradient_inside_custom_rules_and_checkpoint():
    f = checkpoint(lambda x: x * lax.stop_gradient(x))
    assert grad(f)(3.0) == 3.0


# ---------------------------------------------------------------------------------------
# issue 20.2: under jvp/grad of concrete values the primal runs on values (JAX's tutorial)


def _tutorial(lib):
    @lib.custom_jvp
    def f(x):
        if x > 0:
            return lib.numpy.sin(x)
        else:
            return lib.numpy.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        ans = f(x)
        if x > 0:
            return ans, 2 * x_dot
        else:
            return ans, 3 * x_dot

    return f


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_custom_jvp_with_python_control_flow_under_grad(x):
    f = _tutorial(invarax)
    assert grad(f)(x) == (2.0 if x > 0 else 3.0)
    out, t = jvp(f, (x,), (1.0,))
    assert_bitwise(out, jnp.sin(x) if x > 0 else jnp.cos(x))
    assert float(t) == (2.0 if x > 0 else 3.0)
    assert invarax.value_and_grad(f)(x)[1] == grad(f)(x)
    assert grad(grad(f))(x) == 0.0 and invarax.jacfwd(f)(x) == grad(f)(x)
    jax = pytest.importorskip("jax")
    g = _tutorial(jax)
    for ours, theirs in [(grad(f)(x), jax.grad(g)(x)), (jvp(f, (x,), (1.0,)),
                                                         jax.jvp(g, (x,), (1.0,))),
                         (invarax.jacrev(f)(x), jax.jacrev(g)(x)),
                         (grad(grad(f))(x), jax.grad(jax.grad(g))(x))]:
        np.testing.assert_allclose(np.asarray(ours, dtype=np.float64),
                                   np.asarray(theirs, dtype=np.float64), rtol=1e-6)


def test_custom_jvp_under_jvp_calls_the_rule_not_the_function():
    calls = []

    @custom_jvp
    def f(x):
        calls.append("f")
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append("rule")
        return jnp.sin(primals[0]), jnp.cos(primals[0]) * tangents[0]

    jvp(f, (1.0,), (1.0,))
    assert calls == ["rule"]  # as JAX: the primal function is not run


def test_custom_jvp_control_flow_still_fails_where_jax_traces():
    f = _tutorial(invarax)
    with pytest.raises(invarax.TracerBoolConversionError):
        jit(grad(f))(1.0)
    with pytest.raises(invarax.TracerBoolConversionError):
        invarax.vmap(grad(f))(jnp.ones(2))


def test_custom_jvp_grad_jit_equals_eager_and_vmap_rows():
    @custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t / (1.0 + jnp.exp(-x))

    xs = jnp.asarray(np.linspace(-3, 3, 7, dtype=np.float32))
    g = grad(lambda x: softplus(x) * x)
    eager = [g(x) for x in xs]
    for x, e in zip(xs, eager, strict=True):
        assert_bitwise(jit(g)(x), e)
    assert_bitwise(invarax.vmap(g)(xs), jnp.stack(eager))


def _vjp_tutorial(lib):
    @lib.custom_vjp
    def f(x):
        return lib.numpy.sin(x) if x > 0 else lib.numpy.cos(x)

    def fwd(x):
        return f(x), x

    def bwd(x, g):
        return ((2.0 if x > 0 else 3.0) * g,)

    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_custom_vjp_with_python_control_flow_under_grad(x):
    # as custom_jvp: fwd and bwd run on values under grad/vjp (was TracerBoolConversionError)
    f = _vjp_tutorial(invarax)
    assert grad(f)(x) == (2.0 if x > 0 else 3.0)
    out, pullback = invarax.vjp(f, x)
    assert_bitwise(out, jnp.sin(x) if x > 0 else jnp.cos(x))
    assert pullback(1.0)[0] == grad(f)(x)
    with pytest.raises(TypeError, match="forward-mode"):
        jvp(f, (x,), (1.0,))
    with pytest.raises(invarax.TracerBoolConversionError):
        jit(grad(f))(x)
    jax = pytest.importorskip("jax")
    assert float(grad(f)(x)) == float(jax.grad(_vjp_tutorial(jax))(x))

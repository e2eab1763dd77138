"""vmap of custom_jvp, custom_vjp and checkpoint: the batched call keeps the user's rules
in every order (vmap of grad, grad of vmap, jit in between), and each example's bits are
those of the unbatched call (N1).

The rules below are deliberately not the true derivatives (a JVP ten times too large, a
cotangent clipped to [-1, 1]), so a test fails if vmap bypasses them."""

import functools

import numpy as np
import pytest
from helpers import assert_bitwise

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
    vjp,
    vmap,
)
from invarax.interpreters import ad
from invarax.tree_util import tree_flatten, tree_map


@custom_jvp
def scaled_sin(x):
    return jnp.sin(x)


@scaled_sin.defjvp
def scaled_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return scaled_sin(x), 10.0 * jnp.cos(x) * t


@custom_vjp
def clip_gradient(x):
    return x


def clip_fwd(x):
    return x, None


def clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


def jvp_fn(x):
    return jnp.sum(scaled_sin(x * x)) * x[0]


def vjp_fn(x):
    return jnp.sum(3.0 * clip_gradient(jnp.sin(x)) * x)


def chain(x):
    return jnp.sin(jnp.sin(x) * x) * jnp.cos(x)


# x is used inside the checkpoint only: where an input is used both inside and outside,
# its cotangent's contributions are added in another order (JAX's too), so the gradient
# may differ from the plain one in the last bit.
def remat_fn(x):
    return jnp.sum(checkpoint(chain)(x) ** 2)


def plain_fn(x):
    return jnp.sum(chain(x) ** 2)


# Each custom function with what its derivative would be without the rule.
FUNS = {"custom_jvp": jvp_fn, "custom_vjp": vjp_fn, "checkpoint": remat_fn}


def xs(n, d=3, seed=0):
    return jnp.asarray(np.random.default_rng(seed).uniform(-2, 2, (n, d)).astype(np.float32))


def assert_rows(batched, f, *args, in_axes=0):
    """Each row of ``batched`` (a pytree, batch axis 0) is bitwise ``f`` of that example
    (``in_axes``: as vmap's, a prefix of ``args``)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)

    def example(i):
        take = lambda ax, a: tree_map(lambda x: x if ax is None else jnp.take(x, i, axis=ax), a)
        return tree_map(take, axes, args, is_leaf=lambda x: x is None)

    for i in range(tree_flatten(batched)[0][0].shape[0]):
        for got, want in zip(tree_flatten(batched)[0], tree_flatten(f(*example(i)))[0],
                             strict=True):
            assert_bitwise(np.asarray(got)[i], want)


# ---------------------------------------------------------------------------------------
# Values and gradients in both orders, bitwise per example


@pytest.mark.parametrize("name", FUNS)
@pytest.mark.parametrize("n", [1, 3, 17])
def test_vmap_of_grad_and_grad_of_vmap_are_per_example_grads(name, n):
    f, x = FUNS[name], xs(n)
    assert_rows(vmap(f)(x), f, x)
    assert_rows(vmap(grad(f))(x), grad(f), x)
    assert_rows(grad(lambda x: jnp.sum(vmap(f)(x)))(x), grad(f), x)


def test_the_rules_are_used_under_vmap():
    x = xs(4)
    # custom_jvp: the rule's derivative, 10 cos, not cos.
    g = lambda x: jnp.sum(scaled_sin(x))
    want = 10.0 * np.cos(np.asarray(x))
    for got in (vmap(grad(g))(x), grad(lambda x: jnp.sum(vmap(g)(x)))(x),
                jvp(vmap(scaled_sin), (x,), (jnp.ones_like(x),))[1],
                vmap(lambda x: jvp(scaled_sin, (x,), (jnp.ones_like(x),))[1])(x)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # custom_vjp: the cotangent 3 clipped to 1, so the gradient is cos, not 3 cos.
    h = lambda x: jnp.sum(3.0 * clip_gradient(jnp.sin(x)))
    want = np.cos(np.asarray(x))
    for got in (vmap(grad(h))(x), grad(lambda x: jnp.sum(vmap(h)(x)))(x)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert_bitwise(vmap(jacrev(lambda x: 3.0 * clip_gradient(x)))(x),
                   jnp.broadcast_to(jnp.eye(3), (4, 3, 3)))


@pytest.mark.parametrize("name", FUNS)
def test_in_axes_and_nesting(name):
    f, x = FUNS[name], xs(6)
    xt = jnp.transpose(x)  # batched on axis 1
    assert_rows(vmap(grad(f), in_axes=1)(xt), grad(f), x)
    assert_rows(jnp.transpose(grad(lambda x: jnp.sum(vmap(f, in_axes=1)(x)))(xt)), grad(f), x)
    x3 = jnp.reshape(x, (2, 3, 3))
    nested = vmap(vmap(grad(f)))(x3)
    outer = grad(lambda x: jnp.sum(vmap(vmap(f))(x)))(x3)
    for i in range(2):
        assert_rows(nested[i], grad(f), x3[i])
        assert_rows(outer[i], grad(f), x3[i])


@pytest.mark.parametrize("name", FUNS)
def test_jit_in_every_position(name):
    f, x = FUNS[name], xs(5)
    want = vmap(grad(f))(x)
    per_example_grads = lambda x: grad(lambda x: jnp.sum(vmap(f)(x)))(x)
    for got in (jit(vmap(grad(f)))(x), vmap(jit(grad(f)))(x), vmap(grad(jit(f)))(x),
                jit(per_example_grads)(x), grad(lambda x: jnp.sum(jit(vmap(f))(x)))(x),
                grad(lambda x: jnp.sum(vmap(jit(f))(x)))(x)):
        assert_bitwise(got, want)


def test_jvp_of_a_batched_custom_vjp_raises():
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff"):
        jvp(vmap(clip_gradient), (xs(2),), (xs(2),))


def test_batched_calls_are_one_equation_with_batched_rules():
    x = xs(4)
    for f, prim in ((scaled_sin, "custom_jvp_call"), (clip_gradient, "custom_vjp_call"),
                    (checkpoint(chain), "checkpoint")):
        jaxpr = make_jaxpr(vmap(f))(x)
        assert [e.primitive.name for e in jaxpr.eqns] == [prim]
        assert jaxpr.eqns[0].outvars[0].aval.shape == (4, 3)
    text = str(make_jaxpr(vmap(clip_gradient))(x))
    assert "fwd=vmap(clip_fwd)" in text and "bwd=vmap(clip_bwd)" in text
    assert "jvp=vmap(scaled_sin_jvp)" in str(make_jaxpr(vmap(scaled_sin))(x))


# ---------------------------------------------------------------------------------------
# nondiff_argnums, pytrees, unbatched inputs, integer outputs, closures, collectives


def test_custom_jvp_nondiff_argnums_under_vmap():
    @functools.partial(custom_jvp, nondiff_argnums=(0, 2))
    def app(fn, x, k):
        return fn(x) * k

    @app.defjvp
    def app_jvp(fn, k, primals, tangents):
        return app(fn, primals[0], k), 10.0 * k * tangents[0]

    x, k = xs(5)[:, 0], xs(5, seed=1)[:, 0]
    f = lambda x, k: app(jnp.sin, x, k)
    for got in (vmap(grad(f))(x, k), grad(lambda x: jnp.sum(vmap(f)(x, k)))(x),
                jit(vmap(grad(f)))(x, k)):
        assert_bitwise(got, 10.0 * k)
    assert_rows(vmap(grad(f))(x, k), grad(f), x, k)
    assert_rows(vmap(grad(f), in_axes=(0, None))(x, k[0]), grad(f), x, k[0],
                in_axes=(0, None))


def test_custom_vjp_nondiff_argnums_under_vmap():
    app = custom_vjp(lambda fn, x: fn(x), nondiff_argnums=(0,))
    app.defvjp(lambda fn, x: (fn(x), x), lambda fn, x, g: (5.0 * fn(x) * g,))
    x = xs(4)[:, 0]
    f = lambda x: app(jnp.cos, x)
    want = 5.0 * jnp.cos(x)
    assert_bitwise(vmap(grad(f))(x), want)
    assert_bitwise(grad(lambda x: jnp.sum(vmap(f)(x)))(x), want)
    assert_rows(vmap(grad(f))(x), grad(f), x)


@custom_vjp
def scale_shift(params, x):
    return {"y": params["w"] * x + params["b"], "n": (jnp.sum(x),)}


def scale_shift_fwd(params, x):
    return scale_shift(params, x), {"w": params["w"], "x": x}


def scale_shift_bwd(res, g):
    # The true cotangent of x is g["y"] * w + g["n"][0]; this rule doubles its first term.
    return ({"w": g["y"] * res["x"], "b": None}, 2.0 * g["y"] * res["w"] + g["n"][0])


scale_shift.defvjp(scale_shift_fwd, scale_shift_bwd)


def pytree_loss(params, x):
    out = scale_shift(params, x)
    return jnp.sum(out["y"] ** 2) + out["n"][0]


def test_custom_vjp_pytrees_with_unbatched_parameters():
    params = {"w": jnp.asarray([1.0, 2.0, 0.5]), "b": jnp.asarray(0.25)}
    x = xs(7)
    per_example = vmap(grad(pytree_loss, argnums=(0, 1)), in_axes=(None, 0))(params, x)
    assert_rows(per_example, grad(pytree_loss, argnums=(0, 1)), params, x, in_axes=(None, 0))
    y = np.asarray(params["w"]) * np.asarray(x) + np.asarray(params["b"])
    np.testing.assert_allclose(per_example[1], 4.0 * y * np.asarray(params["w"]) + 1.0,
                               rtol=1e-6)
    assert_bitwise(per_example[0]["b"], jnp.zeros(7))
    # Through the whole batch, the cotangent of the shared parameters is the sum over
    # the examples (the canonical sum, as of the stacked per-example ones).
    batch_loss = lambda p, x: jnp.sum(vmap(pytree_loss, in_axes=(None, 0))(p, x))
    gp, gx = grad(batch_loss, argnums=(0, 1))(params, x)
    assert_bitwise(gx, per_example[1])
    assert_bitwise(gp["w"], jnp.sum(per_example[0]["w"], axis=0))
    assert_bitwise(gp["b"], jnp.zeros(()))


def test_custom_jvp_pytrees_and_integer_outputs():
    @custom_jvp
    def f(d):
        return {"s": jnp.sin(d["a"]) * d["b"], "i": jnp.argmax(d["a"])}

    @f.defjvp
    def f_jvp(primals, tangents):
        (d,), (t,) = primals, tangents
        return f(d), {"s": 10.0 * t["a"] * d["b"], "i": jnp.zeros((), jnp.int32)}

    d = {"a": xs(4), "b": jnp.asarray(3.0)}
    batched = vmap(f, in_axes=({"a": 0, "b": None},))(d)
    assert_rows(batched, f, d, in_axes=({"a": 0, "b": None},))
    loss = lambda d: f(d)["s"][0]
    axes = ({"a": 0, "b": None},)
    per_example = vmap(grad(loss), in_axes=axes)(d)
    assert_bitwise(per_example["a"][:, 0], jnp.full(4, 30.0))
    assert_bitwise(per_example["b"], jnp.zeros(4))
    assert_rows(per_example, grad(loss), d, in_axes=axes)
    total = grad(lambda d: jnp.sum(vmap(loss, in_axes=axes)(d)))(d)
    assert_bitwise(total["a"], per_example["a"])


def test_rules_closing_over_batched_values():
    def model(w, x):
        @custom_jvp
        def f(x):
            return jnp.sin(x) * w

        f.defjvp(lambda p, t: (f(p[0]), 10.0 * w * t[0]))

        @custom_vjp
        def g(x):
            return x * w

        g.defvjp(lambda x: (g(x), None), lambda _, ct: (jnp.clip(ct * w, -1.0, 1.0),))
        return jnp.sum(f(x) + g(x))

    w, x = xs(4)[:, 0], xs(4, seed=1)
    want = 10.0 * w[:, None] + jnp.clip(w[:, None], -1.0, 1.0)
    by_example = vmap(grad(model, argnums=1))(w, x)
    np.testing.assert_allclose(by_example, jnp.broadcast_to(want, (4, 3)), rtol=1e-6)
    assert_rows(by_example, grad(model, argnums=1), w, x)
    assert_bitwise(grad(lambda x: jnp.sum(vmap(model)(w, x)))(x), by_example)


def test_collectives_inside_custom_rules():
    @custom_jvp
    def centre(x):
        return x - lax.pmean(x, "i")

    centre.defjvp(lambda p, t: (centre(p[0]), 10.0 * (t[0] - lax.pmean(t[0], "i"))))
    x = xs(4)[:, 0]
    f = vmap(lambda x: centre(x) * x, axis_name="i")
    _, t = jvp(f, (x,), (jnp.ones(4),))
    c = x - jnp.mean(x)
    np.testing.assert_allclose(t, c, rtol=1e-6)  # 10 (1 - pmean(1)) = 0: only c * dx
    v = jnp.asarray([1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(jvp(f, (x,), (v,))[1], 10.0 * (v - 0.25) * x + c * v,
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# checkpoint


@pytest.mark.parametrize("n", [1, 4, 17])
def test_checkpoint_under_vmap_is_bitwise_the_plain_function(n):
    x = xs(n)
    assert_bitwise(vmap(remat_fn)(x), vmap(plain_fn)(x))
    assert_bitwise(vmap(grad(remat_fn))(x), vmap(grad(plain_fn))(x))
    assert_bitwise(grad(lambda x: jnp.sum(vmap(remat_fn)(x)))(x),
                   grad(lambda x: jnp.sum(vmap(plain_fn)(x)))(x))
    assert_bitwise(jit(grad(lambda x: jnp.sum(vmap(remat_fn)(x))))(x),
                   grad(lambda x: jnp.sum(vmap(plain_fn)(x)))(x))
    for jac in (jacfwd, jacrev, hessian):
        assert_bitwise(vmap(jac(remat_fn))(x), vmap(jac(plain_fn))(x))


def test_checkpoint_under_vmap_still_saves_only_its_inputs():
    x = xs(5)
    _, f_jvp = linearize(vmap(checkpoint(chain)), x)
    assert [c.shape for c in f_jvp.jaxpr.consts] == [(5, 3)]
    assert [e.primitive.name for e in f_jvp.jaxpr.eqns] == ["checkpoint"]
    # The backward pass recomputes the body (batched) as it does without vmap.
    count = lambda f, x: str(make_jaxpr(grad(f))(x)).count("= sin ")
    batched = count(lambda x: jnp.sum(vmap(checkpoint(chain))(x)), x)
    assert batched == count(lambda x: jnp.sum(checkpoint(chain)(x)), x[0])
    assert batched == count(lambda x: jnp.sum(vmap(chain)(x)), x) + 2


def test_jacobians_of_custom_functions():
    x = xs(1)[0]
    d = 10.0 * jnp.cos(x)
    assert_bitwise(jacfwd(scaled_sin)(x), d[:, None] * jnp.eye(3))  # column j: d * e_j
    assert_bitwise(jacrev(scaled_sin)(x), jnp.eye(3) * d)  # row i: d * e_i
    assert_bitwise(jacrev(lambda x: 3.0 * clip_gradient(x))(x), jnp.eye(3))
    assert_bitwise(jacfwd(checkpoint(chain))(x), jacfwd(chain)(x))
    assert_bitwise(jacrev(checkpoint(chain))(x), jacrev(chain)(x))
    assert_bitwise(hessian(remat_fn)(x), hessian(plain_fn)(x))


# ---------------------------------------------------------------------------------------
# custom_lin: only ever transposed, so batching it serves a linear program under vmap


def test_custom_lin_under_vmap_transposes_to_the_batched_rule():
    x = xs(1)[0]
    f = lambda x: 3.0 * clip_gradient(jnp.sin(x))
    _, f_jvp = linearize(f, x)
    ts = xs(4, seed=2)
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff"):
        vmap(f_jvp)(ts)
    jaxpr = make_jaxpr(vmap(f_jvp))(ts)
    (lin,) = [e for e in jaxpr.eqns if e.primitive.name == "custom_lin"]
    cts = xs(4, seed=3) * 2.0
    (got,) = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, [ad.UndefinedPrimal(ts.aval)], [cts])
    _, f_vjp = vjp(f, x)
    assert_bitwise(got, vmap(f_vjp)(cts)[0])
    assert_rows(got, lambda ct: f_vjp(ct)[0], cts)
    assert lin.params["bwd"].__name__ == "vmap(clip_bwd)"


@pytest.mark.parametrize("name", FUNS)
def test_per_example_gradients_at_a_large_batch(name):
    f, x = FUNS[name], xs(1000)
    for got in (vmap(grad(f))(x), grad(lambda x: jnp.sum(vmap(f)(x)))(x)):
        for i in (0, 1, 499, 999):
            assert_bitwise(got[i], grad(f)(x[i]))

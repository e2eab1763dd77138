"""The autodiff API: jacfwd, jacrev, hessian (structure, values, dtypes), nesting of
transformations, has_aux, integer inputs, stop_gradient, error messages, and the programs
that forward and reverse mode print."""

import pathlib

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    lax,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
)
from invarax.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten

ROOT = pathlib.Path(__file__).resolve().parents[1]


def f_elementwise(x):
    return jnp.sin(x) * x + jnp.exp(-x * x)


def f_reducing(x):
    return jnp.tanh(x @ x.T).sum(axis=0) * jnp.prod(x)


def f_pytree(params, x):
    return {"y": jnp.tanh(params["w"] @ x + params["b"]), "n": (jnp.sum(x * x),)}


def fd_jacobian(f, x, h=1e-6):
    """Central differences of an array function of one array, shape out.shape + x.shape."""
    x = np.asarray(x, np.float64)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(jnp.asarray(x + e))) - np.asarray(f(jnp.asarray(x - e))))
                    / (2 * h))
    out = np.stack(cols, axis=-1)
    return out.reshape(out.shape[:-1] + x.shape)


def data64(shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape)


# ---------------------------------------------------------------------------------------
# jacfwd / jacrev / hessian: values


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
@pytest.mark.parametrize("f, shape", [(f_elementwise, (3,)), (f_elementwise, (2, 3)),
                                      (f_elementwise, ()), (f_reducing, (3, 2))])
def test_jacobian_matches_finite_differences(x64, jac, f, shape):
    x = data64(shape)
    got = jac(f)(jnp.asarray(x))
    want = fd_jacobian(f, x)
    assert got.shape == want.shape == np.shape(f(jnp.asarray(x))) + shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_jacfwd_and_jacrev_agree_on_the_issue_example(x64):
    f = lambda a: jnp.prod(a ** 2 - a ** 3 - a)
    a = jnp.asarray(np.random.default_rng(0).uniform(0.9, 1.1, 1000))
    fwd, rev = jacfwd(f)(a), jacrev(f)(a)
    scale = np.abs(np.asarray(rev)).max()
    np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(fwd[:20], fd_jacobian(f, a)[:20], rtol=1e-6, atol=1e-6 * scale)


def test_jacobians_of_a_pytree_function(x64):
    params = {"w": jnp.asarray(data64((2, 3), 1)), "b": jnp.asarray(data64((2,), 2))}
    x = jnp.asarray(data64((3,), 3))
    jf = jacfwd(f_pytree, argnums=(0, 1))(params, x)
    jr = jacrev(f_pytree, argnums=(0, 1))(params, x)
    # Outer structure: the output's; inner: the (tuple of the) differentiated arguments.
    assert tree_structure(jf) == tree_structure(jr)
    assert jf["y"][0]["w"].shape == (2, 2, 3)
    assert jf["y"][0]["b"].shape == (2, 2)
    assert jf["y"][1].shape == (2, 3)
    assert jf["n"][0][0]["w"].shape == (2, 3)
    assert jf["n"][0][1].shape == (3,)
    for a, b in zip(tree_flatten(jf)[0], tree_flatten(jr)[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(jf["n"][0][1], 2 * np.asarray(x))
    w_fd = fd_jacobian(lambda w: f_pytree({"w": w, "b": params["b"]}, x)["y"], params["w"])
    np.testing.assert_allclose(jf["y"][0]["w"], w_fd, rtol=1e-6, atol=1e-9)
    # An int argnums gives the argument's structure without the tuple around it.
    assert tree_structure(jacrev(f_pytree)(params, x)) == tree_structure(
        tree_map(lambda _: params, f_pytree(params, x)))


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_jacobian_dtypes_and_weak_types(jac):
    x = jnp.ones(3, jnp.float32)
    assert jac(jnp.sin)(x).dtype == np.float32
    j = jac(lambda x: x * 2.0)(3.0)  # weak in, weak out: weakly typed, as JAX
    assert j.dtype == np.float32 and j.weak_type
    assert not jac(jnp.sin)(jnp.asarray(3.0, jnp.float32)).weak_type


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_jacobian_of_empty_inputs_and_outputs(jac):
    assert jac(jnp.sin)(jnp.zeros(0)).shape == (0, 0)
    assert jac(lambda x: jnp.sin(x)[:0])(jnp.ones(2)).shape == (0, 2)
    assert jac(lambda x: ())(1.0) == ()


def test_hessian_matches_finite_differences_of_the_gradient(x64):
    f = lambda x: jnp.sum(jnp.sin(x) * x[::-1]) * jnp.prod(x)
    x = data64((2, 2))
    h = hessian(f)(jnp.asarray(x))
    assert h.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(h, fd_jacobian(grad(f), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, np.swapaxes(np.swapaxes(h, 0, 2), 1, 3), rtol=1e-12)


def test_hessian_of_several_arguments(x64):
    f = lambda x, y: jnp.sum(x * x * y) + jnp.sum(jnp.exp(y))
    x, y = jnp.asarray(data64(2)), jnp.asarray(data64(2, 1))
    h = hessian(f, argnums=(0, 1))(x, y)
    assert [[b.shape for b in row] for row in h] == [[(2, 2)] * 2] * 2
    np.testing.assert_allclose(h[0][0], np.diag(2 * np.asarray(y)))
    np.testing.assert_allclose(h[0][1], np.diag(2 * np.asarray(x)))
    np.testing.assert_allclose(h[1][1], np.diag(np.exp(np.asarray(y))))


def test_jacobians_under_jit_are_bitwise_eager():
    x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 2)), jnp.float32)
    for transform in (jacfwd, jacrev, hessian):
        f = transform(lambda x: jnp.sum(jnp.tanh(x) * x))
        assert_bitwise(jit(f)(x), f(x))


def test_jacfwd_linearizes_once():
    calls = []

    def f(x):
        calls.append(1)
        return jnp.sin(x)

    jacfwd(f)(jnp.ones(5))
    jacrev(f)(jnp.ones(5))
    assert len(calls) == 2


def f_two_outputs(x):
    return jnp.sum(jnp.sin(x) * x[::-1]), jnp.tanh(x * jnp.mean(x))


def unit(size, k, shape, dtype):
    e = np.zeros(size, dtype)
    e[k] = 1
    return jnp.asarray(e.reshape(shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("f, shape", [(f_elementwise, (3,)), (f_reducing, (3, 2)),
                                      (f_two_outputs, (2, 2)), (f_elementwise, ())])
def test_jacobians_are_the_linear_map_on_each_basis_vector(dtype, f, shape):
    # jacfwd/jacrev vmap the linear map over the one-hot basis: by N1, each column (row)
    # has the bits of one call of the linear map (the per-basis loop they replaced).
    if dtype == np.float64:
        invarax.config.update("jax_enable_x64", True)
    x = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, shape).astype(dtype))
    out, f_jvp = linearize(f, x)
    _, f_vjp = vjp(f, x)
    outs, out_tree = tree_flatten(out)
    for i, (leaf, jac) in enumerate(zip(outs, tree_flatten(jacfwd(f)(x))[0], strict=True)):
        cols = np.reshape(np.asarray(jac), (leaf.size, x.size))
        for k in range(x.size):
            want = tree_flatten(f_jvp(unit(x.size, k, shape, dtype)))[0][i]
            assert_bitwise(cols[:, k], np.ravel(want))
    for i, (leaf, jac) in enumerate(zip(outs, tree_flatten(jacrev(f)(x))[0], strict=True)):
        rows = np.reshape(np.asarray(jac), (leaf.size, x.size))
        for k in range(leaf.size):
            cts = [unit(o.size, k, o.shape, o.dtype) if j == i else jnp.zeros_like(o)
                   for j, o in enumerate(outs)]
            (want,) = f_vjp(tree_unflatten(out_tree, cts))
            assert_bitwise(rows[k], np.ravel(want))
    if len(outs) == 1:
        _, hvp = linearize(jacrev(f), x)
        h = np.reshape(np.asarray(hessian(f)(x)), (-1, x.size))
        for k in range(x.size):
            assert_bitwise(h[:, k], np.ravel(hvp(unit(x.size, k, shape, dtype))))


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_match_jax(jac):
    jax = pytest.importorskip("jax")
    f = lambda np_, w, x: np_.tanh(w @ x) * np_.sum(x ** 3)
    w = data64((2, 3), 4).astype(np.float32)
    x = data64((3,), 5).astype(np.float32)
    ours = getattr(invarax, jac)(lambda w, x: f(jnp, w, x), argnums=(0, 1))(w, x)
    # one compiled program; eagerly JAX compiles each operation apart
    theirs = jax.jit(getattr(jax, jac)(lambda w, x: f(jax.numpy, w, x), argnums=(0, 1)))(w, x)
    leaves, tree = tree_flatten(ours)
    jax_leaves, jax_tree = jax.tree_util.tree_flatten(theirs)
    assert tree.num_leaves == jax_tree.num_leaves
    assert str(tree).replace("PyTreeDef", "") == str(jax_tree).replace("PyTreeDef", "")
    for a, b in zip(leaves, jax_leaves, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev"])
def test_scalar_jacobian_types_match_jax(jac):
    jax = pytest.importorskip("jax")
    ours = getattr(invarax, jac)(lambda x, y: jnp.sin(x) * y, argnums=(0, 1))(2.0, 3.0)
    theirs = getattr(jax, jac)(lambda x, y: jax.numpy.sin(x) * y, argnums=(0, 1))(2.0, 3.0)
    for a, b in zip(ours, theirs, strict=True):
        assert (a.dtype, a.weak_type) == (b.dtype, b.weak_type)
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# Nesting


def test_grad_of_grad_of_grad(x64):
    f = lambda x: jnp.sin(x) * x
    x = 0.7
    want = -3 * np.sin(x) - x * np.cos(x)  # (x sin x)''' = -3 sin x - x cos x
    np.testing.assert_allclose(grad(grad(grad(f)))(x), want, rtol=1e-12)


def test_no_perturbation_confusion():
    assert grad(lambda x: grad(lambda y: x * y)(x))(3.0) == 1.0
    # The same with forward mode outside and reverse mode inside, and the other way.
    assert jvp(lambda x: grad(lambda y: x * y)(x), (3.0,), (1.0,))[1] == 1.0
    assert grad(lambda x: jvp(lambda y: x * y, (x,), (1.0,))[1])(3.0) == 1.0


def test_hessian_vector_product_is_jvp_of_grad(x64):
    f = lambda x: jnp.sum(jnp.sin(x) * x[::-1])
    x, v = jnp.asarray(data64(4)), jnp.asarray(data64(4, 1))
    _, hvp = jvp(grad(f), (x,), (v,))
    np.testing.assert_allclose(hvp, np.asarray(hessian(f)(x)) @ np.asarray(v), rtol=1e-12)


def test_vjp_of_jvp(x64):
    f = lambda x: jnp.sin(x) * x
    x, t, ct = jnp.asarray(data64(3)), jnp.asarray(data64(3, 1)), jnp.asarray(data64(3, 2))
    _, pullback = vjp(lambda x: jvp(f, (x,), (t,))[1], x)
    (got,) = pullback(ct)
    # d/dx [f'(x) t] = f''(x) t, with f'' = 2 cos x - x sin x
    xn = np.asarray(x)
    np.testing.assert_allclose(got, ct * t * (2 * np.cos(xn) - xn * np.sin(xn)), rtol=1e-12)


def test_grad_of_jit_and_jit_of_grad_are_bitwise_grad():
    f = lambda x: jnp.sum(jnp.tanh(x) * jnp.exp(x))
    x = jnp.asarray(np.linspace(-1, 1, 5, dtype=np.float32))
    g = grad(f)(x)
    assert_bitwise(grad(jit(f))(x), g)
    assert_bitwise(jit(grad(f))(x), g)
    assert_bitwise(jit(grad(jit(f)))(x), g)


def test_jacfwd_of_jacrev_is_jacrev_of_jacfwd(x64):
    f = lambda x: jnp.sin(x) * jnp.sum(x ** 2)
    x = jnp.asarray(data64(3))
    np.testing.assert_allclose(jacfwd(jacrev(f))(x), jacrev(jacfwd(f))(x), rtol=1e-12)
    np.testing.assert_allclose(jacfwd(jacrev(f))(x), jacfwd(jacfwd(f))(x), rtol=1e-12)


def test_stop_gradient():
    f = lambda x: x * lax.stop_gradient(x * x)
    assert grad(f)(3.0) == 9.0
    assert jvp(f, (3.0,), (1.0,))[1] == 9.0
    assert grad(grad(lambda x: lax.stop_gradient(x) * x * x))(3.0) == 6.0
    # A pytree, with an integer leaf passed through.
    tree = lax.stop_gradient({"a": 2.0, "n": jnp.asarray(3)})
    assert tree["n"].dtype == np.int32
    g = grad(lambda x: jnp.sum(lax.stop_gradient({"a": x})["a"] + x))(jnp.ones(2))
    assert_bitwise(g, jnp.ones(2))


# ---------------------------------------------------------------------------------------
# has_aux


def test_has_aux_everywhere():
    def f(x):
        return jnp.sin(x) * 2.0, {"aux": x + 1.0}

    x = jnp.asarray([0.0, 1.0])
    aux = {"aux": x + 1.0}

    def check_aux(got):
        assert_bitwise(got["aux"], aux["aux"])

    g, a = grad(lambda x: (jnp.sum(f(x)[0]), f(x)[1]), has_aux=True)(x)
    assert_bitwise(g, 2.0 * jnp.cos(x))
    check_aux(a)
    (v, a), g = value_and_grad(lambda x: (jnp.sum(f(x)[0]), f(x)[1]), has_aux=True)(x)
    check_aux(a)
    _, t, a = jvp(f, (x,), (jnp.ones(2),), has_aux=True)
    check_aux(a)
    _, f_jvp, a = linearize(f, x, has_aux=True)
    check_aux(a)
    _, f_vjp, a = vjp(f, x, has_aux=True)
    check_aux(a)
    for transform in (jacfwd, jacrev):
        j, a = transform(f, has_aux=True)(x)
        assert j.shape == (2, 2)
        check_aux(a)
    h, a = hessian(lambda x: (jnp.sum(jnp.sin(x)), x * 3.0), has_aux=True)(x)
    assert h.shape == (2, 2)
    assert_bitwise(a, x * 3.0)


@pytest.mark.parametrize("call", [
    lambda f: grad(f, has_aux=True)(1.0),
    lambda f: jvp(f, (1.0,), (1.0,), has_aux=True),
    lambda f: vjp(f, 1.0, has_aux=True),
    lambda f: linearize(f, 1.0, has_aux=True),
    lambda f: jacfwd(f, has_aux=True)(1.0),
    lambda f: jacrev(f, has_aux=True)(1.0),
    lambda f: hessian(f, has_aux=True)(1.0),
], ids=["grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian"])
def test_has_aux_without_a_pair(call):
    with pytest.raises(TypeError, match=r"has_aux=True requires the function to return a pair"):
        call(lambda x: x * 2.0)
    with pytest.raises(TypeError, match=r"it returned a tuple of length 3"):
        call(lambda x: (x, x, x))


# ---------------------------------------------------------------------------------------
# Integer inputs


def test_integer_inputs():
    y, t = jvp(lambda x, n: x * n, (2.0, 3), (1.0, 5))
    assert t == 3.0
    y, t = jvp(lambda n: n * 2, (3,), (1,))
    assert not np.any(t)  # a zero tangent
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs.*int32"):
        grad(lambda n: n * 2.0)(3)
    with pytest.raises(TypeError, match="allow_int=True"):
        grad(lambda x, n: x * n, argnums=(0, 1))(2.0, 3)
    g = grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[0] == 3.0 and g[1] == 0
    assert grad(lambda x, n: x * n)(2.0, 3) == 3.0  # integer argument not differentiated
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs.*int32.*use jvp"):
        jacfwd(lambda n: n * 2.0)(jnp.arange(3))
    with pytest.raises(TypeError, match="jacrev requires real- or complex-valued inputs"):
        jacrev(lambda n: n * 2.0)(jnp.arange(3))


def test_integer_outputs():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued outputs.*int32"):
        grad(lambda x: x.astype(jnp.int32))(1.0)
    with pytest.raises(TypeError, match="jacrev requires real- or complex-valued outputs"):
        jacrev(lambda x: (x * 2.0).astype(jnp.int32))(jnp.ones(2))


# ---------------------------------------------------------------------------------------
# Errors


def test_grad_of_a_non_scalar_output():
    with pytest.raises(TypeError, match=r"shape: \(3,\).*jacrev.*vjp"):
        grad(jnp.sin)(jnp.ones(3))


@pytest.mark.parametrize("transform", [grad, value_and_grad, jacfwd, jacrev, hessian])
def test_argnums_out_of_range(transform):
    with pytest.raises(TypeError, match=r"argnums=\(0, 2\) is out of range.*2 positional"):
        transform(lambda x, y: x * y, argnums=(0, 2))(1.0, 2.0)
    with pytest.raises(TypeError, match=r"argnums=-3 is out of range"):
        transform(lambda x, y: x * y, argnums=-3)(1.0, 2.0)


def scale_by_float(x):
    return float(x) * x


@pytest.mark.parametrize("call, where", [
    (lambda f: grad(f)(2.0), "grad of"),
    (lambda f: value_and_grad(f)(2.0), "grad of"),
    (lambda f: jacfwd(f)(2.0), "jacfwd of"),
    (lambda f: jacrev(f)(2.0), "jacrev of"),
    (lambda f: vjp(f, 2.0), "vjp of"),
    (lambda f: linearize(f, 2.0), "linearize of"),
    (lambda f: jvp(f, (2.0,), (1.0,)), "jvp of"),
], ids=["grad", "value_and_grad", "jacfwd", "jacrev", "vjp", "linearize", "jvp"])
def test_errors_name_the_transformation_and_the_users_function(call, where):
    # grad/jacfwd/jacrev differentiate an internal wrapper of the user's function (for
    # argnums); the error names the transformation called and the user's function.
    with pytest.raises(invarax.ConcretizationTypeError,
                       match=rf"inside {where} scale_by_float\)") as info:
        call(scale_by_float)
    assert "f_dyn" not in str(info.value)
    with pytest.raises(invarax.ConcretizationTypeError, match=rf"inside {where} <lambda>\)"):
        call(lambda x: float(x) * x)


def test_complex_outputs_need_holomorphic():
    z = jnp.asarray(1.0 + 2.0j, jnp.complex64)
    with pytest.raises(TypeError, match="real-valued outputs.*holomorphic=True"):
        grad(lambda z: z * z)(z)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        grad(lambda x: x * x, holomorphic=True)(1.0)
    np.testing.assert_allclose(grad(lambda z: z * z, holomorphic=True)(z), 2 * z)
    for transform in (jacfwd, jacrev):
        np.testing.assert_allclose(transform(jnp.sin, holomorphic=True)(z), np.cos(complex(z)),
                                   rtol=1e-6)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs.*complex64"):
        jacfwd(jnp.sin)(z)


# ---------------------------------------------------------------------------------------
# Printed programs


def test_printed_programs_of_both_modes():
    f = lambda x: jnp.sin(x) * x
    reverse = str(make_jaxpr(grad(f))(1.0))
    forward = str(make_jaxpr(lambda x, t: jvp(f, (x,), (t,)))(1.0, 1.0))
    assert "cos a" in reverse and "cos a" in forward
    _, f_jvp = linearize(f, jnp.ones(2))
    assert [c.shape for c in f_jvp.jaxpr.consts] == [(2,)] * 3  # cos x, x, sin x


def test_jacobian_is_jax_alias_of_jacrev():
    # issue 20.10: jax.jacobian was missing
    assert invarax.jacobian is jacrev
    f = lambda x: jnp.sin(x) * jnp.sum(x ** 2)
    x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32))
    assert np.array_equal(np.asarray(invarax.jacobian(f)(x)), np.asarray(jacrev(f)(x)))
    jax = pytest.importorskip("jax")
    want = jax.jacobian(lambda x: jax.numpy.sin(x) * jax.numpy.sum(x ** 2))(np.asarray(x))
    np.testing.assert_allclose(invarax.jacobian(f)(x), want, rtol=1e-6)

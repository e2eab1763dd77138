"""Filtered autodiff (filter_jvp/vjp/jacfwd/jacrev/hessian/checkpoint/custom_jvp/custom_vjp):
values against Equinox (float tolerance), and bitwise for invarax's own invariances:
jit == eager (N3), a vmapped row == the unbatched call (N1), checkpoint == no checkpoint."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _params(lib_np):
    return {"w": lib_np.asarray(_data((3,), 1)), "b": lib_np.asarray(_data((), 2)),
            "n": 3, "act": "tanh", "idx": lib_np.arange(3)}


def _f(p, x, mod):
    h = getattr(mod, p["act"])(p["w"] * x + p["b"]) * p["n"]
    return h, p["act"], p["idx"] * 2


def _to_np(tree, lib):
    return lib.tree_util.tree_map(
        lambda x: np.asarray(x) if hasattr(x, "shape") else x, tree)


def _close(ours, theirs):
    a = invarax.tree_util.tree_leaves(_to_np(ours, invarax))
    b = __import__("jax").tree_util.tree_leaves(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if hasattr(y, "shape"):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-6)
        else:
            assert x == y


@pytest.fixture
def libs():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    return eqx, jax


def test_filter_jvp_as_equinox(libs):
    eqx, jax = libs
    x, t = _data(3, 3), _data(3, 4)
    pt = {"w": _data(3, 5), "b": None, "n": None, "act": None, "idx": None}
    ours = invarax.filter_jvp(lambda p, x: _f(p, x, jnp), (_params(jnp), jnp.asarray(x)),
                              ({**pt, "w": jnp.asarray(pt["w"])}, jnp.asarray(t)))
    theirs = eqx.filter_jvp(lambda p, x: _f(p, x, jax.numpy), (_params(jax.numpy), x),
                            (pt, t))
    _close(ours, theirs)
    assert ours[1][1] is None and ours[1][2] is None  # str and int outputs: no tangent
    assert ours[0][1] == "tanh"


def test_filter_jvp_rejects_a_tangent_for_a_static_leaf():
    # TypeError, as Equinox (JAX's for an integer primal given a float tangent)
    with pytest.raises(TypeError, match=r"the primal at \[0\]\['n'\] is 3 .* Pass None"):
        invarax.filter_jvp(lambda p: p["w"] * p["n"], ({"w": jnp.ones(2), "n": 3},),
                           ({"w": jnp.ones(2), "n": 1.0},))
    with pytest.raises(TypeError, match="as tuples"):
        invarax.filter_jvp(jnp.sin, jnp.ones(2), jnp.ones(2))


def test_filter_vjp_as_equinox(libs):
    eqx, jax = libs
    x, ct = _data(3, 3), _data(3, 6)
    out, vjp_fn = invarax.filter_vjp(lambda p, x: _f(p, x, jnp), _params(jnp), jnp.asarray(x))
    out_j, vjp_j = eqx.filter_vjp(lambda p, x: _f(p, x, jax.numpy), _params(jax.numpy), x)
    _close(out, out_j)
    ours = vjp_fn((jnp.asarray(ct), None, None))
    theirs = vjp_j((ct, None, None))
    _close(ours, theirs)
    assert ours[0]["n"] is None and ours[0]["idx"] is None
    out, vjp_fn, aux = invarax.filter_vjp(lambda x: (2 * x, ("aux", x)), jnp.ones(2),
                                          has_aux=True)
    assert aux[0] == "aux" and np.array_equal(vjp_fn(jnp.ones(2))[0], [2.0, 2.0])


@pytest.mark.parametrize("kind", ["filter_jacfwd", "filter_jacrev", "filter_hessian"])
@pytest.mark.parametrize("has_aux", [False, True])
def test_filter_jacobians_as_equinox(libs, kind, has_aux):
    eqx, jax = libs
    x = _data(3, 3)

    def make(mod):
        def f(p, x):
            y = (mod.tanh(p["w"] * x + p["b"]) * p["n"])
            y = y.sum() if kind == "filter_hessian" else y
            return (y, (p["w"] * 2, p["n"])) if has_aux else y
        return f

    ours = getattr(invarax, kind)(make(jnp), has_aux=has_aux)(_params(jnp), jnp.asarray(x))
    theirs = getattr(eqx, kind)(make(jax.numpy), has_aux=has_aux)(_params(jax.numpy), x)
    _close(ours, theirs)
    if has_aux:  # invarax goes beyond Equinox here: aux may hold any leaves
        f = getattr(invarax, kind)(lambda p: ((p["w"] ** 3).sum(), "aux"), has_aux=True)
        assert f({"w": jnp.ones(2)})[1] == "aux"


def test_filter_transforms_under_jit_are_bitwise_eager():
    p, x = _params(jnp), jnp.asarray(_data(3, 3))
    t = ({"w": jnp.asarray(_data(3, 5)), "b": None, "n": None, "act": None, "idx": None},
         jnp.asarray(_data(3, 4)))
    cases = {
        "jvp": lambda p, x: invarax.filter_jvp(lambda p, x: _f(p, x, jnp), (p, x), t),
        "vjp": lambda p, x: invarax.filter_vjp(lambda p, x: _f(p, x, jnp), p, x)[1](
            (x, None, None)),
        "jacrev": lambda p, x: invarax.filter_jacrev(lambda p, x: _f(p, x, jnp)[0])(p, x),
        "hessian": lambda p, x: invarax.filter_hessian(
            lambda p, x: (_f(p, x, jnp)[0] ** 3).sum())(p, x),
    }
    for name, f in cases.items():
        eager, jitted = f(p, x), invarax.filter_jit(f)(p, x)
        a, b = invarax.tree_leaves(eager), invarax.tree_leaves(jitted)
        assert len(a) == len(b), name
        for u, v in zip(a, b, strict=True):
            if hasattr(u, "shape"):
                assert np.asarray(u).tobytes() == np.asarray(v).tobytes(), name
            else:
                assert u == v, name


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_vmapped_filter_vjp_rows_are_bitwise_unbatched(batch):
    p = _params(jnp)
    xs = jnp.asarray(_data((batch, 3), 7))

    def grad_x(x):
        return invarax.filter_vjp(lambda p, x: _f(p, x, jnp), p, x)[1]((x, None, None))

    batched = invarax.vmap(lambda x: grad_x(x)[0]["w"])(xs)
    for i in range(batch):
        assert np.array_equal(np.asarray(batched[i]), np.asarray(grad_x(xs[i])[0]["w"]))


def test_filter_checkpoint_is_bitwise_the_plain_gradient():
    p, x = _params(jnp), jnp.asarray(_data(3, 3))

    def loss(p, x):
        h, name, _ = _f(p, x, jnp)
        return jnp.sin(jnp.sin(h)).sum(), name

    plain = invarax.filter_grad(loss, has_aux=True)(p, x)
    ckpt = invarax.filter_grad(invarax.filter_checkpoint(loss), has_aux=True)(p, x)
    deco = invarax.filter_grad(invarax.filter_checkpoint(policy=None)(loss), has_aux=True)(p, x)
    for other in (ckpt, deco):
        assert other[1] == "tanh"
        assert np.array_equal(np.asarray(other[0]["w"]), np.asarray(plain[0]["w"]))
        assert np.array_equal(np.asarray(other[0]["b"]), np.asarray(plain[0]["b"]))
    _, lin = invarax.linearize(lambda w: invarax.filter_checkpoint(
        lambda w, s: jnp.sin(jnp.sin(w)))(w, "s"), jnp.ones(3))
    assert [c.shape for c in lin.jaxpr.consts] == [(3,)]  # the input only: recomputed


def _custom_jvp(lib, eqx_mod):
    @eqx_mod.filter_custom_jvp
    def call(x, y, *, fn):
        return fn(x, y)

    seen = []

    @call.def_jvp
    def call_jvp(primals, tangents, *, fn):
        (x, y), (tx, ty) = primals, tangents
        seen.append((ty is None, y["n"]))
        return call(x, y, fn=fn), 2 * tx * y["s"]

    return call, seen


def _run_custom_jvp(lib, mod, xx):
    call, seen = _custom_jvp(lib, mod)
    y = {"n": 3, "s": lib.asarray(1.5)}

    def fn(a, b):
        return a * b["n"] * b["s"]

    g = mod.filter_grad(lambda x: call(x, y, fn=fn).sum())(xx)
    out, t = mod.filter_jvp(lambda x: call(x, y, fn=fn), (xx,), (lib.ones(3),))
    assert seen[-1] == (False, 3)  # y's float leaf has a tangent, its int leaf None
    return g, out, t


def test_filter_custom_jvp_as_equinox(libs):
    eqx, jax = libs
    x = _data(3, 1)
    _close(_run_custom_jvp(jnp, invarax, jnp.asarray(x)), _run_custom_jvp(jax.numpy, eqx, x))


def _run_custom_vjp(lib, mod, xx):
    @mod.filter_custom_vjp
    def scale(vjp_arg, factor, *, name):
        return vjp_arg["x"] * factor, name

    @scale.def_fwd
    def scale_fwd(perturbed, vjp_arg, factor, *, name):
        assert perturbed == {"x": True, "k": False}
        return scale(vjp_arg, factor, name=name), (vjp_arg["x"], "res")

    @scale.def_bwd
    def scale_bwd(residuals, g, perturbed, vjp_arg, factor, *, name):
        assert residuals[1] == "res" and vjp_arg["k"] == 2
        return {"x": lib.clip(g[0] * factor, -1.0, 1.0) + residuals[0], "k": None}

    return mod.filter_grad(lambda a: scale(a, lib.asarray(0.7), name="s")[0].sum())(
        {"x": xx, "k": 2})


def test_filter_custom_vjp_as_equinox(libs):
    eqx, jax = libs
    x = _data(3, 1)
    _close(_run_custom_vjp(jnp, invarax, jnp.asarray(x)), _run_custom_vjp(jax.numpy, eqx, x))


def test_filter_custom_vjp_errors():
    @invarax.filter_custom_vjp
    def f(x):
        return x

    with pytest.raises(RuntimeError, match="def_fwd"):
        f(jnp.ones(2))
    f.def_fwd(lambda perturbed, x: (x, None))
    f.def_bwd(lambda res, g, perturbed, x: (g, g))
    with pytest.raises(ValueError, match="must return the structure"):
        invarax.filter_grad(lambda x: f(x).sum())(jnp.ones(2))


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_filter_custom_rules_jit_and_vmap_are_bitwise(batch):
    call, _ = _custom_jvp(jnp, invarax)
    y = {"n": 3, "s": jnp.asarray(1.5)}

    def fn(a, b):
        return jnp.sin(a) * b["n"] * b["s"]

    def jvp_grad(x):
        return invarax.filter_grad(lambda x: call(x, y, fn=fn).sum())(x)

    def vjp_grad(x):
        return _run_custom_vjp(jnp, invarax, x)["x"]

    xs = jnp.asarray(_data((batch, 3), 11))
    for g in (jvp_grad, vjp_grad):
        batched = invarax.vmap(g)(xs)
        assert np.array_equal(np.asarray(invarax.filter_jit(invarax.vmap(g))(xs)),
                              np.asarray(batched))
        for i in range(batch):
            assert np.asarray(batched[i]).tobytes() == np.asarray(g(xs[i])).tobytes()

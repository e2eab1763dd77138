"""What diffrax, optimistix and lineax need at run time, each checked against JAX/Equinox."""

import numpy as np
import pytest

from invarax.tree_util import tree_structure

COMPOSE_CASES = [
    ((1, 2), [1, None]),
    ({"a": 1, "b": (2, 3)}, {"a": 1, "b": (2,)}),
    (1, (1, 2)),
    ((1, [2, None]), 1),
    ([], (1, 2)),
    ((1, 2), ()),
]


@pytest.mark.parametrize("outer,inner", COMPOSE_CASES, ids=repr)
def test_treedef_compose_as_jax(outer, inner):
    composed = tree_structure(outer).compose(tree_structure(inner))
    n = composed.num_leaves
    assert n == tree_structure(outer).num_leaves * tree_structure(inner).num_leaves
    ours = composed.unflatten(range(n))
    jtu = pytest.importorskip("jax.tree_util")
    theirs_def = jtu.tree_structure(outer).compose(jtu.tree_structure(inner))
    assert theirs_def.num_leaves == n and theirs_def.num_nodes == composed.num_nodes
    assert ours == theirs_def.unflatten(range(n))
    assert composed == tree_structure(ours)


def test_treedef_compose_rejects_a_tree():
    with pytest.raises(TypeError, match="tree_structure"):
        tree_structure((1, 2)).compose((1, 2))


SPLIT_CASES = {
    "empty list": [],
    "empty float array (np.cumsum([]))": np.cumsum([]),
    "numpy int array": np.cumsum([2, 1]),
    "numpy int64 scalar sections": np.int64(5),
    "tuple": (1, 4),
}


@pytest.mark.parametrize("case", SPLIT_CASES)
def test_split_index_forms_as_jax(case):
    import invarax.numpy as jnp

    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    ours = jnp.split(jnp.asarray(x), SPLIT_CASES[case])
    jjnp = pytest.importorskip("jax.numpy")
    theirs = jjnp.split(jjnp.asarray(x), SPLIT_CASES[case])
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_split_rejects_float_and_nested_indices():
    import invarax.numpy as jnp

    with pytest.raises(TypeError, match="1-D sequence of integers"):
        jnp.split(jnp.arange(4), [2.0])
    with pytest.raises(TypeError, match="1-D sequence of integers"):
        jnp.split(jnp.arange(4), [[1]])


RESULT_TYPE_CASES = [
    (((2,), "float16"), 1.0),
    (((2,), "int8"), "int32"),
    (((), "bool"), 3),
    (((3,), "float32"), ((1,), "float16")),
]


@pytest.mark.parametrize("a,b", RESULT_TYPE_CASES, ids=repr)
def test_result_type_of_shape_dtype_structs_as_jax(a, b):
    import invarax
    import invarax.numpy as jnp

    def args(mod):
        def one(v):
            if isinstance(v, tuple):
                return mod.ShapeDtypeStruct(v[0], mod.numpy.dtype(v[1]))
            return mod.numpy.dtype(v) if isinstance(v, str) else v
        return one(a), one(b)

    ours = jnp.result_type(*args(invarax))
    jax = pytest.importorskip("jax")
    assert ours == jax.numpy.result_type(*args(jax))


def _passes_structs(mod):
    jnp = mod.numpy
    return lambda x: {"x": x * 2, "s": mod.ShapeDtypeStruct((2, 3), jnp.int8),
                      "w": mod.ShapeDtypeStruct((), jnp.float32, weak_type=True), "n": 3}


def _struct_tuples(tree, mod):
    return mod.tree_util.tree_map(lambda s: (s.shape, str(s.dtype), s.weak_type), tree)


def test_eval_shape_passes_shape_dtype_structs_through_as_jax():
    import invarax

    arg = invarax.ShapeDtypeStruct((4,), invarax.numpy.float16)
    ours = invarax.eval_shape(_passes_structs(invarax), arg)
    assert ours["s"].shape == (2, 3) and ours["x"].dtype == np.float16
    jax = pytest.importorskip("jax")
    theirs = jax.eval_shape(_passes_structs(jax), jax.ShapeDtypeStruct((4,), jax.numpy.float16))
    assert _struct_tuples(ours, invarax) == _struct_tuples(theirs, jax)


def _closure_converted_structs(mod, jnp):
    w = jnp.asarray(np.arange(3, dtype=np.float32))

    def fn(x, n, name):
        return {"y": (x * w).astype(jnp.float16), "n": n * 2, "name": name, "i": jnp.int32(n)}

    cc = mod.filter_closure_convert(fn, jnp.ones(3), 2.0, "s")
    return cc.in_struct, cc.out_struct


def test_filter_closure_convert_structs_as_equinox():
    import invarax

    ours = _closure_converted_structs(invarax, invarax.numpy)
    assert ours[1]["name"] == "s" and ours[1]["y"].dtype == np.float16
    eqx = pytest.importorskip("equinox")
    import jax

    theirs = _closure_converted_structs(eqx, jax.numpy)

    def norm(tree, tu, sds):
        return tu.tree_map(lambda s: (s.shape, str(s.dtype), s.weak_type)
                           if isinstance(s, sds) else s, tree)
    assert (norm(ours, invarax.tree_util, invarax.ShapeDtypeStruct)
            == norm(theirs, jax.tree_util, jax.ShapeDtypeStruct))


def test_dtype_promotion_flag_reads_as_jax():
    import invarax

    assert invarax.config.jax_numpy_dtype_promotion == "standard"
    assert invarax.config.jax_numpy_rank_promotion == "allow"
    jax = pytest.importorskip("jax")
    assert jax.config.jax_numpy_dtype_promotion == "standard"


def _transposed(jax, jnp):
    m = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3) / 7)

    def f(tree):
        return {"mv": m @ tree["x"] + tree["y"][0], "s": jnp.sum(tree["x"] * 3.0)}

    core = jax.core if jax.__name__ == "jax" else jax.extend.core
    # the example primals may be arrays, ShapeDtypeStructs or ShapedArrays (Equinox's
    # test_primitive passes avals)
    primals = {"x": jax.ShapeDtypeStruct((3,), jnp.float32),
               "y": core.ShapedArray((1, 2), jnp.float32)}
    ct = {"mv": jnp.asarray([0.5, -2.0]), "s": jnp.asarray(1.5)}
    (out,) = jax.linear_transpose(f, primals)(ct)
    y, lin = jax.linearize(lambda x: jnp.sin(x) * x, jnp.asarray([0.3, 1.2]))
    (grad,) = jax.linear_transpose(lin, jnp.asarray([0.3, 1.2]))(jnp.ones(2))
    return [np.asarray(out["x"]), np.asarray(out["y"]), np.asarray(grad)]


def test_linear_transpose_as_jax():
    import invarax

    ours = _transposed(invarax, invarax.numpy)
    assert ours[1].shape == (1, 2)
    with pytest.raises(NotImplementedError, match="reduce_axes"):
        invarax.linear_transpose(lambda x: x, 1.0, reduce_axes=("i",))
    jax = pytest.importorskip("jax")
    for a, b in zip(ours, _transposed(jax, jax.numpy), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0)


def _grad_through_rule_applying_custom_jvp(jax, jnp):
    # As lineax's linear_solve: the outer rule applies a custom_jvp function (`scale`) to a
    # tangent, so `scale` is staged into the linear jaxpr and must be transposed.
    @jax.custom_jvp
    def scale(x):
        return x * 3.0

    scale.defjvp(lambda p, t: (scale(p[0]), t[0] * 3.0))

    @jax.custom_jvp
    def outer(x):
        return jnp.sin(x)

    outer.defjvp(lambda p, t: (outer(p[0]), scale(t[0]) * jnp.cos(p[0]) / 3.0))
    x = jnp.asarray([0.2, -1.3, 2.0])
    return [jax.grad(lambda x: jnp.sum(outer(x) ** 2))(x),
            jax.vjp(lambda x: outer(x) * 2.0, x)[1](jnp.ones(3))[0]]


def test_grad_transposes_a_custom_jvp_applied_to_a_tangent_as_jax():
    import invarax

    ours = _grad_through_rule_applying_custom_jvp(invarax, invarax.numpy)
    x = np.asarray([0.2, -1.3, 2.0], np.float32)
    np.testing.assert_allclose(ours[0], 2 * np.sin(x) * np.cos(x), rtol=1e-6)
    jax = pytest.importorskip("jax")
    for a, b in zip(ours, _grad_through_rule_applying_custom_jvp(jax, jax.numpy), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=0)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (1, 1)], ids=str)
def test_qr_raw_as_jax_and_numpy(shape):
    import invarax
    import invarax.numpy as jnp

    a = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    h, tau = jnp.linalg.qr(jnp.asarray(a), mode="raw")
    k = min(shape[-2:])
    assert h.shape == (*shape[:-2], shape[-1], shape[-2]) and tau.shape == (*shape[:-2], k)
    ref = [np.linalg.qr(m, mode="raw") for m in a.astype(np.float64).reshape(-1, *shape[-2:])]
    np.testing.assert_allclose(np.asarray(h).reshape(-1, *h.shape[-2:]),
                               np.stack([r[0] for r in ref]), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(tau).reshape(-1, k), np.stack([r[1] for r in ref]),
                               rtol=2e-5, atol=2e-6)
    # the same bits alone, batched by vmap, and under jit (N1-N3); R is qr's
    if len(shape) == 3:
        hv, tv = invarax.vmap(lambda m: jnp.linalg.qr(m, mode="raw"))(jnp.asarray(a))
        assert np.array_equal(np.asarray(hv).view(np.uint32), np.asarray(h).view(np.uint32))
        assert np.array_equal(np.asarray(tv).view(np.uint32), np.asarray(tau).view(np.uint32))
    hj, _ = invarax.jit(lambda m: jnp.linalg.qr(m, mode="raw"))(jnp.asarray(a))
    assert np.array_equal(np.asarray(hj).view(np.uint32), np.asarray(h).view(np.uint32))
    r = np.asarray(jnp.linalg.qr(jnp.asarray(a), mode="r"))
    upper = np.triu(np.swapaxes(np.asarray(h), -1, -2))[..., :k, :]
    assert np.array_equal(upper.view(np.uint32), r.view(np.uint32))
    jjnp = pytest.importorskip("jax.numpy")
    jh, jtau = jjnp.linalg.qr(a, mode="raw")
    np.testing.assert_allclose(np.asarray(h), np.asarray(jh), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(tau), np.asarray(jtau), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 4)], ids=str)
def test_ormqr_as_jax(shape, left, transpose):
    import invarax
    import invarax.numpy as jnp
    from invarax.lax.linalg import ormqr

    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape).astype(np.float32)
    m = shape[-2]
    c = rng.standard_normal((*shape[:-2], m, 2) if left else (*shape[:-2], 2, m))
    c = c.astype(np.float32)
    h, tau = jnp.linalg.qr(jnp.asarray(a), mode="raw")
    ours = ormqr(jnp.swapaxes(h, -1, -2), tau, jnp.asarray(c), left=left, transpose=transpose)
    q = np.asarray(jnp.linalg.qr(jnp.asarray(a), mode="complete")[0], np.float64)
    qq = np.swapaxes(q, -1, -2) if transpose else q
    want = qq @ c if left else c @ qq
    np.testing.assert_allclose(np.asarray(ours), want, rtol=1e-5, atol=1e-5)
    grad = invarax.grad(lambda c: jnp.sum(ormqr(jnp.swapaxes(h, -1, -2), tau, c, left=left,
                                                transpose=transpose) ** 2))(jnp.asarray(c))
    np.testing.assert_allclose(np.asarray(grad), 2 * c, rtol=1e-5, atol=1e-5)  # Q orthogonal
    jax = pytest.importorskip("jax")
    jh, jtau = jax.numpy.linalg.qr(a, mode="raw")
    theirs = jax.lax.linalg.ormqr(jh.mT, jtau, c, left=left, transpose=transpose)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)


def _eval_shape_of_struct_module(mod, jnp, sds):
    class Scale(mod.Module):
        w: object

        def __call__(self, x):
            return {"y": self.w * x, "n": "static"}

    # a Module whose array field is a ShapeDtypeStruct, as cached_filter_eval_shape makes
    return mod.filter_eval_shape(Scale(sds((3,), jnp.float16)), sds((3,), jnp.float32))


def test_filter_eval_shape_traces_the_function_pytree_as_equinox():
    import invarax

    ours = _eval_shape_of_struct_module(invarax, invarax.numpy, invarax.ShapeDtypeStruct)
    assert ours["n"] == "static" and ours["y"].dtype == np.float32
    eqx = pytest.importorskip("equinox")
    import jax

    theirs = _eval_shape_of_struct_module(eqx, jax.numpy, jax.ShapeDtypeStruct)
    assert (ours["y"].shape, ours["y"].dtype, ours["n"]) == (
        theirs["y"].shape, theirs["y"].dtype, theirs["n"])


def _like_structs(mod):
    jnp = mod.numpy
    s = mod.ShapeDtypeStruct((2, 3), jnp.int8)
    w = mod.ShapeDtypeStruct((), jnp.float32, weak_type=True)
    return [jnp.zeros_like(s), jnp.ones_like(s, dtype=jnp.float32), jnp.full_like(s, 3),
            jnp.zeros_like(w), jnp.zeros_like(w) + 1.5]


def test_creation_like_a_shape_dtype_struct_as_jax():
    import invarax

    ours = _like_structs(invarax)
    jax = pytest.importorskip("jax")
    for a, b in zip(ours, _like_structs(jax), strict=True):
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _gets_without_wrapping(jnp):
    x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    rows, cols = jnp.asarray([0, -1, 2, -3]), jnp.arange(4)
    return [x.at[rows, cols].get(wrap_negative_indices=False),
            x.at[rows, cols].get(wrap_negative_indices=False, mode="fill", fill_value=-1.0),
            x.at[-1].get(wrap_negative_indices=False),
            x.at[-1, 1:].get(wrap_negative_indices=False, mode="fill", fill_value=9.0),
            x.at[rows, cols].get()]


def test_get_without_wrapping_negative_indices_as_jax():
    import invarax.numpy as jnp

    ours = _gets_without_wrapping(jnp)
    with pytest.raises(NotImplementedError, match="wrap_negative_indices=False"):
        jnp.arange(3).at[..., 0].get(wrap_negative_indices=False)
    jjnp = pytest.importorskip("jax.numpy")
    for a, b in zip(ours, _gets_without_wrapping(jjnp), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("lib", ["invarax", "equinox"])
def test_filter_vmap_without_batched_inputs_as_equinox(lib):
    mod = pytest.importorskip(lib)
    jnp = mod.numpy if lib == "invarax" else pytest.importorskip("jax.numpy")
    # nothing batched, no axis_size: called once when every output is unbatched
    out = mod.filter_vmap(lambda name, n: (jnp.ones(3) * n, name), out_axes=None)("s", 2)
    np.testing.assert_array_equal(np.asarray(out[0]), np.full(3, 2.0, np.float32))
    assert out[1] == "s"
    assert mod.filter_vmap(lambda name: name.upper())("s") == "S"  # if_array(0): static out
    with pytest.raises(ValueError, match="axis_size"):
        mod.filter_vmap(lambda name: jnp.ones(2))("s")


def test_closure_converted_structure_does_not_hold_the_jaxpr_as_equinox():
    import invarax

    w = invarax.numpy.ones(3)
    a = invarax.filter_closure_convert(lambda x: x * w, invarax.numpy.ones(3))
    b = invarax.filter_closure_convert(lambda x: x * w, invarax.numpy.ones(3))
    assert a.jaxpr is not b.jaxpr
    assert invarax.tree_util.tree_structure(a) == invarax.tree_util.tree_structure(b)
    eqx = pytest.importorskip("equinox")
    import jax

    v = jax.numpy.ones(3)
    c = eqx.filter_closure_convert(lambda x: x * v, jax.numpy.ones(3))
    d = eqx.filter_closure_convert(lambda x: x * v, jax.numpy.ones(3))
    assert jax.tree_util.tree_structure(c) == jax.tree_util.tree_structure(d)


@pytest.mark.parametrize("seed", [0, 7])
def test_complex_normal_as_jax(seed):
    import invarax
    from invarax import random

    ours = random.normal(random.PRNGKey(seed), (4, 3), invarax.numpy.complex64)
    assert ours.dtype == np.complex64
    jitted = invarax.jit(lambda k: random.normal(k, (4, 3), invarax.numpy.complex64))
    assert np.array_equal(np.asarray(jitted(random.PRNGKey(seed))).view(np.uint32),
                          np.asarray(ours).view(np.uint32))
    jax = pytest.importorskip("jax")
    theirs = jax.random.normal(jax.random.PRNGKey(seed), (4, 3), jax.numpy.complex64)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-7)


def _polyvals(jnp):
    p = jnp.asarray(np.arange(15, dtype=np.float32).reshape(5, 3) / 7 - 1)
    return [jnp.polyval(p, jnp.asarray(0.3)), jnp.polyval(p, jnp.asarray([0.5, -1.0, 2.0])),
            jnp.polyval(p[:, :1], jnp.asarray([[0.5], [2.0]])),
            jnp.polyval(jnp.asarray([2.0, -1.0, 3.0]), jnp.asarray([[1.5, 0.25]]))]


def test_polyval_with_trailing_coefficient_axes_as_jax():
    import invarax.numpy as jnp

    ours = _polyvals(jnp)
    with pytest.raises(ValueError, match=r"shape \(N,\) or \(N, ...\)"):
        jnp.polyval(jnp.asarray(1.0), 2.0)
    jjnp = pytest.importorskip("jax.numpy")
    for a, b in zip(ours, _polyvals(jjnp), strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)

"""A library's own primitive through ``jax.extend.core`` / ``jax.interpreters`` (the way
libraries write them for JAX), ``linear_util`` and ``api_util``, and ``jax.experimental``:
the same program written against invarax and against JAX gives the same values."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax.experimental import checkify, sparse
from tests.helpers import assert_bitwise, data

jax = pytest.importorskip("jax")


def _library(core, shaped, ad, batching, mlir):
    """A primitive ``scale(x, k) = k * x`` defined as a library does, for ``lib``."""
    scale_p = core.Primitive("library_scale")
    scale_p.def_impl(lambda x, *, k: x * k)
    scale_p.def_abstract_eval(lambda x, *, k: shaped(x.shape, x.dtype))
    ad.deflinear2(scale_p, lambda ct, x, *, k: [scale_p.bind(ct, k=k)])
    batching.primitive_batchers[scale_p] = lambda xs, dims, *, k: (scale_p.bind(*xs, k=k),
                                                                   dims[0])
    mlir.register_lowering(scale_p, mlir.lower_fun(lambda x, *, k: x * k,
                                                   multiple_results=False))
    cube_p = core.Primitive("library_cube")
    cube_p.def_impl(lambda x: x * x * x)
    cube_p.def_abstract_eval(lambda x: shaped(x.shape, x.dtype))
    ad.defjvp(cube_p, lambda g, x: scale_p.bind(g * x * x, k=3.0))
    batching.primitive_batchers[cube_p] = lambda xs, dims: (cube_p.bind(*xs), dims[0])
    mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x,
                                                  multiple_results=False))
    return lambda x: scale_p.bind(cube_p.bind(x), k=0.5)


def _programs():
    from invarax.extend import core
    from invarax.extend.interpreters import ad, batching, mlir

    ours = _library(core, core.ShapedArray, ad, batching, mlir)
    import jax.extend.core as jcore
    import jax.interpreters.ad as jad
    import jax.interpreters.batching as jbatching
    import jax.interpreters.mlir as jmlir

    return ours, _library(jcore, jax.core.ShapedArray, jad, jbatching, jmlir)


def test_a_librarys_primitive_transforms_as_in_jax():
    ours, theirs = _programs()
    x = data(5)
    for transform in (lambda lib, f: f, lambda lib, f: lib.jit(f),
                      lambda lib, f: lib.vmap(f),
                      lambda lib, f: lib.vmap(lib.grad(lambda v: f(v).sum() if v.ndim else f(v))),
                      lambda lib, f: lib.jit(lib.grad(lambda v: lib.numpy.sum(f(v)))),
                      lambda lib, f: lambda v: lib.jvp(f, (v,), (v,))[1]):
        np.testing.assert_allclose(transform(invarax, ours)(x), transform(jax, theirs)(x),
                                   rtol=1e-6)
    assert_bitwise(invarax.jit(ours)(x), ours(x))
    assert_bitwise(invarax.vmap(ours)(x[:, None])[:, 0], ours(x))
    assert "library_cube" in str(invarax.make_jaxpr(ours)(x))


def test_abstract_eval_may_return_a_shape_dtype_struct():
    from invarax.extend import core

    p = core.Primitive("library_twice")
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda x: invarax.ShapeDtypeStruct(x.shape, x.dtype))
    assert_bitwise(invarax.jit(p.bind)(np.ones(2, np.float32)), np.full(2, 2, np.float32))
    p.def_abstract_eval(lambda x: "nonsense")
    with pytest.raises(TypeError, match="return a ShapedArray"):
        invarax.jit(p.bind)(np.ones(3, np.float32))


def test_rule_tables_are_invaraxs_own():
    from invarax.extend.interpreters import ad, batching
    from invarax.interpreters import ad as internal_ad
    from invarax.interpreters import batching as internal_batching

    assert ad.primitive_jvps is internal_ad.jvp_rules
    assert ad.primitive_transposes is internal_ad.transpose_rules
    assert batching.primitive_batchers is internal_batching.batching_rules
    with pytest.raises(NotImplementedError, match="lower_fun"):
        from invarax.extend.interpreters import mlir

        mlir.register_lowering(invarax.lax.add_p, lambda ctx, x, y: None)


def test_core_helpers_match_jax():
    from invarax.extend import core

    closed = invarax.make_jaxpr(lambda x: invarax.lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0)
    jclosed = jax.make_jaxpr(lambda x: jax.lax.cond(x > 0, jax.numpy.sin, jax.numpy.cos, x))(1.0)
    assert isinstance(closed, core.ClosedJaxpr) and isinstance(closed.jaxpr, core.Jaxpr)
    import jax.extend.core as jcore

    assert len(list(core.subjaxprs(closed.jaxpr))) == len(list(jcore.subjaxprs(jclosed.jaxpr)))
    assert_bitwise(core.jaxpr_as_fun(closed)(2.0)[0], jnp.sin(2.0))
    assert core.get_aval(np.ones((2, 3), np.float32)) == core.ShapedArray((2, 3), np.float32)
    assert isinstance(core.get_aval(1.0), core.AbstractValue)
    assert core.valid_jaxtype(1.0) and not core.valid_jaxtype("text")
    with pytest.raises(invarax.errors.ConcretizationTypeError, match="needed here"):
        invarax.jit(lambda x: core.concrete_or_error(float, x, "needed here"))(1.0)
    assert core.concrete_or_error(int, np.int32(3)) == 3


def test_linear_util_and_api_util():
    from invarax.extend import api_util, linear_util

    flat, out_tree = api_util.flatten_fun_nokwargs(
        linear_util.wrap_init(lambda a, b: {"s": a + b, "d": a - b}),
        invarax.tree_util.tree_structure((0, 0)))
    assert flat.call_wrapped(5, 2) == [3, 7] and str(out_tree()) == "PyTreeDef({'d': *, 's': *})"
    assert api_util.shaped_abstractify(invarax.ShapeDtypeStruct((2,), jnp.int32)) == \
        invarax.extend.core.ShapedArray((2,), np.int32)
    with pytest.raises(ValueError, match="different lengths"):
        api_util.safe_map(lambda a, b: a, [1], [1, 2])


def test_io_callback_matches_jax():
    from jax.experimental import io_callback as jio_callback

    for lib, io_callback in ((invarax, invarax.experimental.io_callback), (jax, jio_callback)):
        seen = []

        def log(v, seen=seen):
            seen.append(float(np.sum(v)))
            return np.asarray(v * 2, np.float32)

        spec = lib.ShapeDtypeStruct((3,), np.float32)
        f = lib.jit(lambda v, spec=spec, log=log, io_callback=io_callback:
                    io_callback(log, spec, v) + 1.0)
        out = (f(np.ones(3, np.float32)), f(np.full(3, 2.0, np.float32)))
        batched = lib.vmap(lambda v, spec=spec, log=log, io_callback=io_callback:
                           io_callback(log, spec, v))(np.ones((2, 3), np.float32))
        if lib is invarax:
            ours = (out, batched, list(seen))
        else:
            for a, b in zip(ours[0] + (ours[1],), out + (batched,), strict=True):
                assert_bitwise(a, b)
            assert ours[2] == seen
    unused = invarax.jit(lambda v: (invarax.experimental.io_callback(
        lambda a: np.ones((), np.float32), invarax.ShapeDtypeStruct((), jnp.float32), v), v)[1])
    assert "io_callback" in str(invarax.make_jaxpr(unused, optimize=True)(1.0))  # kept
    with pytest.raises(ValueError, match="ordered"):
        invarax.vmap(lambda v: invarax.experimental.io_callback(
            lambda a: a, invarax.ShapeDtypeStruct((), jnp.float32), v, ordered=True))(jnp.ones(2))


def test_checkify_and_sparse_say_what_is_served():
    import jax.experimental.checkify as jcheckify

    assert {c.__name__ for c in checkify.all_checks} == {c.__name__ for c in
                                                        jcheckify.all_checks}
    assert {c.__name__ for c in checkify.float_checks} == {c.__name__ for c in
                                                          jcheckify.float_checks}
    with pytest.raises(invarax.errors.JaxRuntimeError, match="x was 3"):
        checkify.check(False, "x was {}", 3)
    checkify.check(np.array([True, True]), "fine")
    with pytest.raises(NotImplementedError, match="error_if"):
        checkify.checkify(lambda x: x)
    with pytest.raises(NotImplementedError, match="error_if"):
        invarax.jit(lambda x: checkify.check(x > 0, "positive"))(1.0)
    assert not isinstance(jnp.ones(2), sparse.BCOO)
    with pytest.raises(NotImplementedError, match="sparse.BCOO"):
        sparse.BCOO.fromdense(jnp.ones(2))


@pytest.mark.parametrize("lib", ["invarax", "jax"])
def test_equation_effects_as_jax(lib):
    # Equinox's test_finalise_jaxpr compares eqn.effects: empty for a pure equation, not
    # empty for a callback (which the compiler keeps)
    jx = invarax if lib == "invarax" else jax

    def f(x):
        jx.debug.callback(lambda v: None, x)
        return x + 1

    eqns = jx.make_jaxpr(f)(1.0).jaxpr.eqns
    assert [str(e.primitive) for e in eqns] == ["debug_callback", "add"]
    assert eqns[0].effects and eqns[1].effects == set() and isinstance(eqns[1].effects,
                                                                        (set, frozenset))
    inner = jx.make_jaxpr(jx.jit(f))(1.0).jaxpr.eqns[0]
    assert inner.effects  # a call whose body has one has it too

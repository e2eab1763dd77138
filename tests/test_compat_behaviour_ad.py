"""Filtered autodiff behaviours that Equinox's own tests (test_ad.py) found different, each
run on invarax and on the same definitions in Equinox (skipped without it)."""

import warnings

import numpy as np
import pytest

import invarax

eqx = pytest.importorskip("equinox")
jax = pytest.importorskip("jax")

LIBS = [(invarax, invarax), (jax, eqx)]  # (the JAX namespace, the Equinox namespace)


def _tangents_none(tree):
    return [t is None for t in tree]


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_jvp_tangents_of_constant_outputs_are_none(jx, ex):
    jnp = jx.numpy
    marker = object()

    def g(a, i, f, n, c):
        return a**2, i * 3, f * 4, n * 5, c * 6, marker

    primals = (jnp.array(1.5), jnp.array(1), 2.0, 1, jnp.array(1.0))
    out, t = ex.filter_jvp(g, primals, (jnp.array(5.0), None, 3.0, None, None))
    # only outputs depending on a differentiated input carry a tangent; the float array
    # held constant (None tangent) gives a constant output: None, not zeros
    assert _tangents_none(t) == [False, True, False, True, True, True]
    assert out[5] is marker and float(t[0]) == 15.0 and float(t[2]) == 12.0
    out, t = ex.filter_jvp(g, primals, (None,) * 5)
    assert _tangents_none(t) == [True] * 6


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_jvp_nested_output_of_the_outer_trace_has_no_tangent(jx, ex):
    seen = []

    def f(x):
        (a, b), (ta, tb) = ex.filter_jvp(lambda y: (y, x), (x,), (1.0,))
        seen.append((ta is None, tb is None))
        return a * b

    out, t = ex.filter_jvp(f, (2.0,), (1.0,))
    assert seen == [(False, True)] and float(out) == 4.0 and float(t) == 4.0


@pytest.mark.parametrize(("jx", "ex"), LIBS)
@pytest.mark.parametrize("bad", ["int tangent", "object", "int primal"])
def test_filter_jvp_bad_tangent_raises_type_error(jx, ex, bad):
    jnp = jx.numpy
    primals = (jnp.array(1.0), jnp.array(1), object())
    tangents = {"int tangent": (jnp.array(5), None, None),
                "object": (None, None, object()),
                "int primal": (None, jnp.array(1.0), None)}[bad]
    with pytest.raises(TypeError):
        ex.filter_jvp(lambda *a: a[0] + a[1], primals, tangents)


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_grad_first_argument_by_keyword_raises(jx, ex):
    x = jx.numpy.array(1.0)
    with pytest.raises(TypeError, match="Functions wrapped with"):
        ex.filter_grad(lambda x: x + 1)(x=x)
    with pytest.raises(TypeError, match="Functions wrapped with"):
        ex.filter_value_and_grad(lambda x, y: x + y)(x=x, y=x)
    with pytest.raises(TypeError, match="Functions wrapped with"):
        ex.filter_grad(lambda: 1.0)()


def _add_one(a):
    return a + 1


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_closure_convert_of_a_function_closing_over_nothing_is_trivial(jx, ex):
    jnp = jx.numpy
    f = ex.filter_closure_convert(_add_one, jnp.ones(2))
    assert type(f).__name__ == "_TrivialClosureConvert"
    assert jx.tree_util.tree_leaves(ex.filter(f, ex.is_array)) == []  # nothing traced
    assert f.out_struct.shape == (2,) and f.out_struct.dtype == np.float32
    assert np.array_equal(f(jnp.arange(2.0)), [1.0, 2.0])
    with pytest.raises(ValueError):
        f(jnp.ones(3))
    assert ex.filter_closure_convert(_add_one, 1).out_struct == 2
    w = jnp.ones(2)
    assert type(ex.filter_closure_convert(lambda a: a * w, jnp.ones(2))).__name__ == \
        "_ClosureConvert"


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_custom_vjp_defvjp_is_deprecated_and_works(jx, ex):
    jnp = jx.numpy

    @ex.filter_custom_vjp
    def f(x):
        a, b = x
        return a + 1, b + 2, b + 3

    def f_bwd(res, g, x):
        assert all(gi is not None for gi in g)  # zeros materialised, as before
        return g[0] + 10 * g[1], g[2]

    with pytest.warns(UserWarning, match="deprecated"):
        f.defvjp(lambda x: (f(x), None), f_bwd)
    ga, gb = jx.grad(lambda x: f(x)[0] + f(x)[2])((jnp.array(1.0), jnp.array(1.0)))
    assert (float(ga), float(gb)) == (1.0, 1.0)


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_custom_jvp_defjvp_is_deprecated_and_materialises_zeros(jx, ex):
    jnp = jx.numpy

    @ex.filter_custom_jvp
    def f(x, y):
        return x * y

    seen = []

    def f_jvp(primals, tangents):
        seen.append([t is None for t in tangents])
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), tx * y + (0.0 if ty is None else x * ty)

    with pytest.warns(UserWarning, match="deprecated"):
        f.defjvp(f_jvp)
    assert float(jx.grad(f)(jnp.array(2.0), jnp.array(3.0))) == 3.0
    assert float(jx.grad(f)(jnp.array(2.0), 3.0)) == 3.0
    # the undifferentiated float array gets zeros (not None);
    # the Python float gets None
    assert seen == [[False, False], [False, True]]


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_custom_vjp_differentiating_a_later_argument_raises(jx, ex):
    @ex.filter_custom_vjp
    def f(x, y):
        return x + y

    f.def_fwd(lambda perturbed, x, y: (x + y, None))
    f.def_bwd(lambda res, ct, perturbed, x, y: ct)
    with pytest.raises(RuntimeError):
        jx.grad(lambda x: f(x, x))(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(jx.grad(lambda x: f(x, 2.0))(jx.numpy.array(1.0))) == 1.0


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_jvp_returns_a_python_float_primal_as_given(jx, ex):
    out, t = ex.filter_jvp(lambda x: (x, 2 * x, 1.0), (2.0,), (3.0,))
    assert (out[0], t[0]) == (2.0, 3.0) and type(out[0]) is float and type(t[0]) is float
    assert isinstance(out[1], jx.Array) and float(t[1]) == 6.0
    assert out[2] == 1.0 and t[2] is None


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_a_custom_jvp_traced_weak_runs_on_a_strong_argument(jx, ex):
    # optimistix's fixed_point under grad: a closure-converted program traced for a weakly
    # typed float, whose custom_jvp call is evaluated again inside jit on a float32 array
    eval_jaxpr = jx.eval_jaxpr if jx is invarax else jx.core.eval_jaxpr

    @jx.custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (double(p[0]), 2.0 * t[0]))
    closed = jx.make_jaxpr(double)(1.0)
    g = jx.jit(lambda y: eval_jaxpr(closed.jaxpr, closed.consts, y)[0])
    s = np.float32(3.0)
    assert [float(g(s)), float(jx.grad(g)(s))] == [6.0, 2.0]

"""``equinox.internal``'s namespace and helpers: ``ω``, ``nextafter``/``prevbefore``,
``scan_trick``, ``eval_zero``/``eval_empty``, ``left_broadcast_to``, ``ContainerMeta``,
``GetKey``, ``str2jax``, ``hashable_partition``, ``cached_filter_eval_shape``,
``closure_to_pytree``, ``doc_repr``, ``debug_backward_nan``.

Each is run on invarax and on Equinox 0.13.8 (skipped when absent) with the same inputs; where
the computation is arithmetic without transcendental functions the results are bitwise equal.
The loops and the primitives have their own files (test_eqx_internal_loops.py,
test_eqx_internal_primitives.py).
"""

import types
import typing

import numpy as np
import pytest

import invarax
import invarax.module.internal as eqxi
import invarax.numpy as jnp

OURS = types.SimpleNamespace(jax=invarax, jnp=jnp, eqxi=eqxi)


@pytest.fixture(scope="module")
def theirs():
    pytest.importorskip("equinox.internal")
    import equinox.internal
    import jax

    return types.SimpleNamespace(jax=jax, jnp=jax.numpy, eqxi=equinox.internal)


def _leaves(tree):
    import jax

    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _equal(ours, theirs):
    got = [np.asarray(x) for x in invarax.tree_util.tree_leaves(ours)]
    want = _leaves(theirs)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b), (a, b)


def _omega_results(lib):
    jnp, ω = lib.jnp, lib.eqxi.ω
    a = {"x": jnp.arange(3.0), "y": (jnp.ones(2), 2.0)}
    b = {"x": jnp.arange(3.0) + 1, "y": (jnp.full(2, 3.0), 5.0)}
    x = jnp.arange(3.0)
    return [(a**ω + b**ω).ω, (a**ω - 1).ω, (2 * a**ω).ω, (1 / b**ω).ω, (-(a**ω)).ω,
            abs(-(a**ω)).ω, (a**ω * a**ω).ω, (b**ω // 2).ω, (a**ω < b**ω).ω, (x**ω + 1).ω,
            ((x**ω) ** 2).ω, ω(x)[1:].ω, ω(a).call(lambda v: v * 3).ω,
            ω({"x": x}).at[1].set(7.0).ω, ω({"x": x}).at[1].add(ω({"x": 2.0})).ω,
            (3 - a**ω).ω, (a**ω == a**ω).ω, (x**ω @ x**ω).ω]


def test_omega_as_equinox(theirs):
    _equal(_omega_results(OURS), _omega_results(theirs))
    ω = eqxi.ω
    with pytest.raises(ValueError, match="PyTree structures must match"):
        ω({"a": 1.0}) + ω((1.0,))
    with pytest.raises(RuntimeError, match="Type of `other` not understood"):
        ω({"a": 1.0}) + "s"
    with pytest.raises(ValueError, match="`is_leaf` must match"):
        ω([1.0]) + ω([1.0], is_leaf=lambda v: False)
    assert repr(ω(1.0)) == "ω(1.0)"


def _helper_results(lib):
    jax, jnp, eqxi = lib.jax, lib.jnp, lib.eqxi
    x = jnp.array([0.0, 1.0, -2.5, 1e-30], dtype=jnp.float32)

    class Colours(metaclass=eqxi.ContainerMeta):
        red = "warm"
        blue = "cold"

    key = eqxi.GetKey(seed=3)
    return [eqxi.nextafter(x), eqxi.prevbefore(x), jax.jvp(eqxi.nextafter, (x,), (x,))[1],
            jax.grad(lambda x: eqxi.prevbefore(x).sum())(x),
            eqxi.scan_trick(lambda c: c * 1.5 + 1.0, [lambda c: c * 2, lambda c: c - 3],
                            jnp.float32(0.5)),
            eqxi.eval_zero(lambda a: (a, a.sum()), x),
            eqxi.eval_empty(lambda a: a[:2], x)[0].shape,
            eqxi.left_broadcast_to(jnp.arange(3), (3, 2, 2)),
            [Colours.red, Colours.blue, len(Colours), Colours[1], isinstance(1, Colours),
             isinstance(jnp.array(1), Colours), isinstance(jnp.array(1.0), Colours)],
            jax.random.normal(key(), (3,)), jax.random.normal(key(), (2,)), key.call,
            eqxi.cached_filter_eval_shape(lambda a, n: a * n, x, 2).shape,
            eqxi.hashable_combine(*eqxi.hashable_partition(
                (x, 1, "s"), lambda v: isinstance(v, int)))]


def test_helpers_as_equinox(theirs):
    _equal(_helper_results(OURS), _helper_results(theirs))


def test_tokens_and_docs(theirs):
    for lib in (OURS, theirs):
        token = lib.eqxi.str2jax("qr_token")
        assert repr(token) == "qr_token" and type(token).__name__ == "qr_token"
        assert lib.jax.tree_util.tree_leaves(token) == []
        fn = lambda v: v  # noqa: E731
        assert lib.eqxi.doc_repr(fn, "identity") is fn
        assert lib.eqxi.doc_remove_args("b")(fn) is fn
    typing.GENERATING_DOCUMENTATION = True
    try:
        shown = eqxi.doc_repr(lambda v: v + 1, "plus one")
        assert repr(shown) == "plus one" and shown(1) == 2

        def f(a, b):
            return a

        assert str(eqxi.doc_remove_args("b")(f).__signature__) == "(a)"
    finally:
        del typing.GENERATING_DOCUMENTATION


def test_closure_to_pytree(theirs):
    def make(lib, a):
        return lib.eqxi.closure_to_pytree(lambda x: x * a)

    for lib in (OURS, theirs):
        f, g = make(lib, lib.jnp.float32(2.0)), make(lib, lib.jnp.float32(5.0))
        assert float(f(3.0)) == 6.0 and float(g(3.0)) == 15.0
        assert lib.jax.tree_util.tree_structure(f) == lib.jax.tree_util.tree_structure(g)
        assert len(lib.jax.tree_util.tree_leaves(f)) == 2  # the function, then its cell


def test_debug_backward_nan(capsys, theirs):
    f = lambda x: jnp.sqrt(eqxi.debug_backward_nan(x, name="x", terminate=False)).sum()  # noqa: E731
    grads = invarax.grad(f)(jnp.array([1.0, 4.0]))
    assert np.array_equal(grads, [0.5, 0.25])
    assert capsys.readouterr().out == ("x:\n   primals=Array([1., 4.], dtype=float32)\n"
                                       "cotangents=Array([0.5 , 0.25], dtype=float32)\n")
    g = lambda x: jnp.sqrt(eqxi.debug_backward_nan(x)).sum()  # noqa: E731
    with pytest.raises(eqxi.EquinoxRuntimeError, match="Encountered NaN"):
        invarax.jit(invarax.grad(g))(jnp.array([-1.0, 4.0]))
    import equinox

    with pytest.raises(equinox.EquinoxRuntimeError, match="Encountered NaN"):
        theirs.jax.grad(lambda x: theirs.jnp.sqrt(theirs.eqxi.debug_backward_nan(x)).sum())(
            np.array([-1.0, 4.0], np.float32))


def test_namespace_serves_what_the_libraries_import(theirs):
    """The names diffrax 0.7.2, optimistix 0.1.0 and lineax 0.1.1 take from equinox.internal."""
    used = {"AbstractVar", "Enumeration", "MaybeBuffer", "Static", "buffer_at_set",
            "cached_filter_eval_shape", "closure_to_pytree", "create_vprim", "doc_remove_args",
            "doc_repr", "error_if", "eval_empty", "eval_zero", "filter_primitive_bind",
            "filter_primitive_def", "filter_primitive_jvp", "filter_primitive_transpose",
            "materialise_zeros", "nextafter", "nonbatchable", "nondifferentiable",
            "nondifferentiable_backward", "nontraceable", "prevbefore",
            "register_impl_finalisation", "scan", "scan_trick", "str2jax", "unvmap_all",
            "unvmap_any", "unvmap_max", "while_loop", "ω"}
    assert used <= set(eqxi.__all__)
    assert set(eqxi.__all__) - {"EquinoxRuntimeError"} <= set(dir(theirs.eqxi))
    assert eqxi.Static((1, 2)).value == (1, 2)
    assert invarax.tree_util.tree_leaves(eqxi.Static(jnp.ones(2))) == []

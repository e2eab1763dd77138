"""Transformation behaviours that real JAX code found different (``has_aux``,
``debug.breakpoint``), each checked against JAX (skipped without it)."""

import io
import pdb
import sys
import warnings

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp

jax = pytest.importorskip("jax")


def _aux_kinds(lib):
    return {"numpy float64 scalar": lambda x: np.float64(1.5),
            "numpy float64 array": lambda x: np.ones(2),
            "float64 of x": lambda x: x.astype(lib.numpy.float64).sum(),
            "Python float": lambda x: 1.5}


@pytest.mark.parametrize("x64_on", [False, True])
def test_has_aux_keeps_the_aux_dtype_as_jax(x64_on):
    # a float64 aux came back as float32 in a notebook; every path agrees with JAX here
    def describe(lib):
        out = []
        for make in _aux_kinds(lib).values():
            def f(x, make=make):
                return lib.numpy.sum(x * x), make(x)
            x = lib.numpy.ones(2, lib.numpy.float32)
            for aux in (lib.grad(f, has_aux=True)(x)[1],
                        lib.jit(lib.grad(f, has_aux=True))(x)[1],
                        lib.value_and_grad(f, has_aux=True)(x)[0][1]):
                out.append((type(aux).__name__ != "float", np.asarray(aux).dtype,
                            getattr(aux, "weak_type", None)))
        return out

    invarax.config.update("jax_enable_x64", x64_on)
    with jax.enable_x64(x64_on), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX warns that float64 is truncated without x64
        assert describe(invarax) == describe(jax)


def _program(lib):
    """A function with a breakpoint inside a cond inside jit, and its caller's values."""
    def branch(x):
        y = x * 2
        n = 3  # noqa: F841  (a non-array local, shown as it is)
        lib.debug.breakpoint()
        return y.sum()

    return lib.jit(lambda x: lib.lax.cond(x.sum() > 0, branch, lambda x: x.sum(), x))


@pytest.fixture
def scripted_pdb(monkeypatch):
    """pdb reading the commands given, writing into the returned buffer."""
    out = io.StringIO()

    def script(commands):
        stdin = io.StringIO(commands)

        class Scripted(pdb.Pdb):
            def __init__(self, *args, **kwargs):
                super().__init__(stdin=stdin, stdout=out)

        monkeypatch.setattr(pdb, "Pdb", Scripted)
        return out

    return script


def test_breakpoint_inside_jit_and_cond_enters_pdb_with_values(scripted_pdb, monkeypatch):
    # it raised NotImplementedError; JAX enters its debugger with the concrete values
    out = scripted_pdb("p y\np n\nc\n")
    assert float(_program(invarax)(jnp.arange(3.0))) == 6.0
    assert "Array([0., 2., 4.], dtype=float32)\n(Pdb) 3" in out.getvalue()

    monkeypatch.setattr(sys, "stdin", io.StringIO("p y\nc\n"))  # JAX's own debugger
    jax_out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", jax_out)
    assert float(_program(jax)(jax.numpy.arange(3.0))) == 6.0
    assert "Array([0., 2., 4.], dtype=float32)" in jax_out.getvalue()


def test_breakpoint_under_vmap_and_grad(scripted_pdb):
    out = scripted_pdb("p y\nc\n" * 3)

    def f(x):
        y = x * 2
        invarax.debug.breakpoint()
        return y.sum()

    invarax.vmap(f)(jnp.arange(2.0))  # once per example
    invarax.grad(f)(jnp.array([1.0, 5.0]))  # the primal values
    shown = [line for line in out.getvalue().split("(Pdb) ") if line.startswith("Array")]
    assert shown == ["Array(0., dtype=float32)\n", "Array(2., dtype=float32)\n",
                     "Array([ 2., 10.], dtype=float32)\n"]


def _conditional(lib, eqx_debug):
    """A jitted function stopping, through Equinox's ``breakpoint_if``, where ``y`` > 5."""
    def f(x):
        y = x * 2
        eqx_debug.breakpoint_if(lib.numpy.any(y > 5))
        return y.sum()

    return lib.jit(f)


def test_breakpoint_if_as_equinox(scripted_pdb, monkeypatch):
    eqx = pytest.importorskip("equinox")
    out = scripted_pdb("p y\nc\n" * 2)
    f = _conditional(invarax, invarax.debug)
    assert float(f(jnp.arange(3.0))) == 6.0  # y = [0, 2, 4]: no stop
    assert out.getvalue() == ""
    assert float(f(jnp.arange(4.0))) == 12.0  # y = [0, 2, 4, 6]: stops
    assert "Array([0., 2., 4., 6.], dtype=float32)" in out.getvalue()

    monkeypatch.setattr(sys, "stdin", io.StringIO("p y\nc\n"))  # JAX's own debugger
    jax_out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", jax_out)
    g = _conditional(jax, eqx.debug)
    assert float(g(jax.numpy.arange(3.0))) == 6.0
    assert jax_out.getvalue() == ""
    assert float(g(jax.numpy.arange(4.0))) == 12.0
    assert "Array([0., 2., 4., 6.], dtype=float32)" in jax_out.getvalue()


def test_breakpoint_if_eagerly_and_under_vmap(scripted_pdb):
    out = scripted_pdb("p y\nc\n" * 3)

    def f(x):
        y = x * 2
        invarax.debug.breakpoint_if(y > 5)
        return y

    assert float(f(jnp.float32(1.0))) == 2.0 and out.getvalue() == ""
    f(jnp.float32(3.0))  # eagerly pdb stops in f itself, after the call
    assert "(Pdb) Array(6., dtype=float32)" in out.getvalue()
    out.seek(0), out.truncate()
    invarax.vmap(f)(jnp.array([1.0, 4.0]))  # one example holds: pdb once per example
    shown = [line for line in out.getvalue().split("(Pdb) ") if line.startswith("Array")]
    assert shown == ["Array(2., dtype=float32)\n", "Array(8., dtype=float32)\n"]
    out.seek(0), out.truncate()
    invarax.vmap(f)(jnp.array([1.0, 2.0]))
    assert "Array" not in out.getvalue()


@pytest.mark.parametrize("lib", ["invarax", "jax"])
def test_vmap_passes_an_unbatched_non_array_argument_through(lib):
    # Equinox's test_nontraceable: vmap(run, in_axes=(0, None)) of a model's static part
    jx = invarax if lib == "invarax" else jax
    relu = jx.nn.relu  # a custom_jvp object, not an array
    out = jx.vmap(lambda x, f, s: f(x) * len(s), in_axes=(0, None, None))(
        jx.numpy.array([-1.0, 2.0]), relu, "abc")
    np.testing.assert_array_equal(np.asarray(out), [0.0, 6.0])
    with pytest.raises(TypeError):  # batched, it must be an array
        jx.vmap(lambda x, s: x, in_axes=(0, 0))(jx.numpy.ones(2), "abc")
    with pytest.raises(TypeError):
        jx.vmap(lambda x, s: x)(jx.numpy.ones(2), "abc")


@pytest.mark.parametrize("lib", ["invarax", "jax"])
def test_jvp_keeps_python_scalars_as_jax(lib):
    # Equinox's test_filter_custom_jvp_{no_,}kwargs: a Python float passed to jvp reaches a
    # custom JVP rule as a Python float, and what the rule makes of it comes back so
    jx = invarax if lib == "invarax" else jax
    kinds = []

    @jx.custom_jvp
    def cube(x):
        return x**3

    @cube.defjvp
    def cube_jvp(p, t):
        kinds.append((type(p[0]).__name__, type(t[0]).__name__))
        return p[0] ** 3, 3.0 * p[0] ** 2 * t[0]

    out = jx.jvp(lambda x: x, (2.0,), (3.0,))
    assert out == (2.0, 3.0) and type(out[0]) is float and type(out[1]) is float
    assert isinstance(jx.jvp(lambda x: x * 2, (2.0,), (3.0,))[0], jx.Array)
    assert jx.jvp(cube, (2.0,), (1.0,)) == (8.0, 12.0) and kinds == [("float", "float")]
    array_out = jx.jvp(cube, (jx.numpy.float32(2.0),), (jx.numpy.float32(1.0),))
    assert all(isinstance(o, jx.Array) for o in array_out)
    assert kinds[1] != ("float", "float")
    grad = jx.grad(cube)(2.0)  # under grad the primal is an array, as JAX
    assert isinstance(grad, jx.Array) and float(grad) == 12.0

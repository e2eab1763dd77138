"""``error_if``/``branched_error_if`` (eager, jit, vmap, grad) and ``Enumeration``, against
Equinox; the checked value comes back bitwise unchanged in every context."""

import warnings

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import EquinoxRuntimeError, EquinoxTracetimeError, branched_error_if, error_if


def _check(x):
    return error_if(x, x < 0, "x must be non-negative")


CONTEXTS = {
    "eager": lambda f: f,
    "jit": invarax.jit,
    "filter_jit": invarax.filter_jit,
    "vmap": invarax.vmap,
    "jit(vmap)": lambda f: invarax.jit(invarax.vmap(f)),
    "grad": lambda f: invarax.grad(lambda x: f(x).sum()),
    "jit(grad)": lambda f: invarax.jit(invarax.grad(lambda x: f(x).sum())),
    "vmap(grad)": lambda f: invarax.vmap(invarax.grad(lambda x: f(x).sum())),
}


@pytest.mark.parametrize("context", list(CONTEXTS))
def test_error_if_raises_in_every_context(context):
    f = CONTEXTS[context](_check)
    good = jnp.asarray(np.abs(data((3, 2))))
    bad = good.at[1, 0].set(-1.0)
    out = f(good)
    if "grad" not in context:
        assert_bitwise(out, good)
    # from filter_jit, Equinox's report around the message
    match = ("^x must be non-negative$" if context != "filter_jit" else
             "^Above is the stack outside of JIT(.|\n)*\nequinox.EquinoxRuntimeError: "
             "x must be non-negative\n(.|\n)*EQX_ON_ERROR")
    with pytest.raises(EquinoxRuntimeError, match=match) as err:
        f(bad)
    assert err.value.__cause__ is None and type(err.value) is EquinoxRuntimeError


def test_error_if_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    good, bad = np.ones(3, np.float32), np.array([1.0, -1.0, 2.0], np.float32)
    for ours_ctx, theirs_ctx in [(lambda f: f, lambda f: f), (invarax.filter_jit, eqx.filter_jit),
                                 (invarax.vmap, jax.vmap)]:
        ours = ours_ctx(lambda x: error_if(x, x < 0, "neg"))
        theirs = theirs_ctx(lambda x: eqx.error_if(x, x < 0, "neg"))
        np.testing.assert_array_equal(ours(jnp.asarray(good)), theirs(good))
        with pytest.raises(RuntimeError) as ours_err:
            ours(jnp.asarray(bad))
        with pytest.raises(RuntimeError) as theirs_err:
            theirs(bad)
        assert type(ours_err.value).__name__ == type(theirs_err.value).__name__
        assert "neg" in str(theirs_err.value) and "neg" in str(ours_err.value)
        if ours_ctx is invarax.filter_jit:  # Equinox's report, from filter_jit
            for err in (ours_err, theirs_err):
                assert str(err.value).startswith("Above is the stack outside of JIT")
                assert "EQX_ON_ERROR" in str(err.value)
        else:  # Equinox reports so here too; ours is the message alone
            assert str(ours_err.value) == "neg"
    for pred in (True, False):  # a Python bool is checked when the call is traced
        try:
            eqx.branched_error_if(jnp.ones(2), pred, 1, ["a", "b"])
            theirs = None
        except RuntimeError as e:
            theirs = (type(e).__name__, str(e))
        try:
            branched_error_if(jnp.ones(2), pred, 1, ["a", "b"])
            ours = None
        except EquinoxTracetimeError as e:
            ours = (type(e).__name__, str(e))
        assert ours == theirs
    nan = error_if(jnp.ones(2), jnp.array([True, False]), "m", on_error="nan")
    np.testing.assert_array_equal(
        nan, eqx.error_if(np.ones(2, np.float32), np.array([True, False]), "m", on_error="nan"))


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_on_error_nan_fills_every_dtype_as_equinox(wrap):
    # NaN for floats and complex, the largest value for integers, True for bools
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    values = (np.array([1, 2], np.int32), np.array([1.5], np.float32), np.array([False]),
              np.array([3], np.uint8), np.array([1 + 2j], np.complex64))
    def run(jit, check):
        def f(x, p):
            return check(x, p, "m", on_error="nan")

        return (jit(f) if wrap == "jit" else f)(values, np.array(True))

    ours, theirs = run(invarax.jit, error_if), run(jax.jit, eqx.error_if)
    for a, b in zip(ours, theirs, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_branched_error_if_under_vmap_raises_the_largest_failing_index():
    msgs = ["zero", "one", "two"]
    f = invarax.jit(invarax.vmap(lambda x, i: branched_error_if(x, x < 0, i, msgs)))
    x = jnp.array([1.0, -1.0, 2.0])
    assert_bitwise(f(jnp.abs(x), jnp.array([0, 1, 2])), jnp.abs(x))
    with pytest.raises(EquinoxRuntimeError, match="^two$"):
        f(x, jnp.array([0, 1, 2]))


def test_error_if_options_and_errors(monkeypatch):
    x = jnp.array([-1.0, 2.0])
    assert_bitwise(error_if(x, x < 0, "m", on_error="off"), x)
    assert np.isnan(np.asarray(invarax.jit(
        lambda x: error_if(x, x < 0, "m", on_error="nan"))(x))).all()
    monkeypatch.setenv("EQX_ON_ERROR", "nan")
    assert np.isnan(np.asarray(error_if(x, x < 0, "m"))).all()
    with pytest.raises(ValueError, match="on_error must be one of"):
        error_if(x, x < 0, "m", on_error="loud")
    with pytest.raises(ValueError, match="'breakpoint' is not supported"):
        error_if(x, x < 0, "m", on_error="breakpoint")
    with pytest.raises(ValueError, match="holds no arrays"):
        error_if("token", jnp.array(True), "m")
    with pytest.raises(TypeError, match="must be a bool array"):
        error_if(x, x, "m")
    mixed = error_if({"a": x, "name": "s"}, jnp.array(False), "m")
    assert mixed["name"] == "s"


def test_the_check_is_kept_when_its_output_is_unused_under_jit_grad():
    """Beyond Equinox (whose check is removed as dead code there)."""
    f = invarax.jit(invarax.grad(lambda x: _check(x).sum()))
    with pytest.raises(EquinoxRuntimeError):
        f(jnp.array([1.0, -1.0]))
    jaxpr = invarax.make_jaxpr(invarax.grad(lambda x: _check(x).sum()), optimize=True)(
        jnp.ones(2))
    assert "error_if" in str(jaxpr)


def _results(base):
    class RESULTS(base):
        successful = ""
        max_steps = "reached the maximum number of steps"
        diverged = "the iteration diverged"

    class MORE(RESULTS):
        stalled = "stalled"

    return RESULTS, MORE


def test_enumeration_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    ours, ours_more = _results(invarax.Enumeration)
    theirs, theirs_more = _results(eqx.Enumeration)
    assert (len(ours), len(ours_more)) == (len(theirs), len(theirs_more)) == (3, 4)
    for name in ("successful", "max_steps", "diverged"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert ours[a] == theirs[b]
        assert int(a._value) == int(b._value)
        promoted = ours_more.promote(a)
        assert ours_more[promoted] == theirs_more[theirs_more.promote(b)]
        assert int(promoted._value) == int(theirs_more.promote(b)._value)
    assert isinstance(ours.diverged, ours) and not isinstance(ours.diverged, ours_more)
    picked = invarax.jit(lambda p: ours.where(p, ours.diverged, ours.successful))(
        jnp.array(True))
    assert ours[picked] == theirs[jax.jit(lambda p: theirs.where(
        p, theirs.diverged, theirs.successful))(True)]
    assert bool(picked == ours.diverged) and not bool(picked != ours.diverged)
    with pytest.raises(EquinoxRuntimeError, match="^the iteration diverged$"):
        invarax.jit(lambda x, item: item.error_if(x, item != ours.successful))(
            jnp.ones(2), picked)
    with pytest.raises(ValueError, match="same Enumeration"):
        ours.successful == ours_more.successful  # noqa: B015
    with pytest.raises(ValueError, match="item named 'where'"):
        class Bad(invarax.Enumeration):
            where = "x"
    with pytest.raises(ValueError, match="bool scalar predicate"):
        ours.where(jnp.ones(2) > 0, ours.diverged, ours.successful)


@pytest.mark.parametrize("lib", ["invarax", "equinox"])
def test_a_true_python_predicate_with_on_error_nan_warns_and_gives_nan(lib):
    # Equinox's test_nan_tracetime: resolved when traced, with a warning
    ex = invarax if lib == "invarax" else pytest.importorskip("equinox")
    jx = invarax if lib == "invarax" else pytest.importorskip("jax")
    f = jx.jit(lambda x: ex.error_if(x, True, "hi", on_error="nan"))
    with pytest.warns(UserWarning, match="on_error='nan'" if lib == "invarax" else "NaN"):
        assert np.isnan(np.asarray(f(1.0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(jx.jit(lambda x: ex.error_if(x, False, "hi", on_error="nan"))(1.0)) == 1.0


@pytest.mark.parametrize("lib", ["invarax", "equinox"])
def test_enumeration_where_with_a_known_predicate_is_known_inside_jit(lib):
    # Equinox's test_compile_time_eval
    ex = invarax if lib == "invarax" else pytest.importorskip("equinox")
    jx = invarax if lib == "invarax" else pytest.importorskip("jax")

    class A(ex.Enumeration):
        a = "hi"
        b = "bye"

    seen = []

    @jx.jit
    def f(pred):
        x = A.where(True, A.a, A.b)
        seen.append((x.is_traced(), bool(x == A.a), bool(x != A.b),
                     A.where(pred, A.a, A.b).is_traced()))
        return pred

    f(True)
    assert seen == [(False, True, True, True)]

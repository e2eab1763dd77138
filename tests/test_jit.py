"""jit: tracing once per signature, caching, static arguments, pytrees, lowering text."""

import functools

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp


def counted(f):
    """Wrap ``f`` so that ``wrapper.traces`` counts how often it ran (each run is a trace)."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        wrapper.traces += 1
        return f(*args, **kwargs)

    wrapper.traces = 0
    return wrapper


def test_traces_once_per_signature():
    f = counted(lambda x, y: jnp.sin(x) * y)
    g = invarax.jit(f)
    x = jnp.ones(3)
    g(x, x)
    g(x + 1.0, x * 2.0)  # same avals: cached
    assert f.traces == 1
    g(jnp.ones(4), jnp.ones(4))  # new shape
    assert f.traces == 2
    g(jnp.ones(3, jnp.int32), x)  # new dtype
    assert f.traces == 3
    g(x, 2.0)  # weak scalar
    g(x, 3.0)
    assert f.traces == 4
    g(x, np.float32(3.0))  # strongly typed f32[] is another key than a weak one
    assert f.traces == 5


def test_x64_flag_is_part_of_the_key():
    f = counted(lambda x: x + 1)
    g = invarax.jit(f)
    g(1.0)
    invarax.config.update("jax_enable_x64", True)
    assert g(1.0).dtype == np.float64
    invarax.config.update("jax_enable_x64", False)
    assert g(1.0).dtype == np.float32
    assert f.traces == 2


def test_static_argnums_and_argnames():
    def f(x, n, *, mode="sin"):
        for _ in range(n):
            x = jnp.sin(x) if mode == "sin" else jnp.cos(x)
        return x

    fc = counted(f)
    g = invarax.jit(fc, static_argnums=1, static_argnames="mode")
    assert_bitwise(g(1.0, 3), f(1.0, 3))
    assert_bitwise(g(1.0, n=3), f(1.0, 3))  # a static argnum passed by name
    assert_bitwise(g(1.0, 3, mode="cos"), f(1.0, 3, mode="cos"))
    g(2.0, 3)
    assert fc.traces == 3  # (n=3 positional), (n=3 keyword), (mode="cos")
    assert "sin" in g.lower(1.0, 2).as_text()
    assert g.lower(1.0, 2).as_text().count("sin") == 2


def test_negative_static_argnums():
    g = invarax.jit(lambda x, n: x * n, static_argnums=-1)
    assert float(g(2.0, 3)) == 6.0


def test_unhashable_static_argument():
    g = invarax.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(ValueError, match="unhashable type list.*tuple instead of a list"):
        g(1.0, [1, 2])


def test_non_array_argument_names_static_argnums():
    g = invarax.jit(lambda x, name: x)
    with pytest.raises(TypeError, match=r"args\[1\] of <lambda> is a str.*static_argnums"):
        g(1.0, "hello")
    h = invarax.jit(lambda d: d["x"])
    with pytest.raises(TypeError, match=r"args\[0\]\['x'\]"):
        h({"x": object()})


def test_pytrees_and_kwargs():
    def f(params, x, *, scale):
        return {"out": params["w"] * x + params["b"], "pair": (x, scale * 2.0)}

    params = {"w": jnp.arange(3.0), "b": jnp.ones(3)}
    got = invarax.jit(f)(params, jnp.ones(3), scale=jnp.array(2.0))
    want = f(params, jnp.ones(3), scale=jnp.array(2.0))
    assert sorted(got) == ["out", "pair"]
    for a, b in zip(invarax.tree_leaves(got), invarax.tree_leaves(want), strict=True):
        assert_bitwise(a, b)


def test_none_and_empty_outputs():
    assert invarax.jit(lambda x: None)(1.0) is None
    assert invarax.jit(lambda x: (x, None))(1.0)[1] is None


def test_closure_over_arrays_becomes_consts():
    w = jnp.arange(4.0)
    g = invarax.jit(lambda x: x * w)
    assert_bitwise(g(jnp.ones(4)), jnp.ones(4) * w)
    assert g.lower(jnp.ones(4)).as_text().startswith("{ lambda a:f32[4]; b:f32[4].")


def test_nested_jit_and_make_jaxpr_of_jit():
    inner = invarax.jit(lambda x: jnp.sin(x) * 2.0)
    outer = invarax.jit(lambda x: inner(x) + 1.0)
    assert_bitwise(outer(0.5), jnp.sin(0.5) * 2.0 + 1.0)
    text = str(invarax.make_jaxpr(outer)(0.5))
    assert "jit[" in text and "name=<lambda>" in text


def test_jit_returns_python_scalars_as_arrays():
    out = invarax.jit(lambda x: 3.0)(1.0)
    assert isinstance(out, invarax.Array) and out.weak_type


def test_jit_is_bitwise_eager_on_a_long_chain(rng):
    def chain(x, y):
        for _ in range(10):
            x = jnp.tanh(x * y + 0.5) - jnp.exp(-x) / (1.0 + y * y)
        return x

    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    assert_bitwise(invarax.jit(chain)(x, y), chain(jnp.asarray(x), jnp.asarray(y)))


def test_lower_text_is_the_program():
    def expr(x1, x2):
        return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))

    text = invarax.jit(expr).lower(1.0, 2.0).as_text()
    assert text == str(invarax.make_jaxpr(expr, optimize=True)(1.0, 2.0))
    assert text.count(" div ") == 1 and text.count(" exp ") == 1  # JAX issue 15736
    assert str(invarax.make_jaxpr(expr)(1.0, 2.0)).count(" div ") == 3  # JAX's jaxpr
    assert invarax.jit(expr).lower(1.0, 2.0).compile()(1.0, 2.0) == expr(1.0, 2.0)


def test_outputs_are_immutable_and_independent_of_inputs():
    a = np.ones(4, np.float32)
    out = invarax.jit(lambda x: x.reshape(2, 2))(a)
    a[0] = 7.0
    assert float(out.ravel()[0]) == 1.0
    assert np.asarray(out).flags.writeable is False


def test_decorator_form():
    @invarax.jit
    def f(x):
        return x * 2

    @invarax.jit(static_argnums=(1,))
    def g(x, k):
        return x * k

    assert int(f(2)) == 4 and int(g(2, 5)) == 10
    assert f.__name__ == "f"


# ---------------------------------------------------------------------------------------
# The fast path, donation, retraces


def test_fast_path_shares_the_cache_with_the_general_path():
    f = counted(lambda x, y: x * y + y)
    g = invarax.jit(f)
    x, y = jnp.arange(3.0), jnp.ones(3)
    assert_bitwise(g(x, y), x * y + y)  # traced, then fast
    assert_bitwise(g(x, y), x * y + y)
    assert_bitwise(g(x, y=y), x * y + y)  # keyword: the general path, another key
    assert_bitwise(g(np.arange(3, dtype=np.float32), y), x * y + y)  # NumPy input: general
    assert_bitwise(g(x, 2.0), x * 2.0 + 2.0)  # weak scalar: another key
    assert_bitwise(g(x, jnp.asarray(2.0)), x * 2.0 + 2.0)  # weak 0-d array: the same key
    assert_bitwise(g(x, np.float32(2.0)), x * 2.0 + 2.0)  # strong 0-d: another key
    assert f.traces == 4
    out = g(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.int32))
    assert out.dtype == np.int32 and f.traces == 5
    g(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.int32))
    assert f.traces == 5
    g(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.int32))
    assert f.traces == 5


def test_fast_path_outputs():
    x = jnp.arange(4.0)
    single = invarax.jit(lambda x: x + 1.0)
    pair = invarax.jit(lambda x: (x, x * 2.0))
    tree = invarax.jit(lambda x: {"a": [x, 1.0], "b": None})
    for _ in range(2):
        assert_bitwise(single(x), x + 1.0)
        a, b = pair(x)
        assert_bitwise(a, x) and assert_bitwise(b, x * 2.0)
        out = tree(x)
        assert out["b"] is None and out["a"][1].weak_type
        assert_bitwise(out["a"][0], x)


def test_fast_path_under_transformations_stays_a_jit_equation():
    g = invarax.jit(lambda x: jnp.sin(x) * x)
    x = jnp.arange(3.0)
    g(x)  # cached
    assert "jit[" in str(invarax.make_jaxpr(g)(x))
    assert_bitwise(invarax.grad(lambda x: jnp.sum(g(x)))(x),
                   invarax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(x))


def test_donated_arrays_are_deleted():
    step = invarax.jit(lambda p, g: p - 0.1 * g, donate_argnums=0)
    p, g = jnp.ones(3), jnp.arange(3.0)
    for _ in range(2):  # traced, then the fast path
        new = step(p, g)
        assert_bitwise(new, jnp.ones(3) - 0.1 * jnp.arange(3.0))
        assert p.is_deleted() and not g.is_deleted()
        with pytest.raises(RuntimeError, match=r"deleted with shape=f32\[3\].*donate_argnums"):
            p + 1.0
        with pytest.raises(RuntimeError, match="donate_argnums"):
            step(p, g)
        p = jnp.ones(3)


def address(x):
    return np.asarray(x).__array_interface__["data"][0]


def test_donated_buffers_are_lent_only_when_nothing_else_sees_them():
    from invarax.compiler.jit import _run_donating

    lent = []

    class Entry:  # records whether each donated buffer reached the program writeable
        donated = (0,)
        consts = ()

        @staticmethod
        def run(p):
            lent.append(p.flags.writeable)
            return [p * 2.0]

        wrap = staticmethod(lambda outs: outs[0])

    p = jnp.ones(8) * 2.0  # a product owns its buffer
    _run_donating(Entry, [p])
    q = jnp.ones(8) * 2.0
    view = q.reshape(2, 4)  # shares q's memory
    _run_donating(Entry, [q])
    r = jnp.ones(8) * 2.0
    held = np.asarray(r)  # so does this
    _run_donating(Entry, [r])
    s = jnp.broadcast_to(jnp.asarray(2.0), (8,))  # a broadcast view: owns nothing
    _run_donating(Entry, [s])
    t = jnp.full(8, 2.0)  # a new buffer, as JAX's
    _run_donating(Entry, [t])
    assert lent == [True, False, False, False, True]
    assert all(x.is_deleted() for x in (p, q, r, s, t))
    assert not np.asarray(view).flags.writeable and not held.flags.writeable


def test_donated_buffers_are_written_in_place():
    f = lambda p, g: jnp.tanh(p - 0.1 * g) * 0.99 + 1e-3
    n = 2**20  # large enough for a fusion group, whose output may take a dead buffer
    g = jnp.arange(float(n))
    want = f(jnp.full(n, 2.0), g)
    step = invarax.jit(f, donate_argnums=0)
    for _ in range(2):  # traced, then the fast path
        p = jnp.ones(n) * 2.0
        where = address(p)
        out = step(p, g)
        assert_bitwise(out, want)
        if step.lower(jnp.ones(n), g)._entry.run.reused:
            assert address(out) == where
        assert np.asarray(out).flags.writeable is False
    p = jnp.ones(n) * 2.0
    view = p.reshape(8, -1)
    assert_bitwise(step(p, g), want)
    assert_bitwise(view, jnp.full((8, n // 8), 2.0))


def test_donated_pytree_and_static_arguments():
    f = invarax.jit(lambda n, params, x: (params["w"] * n + x, params["b"]),
                    static_argnums=0, donate_argnums=(1,))
    params = {"w": jnp.ones(2), "b": jnp.zeros(2)}
    x = jnp.ones(2)
    out, b = f(3, params, x)
    assert_bitwise(out, jnp.full(2, 4.0)) and assert_bitwise(b, jnp.zeros(2))
    assert params["w"].is_deleted() and params["b"].is_deleted() and not x.is_deleted()


def test_an_output_takes_the_donated_buffer_of_its_shape_among_others():
    # Products are new arrays, each copied into the free donated buffer of its shape, found
    # by position: comparing arrays of other shapes with == (as list.remove does) raised.
    f = invarax.jit(lambda a, b: (jnp.eye(5) @ b, jnp.eye(3) @ a), donate_argnums=(0, 1))
    a, b = jnp.ones(3) * 2.0, jnp.ones(5) * 3.0
    where = address(a), address(b)
    out = f(a, b)
    assert_bitwise(out[0], jnp.full(5, 3.0)) and assert_bitwise(out[1], jnp.full(3, 2.0))
    assert (address(out[1]), address(out[0])) == where and a.is_deleted() and b.is_deleted()


CREATORS = {"zeros": lambda: jnp.zeros(1000), "empty": lambda: jnp.empty(1000),
            "zeros_like": lambda: jnp.zeros_like(jnp.arange(1000.0)),
            "ones": lambda: jnp.ones(1000), "ones_like": lambda: jnp.ones_like(jnp.arange(1000.0)),
            "full": lambda: jnp.full(1000, -0.0), "full_like": lambda: jnp.full_like(
                jnp.arange(1000.0), 2.5)}


@pytest.mark.parametrize("name", CREATORS)
def test_eager_creations_own_a_buffer_that_a_donation_reuses(name):
    x = CREATORS[name]()
    want = np.array(x)
    assert x._value.base is None and x._value.strides == (4,)  # not a stride-0 broadcast
    where = x.unsafe_buffer_pointer()
    out = invarax.jit(lambda x: x + 1.0, donate_argnums=0)(x)
    assert out.unsafe_buffer_pointer() == where and x.is_deleted()
    assert_bitwise(out, want + np.float32(1.0))
    # Staged, a creation stays one broadcast of its value (fused, never a buffer).
    jaxpr = invarax.make_jaxpr(lambda: CREATORS[name]() * 2.0)().jaxpr
    assert "broadcast_in_dim" in str(jaxpr)


def test_full_keeps_the_sign_of_zero_and_the_weak_type():
    x = jnp.full((2, 3), -0.0)
    assert np.signbit(np.asarray(x)).all() and x.weak_type
    assert jnp.zeros((2,), jnp.int8).dtype == np.int8 and not jnp.zeros(2).weak_type


def test_donation_is_ignored_under_transformations():
    f = invarax.jit(lambda x: x * 2.0, donate_argnums=0)
    x = jnp.ones(3)
    invarax.grad(lambda x: jnp.sum(f(x)))(x)
    assert not x.is_deleted()


def test_explain_cache_misses(caplog):
    f = invarax.jit(lambda x, n, *, scale: x * n * scale, static_argnums=1)
    invarax.config.update("jax_explain_cache_misses", True)
    try:
        with caplog.at_level("WARNING", logger="invarax"):
            f(jnp.ones(3), 2, scale=1.0)
            f(jnp.ones(4), 2, scale=1.0)
            f(jnp.ones(4), 2, scale=1.0)  # cached: no message
            f(jnp.ones(4, jnp.int32), 2, scale=1.0)
            f(jnp.ones(4), 3, scale=1.0)
            f(jnp.ones(4), 2, scale=np.float32(1.0))
    finally:
        invarax.config.update("jax_explain_cache_misses", False)
    messages = [r.getMessage() for r in caplog.records]
    assert all(r.name == "invarax" and r.levelname == "WARNING" for r in caplog.records)
    assert len(messages) == 5
    assert "first trace" in messages[0]
    assert "argument x changed: f32[3] -> f32[4] (shape)" in messages[1]
    assert "argument x changed: f32[4] -> i32[4] (dtype)" in messages[2]
    assert "argument n changed: static 2 -> static 3" in messages[3]
    assert "argument scale changed: f32[]{weak} -> f32[] (weak type" in messages[4]
    caplog.clear()
    f(jnp.ones(5), 2, scale=1.0)  # flag off: silent
    assert caplog.records == []


def test_explain_names_pytree_paths_and_structure(caplog):
    f = invarax.jit(lambda params: params["w"].sum())
    invarax.config.update("jax_explain_cache_misses", True)
    try:
        with caplog.at_level("WARNING", logger="invarax"):
            f({"w": jnp.ones(3), "b": [jnp.ones(2)]})
            f({"w": jnp.ones(3), "b": [jnp.ones(5)]})
            f({"w": jnp.ones(3)})
    finally:
        invarax.config.update("jax_explain_cache_misses", False)
    messages = [r.getMessage() for r in caplog.records]
    assert "argument params['b'][0] changed: f32[2] -> f32[5] (shape)" in messages[1]
    assert "argument params changed tree structure" in messages[2]


def test_retrace_warning_names_the_changing_argument():
    f = invarax.jit(lambda x, y: x.sum() + y)
    y = jnp.ones(())
    for n in range(1, 10):
        f(jnp.ones(n), y)
    with pytest.warns(invarax.compiler.jit.RetraceWarning,
                      match=r"traced 10 times: argument x came in 10 shapes \(f32\[1\], "
                            r"f32\[2\].*pad it to a few fixed sizes"):
        f(jnp.ones(10), y)
    for n in range(11, 30):  # warned once only
        f(jnp.ones(n), y)


def test_retrace_warning_for_a_static_argument():
    f = invarax.jit(lambda x, i: x * i, static_argnums=1)
    for i in range(9):
        f(1.0, i)
    with pytest.warns(invarax.compiler.jit.RetraceWarning,
                      match=r"static argument i took 10 values \(0, 1, 2, 3, 4, \.\.\.\).*"
                            "remove it from static_argnums"):
        f(1.0, 9)


def test_no_retrace_warning_for_a_few_dtypes_and_ranks():
    f = invarax.jit(lambda x: x * 2)
    for dtype in (jnp.float32, jnp.int32, jnp.int16, jnp.bool_, jnp.uint8):
        for shape in ((), (2,), (2, 2), (3, 2)):
            f(jnp.ones(shape, dtype))  # 20 signatures, at most 2 sizes per dtype and rank
    assert f._cache_size() == 20


def test_traced_flags_are_part_of_the_key_and_explained(caplog):
    f = counted(lambda x: x + 1)
    g = invarax.jit(f)
    x = jnp.ones(2, jnp.int32)
    invarax.config.update("jax_explain_cache_misses", True)
    try:
        with caplog.at_level("WARNING", logger="invarax"):
            g(x)
            invarax.config.update("jax_threefry_partitionable", False)
            g(x)
            invarax.config.update("jax_threefry_partitionable", True)
            g(x)  # back to the first key
    finally:
        invarax.config.update("jax_explain_cache_misses", False)
        invarax.config.update("jax_threefry_partitionable", True)
    assert f.traces == 2
    assert "config jax_threefry_partitionable changed: True -> False" in caplog.records[1].message

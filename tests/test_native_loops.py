"""Native loops (``invarax/compiler/native.py``): a loop of 0-d arithmetic compiled to C.

Every whitelisted operation, on random and special values (NaNs of both signs and several
payloads, infinities, signed zeros, subnormals, integer overflow), gives bitwise the same
results natively, in the Python loop (the flag off) and eagerly on 0-d arrays; N3 through
the native path; the Python loop when no compiler runs; a corrupt cache entry is rebuilt.
"""

import os

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import grad, jit, lax, make_jaxpr
from invarax.compiler import native
from invarax.control_flow import common as cf


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    yield
    invarax.config.update("invarax_native_loops", True)


def _float_values(dtype, n_random=40):
    bits = np.uint32 if dtype == np.float32 else np.uint64
    width = 32 if dtype == np.float32 else 64
    q = 1 << (width - 10 if dtype == np.float32 else width - 13)  # the quiet bit
    exp_all = ((1 << (width - 1)) - 1) ^ ((q << 1) - 1)  # +inf's bits
    sign = 1 << (width - 1)
    nans = np.array([exp_all | q | 1, sign | exp_all | q | 2, exp_all | 5], bits).view(dtype)
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, info.max, info.tiny,
                        info.smallest_subnormal, -info.smallest_subnormal * 3, 2.5, 3e9],
                       dtype)
    rng = np.random.default_rng(3)
    return np.concatenate([nans, special, (rng.standard_normal(n_random) * 100).astype(dtype)])


def _pairs(values):
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.ravel(), b.ravel()


def _check_battery(ops, a, b, width=None):
    """``ops(a, b)`` (a list of 0-d results) as a scan body: native, Python and eager; with
    ``width``, on rows of that many pairs (an array loop, vectorized) against 0-d eager."""
    if width:
        rows = len(a) // width
        a, b = (jnp.asarray(np.asarray(v)[:rows * width].reshape(rows, width)) for v in (a, b))

    def f(a, b):
        return lax.scan(lambda c, ab: (c, ops(*ab)), jnp.float32(0), (a, b))[1]

    closed = make_jaxpr(f)(a, b)
    eqn = closed.jaxpr.eqns[-1]
    p = eqn.params
    invarax.config.update("invarax_native_loops", True)
    assert cf.scan_loop(p["jaxpr"], p["num_consts"], p["num_carry"]).native
    got = f(a, b)
    jitted = jit(f)(a, b)
    invarax.config.update("invarax_native_loops", False)
    assert not cf.scan_loop(p["jaxpr"], p["num_consts"], p["num_carry"]).native
    python = f(a, b)
    for k in range(len(got)):
        assert_bitwise(got[k], python[k])
        assert_bitwise(jitted[k], python[k])
    flat_a, flat_b = np.asarray(a).ravel(), np.asarray(b).ravel()
    for i in range(0, len(flat_a), max(1, len(flat_a) // 300)):  # eager on 0-d: a sample
        want = ops(jnp.asarray(flat_a[i]), jnp.asarray(flat_b[i]))
        for k, w in enumerate(want):
            assert_bitwise(np.asarray(got[k]).reshape(-1)[i], np.asarray(w))


@pytest.mark.parametrize("dtype, width", [(np.float32, None), (np.float64, None),
                                          (np.float32, 16), (np.float64, 7)])
def test_float_operations_are_bitwise(dtype, width):
    if dtype == np.float64:
        invarax.config.update("jax_enable_x64", True)
    try:
        a, b = _pairs(_float_values(dtype))
        a, b = jnp.asarray(a), jnp.asarray(b)
        other = np.float64 if dtype == np.float32 else np.float32

        def ops(x, y):
            return [x + y, x - y, x * y, x / y, lax.max(x, y), lax.min(x, y), x < y, x <= y,
                    x > y, x >= y, x == y, x != y, -x, lax.abs(x), lax.sqrt(x),
                    lax.floor(x), lax.ceil(x), lax.is_finite(y), lax.integer_pow(x, 3),
                    lax.integer_pow(y, -2), lax.integer_pow(x, 0), lax.select_n(x < y, x, y),
                    lax.convert_element_type(x, other), lax.convert_element_type(y, np.int32),
                    lax.convert_element_type(x, np.uint8), lax.convert_element_type(y, bool),
                    lax.convert_element_type(x, np.int64 if dtype == np.float64 else np.int16),
                    x * 2.0 + 1.0]

        _check_battery(ops, a, b, width)
    finally:
        invarax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("dtype, width", [(np.int32, None), (np.uint8, None), (np.int8, None),
                                          (np.uint32, None), (np.int64, None), (np.int8, 16),
                                          (np.int64, 5)])
def test_integer_operations_wrap_around_bitwise(dtype, width):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    values = np.concatenate([np.array([0, 1, 2, info.max, info.min, info.max - 1, info.min + 1,
                                       info.max // 2 + 1], dtype),
                             rng.integers(info.min, info.max, 8, dtype=dtype, endpoint=True)])
    invarax.config.update("jax_enable_x64", dtype == np.int64)
    a, b = _pairs(values)
    a, b = jnp.asarray(a), jnp.asarray(b)

    def ops(x, y):
        return [x + y, x - y, x * y, -x, lax.abs(x), lax.max(x, y), lax.min(x, y), x < y,
                x == y, x >= y, x & y, x | y, x ^ y, ~x, lax.integer_pow(x, 3),
                lax.convert_element_type(x, np.float32), lax.convert_element_type(y, np.int8),
                lax.convert_element_type(x, np.uint16), lax.convert_element_type(y, bool),
                lax.select_n(x > y, x, y), x + jnp.asarray(np.array(info.min, dtype)),
                x * jnp.asarray(np.array(info.max, dtype))]

    try:
        _check_battery(ops, a, b, width)
    finally:
        invarax.config.update("jax_enable_x64", False)


def test_bool_and_select_n_with_an_index():
    a = jnp.asarray(np.array([-5, -1, 0, 1, 2, 3, 7], np.int32))
    a, b = (jnp.asarray(v) for v in _pairs(np.asarray(a)))

    def ops(i, j):
        p, q = i > 0, j > 1
        return [p & q, p | q, p ^ q, ~p, lax.max(p, q), lax.min(p, q),
                lax.select_n(i, i * 2, j, i - j), lax.select_n(j, jnp.float32(1.5), -0.0),
                lax.convert_element_type(p, np.float32), lax.convert_element_type(q, np.int32)]

    _check_battery(ops, a, b)


def _newton(a):
    return lax.while_loop(lambda x: lax.abs(x * x - a) > 1e-6 * a, lambda x: 0.5 * (x + a / x), a)


def test_jit_equals_eager_through_the_native_path():
    def fori(x):
        return lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + lax.convert_element_type(
            i, np.float32) * 1e-3, x)

    x = np.float32(1.25)
    ys = jnp.arange(50, dtype=np.float32) / 7
    for f in (fori, grad(fori), _newton,
              lambda x: lax.scan(lambda c, y: (c * y + 1.0, c - y), x, ys),
              lambda x: lax.scan(lambda c, y: (c * y + 1.0, c - y), x, ys, reverse=True)):
        want = f(x)
        invarax.config.update("invarax_native_loops", False)
        python = f(x)
        jitted_python = jit(f)(x)
        invarax.config.update("invarax_native_loops", True)
        for w, p, j, g in zip(invarax.tree_leaves(want), invarax.tree_leaves(python),
                              invarax.tree_leaves(jitted_python),
                              invarax.tree_leaves(jit(f)(x)), strict=True):
            assert_bitwise(g, w)
            assert_bitwise(p, w)
            assert_bitwise(j, w)
    closed = make_jaxpr(_newton)(np.float32(2))
    p = closed.jaxpr.eqns[-1].params
    assert cf.while_loop_program(p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"],
                                 p["body_nconsts"]).native
    assert abs(float(jit(_newton)(np.float32(2))) - np.sqrt(2)) < 1e-6


def test_a_body_outside_the_whitelist_runs_as_python():
    def f(x):
        return lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) + c, x)

    closed = make_jaxpr(f)(np.float32(1))
    p = closed.jaxpr.eqns[-1].params
    assert not cf.scan_loop(p["jaxpr"], p["num_consts"], p["num_carry"]).native
    c = np.float32(1)
    for _ in range(5):
        c = np.sin(c) + c
    assert_bitwise(jit(f)(np.float32(1)), np.asarray(c))


def test_without_a_compiler_loops_run_as_python(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/invarax-cc")
    invarax.clear_caches()
    try:
        f = jit(lambda x: lax.fori_loop(0, 100, lambda i, c: c * 0.5 + 1.0, x))
        closed = make_jaxpr(lambda x: lax.fori_loop(0, 100, lambda i, c: c * 0.5 + 1.0, x))(
            np.float32(0))
        p = closed.jaxpr.eqns[-1].params
        assert not cf.scan_loop(p["jaxpr"], p["num_consts"], p["num_carry"]).native
        assert_bitwise(f(np.float32(0)), np.asarray(np.float32(2.0)))
    finally:
        monkeypatch.undo()
        invarax.clear_caches()


def test_a_failing_compilation_runs_as_python(monkeypatch):
    import sysconfig

    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    monkeypatch.setenv("CC", f"{cc} -finvarax-no-such-option")
    invarax.clear_caches()
    try:
        f = jit(lambda x: lax.fori_loop(0, 100, lambda i, c: c * 0.25 + 3.0, x))
        assert_bitwise(f(np.float32(0)), np.asarray(np.float32(4.0)))
        if native.cache_path("int loop;") is not None:  # the compiler runs (GCC)...
            assert native.load("int loop;") is None  # ...but fails on this option
    finally:
        monkeypatch.undo()
        invarax.clear_caches()


def test_a_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    j = make_jaxpr(lambda c, x: (c + x, c * x))(np.float32(1), np.float32(2)).jaxpr
    source = native.scan_source(j, 0, 1)[0] + f"/* {os.getpid()} {tmp_path.name} */\n"
    path = native.cache_path(source)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\x7fELF not a shared object")
    fn = native.load(source)
    assert fn is not None
    with open(path, "rb") as f:
        assert f.read(4) == b"\x7fELF" and os.path.getsize(path) > 1000
    assert [n for n in os.listdir(os.path.dirname(path)) if not n.endswith(".so")] == []


def _native_python_bitwise(f, *args):
    """``f(*args)`` natively and as Python: the same bits; returns the native result."""
    invarax.config.update("invarax_native_loops", False)
    python = invarax.tree_leaves(f(*args))
    jitted_python = invarax.tree_leaves(jit(f)(*args))
    invarax.config.update("invarax_native_loops", True)
    native = invarax.tree_leaves(f(*args))
    for n, j, p, q in zip(native, invarax.tree_leaves(jit(f)(*args)), python, jitted_python,
                          strict=True):
        assert_bitwise(n, p)
        assert_bitwise(j, p)
        assert_bitwise(q, p)
    return native


def test_vmap_of_while_runs_natively_and_rows_equal_unbatched_runs():
    a = np.concatenate([np.random.default_rng(7).uniform(1, 1e4, 37).astype(np.float32),
                        np.float32([np.nan, np.inf, 0.0, -0.0, 1e-40])])
    closed = make_jaxpr(invarax.vmap(_newton))(a)
    p = closed.jaxpr.eqns[-1].params
    assert cf.while_loop_program(p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"],
                                 p["body_nconsts"]).native
    for n in (1, 5, len(a)):
        (got,) = _native_python_bitwise(invarax.vmap(_newton), a[:n])
        for i in range(n):  # N1: row i is the unbatched run
            assert_bitwise(got[i], _newton(a[i]))


def test_array_scans_with_reductions_inside_the_body():
    rng = np.random.default_rng(9)
    xs = jnp.asarray(rng.standard_normal((20, 3, 4)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((3, 4)).astype(np.float32))

    def f(c0, xs):
        def step(carry, x):
            c, keep = carry
            big = jnp.any(c > 2.0)  # a reduction: the next phase reads it
            c = lax.select_n(jnp.broadcast_to(big, c.shape), c * x + w, c * 0.25)
            return (c, keep), (c - x, jnp.all(c < 1.0), keep)

        return lax.scan(step, (c0, w), xs), lax.scan(step, (c0, w), xs, reverse=True)

    closed = make_jaxpr(f)(w, xs)
    p = closed.jaxpr.eqns[0].params
    assert cf.scan_loop(p["jaxpr"], p["num_consts"], p["num_carry"]).native
    _native_python_bitwise(f, w, xs)
    _native_python_bitwise(invarax.vmap(f, in_axes=(None, 1)), w, xs)


def test_a_full_max_or_an_array_sum_in_the_body_runs_as_python():
    counts = jnp.asarray(np.array([3, 1, 4, 1, 5], np.int32))

    def f(x):
        return lax.while_loop(lambda s: s[0] < jnp.max(counts),
                              lambda s: (s[0] + 1, s[1] * 1.5 + jnp.sum(s[1])), (0, x))

    x = jnp.asarray(np.linspace(-1, 1, 5, dtype=np.float32))
    closed = make_jaxpr(f)(x)
    p = closed.jaxpr.eqns[-1].params
    assert not cf.while_loop_program(p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"],
                                     p["body_nconsts"]).native
    _native_python_bitwise(f, x)


def test_empty_arrays_in_a_while_run_as_python():
    def f(x):
        return lax.while_loop(lambda s: jnp.all(s[1] < 3.0) & (s[0] < 4),
                              lambda s: (s[0] + 1, s[1] + 1.0), (0, x))

    x = jnp.zeros((0, 3), np.float32)
    closed = make_jaxpr(f)(x)
    p = closed.jaxpr.eqns[-1].params
    assert not cf.while_loop_program(p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"],
                                     p["body_nconsts"]).native
    assert int(f(x)[0]) == 4
    (got,) = _native_python_bitwise(lambda x: f(x)[1], jnp.zeros((2, 3), np.float32))
    assert_bitwise(got, np.full((2, 3), 3.0, np.float32))

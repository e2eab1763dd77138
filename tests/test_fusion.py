"""Elementwise fusion: chunked, threaded evaluation gives eager's bits (N3, N5).

Every chunkable primitive, for each dtype family, runs inside a fusion group at sizes
around a chunk boundary (chunk - 1, chunk, chunk + 1, several chunks and a tail), with
full, 0-d, literal, broadcast-scalar and non-contiguous operands, for two chunk sizes and
one and two threads, and must equal eager evaluation bit for bit.
"""

import os
import signal
import time
import warnings

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.compiler import fusion, fusion_native
from invarax.compiler.lower import compile_jaxpr
from invarax.core import buffers
from invarax.core.lowering import lowering
from invarax.core.trace import PRIMITIVES
from invarax.kernels import _support
from invarax.ops import elementwise
from invarax.ops.fused import fma, fma_p
from invarax.ops.gamma import digamma_p
from invarax.ops.special import erf_inv_p

CHUNKS = (5, 64)
THREADS = (1, 2)
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 1e-30, 3e38]


@pytest.fixture(autouse=True)
def _python_path():
    """The groups' Python path (test_fusion_native.py checks the native path against it:
    compiling each of this file's hundreds of groups would take minutes)."""
    with invarax.config.flag("invarax_native_fusion", False):
        yield


def values(shape, dtype, seed=0):
    """Random values with the special ones sprinkled in (quiet NaNs of one sign only: the
    bits of a NaN combined with a NaN of another sign are outside the contract)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(-50 if dtype.kind == "i" else 0, 50, n).astype(dtype)
        x[rng.random(n) < 0.1] = 0
        x[rng.random(n) < 0.05] = info.max
        x[rng.random(n) < 0.05] = info.min
        return x.reshape(shape)
    real = dtype if dtype.kind == "f" else np.dtype(f"f{dtype.itemsize // 2}")
    with np.errstate(over="ignore"):
        special = np.array(SPECIAL).astype(real)

        def part():
            x = (rng.standard_normal(n) * 3).astype(real)
            pick = rng.random(n) < 0.3
            x[pick] = special[rng.integers(0, len(special), pick.sum())]
            return x

        if dtype.kind == "f":
            return part().reshape(shape)
        z = np.empty(n, dtype)
        z.real, z.imag = part(), part()
    return z.reshape(shape)


def finite(shape, seed=0):
    """Standard normal float32 values."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def fused_run(f, args, *, min_groups=1):
    """Compile ``f`` with fusion at any size; return ``run(chunk, threads) -> outputs``."""
    closed = invarax.make_jaxpr(f)(*args)
    with fusion._settings(min_size=0, min_work=0):
        run = compile_jaxpr(closed.jaxpr)
    assert len(run.groups) >= min_groups, run.source
    consts = [c._value for c in closed.consts]

    def call(chunk, threads, inputs=args):
        with fusion._settings(chunk=chunk, threads=threads, min_per_thread=1):
            return run(*consts, *inputs)

    call.run = run
    return call


def check_fused(f, args, *, inputs=None, chunks=CHUNKS, threads=THREADS):
    """Assert that ``f`` fused equals eager ``f`` bitwise for every chunk size and thread count.

    ``inputs``: the arrays to call with (default ``args``; e.g. non-contiguous ones).
    """
    inputs = args if inputs is None else inputs
    eager = f(*(jnp.asarray(x) for x in inputs))
    eager = list(eager) if isinstance(eager, tuple) else [eager]
    call = fused_run(f, args)
    for chunk in chunks:
        for t in threads:
            outs = call(chunk, t, inputs)
            assert len(outs) == len(eager)
            for o, e in zip(outs, eager, strict=True):
                assert_same(o, e)


def assert_same(out, eager):
    """Bitwise; in float16 a NaN may be any NaN: NumPy's float16 loops give the NaN of an
    invalid operation a sign that depends on the operand's layout (strided or not), even
    without fusion, and NaN bits are outside the contract."""
    if np.asarray(eager).dtype == np.float16:
        nan_aware_equal(out, eager)
    else:
        assert_bitwise(out, eager)


def sizes(chunk=CHUNKS[1]):
    return (chunk - 1, chunk, chunk + 1, 3 * chunk + 5)


FLOAT_UNARY = {
    **{n: getattr(lax, n) for n in (
        "neg", "sign", "floor", "ceil", "exp", "exp2", "log", "expm1", "log1p", "tanh",
        "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
        "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "is_finite", "erf", "erfc")},
    "log2": jnp.log2, "log10": jnp.log10,  # primitives of their own (no lax function)
    "erf_inv": erf_inv_p.bind,  # bound by lax.erf_inv only with invarax_exact_elementary
    "lgamma": lax.lgamma,
    "digamma": digamma_p.bind,  # bound by lax.digamma only with invarax_exact_elementary
    "round_away": lambda x: lax.round(x, 0),
    "round_even": lambda x: lax.round(x, 1),
    **{f"integer_pow{y}": (lambda x, y=y: lax.integer_pow(x, y)) for y in (0, 1, 2, 3, 5, -1, -2)},
    "to_int32": lambda x: lax.convert_element_type(lax.max(lax.min(x, 3e4), -3e4), jnp.int32),
    "to_float16": lambda x: lax.convert_element_type(x, jnp.float16),
}
INT_UNARY = {
    "neg": lax.neg, "sign": lax.sign, "not": lax.bitwise_not, "abs": lax.abs,
    **{f"integer_pow{y}": (lambda x, y=y: lax.integer_pow(x, y)) for y in (0, 1, 2, 3)},
    "to_float32": lambda x: lax.convert_element_type(x, jnp.float32),
}
BOOL_UNARY = {
    "not": lax.bitwise_not,
    "to_float32": lambda x: lax.convert_element_type(x, jnp.float32),
    "to_int32": lambda x: lax.convert_element_type(x, jnp.int32),
}
COMPLEX_UNARY = {n: getattr(lax, n) for n in (
    "neg", "sign", "exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "logistic", "conj",
    "real", "imag", "abs")}
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
FLOAT_BINARY = ("add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter",
                *COMPARE)
INT_BINARY = ("add", "sub", "mul", "div", "rem", "max", "min", "bitwise_and", "bitwise_or",
              "bitwise_xor", "shift_left", "shift_right_logical", *COMPARE)
BOOL_BINARY = ("bitwise_and", "bitwise_or", "bitwise_xor", "max", "min", "eq", "ne")
COMPLEX_BINARY = ("add", "sub", "mul", "div", "pow", "eq", "ne")


def _then(y):
    """A second, exact operation on ``y`` (so ``y`` lives in a chunk buffer, not the output)."""
    if y.dtype == jnp.bool_:
        return lax.bitwise_not(y)
    return lax.neg(y) if y.dtype.kind != "u" else lax.bitwise_not(y)


UNARY_CASES = [
    *[(n, f, d) for n, f in FLOAT_UNARY.items() for d in (np.float32, np.float16)
      if (n, d) != ("to_float16", np.float16)],
    *[(n, f, np.int32) for n, f in INT_UNARY.items()],
    *[(n, f, np.uint8) for n, f in INT_UNARY.items() if n not in ("neg", "abs")],
    *[(n, f, np.bool_) for n, f in BOOL_UNARY.items()],
    *[(n, f, np.complex64) for n, f in COMPLEX_UNARY.items()],
]


@pytest.mark.parametrize("name, op, dtype", UNARY_CASES,
                         ids=[f"{n}-{np.dtype(d).name}" for n, _, d in UNARY_CASES])
def test_unary_bitwise(name, op, dtype):
    for n in sizes():
        x = values((n,), dtype, seed=n)
        check_fused(op, (x,))
        check_fused(lambda x: _then(op(x)), (x,))  # the result in a reused chunk buffer
        # non-contiguous input, and a 2-d shape split inside the rows
        base = values((2 * n,), dtype, seed=n + 1)
        check_fused(op, (base[::2].copy(),), inputs=(base[::2],))
    x2 = values((3, 2 * CHUNKS[1] + 1), dtype, seed=7)
    check_fused(op, (x2,))
    check_fused(op, (x2.T.copy(),), inputs=(x2.T,))


BINARY_CASES = [
    *[(n, d) for n in FLOAT_BINARY for d in (np.float32, np.float16)],
    *[(n, np.int32) for n in INT_BINARY],
    *[(n, np.uint16) for n in INT_BINARY],
    *[(n, np.bool_) for n in BOOL_BINARY],
    *[(n, np.complex64) for n in COMPLEX_BINARY],
]


@pytest.mark.parametrize("name, dtype", BINARY_CASES,
                         ids=[f"{n}-{np.dtype(d).name}" for n, d in BINARY_CASES])
def test_binary_bitwise(name, dtype):
    op = getattr(lax, name)
    for n in sizes():
        x, y = values((n,), dtype, seed=n), values((n,), dtype, seed=n + 100)
        s = values((1,), dtype, seed=n + 200)[0]
        s = np.asarray(s)
        check_fused(op, (x, y))
        check_fused(lambda x, y: _then(op(x, y)), (x, y))
        if name not in COMPARE or dtype == np.bool_:  # a buffer read and written
            check_fused(lambda x, y: op(y, op(x, y)), (x, y))
        check_fused(lambda x, s: op(x, s), (x, s))  # a 0-d operand
        check_fused(lambda x, s: op(s, x), (x, s))
        # a broadcast scalar: the group reads the scalar itself
        bcast = lambda x, s: op(lax.broadcast_in_dim(s, x.shape, ()), x)  # noqa: E731
        check_fused(bcast, (x, s))
        check_fused(lambda x, s: op(x, lax.broadcast_in_dim(s, x.shape, ())), (x, s))
        base = values((2 * n,), dtype, seed=n + 300)
        check_fused(op, (base[::2].copy(), y), inputs=(base[::2], y))
    if dtype in (np.float32, np.float16):
        for c in (0.5, -1.0, 2.0, 3.0, 0.0, -0.0, np.inf):  # weak literals, pow's shortcuts
            x = values((sizes()[-1],), dtype, seed=9)
            check_fused(lambda x, c=c: op(x, c), (x,))
            check_fused(lambda x, c=c: op(c, x), (x,))


SELECT_CASES = [(d, w) for d in (np.float32, np.int32, np.bool_) for w in ("bool", "int32")]


@pytest.mark.parametrize("dtype, which", SELECT_CASES)
def test_select_n_bitwise(dtype, which):
    for n in sizes():
        cases = [values((n,), dtype, seed=n + k) for k in range(3 if which == "int32" else 2)]
        rng = np.random.default_rng(n)
        w = (rng.random(n) < 0.5 if which == "bool"
             else rng.integers(0, 3, n).astype(np.int32))
        check_fused(lambda w, *c: lax.select_n(w, *c), (w, *cases))
        check_fused(lambda w, *c: _then(lax.select_n(w, *c)), (w, *cases))
        check_fused(lambda w, *c: lax.select_n(w[0], *c), (w, *cases))  # 0-d predicate
        if dtype == np.float32 and which == "bool":
            check_fused(lambda w, x: jnp.where(w, x, 0.0), (w, cases[0]))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
def test_x64_dtypes(x64, dtype):
    unary = {np.float64: ["exp", "sin", "log1p", "rsqrt", "logistic", "cbrt"],
             np.int64: ["neg", "sign", "abs"], np.complex128: ["exp", "sqrt", "abs"]}[dtype]
    binary = {np.float64: ["add", "div", "pow", "atan2", "rem"],
              np.int64: ["mul", "div", "rem", "shift_left"], np.complex128: ["mul", "div"]}[dtype]
    for n in sizes():
        x, y = values((n,), dtype, seed=n), values((n,), dtype, seed=n + 1)
        for name in unary:
            check_fused(getattr(lax, name), (x,))
        for name in binary:
            check_fused(getattr(lax, name), (x, y))
            check_fused(lambda x, name=name: getattr(lax, name)(x, x[0]), (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma(x64, dtype):
    for n in sizes():
        a, b, c = (values((n,), dtype, seed=n + k) for k in range(3))
        check_fused(fma, (a, b, c))
        check_fused(lambda a, b: fma(a, b, b[0]) * 2.0, (a, b))


def test_every_fusible_primitive_is_covered():
    fusible = {p for p in PRIMITIVES.values() if lowering(p).fusible}
    traced = set()
    for _name, op, dtype in UNARY_CASES:
        x = values((4,), dtype)
        traced.update(e.primitive for e in invarax.make_jaxpr(op)(x).eqns)
    for name, dtype in BINARY_CASES:
        x = values((4,), dtype)
        traced.update(e.primitive for e in invarax.make_jaxpr(getattr(lax, name))(x, x).eqns)
    traced.update((elementwise.select_n_p, fma_p))
    bitwise = {elementwise.and_p, elementwise.or_p, elementwise.xor_p, elementwise.not_p}
    assert fusible <= traced | bitwise


# ---------------------------------------------------------------------------------------
# Grouping.


def issue_expression(x1, x2):
    return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))


def test_issue_expression_is_one_group():
    x1, x2 = values((10 * CHUNKS[1] + 3,), np.float32), values((10 * CHUNKS[1] + 3,), np.float32, 1)
    call = fused_run(issue_expression, (x1, x2))
    (group,) = call.run.groups
    assert [e.primitive.name for e in group.eqns].count("sin") == 1
    assert "f0(v0, v1, None)" in call.run.source  # one call: the group
    check_fused(issue_expression, (x1, x2))


def test_groups_split_at_other_equations():
    def f(x):
        a = jnp.sin(x) * 2.0
        s = jnp.sum(a)  # reads the group's value: the group runs before it
        b = jnp.cos(x) + 1.0  # independent of s: joins a new group, after the sum
        return b * s - a

    x = finite((300,), 3)
    call = fused_run(f, (x,))
    assert len(call.run.groups) == 2
    check_fused(f, (x,))


def test_independent_equations_stay_in_the_open_group():
    def f(x, m):
        y = jnp.exp(x)
        z = m @ m  # not elementwise, and reads nothing of the group
        return y * 2.0 + z[0, 0]

    x, m = finite((300,), 1), np.eye(3, dtype=np.float32)
    call = fused_run(f, (x, m))
    assert len(call.run.groups) == 1
    check_fused(f, (x, m))


def test_small_programs_are_not_fused():
    def f(x):  # rem has no native form: the group would run its ufuncs chunk by chunk
        return lax.rem(x, 3.0) * 2.0 + x

    def cheap(x):
        return x * 2.0

    def plan_of(f, n):
        return fusion.plan(invarax.make_jaxpr(f)(np.ones(n, np.float32)).jaxpr)

    min_size, min_work = fusion._SETTINGS["min_size"], fusion._SETTINGS["min_work"]
    assert not any(isinstance(i, fusion.Group) for i in plan_of(f, min_size - 1))
    (group,) = plan_of(f, max(min_size, -(-min_work // 3)))
    assert len(group.eqns) == 3
    assert not any(isinstance(i, fusion.Group) for i in plan_of(cheap, min_work - 1))
    assert len(plan_of(cheap, min_work)) == 1


def test_smaller_groups_of_native_members_are_fused():
    """Members that all have a native form fuse from ``min_native_size`` elements and
    ``min_native_work`` element-operations, two members at least (one member alone gains
    nothing from one pass)."""
    def f(x):
        return jnp.sin(x) * 2.0 + x

    def two(x):
        return x * 2.0 + x

    def plan_of(f, n):
        return fusion.plan(invarax.make_jaxpr(f)(np.ones(n, np.float32)).jaxpr)

    size, work = fusion._SETTINGS["min_native_size"], fusion._SETTINGS["min_native_work"]
    assert size < fusion._SETTINGS["min_size"] and work < fusion._SETTINGS["min_work"]
    n = max(size, -(-work // 3))
    (group,) = plan_of(f, n)
    assert len(group.eqns) == 3
    assert not any(isinstance(i, fusion.Group) for i in plan_of(f, n - 1))
    assert len(plan_of(two, work // 2)) == 1
    assert not any(isinstance(i, fusion.Group) for i in plan_of(two, work // 2 - 1))
    assert not any(isinstance(i, fusion.Group) for i in plan_of(lambda x: x * 2.0, work))
    check_fused(f, (finite((n,), 1),))

    def act(x):  # a layer's activation and the factor of its gradient
        y = jnp.tanh(x)
        return y, 1.0 - y * y

    x = finite((2 * size,), 2)
    jf = invarax.jit(act)
    eager = act(jnp.asarray(x))
    jf(x)
    fusion_native.wait()
    for threads in (1, 2):  # default settings: runs of blocks on the kernels' pool
        with fusion._settings(threads=threads):
            for got, want in zip(jf(x), eager, strict=True):
                assert_bitwise(got, want)


def test_small_groups_are_dissolved_and_the_rest_regrouped():
    def f(x, y):
        a = x * 2.0  # one cheap member: too little work alone
        s = jnp.sum(a)
        return jnp.sin(y) * s + jnp.cos(y) - jnp.exp(y)

    n = fusion._SETTINGS["min_work"] // 4
    x = np.ones(n, np.float32)
    items = fusion.plan(invarax.make_jaxpr(f)(x, x).jaxpr)
    groups = [i for i in items if isinstance(i, fusion.Group)]
    assert [len(g.eqns) for g in groups] == [6]  # sin mul cos add exp sub; not x * 2
    check_fused(f, (finite((300,), 1), finite((300,), 2)))


def test_broadcast_read_outside_is_still_computed():
    def f(x, s):
        b = lax.broadcast_in_dim(s, x.shape, ())
        return x * b, b

    x, s = finite((200,)), np.float32(3.0)
    call = fused_run(f, (x, s))
    assert "broadcast_in_dim" not in " ".join(
        e.primitive.name for g in call.run.groups for e in g.eqns)
    check_fused(f, (x, s))


def test_wide_and_tall_shapes():
    for shape in [(7, 3, 11), (2, 200), (200, 2), (1, 1, 400), (3, 1), (64, 5, 5)]:
        x, y = finite(shape, 1), finite(shape, 2)
        check_fused(issue_expression, (x, y))
        xt = np.ascontiguousarray(np.moveaxis(x, 0, -1))
        check_fused(issue_expression, (np.moveaxis(xt, -1, 0).copy(), y),
                    inputs=(np.moveaxis(xt, -1, 0), y))


def test_default_settings_through_jit():
    n = fusion._SETTINGS["min_size"] + 17
    x1 = finite((n,), 1)
    x2 = np.abs(finite((n,), 2)) + 0.5
    eager = issue_expression(jnp.asarray(x1), jnp.asarray(x2))
    for threads in (1, 2, 3):
        with fusion._settings(threads=threads):
            assert_bitwise(invarax.jit(issue_expression)(x1, x2), eager)
    for chunk in (1000, 4096, 16384, 100_000):
        with fusion._settings(chunk=chunk, threads=2):
            assert_bitwise(invarax.jit(issue_expression)(x1, x2), eager)


def test_thread_count_from_the_kernels_setting(monkeypatch):
    x = finite((4 * CHUNKS[1] + 1,))
    eager = jnp.sin(jnp.asarray(x)) * 2.0
    call = fused_run(lambda x: jnp.sin(x) * 2.0, (x,))
    helpers = []
    pool = _support.worker_pool  # the pool behind kernels._support.in_parallel
    monkeypatch.setattr(_support, "worker_pool", lambda n: helpers.append(n) or pool(n))
    for count in ("1", "2", "4"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", count)
        assert_bitwise(call(CHUNKS[1], None)[0], eager)
    assert helpers == [1, 3]  # the calling thread and 1 or 3 pool threads


# ---------------------------------------------------------------------------------------
# Random programs: chains of elementwise operations with values used late.

_RANDOM_OPS = [("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("max", 2), ("exp", 1),
               ("sin", 1), ("tanh", 1), ("neg", 1), ("sqrt", 1), ("logistic", 1), ("pow", 2)]


def random_program(seed, n_inputs=3, n_ops=12):
    """A function of ``n_inputs`` arrays: ``n_ops`` random elementwise operations on random
    earlier values (so many are used late), a reduction in the middle, several outputs."""
    rng = np.random.default_rng(seed)
    plan = []
    for i in range(n_ops):
        name, arity = _RANDOM_OPS[rng.integers(len(_RANDOM_OPS))]
        plan.append((name, [int(rng.integers(n_inputs + i)) for _ in range(arity)],
                     i == n_ops // 2 and rng.random() < 0.5, rng.random() < 0.3))
    n_out = 1 + int(rng.integers(3))

    def f(*xs):
        vals = list(xs)
        for name, args, reduce, literal in plan:
            operands = [vals[a] for a in args]
            if literal and len(operands) == 2:
                operands[1] = 0.75
            v = getattr(lax, name)(*operands)
            if reduce:
                v = v * jnp.sum(v)  # a reduction splits the groups
            vals.append(v)
        return tuple(vals[-n_out:]) + (vals[n_inputs + n_ops // 3],)

    return f


def nan_aware_equal(a, b):
    """Bitwise, except that a NaN may be any NaN (NaN bits are outside the contract)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    nan = np.isnan(a)
    assert (nan == np.isnan(b)).all()
    assert a[~nan].tobytes() == b[~nan].tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_random_programs(seed):
    f = random_program(seed)
    n = sizes()[seed % 4]
    xs = tuple(np.abs(values((n,), np.float32, seed + k)) + 0.1 for k in range(3))
    xs = tuple(np.where(np.isfinite(x), x, 1.0).astype(np.float32) for x in xs)
    eager = f(*(jnp.asarray(x) for x in xs))
    call = fused_run(f, xs)
    for chunk in CHUNKS:
        for t in THREADS:
            for o, e in zip(call(chunk, t), eager, strict=True):
                nan_aware_equal(o, e)
    # unfused: equation by equation, ufunc results written into dead buffers
    run = compile_jaxpr(invarax.make_jaxpr(f)(*xs).jaxpr)
    assert run.groups == []
    for o, e in zip(run(*xs), eager, strict=True):
        nan_aware_equal(o, e)


# ---------------------------------------------------------------------------------------
# Buffer reuse and aliasing.


REUSE_PROGRAMS = {
    # name: (function, whether a buffer must be reused)
    "dead after second group": (
        lambda x: (lambda a, b: a * jnp.sum(b) + a)(jnp.sin(x), jnp.cos(x)), True),
    "used late by a group": (  # a is read by two groups and dies at the second
        lambda x: (lambda a, b: (lambda c: c * jnp.sum(c) - a)(a * jnp.sum(b) + a))(
            jnp.sin(x), jnp.cos(x)), True),
    "read by a reduction": (
        lambda x: (lambda a, b: (a * jnp.sum(b) + a) * jnp.sum(a) - a)(jnp.sin(x), jnp.cos(x)),
        False),
    "used late as output": (
        lambda x: (lambda a, b: (a * jnp.sum(b) + a, a))(jnp.sin(x), jnp.cos(x)), False),
    "viewed by a reshape": (
        lambda x: (lambda a, b: (a * jnp.sum(b) + a, a.reshape(2, -1)))(jnp.sin(x), jnp.cos(x)),
        False),
    "chain of groups": (
        lambda x: _chain(x, 5), True),
}


def _chain(x, k):
    for _ in range(k):
        x = jnp.sin(x) * jnp.tanh(jnp.sum(x)) + x * 0.5
    return x


@pytest.mark.parametrize("name", REUSE_PROGRAMS)
def test_buffer_reuse_keeps_live_values(name):
    f, reuses = REUSE_PROGRAMS[name]
    x = finite((4 * CHUNKS[1] + 2,), 5) / 10
    call = fused_run(f, (x,))
    assert bool(call.run.reused) == reuses, call.run.source
    check_fused(f, (x,))
    x_before = x.copy()
    call(CHUNKS[0], 2)
    assert_bitwise(x, x_before)  # inputs are never written


UNFUSED_REUSE = {
    # name: (function, whether a buffer must be reused)
    "chain": (lambda x: jnp.exp(jnp.sin(x) * 2.0) - x, True),
    "viewed by a reshape": (lambda x: (lambda a: (a.reshape(2, -1), a * 2.0))(jnp.sin(x)), False),
    "aliased by integer_pow 1": (lambda x: (lambda a: (a ** 1, a * 2.0))(jnp.sin(x)), False),
    "used late": (lambda x: (lambda a: (a * 2.0 + 1.0) * a)(jnp.sin(x)), True),
    "output then read": (lambda x: (lambda a: (a, jnp.exp(a)))(jnp.sin(x) + 1.0), True),
    "input never written": (lambda x: jnp.exp(x) * 2.0, True),
}


@pytest.mark.parametrize("name", UNFUSED_REUSE)
def test_unfused_buffer_reuse(name):
    f, reuses = UNFUSED_REUSE[name]
    x = finite((64,), 3)
    x_before = x.copy()
    run = compile_jaxpr(invarax.make_jaxpr(f)(x).jaxpr)
    assert run.groups == []
    assert bool(run.reused) == reuses, run.source
    eager = f(jnp.asarray(x))
    eager = eager if isinstance(eager, tuple) else (eager,)
    outs = run(x)
    for o, e in zip(outs, eager, strict=True):
        assert_bitwise(o, e)
    assert_bitwise(x, x_before)
    for i, o in enumerate(outs):
        for p in outs[i + 1:]:
            assert not np.shares_memory(o, p)


def test_donated_input_is_reused():
    f = lambda x: jnp.exp(x) * 2.0 - x  # noqa: E731
    x = values((500,), np.float32, 2)
    eager = f(x)
    closed = invarax.make_jaxpr(f)(x)
    with fusion._settings(min_size=0, min_work=0):
        run = compile_jaxpr(closed.jaxpr, donated=(True,))
        plain = compile_jaxpr(closed.jaxpr)
    donated = x.copy()
    (out,) = run(donated)
    assert_bitwise(out, eager)
    assert np.shares_memory(out, donated)  # written in place
    kept = x.copy()
    (out,) = plain(kept)
    assert_bitwise(out, eager)
    assert_bitwise(kept, x)
    assert not np.shares_memory(out, kept)
    readonly = x.copy()
    readonly.flags.writeable = False
    (out,) = run(readonly)
    assert_bitwise(out, eager)
    assert not np.shares_memory(out, readonly)


def test_donated_input_aliasing_another_is_not_reused():
    f = lambda x, y: jnp.exp(x) * 2.0 - y  # noqa: E731
    x = values((500,), np.float32, 2)
    closed = invarax.make_jaxpr(f)(x, x)
    with fusion._settings(min_size=0, min_work=0):
        run = compile_jaxpr(closed.jaxpr, donated=(True, False))
    eager = f(x, x)
    same = x.copy()
    (out,) = run(same, same)
    assert_bitwise(out, eager)
    assert_bitwise(same, x)
    with pytest.raises(ValueError, match="donated"):
        compile_jaxpr(closed.jaxpr, donated=(True,))


def test_outputs_never_alias():
    def f(x, y):
        a = jnp.sin(x)
        b = a * 2.0
        c = b * jnp.sum(a)
        return a, b, c, c + 1.0, x

    x, y = finite((300,), 1), finite((300,), 2)
    outs = fused_run(f, (x, y))(CHUNKS[0], 2)
    for i, o in enumerate(outs[:4]):
        for p in outs[i + 1:]:
            assert not np.shares_memory(o, p)
    check_fused(f, (x, y))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def in_fork(check) -> None:
    """Run ``check()`` in a forked child; fail if it returns False, raises or hangs."""
    with warnings.catch_warnings():  # fork of a threaded process (Python 3.12, JAX) warns
        warnings.simplefilter("ignore")
        pid = os.fork()
    if pid == 0:
        try:
            ok = check()
        finally:
            os._exit(0 if locals().get("ok") else 1)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert os.waitstatus_to_exitcode(done[1]) == 0


def test_threads_after_fork():
    x = finite((4 * CHUNKS[1] + 1,))
    eager = np.asarray(jnp.sin(jnp.asarray(x)) * 2.0)
    call = fused_run(lambda x: jnp.sin(x) * 2.0, (x,))
    call(CHUNKS[1], 2)  # the parent's pool exists; with it, the child would wait forever
    in_fork(lambda: call(CHUNKS[1], 2)[0].tobytes() == eager.tobytes())


def test_fork_while_a_lock_is_held():
    x = finite((4 * CHUNKS[1] + 1,))
    eager = np.asarray(jnp.sin(jnp.asarray(x)) * 2.0)
    call = fused_run(lambda x: jnp.sin(x) * 2.0, (x,))
    with buffers._lock, _support._POOL_LOCK:  # as if another thread held them
        in_fork(lambda: call(CHUNKS[1], 2)[0].tobytes() == eager.tobytes())


# ---------------------------------------------------------------------------------------
# Buffers kept between calls (core/buffers.py)


def _pooled_program():
    """A program whose large intermediates die inside it: of the two values dying at the
    product, one buffer takes the product and the other returns to the pool, which later
    items and calls write into."""
    def f(x, w):
        h = jnp.exp(x) * jnp.sin(x)  # two owned values die here: one is given back
        y = (h + x) @ w
        z = jnp.tanh(y) - y
        return jnp.sum(z * z, axis=1), z[:3], h[0]
    return f


@pytest.mark.parametrize("native_small", [False, True])
def test_pooled_buffers_never_change_an_earlier_result_and_keep_eager_bits(native_small):
    f = _pooled_program()
    w = jnp.asarray(finite((256, 256), seed=9) / 16)
    jf = invarax.jit(f)
    xs = [finite((512, 256), seed=s) for s in range(4)]
    size = fusion._SETTINGS["min_native_size"] if native_small else 2**62
    with fusion._settings(min_native_size=size):  # (groups, or equation by equation)
        results = [jf(jnp.asarray(x), w) for x in xs]  # each reuses earlier calls' buffers
        closed = invarax.make_jaxpr(f)(jnp.asarray(xs[0]), w)
        source = compile_jaxpr(closed.jaxpr).source
    kept = [[np.array(r) for r in res] for res in results]
    for x, res, copy in zip(xs, results, kept, strict=True):
        eager = f(jnp.asarray(x), w)
        for got, want, before in zip(res, eager, copy, strict=True):
            assert_same(got, want)
            assert_same(got, before)  # nothing written over a result the caller holds
    assert "_take(" in source and ("_give(" in source or native_small), source


def test_pooled_buffers_under_threads_calling_one_program():
    import threading

    f = _pooled_program()
    w = jnp.asarray(finite((256, 256), seed=9) / 16)
    jf = invarax.jit(f)
    xs = [finite((512, 256), seed=s) for s in range(6)]
    want = [f(jnp.asarray(x), w) for x in xs]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                got = jf(jnp.asarray(xs[i]), w)
                for g, e in zip(got, want[i], strict=True):
                    assert_same(g, e)
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_pooled_buffers_of_a_while_loops_condition_and_body_keep_their_shapes():
    # the condition's and the body's programs share one namespace: their pool keys must
    # not collide (a (20000,) buffer handed to a (30000,) value)
    x = jnp.asarray(np.linspace(0, 1, 20000, dtype=np.float32))
    y = jnp.asarray(np.linspace(0, 1, 30000, dtype=np.float32))

    def cond(c):
        a, b, i = c
        t = jnp.sin(a) * 2.0 + a
        return (jnp.sum(t * t) > -1.0) & (i < 3)

    def body(c):
        a, b, i = c
        u = jnp.cos(b) * 3.0 - b
        v = jnp.exp(a) * 0.5 + a
        return v * 0.25, u * 0.5 + b, i + 1

    def f(x, y):
        return lax.while_loop(cond, body, (x, y, 0))

    for got, want in zip(invarax.jit(f)(x, y), f(x, y), strict=True):
        assert_same(got, want)

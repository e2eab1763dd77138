"""jit's entry: NumPy arguments read without a copy, and never written or aliased."""

import warnings

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax.compiler import jit as jit_module
from invarax.core import array, dtypes
from invarax.core.api_util import flatten_args


@pytest.fixture
def borrow_all(monkeypatch):
    """Small arrays are borrowed too."""
    monkeypatch.setattr(array, "BORROW_MIN_BYTES", 0)


@pytest.fixture
def borrowed_buffers(monkeypatch):
    """The NumPy buffers each eager call read without a copy (a spy on ``_unaliased``)."""
    seen = []
    real = jit_module._unaliased

    def spy(out, borrowed):
        seen.append(list(borrowed))
        return real(out, borrowed)

    monkeypatch.setattr(jit_module, "_unaliased", spy)
    return seen


FUNS = {
    "tanh": lambda x, y: jnp.tanh(x) * y + 1.0,
    "matmul": lambda x, y: x @ y.T,
    "sum": lambda x, y: (jnp.sum(x, axis=1), jnp.max(y)),
    "grad": invarax.grad(lambda x, y: jnp.sum(jnp.sin(x) * y)),
}


@pytest.mark.parametrize("name", FUNS)
def test_borrowed_arguments_give_the_same_bits(name, borrowed_buffers):
    f = FUNS[name]
    x, y = data((128, 160)), data((128, 160), seed=1)  # 80 KiB each: borrowed by default
    want = f(jnp.asarray(x), jnp.asarray(y))  # eager
    got = invarax.jit(f)(x, y)
    for g, w in zip(*(t if isinstance(t, tuple) else (t,) for t in (got, want)), strict=True):
        assert_bitwise(g, w)
    assert len(borrowed_buffers) == 1
    assert [np.shares_memory(b, a) for b, a in zip(borrowed_buffers[0], (x, y), strict=True)] \
        == [True, True]


def test_small_and_large_arrays():
    small = np.ones(array.BORROW_MIN_BYTES // 4 - 1, np.float32)
    large = np.ones(array.BORROW_MIN_BYTES // 4, np.float32)
    borrowed = []
    leaves, _ = flatten_args((small, large), {}, "f", borrowed)
    assert borrowed == [1]
    assert [np.shares_memory(a._value, x) for a, x in zip(leaves, (small, large),
                                                           strict=True)] == [False, True]


def test_flatten_args_borrows_only_what_needs_no_conversion(borrow_all):
    x32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = {
        "c_contiguous f32": (x32, True),
        "0-d f32": (np.array(2.5, np.float32), True),
        "int32": (np.arange(4, dtype=np.int32), True),
        "bool": (np.array([True, False]), True),
        "read-only": (np.frombuffer(np.arange(4, dtype=np.float32).tobytes(), np.float32),
                      True),
        "float64 (narrowed)": (np.arange(3.0), False),
        "int64 (narrowed)": (np.arange(3), False),
        "strided": (x32[:, ::2], False),
        "fortran": (np.asfortranarray(x32), False),
        "unaligned": (np.frombuffer(b"\0" + x32.tobytes(), np.float32, 6, 1), False),
        "subclass": (np.ma.masked_array(x32), False),
        "numpy scalar": (np.float32(1.0), False),
    }
    for what, (x, borrows) in cases.items():
        borrowed = []
        (leaf,), _ = flatten_args((x,), {}, "f", borrowed)
        assert (borrowed == [0]) == borrows, what
        assert np.shares_memory(leaf._value, x) == borrows, what
        assert not leaf._value.flags.writeable and not leaf.weak_type, what
        assert leaf.dtype == dtypes.canonicalize(x.dtype), what
    assert x32.flags.writeable  # the caller's flags are left alone
    (leaf,), _ = flatten_args((x32,), {}, "f")  # without a list: always a copy
    assert not np.shares_memory(leaf._value, x32)


@pytest.mark.parametrize("x", [np.arange(5.0), np.arange(5), np.arange(10, dtype=np.float32)[::2]],
                         ids=["float64", "int64", "strided"])
def test_converted_arguments_keep_their_dtype_rules(x, borrow_all, borrowed_buffers):
    got = invarax.jit(lambda v: v * 2)(x)
    assert_bitwise(got, jnp.asarray(x) * 2)
    assert not got.weak_type
    assert borrowed_buffers == []  # copied (and converted) as before


def test_an_unsupported_byte_order_still_raises():
    with pytest.raises(TypeError, match="not supported"):
        invarax.jit(lambda v: v)(np.arange(3, dtype=">f4"))


def test_the_callers_array_is_never_written():
    n = 2**20  # large enough for a fusion group, which writes into a buffer it may own
    f = lambda p, g: jnp.tanh(p - 0.1 * g) * 0.99 + 1e-3
    g = data(n, seed=1)
    want = f(jnp.full(n, 2.0), jnp.asarray(g))
    for jitted in (invarax.jit(f), invarax.jit(f, donate_argnums=0),
                   invarax.jit(f, donate_argnums=(0, 1))):
        for _ in range(2):
            p, g0 = np.full(n, 2.0, np.float32), g.copy()
            with warnings.catch_warnings():  # one output: g's donation is not usable
                warnings.filterwarnings("ignore", "Some donated buffers were not usable")
                out = jitted(p, g)
            assert_bitwise(out, want)
            assert_bitwise(p, np.full(n, 2.0, np.float32)) and assert_bitwise(g, g0)
            assert p.flags.writeable and g.flags.writeable
            assert not np.shares_memory(np.asarray(out), p)


def test_a_donated_float64_argument_is_consumed_as_its_copy():
    p = np.full(2**20, 2.0)  # narrowed to float32: a copy, which the program may reuse
    out = invarax.jit(lambda p: p * 3.0 + 1.0, donate_argnums=0)(p)
    assert_bitwise(out, np.full(2**20, 7.0, np.float32))
    assert_bitwise(p, np.full(2**20, 2.0))


RETURNS_INPUT = {
    "identity": lambda x: x,
    "reshape": lambda x: x.reshape(-1),
    "transpose": lambda x: x.T,
    "slice": lambda x: x[1:, :2],
    "index": lambda x: x[0],
    "tuple": lambda x: (x, x * 2.0, x[0]),
    "dict": lambda x: {"same": x, "new": -x},
}


@pytest.mark.parametrize("name", RETURNS_INPUT)
def test_a_returned_array_never_sees_a_later_write(name, borrow_all, borrowed_buffers):
    f = RETURNS_INPUT[name]
    x = data((3, 4))
    want = f(jnp.asarray(x))
    jitted = invarax.jit(f)
    for _ in range(2):
        x = data((3, 4))
        got = jitted(x)
        x[...] = 7.0  # the caller's own array, written after the call
        leaves = invarax.tree_util.tree_leaves
        for g, w in zip(leaves(got), leaves(want), strict=True):
            assert_bitwise(g, w)
            assert not np.shares_memory(g._value, x)
    assert len(borrowed_buffers) == 2


def test_values_that_outlive_the_call_are_copied(borrow_all, borrowed_buffers):
    x = data(4)
    w = jnp.asarray(data(4, seed=1))
    mul = invarax.jit(lambda w, x: jnp.sin(w) * x)
    want_out, want_grad = mul(w, jnp.asarray(x)), jnp.cos(w) * jnp.asarray(x)

    out, f_vjp = invarax.vjp(lambda w: mul(w, x), w)  # residuals hold x
    outer = invarax.jit(lambda w: mul(w, x))  # x: a constant of the outer program
    assert_bitwise(outer(w), want_out)
    x[...] = 0.0
    assert_bitwise(out, want_out)
    assert_bitwise(f_vjp(jnp.ones(4))[0], want_grad)
    assert_bitwise(outer(w), want_out)


def test_a_callback_never_keeps_the_callers_memory(borrow_all, borrowed_buffers):
    kept = []

    def f(x):
        invarax.debug.callback(kept.append, x)
        return x + 1.0

    x = data(5)
    want = np.array(x)
    out = invarax.jit(f)(x)
    x[...] = 0.0
    assert_bitwise(kept[0], want) and assert_bitwise(out, jnp.asarray(want) + 1.0)
    assert borrowed_buffers == []  # a program calling Python code gets copies

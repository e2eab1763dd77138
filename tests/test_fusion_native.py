"""Native fusion groups: the compiled group gives exactly the Python path's bits (N3, N5).

The whole fusion test table (every unary, binary and select case of test_fusion.py whose
members have a native form) runs as one group per dtype, natively and by the Python path,
for several chunk sizes, one and two threads and every dispatch level of the elementary
kernels; a missing compiler leaves the Python path, with the same bits.
"""

import numpy as np
import pytest
from helpers import assert_bitwise
from test_fusion import BINARY_CASES, COMPARE, SELECT_CASES, UNARY_CASES, _then, values

import invarax
import invarax.lax as lax
from invarax.compiler import c_forms, fusion, fusion_native, native_build
from invarax.compiler.lower import compile_jaxpr
from invarax.kernels import _native

CHUNKS = (1, 7, 4096, None)
THREADS = (1, 2)
N = 2 * fusion_native.BLOCK + 37  # two whole blocks and a partial one


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def _native_form(f, args) -> bool:
    """Whether ``f`` fused is one group with a native form."""
    with fusion._settings(min_size=0, min_work=0):
        items = fusion.plan(invarax.make_jaxpr(f)(*args).jaxpr)
    groups = [g for g in items if isinstance(g, fusion.Group)]
    try:
        return len(groups) == 1 and bool(fusion_native.group_source(groups[0]))
    except c_forms.Unsupported:
        return False


def _table(dtype, like=None, chained=False):
    """The table's cases of ``like`` (default ``dtype``) with a native form on ``dtype``, as
    functions of ``(x, y, w, s)``; ``chained``: only those whose operation's result is read
    by a second operation alone (never stored: the C compiler may combine the two)."""
    like, ops = like or dtype, []
    x, s = values((4,), dtype), np.asarray(values((1,), dtype)[0])
    for _name, op, d in UNARY_CASES:
        if d == like:
            ops += [*([] if chained else [lambda x, y, w, s, op=op: op(x)]),
                    lambda x, y, w, s, op=op: _then(op(x))]
    for name, d in BINARY_CASES:
        if d == like:
            op = getattr(lax, name)
            ops += [*([] if chained else [
                lambda x, y, w, s, op=op: op(x, y), lambda x, y, w, s, op=op: op(x, s),
                lambda x, y, w, s, op=op: op(lax.broadcast_in_dim(s, x.shape, ()), x)]),
                lambda x, y, w, s, op=op: _then(op(x, y))]
            if name not in COMPARE and not chained:
                ops.append(lambda x, y, w, s, op=op: op(y, op(x, y)))
    for d, which in SELECT_CASES:
        if d == like and which == "bool" and not chained:
            ops.append(lambda x, y, w, s: lax.select_n(w, x, y))
    w = values((4,), np.bool_)
    return [op for op in ops if _native_form(op, (x, x, w, s))]


def _compare(f, args, isas=(None,)):
    """``f`` fused, native against the Python path, bitwise, for every setting."""
    closed = invarax.make_jaxpr(f)(*args)
    with fusion._settings(min_size=0, min_work=0):
        run = compile_jaxpr(closed.jaxpr)
    assert run.groups
    consts = [c._value for c in closed.consts]
    run(*consts, *args)  # starts the compilations
    fusion_native.wait()
    for group in run.groups:
        assert group.runner().native.fn is not None, fusion_native.group_source(group)[0]
    for isa in isas:
        previous = None if isa is None else _native.set_isa(isa)
        try:
            # the Python path's bits do not depend on the chunk or threads (test_fusion.py)
            invarax.config.update("invarax_native_fusion", False)
            try:
                python = run(*consts, *args)
            finally:
                invarax.config.update("invarax_native_fusion", True)
            for chunk in CHUNKS:
                for threads in THREADS:
                    with fusion._settings(chunk=chunk, threads=threads, min_per_thread=1):
                        before = [g.runner().native.calls for g in run.groups]
                        native = run(*consts, *args)
                    assert all(g.runner().native.calls > c
                               for g, c in zip(run.groups, before, strict=True))
                    for a, b in zip(native, python, strict=True):
                        assert_bitwise(a, b)
        finally:
            if previous is not None:
                _native.set_isa(previous)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_table_native_equals_python(dtype):
    args = (values((N,), dtype, 1), values((N,), dtype, 2), values((N,), np.bool_, 3),
            np.asarray(values((1,), dtype, 4)[0]))
    for chained in (False, True):
        ops = _table(dtype, chained=chained)
        assert len(ops) > 5
        _compare(lambda *a, ops=ops: tuple(op(*a) for op in ops), args)


def test_float64(x64):
    ops = _table(np.float64, like=np.float32)
    assert len(ops) > 10
    args = (values((N,), np.float64, 1), values((N,), np.float64, 2),
            values((N,), np.bool_, 3), np.asarray(1.5))
    _compare(lambda *a: tuple(op(*a) for op in ops), args, isas=_native.isas())


def _special(dtype):
    """NaN payloads of one sign, infinities, signed zeros, subnormals and ordinary values."""
    bits = np.uint32 if dtype == np.float32 else np.uint64
    f = np.finfo(dtype)
    payload = np.array([0x7FC00001, 0x7FC12345] if dtype == np.float32 else
                       [0x7FF8000000000001, 0x7FF8123456789ABC], bits).view(dtype)
    special = np.array([np.inf, -np.inf, 0.0, -0.0, f.smallest_subnormal,
                        -f.smallest_subnormal, f.tiny / 3, 1.0, -2.5, 88.0, -104.0], dtype)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(N) * 4).astype(dtype)
    pick = rng.random(N) < 0.4
    x[pick] = np.concatenate([payload, special])[rng.integers(0, 13, pick.sum())]
    return x


def test_special_values_at_every_level():
    def f(x, y):
        a = lax.exp(x) * y - lax.sin(y / x)
        return a, lax.tanh(a) + lax.max(x, y), lax.atan2(x, y) - lax.logistic(a)

    args = (_special(np.float32), _special(np.float32)[::-1].copy())
    _compare(f, args, isas=_native.isas())


def test_issue_expression_at_every_level():
    def f(x1, x2):
        return (x1 / x2 - lax.exp(x2)) * (lax.sin(x1 / x2) + x1 / x2 - lax.exp(x2))

    rng = np.random.default_rng(5)
    args = tuple(rng.standard_normal(N).astype(np.float32) for _ in range(2))
    _compare(f, args, isas=_native.isas())


def test_missing_compiler_falls_back(monkeypatch):
    monkeypatch.setattr(native_build, "compiler", lambda: ["/nonexistent/invarax-cc"])

    def f(x, y):
        return lax.exp(x) * y + 1.0

    x, y = _special(np.float32), _special(np.float32)[::-1].copy()
    closed = invarax.make_jaxpr(f)(x, y)
    with fusion._settings(min_size=0, min_work=0):
        run = compile_jaxpr(closed.jaxpr)
    (group,) = run.groups
    out = run(x, y)
    fusion_native.wait()
    assert group.runner().native.fn is None
    assert_bitwise(run(x, y)[0], f(x, y))
    assert_bitwise(out[0], f(x, y))


def test_a_group_this_process_has_loaded_runs_natively_from_its_first_call():
    """A second program with a group of the same structure (other literals) takes the
    loaded code at its first call, without the background thread or the Python path."""
    x, y = _special(np.float32), _special(np.float32)[::-1].copy()
    runs = []
    for scale in (2.0, 3.0):
        closed = invarax.make_jaxpr(lambda x, y, s=scale: lax.exp(x) * y + s)(x, y)
        with fusion._settings(min_size=0, min_work=0):
            runs.append(compile_jaxpr(closed.jaxpr))
    runs[0](x, y)
    fusion_native.wait()
    (group,) = runs[1].groups
    runner = group.runner()
    out = runs[1](x, y)
    assert runner.native.calls == 1 and runner._python is None
    assert_bitwise(out[0], lax.exp(x) * y + 3.0)


def test_unsupported_members_keep_the_python_path():
    def f(x):
        return lax.rem(x, 3.0) * 2.0  # rem has no C form

    x = values((N,), np.float32)
    with fusion._settings(min_size=0, min_work=0):
        (group,) = compile_jaxpr(invarax.make_jaxpr(f)(x).jaxpr).groups
    assert group.runner().native is None


@pytest.mark.parametrize("row", [2, 7, 1000, 3 * fusion_native.BLOCK + 5])
def test_row_reductions(row):
    def f(x, y):  # four groups, each ending in its reduction
        a = x * y - lax.exp(x)
        return (lax.reduce_sum(a, (1,)), lax.reduce_max(x - y, (1,)),
                lax.reduce_min(lax.sin(a), (1,)), lax.reduce_prod(y * 0.5, (1,)))

    rows = max(3, 2 * fusion_native.BLOCK // row + 1)
    x, y = (values((rows, row), np.float32, seed) for seed in (1, 2))
    _compare(f, (x, y), isas=_native.isas())


def test_broadcast_operands():
    """Operands broadcast along leading axes are read in place (a block divides their
    period); the jacfwd of a product reads its one-hot basis and tangents that way."""
    def f(x, v):
        b = lax.broadcast_in_dim(v, x.shape, (1,))
        return x * b - lax.exp(b), lax.reduce_sum(b * x, (1,))

    x, v = values((5, 640), np.float32, 1), values((640,), np.float32, 2)
    _compare(f, (x, v), isas=_native.isas())

    def prod(a):
        return lax.reduce_prod(a * a - a * a * a - a, (0,))

    _compare(invarax.jacfwd(prod), (values((384,), np.float32, 3),))


def test_block_divides_the_period():
    def native(row):
        group = fusion_native.Native.__new__(fusion_native.Native)
        group.row, group._blocks = row, {}
        return group

    rows = native(1000)
    assert rows.block(set()) == 1000 and rows.block({3000}) == 1000
    assert rows.block({3000}, limit=7) == 1000 and rows.block({1500}) is None
    assert rows.block({3000, 1500}) is None and rows.block({3000, 6000}) == 1000
    flat = native(1)
    assert flat.block(set()) == fusion_native.BLOCK and flat.block(set(), 7) == 7
    assert flat.block({3 * 640}) == 960 and flat.block({1031}) == 1
    assert flat.block({3 * 640}, limit=100) == 96 and flat.block({640, 96}) == 32
    assert flat.block({3 * 640}) == 960  # (the answer kept for these periods)


def test_output_written_over_a_dead_input():
    def f(x):
        a = lax.cumsum(x, 0)  # a fresh buffer the group may write its result into
        return lax.exp(a * 1e-3) * 2.0 - a

    _compare(f, (values((N,), np.float32, 4),))


def test_numpy_elementary_functions_keep_the_python_path():
    def f(x):
        return lax.exp(x) * 2.0

    x = values((N,), np.float32, 5)
    with invarax.config.flag("invarax_exact_elementary", False):
        with fusion._settings(min_size=0, min_work=0):
            run = compile_jaxpr(invarax.make_jaxpr(f)(x).jaxpr)
        (group,) = run.groups
        fusion_native.wait()
        with np.errstate(all="ignore"):
            expected = np.exp(x) * np.float32(2.0)
        assert_bitwise(run(x)[0], expected)
        assert group.runner().native.calls == 0


@pytest.mark.parametrize("f", [lambda x, y: lax.neg(lax.integer_pow(x, -1)),
                               lambda x, y: lax.neg(lax.integer_pow(x, -2)),
                               lambda x, y: lax.neg(x * y), lambda x, y: lax.neg(x / y)])
def test_negated_products_keep_the_sign_of_nan(f):
    """A compiler may move a negation into a product or quotient (exact but for a NaN's
    sign); the native path must not."""
    _compare(f, (_special(np.float32), _special(np.float32)[::-1].copy()))


def test_runs_on_the_kernels_pool_cover_each_element_once():
    """``_native.run_ranges`` calls the group's function on runs ``[lo, hi)`` that cover
    ``[0, size)`` exactly once, whatever the threads, and reports a failed call."""
    import ctypes
    import threading

    work_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                 ctypes.c_int64)
    seen, lock = [], threading.Lock()

    def work(p, lo, hi, block):
        with lock:
            seen.append((lo, hi, block))
        return int(lo == 70)

    fn = work_type(work)
    address = ctypes.cast(fn, ctypes.c_void_p).value
    for size, run, threads in [(100, 7, 2), (100, 100, 2), (5, 7, 3), (64, 1, 8)]:
        seen.clear()
        failed = _native.run_ranges(address, (), size, run, 3, threads)
        covered = sorted(seen)
        assert [lo for lo, _, _ in covered] == list(range(0, size, run))
        assert all(hi == min(lo + run, size) and block == 3 for lo, hi, block in covered)
        assert failed == (70 % run == 0 and 70 < size)
    with pytest.raises(ValueError, match="run_ranges"):
        _native.run_ranges(address, (), 10, 1, 0, 2)

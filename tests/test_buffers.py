"""The buffer pool (``invarax/core/buffers.py``): a buffer is handed out again only when
no live value can reach it, within the limits, and ``clear_caches`` empties it."""

import threading

import numpy as np
import pytest
from helpers import assert_bitwise
from test_fusion import in_fork

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.core import buffers
from invarax.core.array import ArrayImpl

F32 = np.dtype(np.float32)
N = buffers.MIN_BYTES // 4  # float32 elements of the smallest pooled buffer


@pytest.fixture(autouse=True)
def empty_pool():
    buffers.clear()
    yield
    buffers.clear()


def kept():
    return [x for arrays in buffers._pool.values() for x in arrays]


def test_a_given_buffer_comes_back_only_when_nothing_refers_to_it():
    x = buffers.take((N,), F32)
    buffers.give(x)
    assert buffers.take((N,), F32) is not x  # ``x`` still refers to it
    view = x[1:]
    del x
    assert buffers.take((N,), F32) is not view.base  # a view of it does
    base = view.base
    del view
    assert buffers.take((N,), F32) is not base  # so does ``base``
    address = base.ctypes.data
    del base
    again = buffers.take((N,), F32)
    assert again.ctypes.data == address and kept() == []  # taken: the pool holds no reference


def test_a_read_only_buffer_comes_back_writeable():
    x = buffers.take((N,), F32)
    buffers.give(x)
    array = ArrayImpl(x)
    assert not x.flags.writeable  # an Array made it read-only
    del array, x
    assert buffers.take((N,), F32).flags.writeable


def test_only_large_contiguous_owners_are_kept_within_the_limits(monkeypatch):
    big = [np.empty(N, np.float32) for _ in range(buffers.PER_KEY + 2)]
    for b in big:
        buffers.give(b)
    buffers.give(np.empty(8, np.float32))  # small: the heap's
    buffers.give(np.empty((2, N), np.float32)[0])  # a view: its base may be referenced
    buffers.give(np.empty((N, 2), np.float32, order="F"))  # not C-contiguous
    assert [len(v) for v in buffers._pool.values()] == [buffers.PER_KEY]
    assert buffers._bytes[0] == buffers.PER_KEY * N * 4
    monkeypatch.setattr(buffers, "MAX_BYTES", buffers._bytes[0] + N * 8)
    del big
    buffers.give(np.empty(2 * N, np.float32))  # fits
    buffers.give(np.empty(4 * N, np.float32))  # makes room: drops unreferenced ones
    assert buffers._bytes[0] <= buffers.MAX_BYTES
    assert buffers._bytes[0] == sum(x.nbytes for x in kept())
    assert any(x.shape == (4 * N,) for x in kept())


def test_a_full_pool_drops_no_referenced_buffer(monkeypatch):
    monkeypatch.setattr(buffers, "MAX_BYTES", 3 * N * 4)
    a, b = np.empty(N, np.float32), np.empty(N, np.float32)
    buffers.give(a)
    buffers.give(b)
    buffers.give(np.empty(2 * N, np.float32))  # no room: a and b are still referenced
    assert [x is a or x is b for x in kept()] == [True, True]
    del b
    buffers.give(np.empty(2 * N, np.float32))  # room made by dropping b only
    assert kept()[0] is a and kept()[1].shape == (2 * N,)
    assert buffers._bytes[0] == 3 * N * 4


def test_aligned_blocks():
    for n in (100, buffers.MIN_BYTES, 3 * buffers.MIN_BYTES + 7):
        block = buffers.take_block(n)
        assert block.size == n and block.ctypes.data % buffers.ALIGN == 0
        buffers.give(block.base)


def _program():
    """Large intermediates that die inside the program, and a large output (rem has no
    native form: too small a group otherwise, the equations run one by one)."""
    def f(x):
        a = jnp.exp(x) * lax.rem(x, 0.75)
        return jnp.tanh(a) - a * x
    return invarax.jit(f), f


def test_a_held_view_of_a_pooled_output_is_never_written_over():
    jf, f = _program()
    x = np.linspace(-1, 1, 4 * N, dtype=np.float32).reshape(4, N)
    out = jf(x)
    view = np.asarray(out)[1:]  # a view of the program's pooled output buffer
    want = np.array(view)
    del out
    for k in range(6):  # every call takes and gives buffers of this shape
        assert_bitwise(jf(x * np.float32(k)), f(jnp.asarray(x * np.float32(k))))
    assert_bitwise(view, want)
    assert kept(), "the program gives its dying buffers to the pool"
    assert all(not np.shares_memory(view, b) for b in kept())


def test_a_held_scan_output_is_never_written_over():
    xs = jnp.asarray(np.ones((8, N), np.float32))

    def f(s):
        return lax.scan(lambda c, x: (c, x * s), 0.0, xs)[1]

    first = f(2.0)
    row = np.asarray(first)[3]
    del first
    for s in (3.0, 4.0, 5.0):
        assert_bitwise(f(s), np.full((8, N), s, np.float32))
        assert_bitwise(invarax.jit(f)(s), np.full((8, N), s, np.float32))
    assert_bitwise(row, np.full(N, 2.0, np.float32))


def test_threads_never_share_a_buffer():
    errors = []

    def work(seed):
        for k in range(200):
            x = buffers.take((N,), F32)
            x[:] = seed
            buffers.give(x)
            if not (x == seed).all():
                errors.append((seed, k))
            del x

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert buffers._bytes[0] == sum(x.nbytes for x in kept())


def test_clear_caches_empties_the_pool():
    jf, _ = _program()
    jf(np.ones((4, N), np.float32))
    assert kept()
    invarax.clear_caches()
    assert buffers._pool == {} and buffers._bytes[0] == 0


def test_a_forked_child_starts_with_an_empty_pool():
    buffers.give(np.empty(N, np.float32))
    with buffers._lock:  # as if another thread held it at the fork
        in_fork(lambda: buffers._pool == {} and buffers.take((N,), F32).shape == (N,))

"""Concurrency: jitted functions, the fusion scratch pool, gemm's threads and random's eager
cache used from 8 Python threads give the serial run's bits, with no exception, deadlock
or duplicate trace. ``python tests/scripts/thread_stress.py`` runs the long version."""

import sys
import threading

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import stress_threads  # noqa: E402


@pytest.fixture
def fast_switching():
    """Switch threads every microsecond, so races show up in a short run."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_eight_threads_match_the_serial_run_bitwise(fast_switching):
    mismatches, errors, traces, serial_traces = stress_threads.run(threads=8, calls=25)
    assert not errors, errors
    assert mismatches == []
    assert traces == serial_traces  # simultaneous first calls traced once


def _concurrently(fun, threads=8):
    barrier = threading.Barrier(threads)
    results, errors = [None] * threads, []

    def worker(t):
        barrier.wait()
        try:
            results[t] = fun(t)
        except Exception as e:  # noqa: BLE001  (checked by the caller)
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in pool), "deadlock"
    return results, errors


def test_nested_jits_traced_from_several_threads_do_not_deadlock(fast_switching):
    traces = []

    def inner(x):
        traces.append("inner")
        return x * 2.0

    g = invarax.jit(inner)
    f = invarax.jit(lambda x: g(x) + g(x[::-1]) * 3.0)
    x = jnp.arange(5.0)
    results, errors = _concurrently(lambda t: np.asarray(f(x) if t % 2 else g(x)))
    assert not errors
    assert all(np.array_equal(r, results[t % 2]) for t, r in enumerate(results))
    # inner is traced once by g's top-level call; f's trace may trace it again inside
    # its own trace (a thread inside a trace never waits), so at most twice
    assert 1 <= traces.count("inner") <= 2


def test_a_trace_that_raises_raises_in_every_waiting_thread(fast_switching):
    def bad(x):
        raise ValueError("bad input")

    f = invarax.jit(bad)
    _, errors = _concurrently(lambda t: f(jnp.ones(3)))
    assert len(errors) == 8 and all("bad input" in str(e) for e in errors)
    assert f._cache_size() == 0


def test_random_eager_cache_from_threads(fast_switching):
    key = invarax.random.PRNGKey(3)
    expected = np.asarray(invarax.random.uniform(key, (17, 3)))
    results, errors = _concurrently(lambda t: np.asarray(invarax.random.uniform(key, (17, 3))))
    assert not errors
    assert all(r.tobytes() == expected.tobytes() for r in results)


def test_parallel_tasks_may_run_parallel_tasks():
    """A kernel that splits its work between threads may be called from a task of another
    split (a fusion group's chunk reducing its rows): the inner split then runs on the
    task's own thread, instead of waiting on a pool whose workers are all waiting."""
    from invarax.kernels._support import in_parallel, worker_pool

    worker_pool(1)  # at least one worker: the outer split occupies it
    done = []

    def inner(tag):
        in_parallel([lambda: done.append((tag, 0)), lambda: done.append((tag, 1))])

    runner = threading.Thread(target=in_parallel, args=([lambda: inner("a"),
                                                          lambda: inner("b")],), daemon=True)
    runner.start()
    runner.join(timeout=20)
    assert not runner.is_alive(), "nested in_parallel deadlocked"
    assert sorted(done) == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]

"""The thread stress workload shared by tests/test_threads.py (bounded) and
tests/scripts/thread_stress.py (long): threads calling the same and different jitted
functions, first calls (tracing) included, compared bitwise with a serial run."""

import collections
import threading

import numpy as np

import invarax
import invarax.numpy as jnp

SHAPES = [(64,), (300, 300), (2**18,)]  # small; gemm threads; chunked threaded fusion


class Workload:
    """Fresh jitted functions (so their first calls trace), counting their traces."""

    def __init__(self, threads: int):
        self.traces = collections.Counter()
        self._lock = threading.Lock()
        count = self._count

        def mlp(w, x):
            count("mlp")
            return jnp.tanh(x @ w) * 2.0 + 1.0

        def loss(w, x):
            count("loss")
            return jnp.sum(jnp.sin(w * x) ** 2 - jnp.cos(x) * w)

        def rows(x):
            count("rows")
            return jnp.sum(jnp.exp(-x * x), axis=-1)

        self.mlp = invarax.jit(mlp)
        self.grad = invarax.jit(invarax.grad(loss))
        self.rows = invarax.jit(invarax.vmap(rows))
        self.own = []  # one jitted function per thread, of the same code
        for t in range(threads):
            def scaled(x, t=t):
                count("own")
                return x * (t + 1.5) + jnp.max(x)
            self.own.append(invarax.jit(scaled))

    def _count(self, name):
        with self._lock:
            self.traces[name] += 1

    def call(self, thread: int, i: int):
        """The ``i``-th call of thread ``thread``: a pytree of NumPy arrays."""
        # the first calls are the same in every thread: simultaneous first-call tracing
        offset = thread if i >= 5 else 0
        kind = (i + offset) % 5
        shape = SHAPES[(i // 5 + offset) % len(SHAPES)]
        x = _data(shape, i % 3)
        if kind == 0:  # the larger one runs gemm's threads
            n, k, m = (256, 300, 128) if shape == SHAPES[1] else (8, 64, 8)
            out = self.mlp(_data((k, m), 1 + i % 2), _data((n, k), 3))
        elif kind == 1:
            out = self.grad(_data(shape, 7), x)
        elif kind == 2:
            out = self.rows(x.reshape(-1, shape[-1])[:512])
        elif kind == 3:
            out = invarax.random.normal(invarax.random.PRNGKey(i % 4), shape)
        else:
            out = self.own[thread](x)
        return np.asarray(out)


_DATA = {}


def _data(shape, seed):
    key = (shape, seed)
    if key not in _DATA:  # may be computed twice by two threads: the same values
        rng = np.random.default_rng(seed)
        _DATA[key] = jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    return _DATA[key]


def run(threads: int, calls: int):
    """Run ``threads`` x ``calls`` calls concurrently (all threads start together, so first
    calls trace at the same time) and serially on fresh functions.

    Returns ``(mismatches, errors, concurrent traces, serial traces)``.
    """
    serial = Workload(threads)
    expected = {(t, i): serial.call(t, i) for t in range(threads) for i in range(calls)}
    concurrent = Workload(threads)
    barrier = threading.Barrier(threads)
    results, errors = {}, []

    def worker(t):
        try:
            barrier.wait()
            for i in range(calls):
                results[(t, i)] = concurrent.call(t, i)
        except BaseException as e:  # noqa: BLE001  (reported to the caller)
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=600)
    if any(thread.is_alive() for thread in pool):
        raise TimeoutError("a stress thread did not finish in 600 s (deadlock?)")
    mismatches = [k for k, v in expected.items()
                  if k in results and (v.dtype, v.shape, v.tobytes()) !=
                  (results[k].dtype, results[k].shape, results[k].tobytes())]
    return mismatches, errors, concurrent.traces, serial.traces

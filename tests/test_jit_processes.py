"""The per-process program of a ``jit`` whose arguments are split across processes, run
here as 2-4 threads, each playing one process, over an in-memory gather: every output is
bitwise the unsharded program's, and a data-parallel step is one compiled stage before the
gradients' sums and one after.
"""

import threading

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax.transforms import _jit_processes as split

_process = threading.local()


class _Exchange:
    """``allgather_views`` between the threads of one run (the transport's interface)."""

    def __init__(self, count):
        self.barrier = threading.Barrier(count, timeout=60)
        self.slots = [None] * count

    def allgather_views(self, n, write):
        mine = np.zeros(n, np.uint8)
        write(mine)
        self.barrier.wait()
        self.slots[_process.index] = mine
        self.barrier.wait()
        every = list(self.slots)
        self.barrier.wait()
        return every


@pytest.fixture
def processes(monkeypatch):
    monkeypatch.setattr(split._devices, "process_count", lambda: _process.count)
    monkeypatch.setattr(split._devices, "process_index", lambda: _process.index)
    monkeypatch.setattr(split._transport, "current", lambda: _process.exchange)

    def run(fun, args, axes, count):
        """Every process's outputs of ``fun`` with the leaves split along ``axes``."""
        exchange, outs, errors = _Exchange(count), [None] * count, []

        def one(index):
            _process.count, _process.index, _process.exchange = count, index, exchange
            try:
                outs[index] = split.SplitProgram(fun)(args, axes)
            except BaseException as error:  # noqa: BLE001 - reported below
                errors.append(error)
                exchange.barrier.abort()

        threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        if errors:
            raise errors[0]
        return outs

    return run


def _mlp_step(params, x, y):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        z = h @ params[-1][0] + params[-1][1]
        return jnp.mean(jax_logsumexp(z) - jnp.sum(z * y, axis=1))

    grads = invarax.grad(loss)(params, x, y)
    return [tuple(p - 0.1 * g for p, g in zip(layer, grad, strict=True))
            for layer, grad in zip(params, grads, strict=True)]


def jax_logsumexp(z):
    return jnp.log(jnp.sum(jnp.exp(z), axis=1))


def _mlp(batch, sizes=(20, 16, 16, 3)):
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(rng.standard_normal((m, n)).astype(np.float32) / 4),
               jnp.asarray(rng.standard_normal(n).astype(np.float32)))
              for m, n in zip(sizes, sizes[1:], strict=False)]
    x = jnp.asarray(rng.standard_normal((batch, sizes[0])).astype(np.float32))
    y = jnp.asarray(np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)])
    return params, x, y


def _bits(tree):
    return [np.asarray(x).tobytes() for x in invarax.tree_util.tree_leaves(tree)]


@pytest.mark.parametrize("count, batch", [(2, 1024), (4, 1024), (2, 96), (3, 768)])
def test_a_data_parallel_step_is_bitwise_the_unsharded_one(processes, count, batch):
    # 1024 rows: whole blocks of 256 per process and nodes of the pairwise tree (the
    # gradients' sums are combined); 96 and 768 over 3: neither (the values are gathered).
    params, x, y = _mlp(batch)
    want = _bits(invarax.jit(_mlp_step)(params, x, y))
    axes = [None] * 6 + [0, 0]
    for out in processes(_mlp_step, (params, x, y), axes, count):
        assert _bits(out) == want


def test_the_step_is_one_compiled_stage_before_the_gradients_sums_and_one_after(monkeypatch):
    monkeypatch.setattr(split._devices, "process_count", lambda: 2)
    monkeypatch.setattr(split._devices, "process_index", lambda: 0)
    params, x, y = _mlp(1024)
    closed = invarax.make_jaxpr(_mlp_step, optimize=True)(params, x, y)
    plan = split._Plan(closed, [None] * 6 + [0, 0])
    (first, gathers), (second, none) = plan.stages
    assert first is not None and second is not None and not none
    kinds = sorted(step.kind for step in gathers)
    assert kinds == ["blocks"] * 3 + ["sum"] * 3, kinds  # the weight and bias gradients
    assert len(second.outputs) == 6  # the new parameters


@pytest.mark.parametrize("count", [2, 4])
def test_reductions_over_the_split_axis_are_the_unsharded_ones(processes, count):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1024, 5)).astype(np.float32)
    x[3, 1], x[700, 2], x[5, 3], x[900, 3] = np.nan, np.inf, -0.0, -0.0
    x[:, 4] = -0.0  # a column of negative zeros sums to +0

    def f(x, y):
        return (jnp.sum(x, axis=0), x.sum(), jnp.mean(x * y, axis=0), jnp.max(x, axis=0),
                jnp.cumsum(x, axis=0)[-1], jnp.sum(x[:, :2] @ y[:2], axis=0),
                jnp.sum(x[:, 1:], axis=(0, 1)))

    args = (jnp.asarray(x), jnp.asarray(rng.standard_normal((1024, 5)).astype(np.float64)))
    want = _bits(invarax.jit(f)(*args))
    for out in processes(f, args, [0, 0], count):
        assert _bits(out) == want


def test_pairwise_tree_follows_the_documented_splits():
    assert split.pairwise_tree(2048, 2) == (0, 1)
    assert split.pairwise_tree(10240, 4) == ((0, 1), (2, 3))
    assert split.pairwise_tree(200, 2) is None  # 200 splits at 96, not at 100
    assert split.pairwise_tree(256, 2) == (0, 1)
    assert split.pairwise_tree(100, 2) is None  # 100 terms are one leaf of eight lanes

"""Row groups: softmax, layer norm and attention fused with their reductions (N3, N5).

A fusion group may reduce its rows in the middle and read the results again, broadcast
along the rows (``Group.kinds``): softmax's max, sum and quotient, layer norm's mean and
variance, and their gradients run as one group over chunks of whole rows. Each row is
reduced by the kernel eager evaluation calls, so the group gives eager's bits for every
chunk size and thread count, by its Python path and natively, at every dispatch level;
without a compiler it keeps the Python path, with the same bits.
"""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import nn
from invarax.compiler import fusion, fusion_native, native_build
from invarax.compiler.lower import compile_jaxpr
from invarax.kernels import _native

CHUNKS = (1, 7, 4096, None)
THREADS = (1, 2)


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def softmax(x):
    """Softmax over the last axis written out: one max, one sum, one quotient per row."""
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def attention(q, k, v):
    """One head of scaled dot-product attention: the scores' softmax between two products."""
    return softmax(q @ jnp.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))) @ v


def layer_norm(x, gamma, beta):
    """Equinox's LayerNorm over the last axis, vmapped over the leading ones."""
    norm = nn.LayerNorm(x.shape[-1])
    norm = invarax.tree_at(lambda n: (n.weight, n.bias), norm, (gamma, beta))
    return invarax.vmap(invarax.vmap(norm))(x)


def data(shape, seed, scale=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def compiled(f, args):
    """``f`` compiled with fusion at any size: ``(run, consts)``; it has a row group."""
    closed = invarax.make_jaxpr(f)(*args)
    with fusion._settings(min_size=0, min_work=0):
        run = compile_jaxpr(closed.jaxpr)
    assert any("reduce" in g.kinds for g in run.groups), run.source
    return run, [c._value for c in closed.consts]


def check(f, args, isas=(None,)):
    """``f`` fused equals eager ``f`` bitwise: its Python path and its native path, for every
    chunk size, thread count and dispatch level in ``isas``."""
    eager = f(*(jnp.asarray(a) for a in args))
    eager = list(eager) if isinstance(eager, tuple) else [eager]
    run, consts = compiled(f, args)
    run(*consts, *args)  # starts the compilations
    fusion_native.wait()
    rows = [g for g in run.groups if "reduce" in g.kinds]
    assert all(g.runner().native is not None and g.runner().native.fn is not None
               for g in rows), [fusion_native.group_source(g)[0] for g in rows]
    for isa in isas:
        previous = None if isa is None else _native.set_isa(isa)
        try:
            for native in (False, True):
                for chunk in CHUNKS:
                    for threads in THREADS:
                        with invarax.config.flag("invarax_native_fusion", native), \
                                fusion._settings(chunk=chunk, threads=threads,
                                                 min_per_thread=1, min_reduce_chunk=0):
                            calls = [g.runner().native.calls for g in rows]
                            outs = run(*consts, *args)
                            ran = [g.runner().native.calls > c for g, c in zip(
                                rows, calls, strict=True)]
                        assert all(ran) if native else not any(ran)
                        for o, e in zip(outs, eager, strict=True):
                            assert_bitwise(o, e)
        finally:
            if previous is not None:
                _native.set_isa(previous)
    return run


def test_softmax_at_every_level():
    x = data((3, 5, 200), 0)  # rows longer than a block's share of a chunk of 7
    x[0, 0, 3], x[1, 2, :] = np.inf, -np.inf  # a NaN row, and exp of inf - inf
    x[2, 1, 7] = np.float32("nan")
    check(softmax, (x,), isas=_native.isas())


@pytest.mark.parametrize("shape", [(4, 2), (9, 13), (1, 1030)])
def test_softmax_shapes(shape):
    check(softmax, (data(shape, 1),))


def test_layer_norm_and_its_gradient():
    x, gamma, beta = data((4, 6, 160), 2), data((160,), 3, 1.0), data((160,), 4, 1.0)
    check(layer_norm, (x, gamma, beta))
    loss = invarax.grad(lambda x, g, b: jnp.sum(layer_norm(x, g, b) ** 2), argnums=(0, 1, 2))
    run = check(loss, (x, gamma, beta))
    assert sum("reduce" in g.kinds for g in run.groups) == 2  # forward and backward


def test_attention_block_and_its_gradient():
    q, k, v = (data((2, 16, 8), s) for s in (5, 6, 7))
    check(attention, (q, k, v), isas=_native.isas())
    grad = invarax.grad(lambda q, k, v: jnp.sum(jnp.tanh(attention(q, k, v))), argnums=(0, 1, 2))
    check(grad, (q, k, v))


def test_jit_vmap_and_library_softmax():
    """Under ``jit`` (nested calls included: ``nn.softmax`` is a ``custom_jvp``), ``vmap``
    and ``grad``, the fused programs give eager's bits."""
    x = data((6, 40, 40), 8)
    fs = [lambda x: invarax.nn.softmax(x, axis=-1), invarax.vmap(softmax),
          invarax.vmap(invarax.grad(lambda r: jnp.sum(invarax.nn.softmax(r) * r)))]
    for f in fs:
        eager = f(jnp.asarray(x))
        with fusion._settings(min_size=0, min_work=0, min_reduce_chunk=0):
            jitted = invarax.jit(f)
            first = jitted(x)
            fusion_native.wait()
            for chunk in CHUNKS:
                with fusion._settings(chunk=chunk, threads=2, min_per_thread=1):
                    assert_bitwise(jitted(x), eager)
        assert_bitwise(first, eager)
        assert_bitwise(invarax.vmap(f)(x[None])[0], eager)  # batch invariance (N1)


def test_missing_compiler_falls_back(monkeypatch):
    monkeypatch.setattr(native_build, "compiler", lambda: ["/nonexistent/invarax-cc"])
    x, gamma, beta = data((4, 6, 160), 9), data((160,), 10, 1.0), data((160,), 11, 1.0)
    run, consts = compiled(layer_norm, (x, gamma, beta))
    first = run(*consts, x, gamma, beta)
    fusion_native.wait()
    assert all(g.runner().native.fn is None for g in run.groups if g.runner().native)
    eager = layer_norm(jnp.asarray(x), gamma, beta)
    assert_bitwise(first[0], eager)
    assert_bitwise(run(*consts, x, gamma, beta)[0], eager)


def test_groups_read_rows_through_views_only():
    """A row value is read back only broadcast along its own rows: a reduction over a
    leading axis, or a broadcast along another axis, ends the group as before."""
    def f(x):
        col = jnp.sum(x, axis=0, keepdims=True)  # over a leading axis: not a row group
        return x - col, jnp.exp(x - jnp.max(x, axis=1)[:, None])

    x = data((64, 33), 12)
    run, consts = compiled(f, (x,))
    for chunk in CHUNKS:
        with fusion._settings(chunk=chunk, threads=2, min_per_thread=1, min_reduce_chunk=0):
            for o, e in zip(run(*consts, x), f(jnp.asarray(x)), strict=True):
                assert_bitwise(o, e)

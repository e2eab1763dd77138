"""Fusion groups that end in a row reduction give eager's bits (N3, N5).

A group member's value whose only reader is a reduction over trailing axes is reduced
chunk by chunk (whole rows per chunk) and never materialised. Every such reduction, for
float32, float64 and int32, over the last axis and the last two, at shapes around chunk
boundaries, for several chunk sizes and one and two threads, must equal eager evaluation
bit for bit; so must the programs that keep today's path.
"""

import numpy as np
import pytest
from helpers import assert_bitwise
from test_fusion import assert_same, finite, fused_run, values

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.compiler import fusion
from invarax.compiler.lower import compile_jaxpr
from invarax.core import buffers

CHUNKS = (1, 5, 64, 1000)  # elements (a chunk holds at least one whole row)
THREADS = (1, 2)

REDUCE = {
    "sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max,
    "min": lax.reduce_min,
    "argmax": lambda x, axes: lax.argmax(x, axes[0], jnp.int32),
    "argmin": lambda x, axes: lax.argmin(x, axes[0], jnp.int32),
}
INT_ONLY = {"and": lax.reduce_and, "or": lax.reduce_or}


@pytest.fixture(autouse=True)
def _python_path():
    """The groups' Python path (test_fusion_native.py checks the native path against it:
    compiling each of this file's hundreds of groups would take minutes)."""
    with invarax.config.flag("invarax_native_fusion", False):
        yield


def reductions_of(run):
    return [r.primitive.name for g in run.groups for r in g.reductions]


def check_reduced(f, args, *, fused=1, chunks=CHUNKS, threads=THREADS):
    """``f`` compiled with fusion at any size equals eager ``f`` bitwise for every chunk size
    and thread count; ``fused`` reductions end groups (None: any number)."""
    eager = f(*(jnp.asarray(x) for x in args))
    eager = list(eager) if isinstance(eager, tuple) else [eager]
    call = fused_run(f, args, min_groups=1 if fused else 0)
    assert fused is None or len(reductions_of(call.run)) == fused, call.run.source
    for chunk in chunks:
        for t in threads:
            with fusion._settings(min_reduce_chunk=0):
                outs = call(chunk, t)
            assert len(outs) == len(eager)
            for o, e in zip(outs, eager, strict=True):
                assert_same(o, e)
    return call


def body(x, y):
    """A few elementwise members of any numeric dtype."""
    return x * y - x + y * y


SHAPES_LAST = [(1, 7), (9, 7), (10, 7), (13, 64), (3, 5, 13), (2, 1, 3), (70, 1)]
SHAPES_LAST_TWO = [(4, 3, 5), (13, 5, 13), (2, 3, 4, 5), (64, 1, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("name", [*REDUCE, *INT_ONLY])
def test_each_reduction_dtype_and_axes(x64, name, dtype):
    if name in INT_ONLY and np.dtype(dtype).kind != "i":
        pytest.skip("and/or reduce integers and bools")
    reduce = {**REDUCE, **INT_ONLY}[name]
    cases = [(s, (len(s) - 1,)) for s in SHAPES_LAST]
    if not name.startswith("arg"):
        cases += [(s, (len(s) - 2, len(s) - 1)) for s in SHAPES_LAST_TWO]
        cases += [((2, 3, 4, 5), (1, 2, 3))]
    for shape, axes in cases:
        x, y = values(shape, dtype, 1), values(shape, dtype, 2)
        check_reduced(lambda x, y, axes=axes: reduce(body(x, y), axes), (x, y))


def test_the_fused_path_is_taken():
    x, y = finite((40, 30), 1), finite((40, 30), 2)
    call = check_reduced(lambda x, y: jnp.sum(jnp.sin(x) * y + x, axis=-1), (x, y))
    (group,) = call.run.groups
    assert [r.primitive.name for r in group.reductions] == ["reduce_sum"]
    assert group.outvars == [group.reductions[0].outvars[0]]  # the sum only
    assert "reduce_sum" not in [e.primitive.name for e in group.eqns]
    assert "(v2,) = f0(v0, v1, None)\n" in call.run.source  # one call: the group
    assert call.run.source.count(" = f") == 1
    source = fusion._work_source(group)[2]  # the Python path's chunk loop
    assert "= r" in source and source.count("o0[index]") == 1


def test_keepdims_and_several_reductions_of_one_group():
    def f(x, y):
        a = jnp.exp(x) * y
        b = x - y
        c = x * y + 0.5
        return (jnp.sum(a, axis=-1, keepdims=True), jnp.max(b, axis=(1, 2)),
                jnp.argmin(c, axis=-1), jnp.sum(x * x, axis=-1, keepdims=True) + 1.0)

    x, y = values((11, 3, 17), np.float32, 1), values((11, 3, 17), np.float32, 2)
    check_reduced(f, (x, y), fused=4)


def test_a_value_read_elsewhere_is_materialised_and_reduced():
    def f(x, y):
        s = jnp.sin(x) * y
        return jnp.sum(s, axis=-1), s

    def twice(x, y):
        s = jnp.sin(x) * y
        return jnp.sum(s, axis=-1), jnp.max(s, axis=-1)

    def later(x, y):
        s = jnp.sin(x) * y
        t = jnp.sum(s, axis=-1)
        return t[:, None] * s  # s is read after the sum, too

    x, y = finite((21, 13), 1), finite((21, 13), 2)
    # twice: both reductions in the group, s never materialised; later: a row group
    for g, fused, kept in ((f, 1, True), (twice, 2, False), (later, 0, True)):
        call = check_reduced(g, (x, y), fused=fused)
        assert kept == any(v.aval.shape == x.shape for grp in call.run.groups
                           for v in grp.outvars)


def test_other_reductions_keep_todays_path():
    def leading(x, y):
        return jnp.sum(x * y + x, axis=0)

    def everything(x, y):
        return jnp.sum(x * y + x)

    def middle(x, y):
        return jnp.sum(x * y + x, axis=1)

    x, y = finite((6, 7, 8), 1), finite((6, 7, 8), 2)
    for g in (leading, everything, middle):
        check_reduced(g, (x, y), fused=0)


def test_a_row_larger_than_the_budget_keeps_todays_path():
    x, y = finite((5, 300), 1), finite((5, 300), 2)
    f = lambda x, y: jnp.sum(body(x, y), axis=-1)
    row_bytes = 300 * 4 * 6  # float32: x, y and the 4 members' values
    with fusion._settings(chunk_bytes=row_bytes - 1):
        check_reduced(f, (x, y), fused=0)
    with fusion._settings(chunk_bytes=row_bytes):
        check_reduced(f, (x, y), fused=1)


def prod_poly(a):
    return jnp.prod(a**2 - a**3 - a)


@pytest.mark.parametrize("n", [7, 64, 65])
def test_jacfwd_programs(n):
    a = (0.5 + np.random.default_rng(n).random(n)).astype(np.float32)
    for f in (invarax.jacfwd(prod_poly),
              invarax.jacfwd(lambda a: jnp.max(jnp.tanh(a) * a)),
              invarax.jacfwd(invarax.jacfwd(lambda a: jnp.sum(jnp.sin(a) * a)))):
        check_reduced(f, (a,), fused=None)
    assert reductions_of(fused_run(invarax.jacfwd(prod_poly), (a,)).run) == ["reduce_sum"]


def test_jacfwd_at_default_settings_through_jit():
    a = (0.5 + np.random.default_rng(0).random(1000)).astype(np.float32)
    f = invarax.jacfwd(prod_poly)
    closed = invarax.make_jaxpr(f)(a)
    assert reductions_of(compile_jaxpr(closed.jaxpr)) == ["reduce_sum"]
    eager = f(jnp.asarray(a))
    for threads in (1, 2, 3):
        with fusion._settings(threads=threads):
            assert_bitwise(invarax.jit(f)(a), eager)
    for chunk, smallest in ((1000, 0), (4096, 0), (100_000, 0), (None, 2**16)):
        with fusion._settings(chunk=chunk, threads=2, min_reduce_chunk=smallest):
            assert_bitwise(invarax.jit(f)(a), eager)


def test_scratch_blocks_come_back_to_the_buffer_pool():
    x, y = finite((300, 1000), 1), finite((300, 1000), 2)  # 2 x 256 KB scratch per run
    buffers.clear()
    call = check_reduced(lambda x, y: jnp.sum(body(x, y), axis=-1), (x, y),
                         chunks=(64_000,), threads=(1,))

    def blocks():
        return [b for (_, dtype), kept in buffers._pool.items() if dtype == np.uint8
                for b in kept]

    (block,) = blocks()
    assert block.nbytes >= 2 * 64_000 * 4
    first = id(block)
    del block  # else the pool would not hand it out again
    with fusion._settings(min_reduce_chunk=0):
        call(64_000, 1)
    assert [id(b) for b in blocks()] == [first]  # taken again, given back

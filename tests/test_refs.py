"""Mutable array references (``new_ref``, ``Ref``, ``freeze``): the programs of JAX's
"Refs" documentation give JAX's values, eagerly and under ``jit`` (arguments, closures,
nested calls), and a written value keeps the bits of the functional update."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp

jax = pytest.importorskip("jax")
if not hasattr(jax, "new_ref"):
    pytest.skip("this JAX has no new_ref", allow_module_level=True)

LIBS = [(invarax, jnp), (jax, jax.numpy)]


def _program(lib, np_):
    """Refs as an argument and a closure, written and read in and out of jit, nested."""
    out = []
    r = lib.new_ref(np_.zeros(3))

    @lib.jit
    def f(r, x):
        r[...] += x
        r[0] = 5.0
        return r[1:].sum()

    out += [f(r, np_.ones(3)), lib.freeze(r), f(r, np_.arange(3.0)), lib.freeze(r)]
    c = lib.new_ref(np_.ones(2))

    @lib.jit
    def g(x):
        c[...] = c[...] * x
        return x

    g(2.0)
    g(3.0)
    out.append(lib.freeze(c))

    @lib.jit
    def outer(x):
        g(x)
        c[1] = c[0] + 1.0
        return c[...] * 2.0

    out += [outer(0.5), lib.freeze(c), outer(2.0), lib.freeze(c)]
    r[...] = np_.array([1.0, 2.0, 3.0])  # eagerly
    r[1:] += 10.0
    out += [lib.freeze(r), r[2], r.shape, str(r.dtype)]

    def local(x):  # a Ref made inside a transformed function
        q = lib.new_ref(x)
        q[...] = q[...] * q[...] + 1.0
        return lib.freeze(q).sum()

    xs = np_.arange(6.0).reshape(2, 3)
    out += [lib.grad(local)(np_.ones(3)), lib.vmap(local)(xs), lib.jit(local)(xs[0])]
    return out


def test_refs_give_jax_values():
    ours, theirs = _program(invarax, jnp), _program(jax, jax.numpy)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a, (tuple, str)):
            assert a == b
        else:
            assert np.array_equal(np.asarray(a), np.asarray(b)), (a, b)


def test_a_write_keeps_the_functional_update_s_bits():
    x = np.random.default_rng(0).standard_normal(100).astype(np.float32)
    r = invarax.new_ref(jnp.asarray(x))

    @invarax.jit
    def step(y):
        r[...] = jnp.tanh(r[...] * y) + 0.5
        r[3:7] = r[3:7] * 3.0

    want = jnp.asarray(x)
    for y in (0.5, 2.0, -1.5):
        step(y)
        want = jnp.tanh(want * y) + 0.5
        want = want.at[3:7].set(want[3:7] * 3.0)
        assert np.array_equal(np.asarray(invarax.freeze(r)), np.asarray(want))


def test_a_traced_value_written_into_an_outer_ref_outside_jit_is_an_error():
    r = invarax.new_ref(jnp.zeros(2))

    def f(x):
        r[...] = x
        return x.sum()

    with pytest.raises(ValueError, match="made outside the transformation"):
        invarax.grad(f)(jnp.ones(2))
    invarax.free_ref(r)
    with pytest.raises(RuntimeError, match="freed"):
        r[...]
    with pytest.raises(TypeError, match="freeze takes a Ref"):
        invarax.freeze(jnp.ones(2))
    empty = invarax.empty_ref(invarax.ShapeDtypeStruct((2, 2), jnp.int32))
    assert empty.shape == (2, 2) and empty.dtype == jnp.int32


def test_make_jaxpr_of_a_function_writing_an_outer_ref_leaves_the_ref_as_it_was():
    # JAX shows the Ref as an input and its writes as equations; invarax's jaxpr is the
    # program jit runs: the ref's value an extra input, its written value an extra output
    def program(lib, np_):
        r = lib.new_ref(np_.zeros(3))

        def f(x):
            r[...] = r[...] + x
            return x * 2.0

        jaxpr = lib.make_jaxpr(f)(np_.ones(3))
        before = np.asarray(lib.freeze(r))
        return jaxpr, before, np.asarray(f(np_.ones(3))), np.asarray(lib.freeze(r))

    ours, theirs = program(invarax, jnp), program(jax, jax.numpy)
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        assert np.array_equal(a, b)
    jaxpr = ours[0].jaxpr
    assert len(jaxpr.invars) == 2 and len(jaxpr.outvars) == 2  # x, the ref; 2x, its new value
    assert [str(e.primitive) for e in jaxpr.eqns] == ["add", "mul"]  # a whole write: no scatter

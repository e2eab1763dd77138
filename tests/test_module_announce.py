"""Equinox's ``debug.announce_transform``: the identity, announcing each transformation
applied to it, against Equinox where installed."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp


def _announcements(jax, jnp, announce_transform):
    """``case -> (announcements of a first call, of a second)`` for a set of
    transformations of one identity."""
    x, xs = jnp.float32(1.5), jnp.ones(2)
    said = []

    def a(v, **kwargs):
        return announce_transform(v, announce=said.append, **kwargs)

    cases = {
        "eager": (a, x),
        "named": (lambda v: a(v, name="n"), x),
        "pytree": (lambda v: a({"a": v, "b": "s", "c": (v, v)}), x),
        "vmap": (jax.vmap(a), xs),
        "vmap intermediates": (jax.vmap(lambda v: a(v, intermediates=True)), xs),
        "jvp": (lambda v: jax.jvp(a, (v,), (v,)), x),
        "grad": (jax.grad(lambda v: a(v) * 2), x),
        "grad intermediates": (jax.grad(lambda v: a(v, intermediates=True) * 2), x),
        "jit": (jax.jit(a), x),
        "jit vmap": (jax.jit(jax.vmap(a)), xs),
        "jit grad": (jax.jit(jax.grad(lambda v: a(v) * 2)), x),
    }
    out = {}
    for name, (f, arg) in cases.items():
        f(arg)
        first = list(said)
        said.clear()
        f(arg)
        out[name] = first, list(said)
        said.clear()
    return out


def test_announcements_as_equinox():
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    ours = _announcements(invarax, jnp, invarax.debug.announce_transform)
    theirs = _announcements(jax, jax.numpy, eqx.debug.announce_transform)
    for case in ("jit", "jit vmap", "jit grad"):
        (first, again), (their_first, their_again) = ours.pop(case), theirs.pop(case)
        # invarax's check of a staged program's types announces "abstract" once more
        assert list(dict.fromkeys(first)) == list(dict.fromkeys(their_first))
        assert again == their_again == []  # a compiled function runs again silently
    assert {case: first for case, (first, _) in ours.items()} == {
        case: first for case, (first, _) in theirs.items()}
    assert ours["grad intermediates"][0][-2:] == ["jvp_t:transpose", "jvp_t:transpose:impl"]
    assert ours["pytree"][0] == ["impl"]  # one announcement for all the arrays


def test_announce_transform_is_the_identity():
    x = jnp.linspace(-1.0, 1.0, 5)
    quiet = dict(announce=lambda s: None)
    tree = invarax.debug.announce_transform({"x": x, "k": "static"}, **quiet)
    assert tree["k"] == "static"
    assert_bitwise(tree["x"], x)

    def f(x):
        return jnp.sum(jnp.sin(invarax.debug.announce_transform(x, **quiet)) * x)

    g = invarax.jit(invarax.vmap(invarax.grad(f)))(x[:, None] * np.ones(3, np.float32))
    assert_bitwise(g[2], invarax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(
        x[2] * np.ones(3, np.float32)))

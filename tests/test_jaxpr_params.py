"""Every parameter of every equation of a printed jaxpr is hashable (tuples, not lists), in
the programs that transformations make: grad, vmap and jit of contractions, reductions,
gathers, convolutions and scans."""

import numpy as np
import pytest

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.core.ir import ClosedJaxpr


def _contraction(x, w):
    return jnp.sum(jnp.tanh(x @ w.T) * jnp.einsum("nk,mk->nm", x, w))


def _reduction(x, w):
    return jnp.sum(jnp.max(x, axis=1) + jnp.mean(x * x, axis=0)[0]) + jnp.prod(w[:, :2])


def _gather(x, w):
    idx = jnp.array([2, 0, 1])
    return jnp.sum(x[idx] * 2.0) + jnp.sum(x.at[idx, 1].add(w[0, 0])) + jnp.sort(w[0])[0]


def _conv(x, w):
    lhs = x.reshape(1, 1, 3, 4)
    rhs = w[:2, :2].reshape(1, 1, 2, 2)
    return jnp.sum(lax.conv_general_dilated(lhs, rhs, (1, 1), "SAME"))


def _scan(x, w):
    def step(c, row):
        c = jnp.tanh(c @ w[:4].T + row)
        return c, jnp.sum(c)

    c, ys = lax.scan(step, jnp.zeros(4), x)
    return jnp.sum(c) + jnp.sum(ys)


PROGRAMS = {"contraction": _contraction, "reduction": _reduction, "gather": _gather,
            "conv": _conv, "scan": _scan}
TRANSFORMS = {
    "plain": lambda f: f,
    "grad": lambda f: invarax.grad(f, argnums=(0, 1)),
    "vmap": lambda f: invarax.vmap(f, in_axes=(0, None)),
    "jit_grad": lambda f: invarax.jit(invarax.grad(f)),
    "vmap_grad": lambda f: invarax.vmap(invarax.grad(f), in_axes=(0, None)),
}


def _equations(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    yield from _equations(sub.jaxpr)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_every_parameter_is_hashable(program, transform):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    if transform.startswith("vmap"):
        x = np.stack([x, x + 1])
    closed = invarax.make_jaxpr(TRANSFORMS[transform](PROGRAMS[program]))(x, w)
    for eqn in _equations(closed.jaxpr):
        for name, value in eqn.params.items():
            try:
                hash(value)
            except TypeError:
                pytest.fail(f"{eqn.primitive}'s {name}={value!r} is not hashable")


def test_the_contraction_transpose_prints_tuples():
    f = invarax.grad(lambda x, w: jnp.sum(x @ w), argnums=(0, 1))
    text = str(invarax.make_jaxpr(f)(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)))
    numbers = [line for line in text.splitlines() if "dimension_numbers=" in line]
    assert len(numbers) == 3 and not any("[" in line for line in numbers), numbers

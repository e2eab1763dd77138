"""``checkpoint(policy=...)``, ``checkpoint_policies`` and ``checkpoint_name``: what is
saved follows the policy (the residuals of ``linearize``), the gradient's bits never
change, and the policies decide as JAX's do."""

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import checkpoint_policies as cp
from invarax.ad_checkpoint import checkpoint_name

R = np.random.default_rng(0)
W1 = jnp.asarray(R.standard_normal((4, 3)).astype(np.float32))
W2 = jnp.asarray(R.standard_normal((2, 4)).astype(np.float32))
X = jnp.asarray(R.standard_normal(3).astype(np.float32))


def mlp(x):
    h = checkpoint_name(jnp.tanh(W1 @ x), "hidden")
    return jnp.sum(jnp.sin(W2 @ h) * jnp.exp(h[:2]))


POLICIES = {
    "default": None, "nothing": cp.nothing_saveable, "everything": cp.everything_saveable,
    "dots": cp.dots_saveable, "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
    "names": cp.save_only_these_names("hidden"),
    "all_but_name": cp.save_anything_except_these_names("hidden"),
    "names_but": cp.save_any_names_but_these("other"),
    "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("hidden")),
    "offload_dots": cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
    "save_and_offload": cp.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["hidden"],
        offload_src="device", offload_dst="pinned_host"),
}


def residual_shapes(f):
    _, f_jvp = invarax.linearize(f, X)
    return sorted(c.shape for c in f_jvp.jaxpr.consts)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_gradients_are_bitwise_whatever_the_policy(name):
    f = invarax.checkpoint(mlp, policy=POLICIES[name])
    want = invarax.grad(mlp)(X)
    assert np.array_equal(invarax.grad(f)(X), want)
    assert np.array_equal(invarax.jit(invarax.grad(f))(X), want)
    xs = jnp.stack([X, X * 2, -X])
    batched = invarax.vmap(invarax.grad(f))(xs)
    for i in range(3):
        assert np.array_equal(batched[i], invarax.grad(mlp)(xs[i]))
    assert np.array_equal(invarax.jvp(f, (X,), (X,))[1], invarax.jvp(mlp, (X,), (X,))[1])


def test_what_is_saved_follows_the_policy():
    consts = [(4, 3), (2, 4)]  # the weights, closed over
    shapes = {name: residual_shapes(invarax.checkpoint(mlp, policy=p))
              for name, p in POLICIES.items()}
    assert shapes["default"] == shapes["nothing"] == sorted([*consts, (3,)])
    assert shapes["dots"] == sorted([*consts, (3,), (4,), (2,)])  # W1 @ x and W2 @ h
    assert shapes["dots_no_batch"] == shapes["dots"]
    assert shapes["names"] == sorted([*consts, (3,), (4,)])  # the named hidden layer
    assert shapes["names_but"] == shapes["names"]
    # offloading to host memory is saving on the CPU backend
    assert shapes["offload_dots"] == shapes["dots_no_batch"]
    assert shapes["save_and_offload"] == shapes["names"]
    assert len(shapes["everything"]) > len(shapes["dots"])
    assert (4,) in shapes["all_but_name"]


def test_policies_decide_as_jax():
    jax = pytest.importorskip("jax")
    jcp = jax.checkpoint_policies

    def ask(policy, prim_name, **params):
        class Prim:
            name = prim_name

        return policy(Prim(), **params)

    dn = {"dimension_numbers": (((1,), (0,)), ((), ()))}
    batched = {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}
    assert ask(cp.dots_saveable, "dot_general", **dn) and not ask(cp.dots_saveable, "sin")
    assert ask(cp.dots_with_no_batch_dims_saveable, "dot_general", **dn)
    assert not ask(cp.dots_with_no_batch_dims_saveable, "dot_general", **batched)
    assert ask(cp.save_only_these_names("a"), "name", name="a")
    assert not ask(cp.save_only_these_names("a"), "name", name="b")
    # and in JAX: the same names exist and mean the same on real primitives
    for name in ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
                 "dots_with_no_batch_dims_saveable", "save_only_these_names",
                 "save_any_names_but_these", "save_anything_except_these_names",
                 "save_from_both_policies", "offload_dot_with_no_batch_dims",
                 "save_and_offload_only_these_names"]:
        assert hasattr(jcp, name) and hasattr(cp, name), name
    for lib in (cp, jcp):  # a name both saved and offloaded: the same error
        with pytest.raises(ValueError, match="should be exclusive"):
            lib.save_and_offload_only_these_names(
                names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
                offload_src="device", offload_dst="pinned_host")
    assert jcp.dots_saveable(jax.lax.dot_general_p) and not jcp.dots_saveable(jax.lax.sin_p)


def test_checkpoint_name_is_an_identity_everywhere():
    f = lambda x: checkpoint_name({"a": x * 2}, "n")["a"]  # noqa: E731
    assert np.array_equal(f(X), X * 2)
    assert np.array_equal(invarax.jit(f)(X), X * 2)
    assert np.array_equal(invarax.vmap(f)(jnp.stack([X, X])), jnp.stack([X, X]) * 2)
    assert np.array_equal(invarax.grad(lambda x: jnp.sum(f(x)))(X), jnp.full(3, 2.0))
    assert "name[name=n]" in str(invarax.make_jaxpr(f)(X))

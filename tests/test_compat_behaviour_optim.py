"""optax behaviours that real notebooks found different, and optax's names that invarax
serves, each checked against optax (skipped without it)."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import optim

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")


def _update(transform, updates, params=None):
    return transform.update(updates, transform.init(params if params is not None else updates),
                            params)[0]


@pytest.mark.parametrize("grads", [[3.0, -4.0], [0.0, 0.0], [1e-30, 0.0]])
@pytest.mark.parametrize("max_norm", [0.0, 1.0, 10.0])
def test_clip_by_global_norm_zero_and_positive_as_optax(max_norm, grads):
    # max_norm=0.0 raised; optax zeroes the updates (NaN where all are zero)
    ours = _update(optim.clip_by_global_norm(max_norm), {"a": jnp.array(grads)})
    theirs = _update(optax.clip_by_global_norm(max_norm), {"a": jax.numpy.array(grads)})
    assert_bitwise(ours["a"], np.asarray(theirs["a"]))


def _close(ours, theirs, rtol=1e-5, atol=1e-6):
    for a, b in zip(invarax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("lib", ["ours", "optax"])
def test_tree_get_set_and_paths_as_optax(lib):
    # optax.tree.get/set/get_all_with_path were missing; each result is optax's
    opt_lib, np_lib = (optim, jnp) if lib == "ours" else (optax, jax.numpy)
    params = np_lib.array([1.0, 2.0, 3.0])
    state = opt_lib.adam(1.0).init(params)
    assert int(opt_lib.tree.get(state, "count")) == 0
    assert [str(p[-1]) for p, _ in opt_lib.tree.get_all_with_path(state, "mu")] == [
        "ScaleByAdamState.mu"]
    assert float(opt_lib.tree.get(opt_lib.tree.set(state, count=2.0), "count")) == 2.0
    chained = opt_lib.chain(opt_lib.add_noise(1.0, 0.9, key=0), opt_lib.scale_by_adam())
    state = chained.init(params)
    assert type(opt_lib.tree.get(state, "ScaleByAdamState")).__name__ == "ScaleByAdamState"
    with pytest.raises(KeyError):
        opt_lib.tree.get(state, "count")  # two states have one
    adam_only = opt_lib.tree.get(state, "count", filtering=lambda path, _: isinstance(
        path[-1], opt_lib.tree_utils.NamedTupleKey) and path[-1].tuple_name ==
        "ScaleByAdamState")
    assert int(adam_only) == 0
    assert opt_lib.tree.get({"a": 1}, "missing", 5) == 5
    assert opt_lib.tree.set({"a": {"b": 1, "c": [{"b": 3}]}, "b": 2}, b=9) == {
        "a": {"b": 9, "c": [{"b": 3}]}, "b": 9}
    with pytest.raises(KeyError, match="Found no values matching 'z'"):
        opt_lib.tree.set({"a": 1}, z=3)


def test_tree_and_transforms_namespaces_have_optax_names():
    for ours, theirs in [(optim.tree, optax.tree), (optim.transforms, optax.transforms),
                         (optim.perturbations, optax.perturbations)]:
        names = [n for n in dir(theirs) if not n.startswith("_")
                 and not isinstance(getattr(theirs, n), type(np))]  # modules aside
        assert [n for n in names if not hasattr(ours, n)] == [], theirs.__name__
    assert optim.transforms.masked is optim.masked


def test_masked_state_holds_masked_nodes_as_optax():
    params = {"w": np.ones(1, np.float32), "b": np.ones(1, np.float32)}
    ours = optim.masked(optim.adam(1.0), {"w": True, "b": False}).init(params)
    theirs = optax.masked(optax.adam(1.0), {"w": True, "b": False}).init(params)
    assert isinstance(ours.inner_state[0].mu["b"], optim.MaskedNode)
    assert str(invarax.tree_util.tree_structure(ours)).count("MaskedNode") == 2
    _close(ours, theirs)


def test_unitwise_norm_and_clip_as_optax():
    x = np.random.default_rng(0).standard_normal((3, 4, 2)).astype(np.float32)
    _close(optim.transforms.unitwise_norm(x), optax.transforms.unitwise_norm(x))
    g, m = np.abs(x) + 0.5, np.full_like(x, 1.2)
    _close(optim.transforms.unitwise_clip(g, m, x), optax.transforms.unitwise_clip(g, m, x))


@pytest.mark.parametrize("noise", ["Gumbel", "Normal"])
def test_make_perturbed_fun_as_optax(noise):
    x = np.array([0.0, 0.5, -0.2], np.float32)

    def smoothed(lib, opt_lib):
        def f(v):
            return lib.numpy.sum(lib.numpy.maximum(v, 0.0))

        return opt_lib.perturbations.make_perturbed_fun(
            f, 200, 0.1, noise=getattr(opt_lib.perturbations, noise)())

    ours, theirs = smoothed(invarax, optim), smoothed(jax, optax)
    _close(ours(invarax.random.key(0), x), theirs(jax.random.key(0), x))
    _close(invarax.grad(ours, argnums=1)(invarax.random.key(0), x),
           jax.grad(theirs, argnums=1)(jax.random.key(0), x))


def test_apply_updates_broadcasts_a_scalar_update_as_equinox_and_optax():
    eqx = pytest.importorskip("equinox")
    marker = object()
    ours = optim.apply_updates([marker, jnp.array([5]), jnp.array([2.0])], [None, -1, 1])
    want_eqx = eqx.apply_updates([marker, jax.numpy.array([5]), jax.numpy.array([2.0])],
                                 [None, -1, 1])
    want_optax = optax.apply_updates([jax.numpy.array([5]), jax.numpy.array([2.0])], [-1, 1])
    assert ours[0] is marker
    for got, a, b in zip(ours[1:], want_eqx[1:], want_optax, strict=True):
        assert_bitwise(got, a)
        assert_bitwise(got, b)
